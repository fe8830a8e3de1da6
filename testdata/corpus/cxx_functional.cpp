// std::function and lambdas: captures by value/reference/move, mutable and
// generic lambdas, recursion through std::function, std::bind, member
// pointers, closures returned from functions, callbacks into the C library.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

struct Counter {
	int n = 0;
	int add(int k) { return n += k; }
	virtual int scaled(int k) const { return n * k; }
	virtual ~Counter() = default;
};
struct Doubler : Counter {
	int scaled(int k) const override { return 2 * n * k; }
};

static std::function<int(int)> make_adder(int base)
{
	return [base](int x) { return base + x; };
}

static std::function<long()> make_counter()
{
	auto state = std::make_shared<long>(0);
	return [state]() { return ++*state; };
}

static int c_compare(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int main()
{
	int local = 5;
	auto by_value = [local](int x) { return local * x; };
	auto by_ref = [&local](int x) { return local += x; };
	local = 7;
	int bv = by_value(3);
	int br = by_ref(3);
	std::printf("by_value=%d by_ref=%d local=%d\n", bv, br, local);
	auto mut = [count = 0]() mutable { return ++count; };
	mut();
	mut();
	std::printf("mutable=%d\n", mut());
	auto generic = [](auto a, auto b) { return a + b; };
	std::printf("generic int=%d double=%.2f string=%s\n", generic(1, 2), generic(1.5, 2.25),
		    generic(std::string("ab"), std::string("cd")).c_str());

	std::function<long(int)> fact = [&fact](int n) -> long { return n <= 1 ? 1 : n * fact(n - 1); };
	std::function<int(int, int)> gcd = [&](int a, int b) { return b == 0 ? a : gcd(b, a % b); };
	std::printf("fact(20)=%ld gcd(1071,462)=%d\n", fact(20), gcd(1071, 462));

	auto add10 = make_adder(10);
	auto c1 = make_counter(), c2 = make_counter();
	c1();
	c1();
	std::printf("adder=%d counters=%ld,%ld\n", add10(5), c1(), c2());

	using namespace std::placeholders;
	auto minus = [](int a, int b) { return a - b; };
	auto swapped = std::bind(minus, _2, _1);
	auto minus_from_100 = std::bind(minus, 100, _1);
	std::printf("bind swapped=%d from100=%d\n", swapped(3, 10), minus_from_100(58));

	Counter ctr;
	int (Counter::*mp)(int) = &Counter::add;
	(ctr.*mp)(5);
	std::function<int(Counter &, int)> via_fn = &Counter::add;
	via_fn(ctr, 10);
	auto bound = std::bind(&Counter::add, &ctr, _1);
	bound(100);
	int before = ctr.n;
	int inv = std::invoke(&Counter::add, ctr, 1);
	std::printf("member pointers: n=%d invoke=%d\n", before, inv);
	Doubler d;
	d.n = 3;
	int (Counter::*vmp)(int) const = &Counter::scaled;
	Counter &base = d;
	std::printf("virtual member pointer: %d %d\n", (base.*vmp)(5), (ctr.*vmp)(1));

	std::vector<std::function<std::string(const std::string &)>> pipeline = {
		[](const std::string &s) { return s + "!"; },
		[](const std::string &s) { return "<" + s + ">"; },
		[](const std::string &s) {
			std::string r = s;
			std::reverse(r.begin(), r.end());
			return r;
		},
	};
	std::string val = "fn";
	for (auto &f : pipeline)
		val = f(val);
	std::printf("pipeline=%s\n", val.c_str());

	std::map<std::string, std::function<double(double, double)>> ops = {
		{"add", std::plus<double>()}, {"mul", std::multiplies<double>()}, {"max", [](double a, double b) { return a > b ? a : b; }},
		{"pow2", [](double a, double b) { return a * a + b * b; }}};
	for (auto &kv : ops)
		std::printf("op %s(3,4)=%g\n", kv.first.c_str(), kv.second(3, 4));

	std::function<void()> empty;
	try {
		empty();
	} catch (const std::bad_function_call &) {
		std::printf("bad_function_call caught; empty=%d\n", !empty);
	}
	auto big_capture = [arr = std::vector<int>(1000, 3)](int i) { return arr[(size_t)i] * i; };
	std::function<int(int)> stored = big_capture;
	std::function<int(int)> moved = std::move(stored);
	std::printf("big capture=%d\n", moved(999));

	std::vector<int> nums(50);
	std::iota(nums.begin(), nums.end(), -25);
	std::sort(nums.begin(), nums.end(), [](int a, int b) { return std::abs(a) < std::abs(b) || (std::abs(a) == std::abs(b) && a < b); });
	std::printf("sorted by |x|: %d %d %d %d %d\n", nums[0], nums[1], nums[2], nums[3], nums[4]);
	int carr[] = {5, -1, 3, 9, 0};
	std::qsort(carr, 5, sizeof carr[0], c_compare);
	std::printf("qsort with C callback: %d %d %d %d %d\n", carr[0], carr[1], carr[2], carr[3], carr[4]);
	unsigned long acc = 0;
	std::for_each(nums.begin(), nums.end(), [&acc](int x) { acc = acc * 3 + (unsigned long)x; });
	std::printf("for_each acc=%lu\n", acc);
	return 0;
}
