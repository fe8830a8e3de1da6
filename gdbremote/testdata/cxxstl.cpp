// C++ standard library values for the debugger's printers.
#include <array>
#include <cstdio>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

struct Point {
	int x, y;
};

int main() {
	std::string s = "hello, recording";
	std::vector<int> v = {1, 2, 3};
	std::vector<int> w(100000);
	for (int i = 0; i < 100000; i++) w[i] = i * 2;
	std::array<int, 4> a = {10, 20, 30, 40};
	std::deque<int> d;
	for (int i = 0; i < 300; i++) d.push_back(i);
	d.push_front(-1);
	std::list<std::string> l = {"one", "two", "three"};
	std::map<std::string, int> m = {{"apple", 1}, {"banana", 2}, {"cherry", 3}};
	std::set<int> st = {5, 3, 9};
	std::unordered_map<int, long> um = {{7, 70}};
	std::unordered_set<int> us = {42};
	std::unique_ptr<Point> up(new Point{3, 4});
	std::shared_ptr<int> sp = std::make_shared<int>(99);
	std::shared_ptr<int> sp2 = sp;
	std::optional<int> o = 5, none;
	long sum = 0;
	for (int x : v) sum += x;
	sum += w[50000] + a[2] + d[100] + (long)l.size() + m["banana"] + (long)st.size() + um[7] + (long)us.size() + up->x + *sp + *o;
	std::printf("%ld %s\n", sum, s.c_str()); // MARK print
	return none.has_value();
}
