// STL containers and algorithms: vector, map, multimap, unordered_map, set,
// deque, list, string, priority_queue; sort, stable_sort, partial_sort,
// nth_element, binary searches, permutations, numeric algorithms.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <numeric>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

static uint32_t state = 2024;
static uint32_t rnd()
{
	state ^= state << 13;
	state ^= state >> 17;
	state ^= state << 5;
	return state;
}

template <typename C> static void print(const char *label, const C &c, size_t limit = 12)
{
	std::printf("%s (%zu):", label, c.size());
	size_t i = 0;
	for (const auto &x : c) {
		if (i++ == limit) {
			std::printf(" ...");
			break;
		}
		std::printf(" %s", std::to_string(x).c_str());
	}
	std::printf("\n");
}

int main()
{
	std::vector<int> v;
	for (int i = 0; i < 5000; i++)
		v.push_back((int)(rnd() % 1000) - 500);
	v.insert(v.begin() + 3, {7, 7, 7});
	v.erase(v.begin() + 10, v.begin() + 20);
	std::vector<int> s = v;
	std::sort(s.begin(), s.end());
	print("sorted", s);
	auto lb = std::lower_bound(s.begin(), s.end(), 0);
	auto ub = std::upper_bound(s.begin(), s.end(), 0);
	std::printf("zeros=%td first>=0 at %td binary_search(123)=%d\n", ub - lb, lb - s.begin(),
		    std::binary_search(s.begin(), s.end(), 123));
	std::vector<int> u = s;
	u.erase(std::unique(u.begin(), u.end()), u.end());
	std::printf("unique=%zu sum=%ld minmax=%d/%d\n", u.size(), std::accumulate(v.begin(), v.end(), 0L),
		    *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()));

	struct Item {
		int key;
		int seq;
	};
	std::vector<Item> items;
	for (int i = 0; i < 300; i++)
		items.push_back({(int)(rnd() % 10), i});
	std::stable_sort(items.begin(), items.end(), [](const Item &a, const Item &b) { return a.key < b.key; });
	bool stable = true;
	for (size_t i = 1; i < items.size(); i++)
		if (items[i - 1].key == items[i].key && items[i - 1].seq > items[i].seq)
			stable = false;
	std::printf("stable_sort stable=%d first=(%d,%d) last=(%d,%d)\n", stable, items.front().key, items.front().seq,
		    items.back().key, items.back().seq);
	std::vector<int> p = v;
	std::partial_sort(p.begin(), p.begin() + 8, p.end(), std::greater<int>());
	print("partial_sort top8", std::vector<int>(p.begin(), p.begin() + 8));
	std::vector<int> n = v;
	std::nth_element(n.begin(), n.begin() + (long)n.size() / 2, n.end());
	std::printf("median via nth_element=%d (sorted says %d)\n", n[n.size() / 2], s[s.size() / 2]);
	std::vector<int> perm = {1, 2, 3, 4};
	int count = 0;
	do
		count++;
	while (std::next_permutation(perm.begin(), perm.end()));
	std::rotate(perm.begin(), perm.begin() + 1, perm.end());
	std::reverse(perm.begin(), perm.end());
	print("permutations=24? rotated+reversed", perm);
	std::printf("permutation count=%d\n", count);
	std::vector<long> sq(10);
	std::iota(sq.begin(), sq.end(), 1);
	std::transform(sq.begin(), sq.end(), sq.begin(), [](long x) { return x * x; });
	std::vector<long> ps(10);
	std::partial_sum(sq.begin(), sq.end(), ps.begin());
	print("partial sums of squares", ps);
	std::printf("inner_product=%ld count_if(even)=%td\n", std::inner_product(sq.begin(), sq.end(), ps.begin(), 0L),
		    std::count_if(v.begin(), v.end(), [](int x) { return x % 2 == 0; }));

	std::map<std::string, int> wc;
	const char *words[] = {"the", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog", "the", "end", "fox"};
	for (const char *w : words)
		wc[w]++;
	std::printf("map:");
	for (auto &kv : wc)
		std::printf(" %s=%d", kv.first.c_str(), kv.second);
	std::printf("\n");
	auto it = wc.find("lazy");
	wc.erase(it);
	std::printf("after erase: size=%zu count(fox)=%zu lower_bound(p)=%s\n", wc.size(), wc.count("fox"),
		    wc.lower_bound("p")->first.c_str());
	std::multimap<int, std::string> mm{{2, "b"}, {1, "a"}, {2, "c"}, {3, "d"}, {2, "e"}};
	auto range = mm.equal_range(2);
	std::printf("multimap 2 ->");
	for (auto i = range.first; i != range.second; ++i)
		std::printf(" %s", i->second.c_str());
	std::printf("\n");

	std::unordered_map<int, int> um;
	for (int i = 0; i < 20000; i++)
		um[(int)(rnd() % 5000)] += i;
	long total = 0;
	for (auto &kv : um)
		total += (long)kv.first * 3 + kv.second;
	std::vector<std::pair<int, int>> sorted_um(um.begin(), um.end());
	std::sort(sorted_um.begin(), sorted_um.end());
	std::printf("unordered_map size=%zu total=%ld first=(%d,%d) buckets>size=%d\n", um.size(), total,
		    sorted_um[0].first, sorted_um[0].second, um.bucket_count() >= um.size());
	std::unordered_set<std::string> us;
	for (int i = 0; i < 1000; i++)
		us.insert("k" + std::to_string(i % 377));
	std::printf("unordered_set size=%zu contains k376=%zu k377=%zu\n", us.size(), us.count("k376"), us.count("k377"));

	std::set<int> st(v.begin(), v.end());
	std::set<int> evens;
	for (int x : st)
		if (x % 2 == 0)
			evens.insert(x);
	std::vector<int> diff;
	std::set_difference(st.begin(), st.end(), evens.begin(), evens.end(), std::back_inserter(diff));
	std::printf("set size=%zu evens=%zu odds=%zu first odd=%d\n", st.size(), evens.size(), diff.size(), diff[0]);

	std::deque<int> dq;
	for (int i = 0; i < 1000; i++) {
		if (i % 3)
			dq.push_back(i);
		else
			dq.push_front(i);
		if (i % 7 == 0)
			dq.pop_front();
	}
	std::printf("deque size=%zu front=%d back=%d [500]=%d\n", dq.size(), dq.front(), dq.back(), dq[500]);

	std::list<int> lst;
	for (int i = 0; i < 50; i++)
		lst.push_back((int)(rnd() % 20));
	lst.sort();
	lst.unique();
	std::list<int> other = {100, 200};
	lst.splice(std::next(lst.begin(), 2), other);
	lst.remove_if([](int x) { return x % 5 == 0 && x < 100; });
	lst.reverse();
	print("list", lst, 30);

	std::priority_queue<int, std::vector<int>, std::greater<int>> pq;
	for (int i = 0; i < 100; i++)
		pq.push((int)(rnd() % 1000));
	std::printf("priority_queue smallest:");
	for (int i = 0; i < 6; i++) {
		std::printf(" %d", pq.top());
		pq.pop();
	}
	std::printf("\n");

	std::string str = "Hello, STL world! Hello again.";
	std::printf("find=%zu rfind=%zu find_first_of=%zu substr=[%s]\n", str.find("Hello"), str.rfind("Hello"),
		    str.find_first_of("!,"), str.substr(7, 3).c_str());
	str.replace(0, 5, "Goodbye");
	str += std::string(3, '?');
	std::string up = str;
	std::transform(up.begin(), up.end(), up.begin(), ::toupper);
	std::printf("replaced=[%s] upper=[%s] compare=%d\n", str.c_str(), up.c_str(), str.compare(up) > 0);
	std::string big;
	for (int i = 0; i < 10000; i++)
		big += std::to_string(i);
	std::printf("big string len=%zu hash-ish=%zu stoi=%d stod=%.3f\n", big.size(),
		    (size_t)std::count(big.begin(), big.end(), '7'), std::stoi("-1234xyz"), std::stod("2.5e3"));
	return 0;
}
