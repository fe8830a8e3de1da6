// cxx.cpp: templates, a namespace, overloads and exceptions. It counts
// its own calls and throws and prints them: the probe tests compare
// fn probes on demangled names and libstdc++'s usdt throw/catch probes
// with these counts.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

static int n_add_int, n_add_double, n_twice_int, n_twice_double, n_manhattan, n_scale_int, n_scale_long, n_throws, n_mix_il, n_mix_li;

template <typename T> struct Acc {
	T sum{};
	__attribute__((noinline)) void add(T v) {
		if (sizeof(T) == sizeof(int)) n_add_int++; else n_add_double++;
		sum += v;
	}
};

template <typename T> __attribute__((noinline)) T twice(T v) {
	if (sizeof(T) == sizeof(int)) n_twice_int++; else n_twice_double++;
	return v + v;
}

// Names with commas: mix<int, long>(int, long) and mix<long, int>.
template <typename A, typename B> __attribute__((noinline)) A mix(A a, B b) {
	if (sizeof(A) == sizeof(int)) n_mix_il++; else n_mix_li++;
	return a + (A)b;
}

namespace geo {
struct Point { int x, y; };
__attribute__((noinline)) int manhattan(const Point *p) {
	n_manhattan++;
	return std::abs(p->x) + std::abs(p->y);
}
__attribute__((noinline)) int scale(int v) { n_scale_int++; return v * 3; }
__attribute__((noinline)) long scale(long v) { n_scale_long++; return v * 5; }
}

__attribute__((noinline)) int risky(int i) {
	if (i % 3 == 0) {
		n_throws++;
		throw std::runtime_error("bad " + std::to_string(i));
	}
	return i;
}

int main(int argc, char **argv) {
	int n = argc > 1 ? std::atoi(argv[1]) : 10;
	Acc<int> ai;
	Acc<double> ad;
	long caught = 0, m = 0;
	for (int i = 0; i < n; i++) {
		ai.add(twice(i));
		if (i % 2 == 0) ad.add(twice(i * 0.5));
		m += mix<int, long>(i, 2L) + (i % 3 == 0 ? mix<long, int>(i, 1) : 0);
		geo::Point p{i, -2 * i};
		m += geo::manhattan(&p) + geo::scale(i) + geo::scale((long)i * 2);
		try {
			risky(i);
		} catch (const std::exception &e) {
			caught++;
		}
	}
	std::printf("Acc<int>::add %d\nAcc<double>::add %d\ntwice<int> %d\ntwice<double> %d\ngeo::manhattan %d\ngeo::scale(int) %d\ngeo::scale(long) %d\nthrows %d\ncaught %ld\nmix<int, long> %d\nmix<long, int> %d\nsum %ld\n",
	            n_add_int, n_add_double, n_twice_int, n_twice_double, n_manhattan, n_scale_int, n_scale_long, n_throws, caught, n_mix_il, n_mix_li, m);
	return 0;
}
