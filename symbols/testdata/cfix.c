// cfix.c is the C fixture of the symbols tests: a small program whose
// variables cover the C types a debugger must show. The tests stop it
// under gdb at the line marked BREAK and compare.
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum color { RED, GREEN = 5, BLUE };
typedef unsigned long ulong_t;

struct point {
	int x, y;
};

union num {
	int i;
	float f;
};

struct node {
	const char *name;
	struct point pos;
	int vals[4];
	enum color col;
	union num n;
	struct node *next;
	unsigned flag : 3;
};

int g_counter = 42;
const char *g_msg = "hello";
struct point g_origin = {7, -8};
long g_table[5] = {1, 2, 3, 4, 5};

extern int lib_apply(int (*fn)(int, struct node *), int v, struct node *n);

/* mix is inlined even at -O0: the stop is inside it, so the backtrace
   starts with an inlined frame. */
static inline __attribute__((always_inline)) int mix(int a, int b)
{
	int sum = a * b;
	g_counter += sum; /* BREAK */
	return sum;
}

__attribute__((noinline)) int leaf(int depth, struct node *n)
{
	int local = depth * 3;
	long double ld = 2.5L;
	double d = 3.25;
	float f = -1.5f;
	char c = 'A';
	unsigned char uc = 200;
	short s = -12;
	unsigned short us = 65000;
	long long ll = -1234567890123LL;
	unsigned long long ull = 18446744073709551615ULL;
	bool b = true;
	int8_t i8 = -5;
	ulong_t ul = 77;
	enum color col = BLUE;
	volatile int vol = 9;
	const int cst = 10;
	int *ip = &local;
	struct point pt = {3, 4};
	int arr[3] = {10, 20, 30};
	char str[8] = "abc";
	{
		int local = 99; /* shadows */
		int inner = local + 1;
		g_counter += inner + vol + cst + arr[0] + (int)ld + (int)d + (int)f + c + uc + s + us + (int)ll + (int)ull + b + i8 + (int)ul + col + *ip + pt.x + str[0];
		local += mix(inner, g_counter);
	}
	return local + n->pos.x;
}

int callback(int v, struct node *n)
{
	return leaf(v + 1, n) + 1; /* CALL */
}

int main(int argc, char **argv)
{
	struct node second = {"second", {5, 6}, {0}, RED, {.i = 1}, NULL, 1};
	struct node first = {"first", {1, 2}, {1, 2, 3, 4}, GREEN, {.f = 1.5f}, &second, 5};
	int r = lib_apply(callback, argc, &first);
	printf("%d %d\n", r, g_counter);
	return 0;
}
