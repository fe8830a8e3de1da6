// Word frequencies over stdin: std::unordered_map, std::string, std::sort
// (tuning set of bench/cmd/broad).
#include <algorithm>
#include <iostream>
#include <string>
#include <unordered_map>
#include <vector>

int main() {
    std::ios::sync_with_stdio(false);
    std::unordered_map<std::string, long> counts;
    std::string w;
    long total = 0;
    while (std::cin >> w) {
        while (!w.empty() && (w.back() == '.' || w.back() == ',')) w.pop_back();
        std::transform(w.begin(), w.end(), w.begin(), [](unsigned char c) { return c | 0x20; });
        counts[w]++;
        total++;
    }
    std::vector<std::pair<std::string, long>> v(counts.begin(), counts.end());
    std::sort(v.begin(), v.end(), [](auto &a, auto &b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
    std::cout << total << " words, " << v.size() << " distinct\n";
    for (size_t i = 0; i < v.size() && i < 10; i++) std::cout << v[i].first << " " << v[i].second << "\n";
}
