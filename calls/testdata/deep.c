/* deep.c: a call tree with a known shape. main → work → (leaf ×N, mid →
   leaf), rec recursing 5 deep, and a decision deep in the tree that
   argv[1] flips: "bad" makes check take the other branch (fixup). */
#include <stdio.h>
#include <string.h>

static volatile int sink;

__attribute__((noinline)) void leaf(int i) { sink += i; }
__attribute__((noinline)) void mid(int i) { leaf(i); leaf(i + 1); }
__attribute__((noinline)) int rec(int n) { return n == 0 ? 0 : 1 + rec(n - 1); }
__attribute__((noinline)) void fixup(int *v) { *v = -*v; leaf(*v); }
__attribute__((noinline)) void audit(int v) { sink += v * 3; }
__attribute__((noinline)) int check(int v, int bad) {
	if (bad && v == 77)
		fixup(&v); /* the known decision */
	else
		audit(v);
	return v;
}
__attribute__((noinline)) void stage2(int v, int bad) { sink += check(v, bad); }
__attribute__((noinline)) void stage1(int v, int bad) { stage2(v, bad); mid(v); }
__attribute__((noinline)) void work(int n, int bad) {
	for (int i = 0; i < n; i++) {
		leaf(i);
		if (i % 10 == 0)
			mid(i);
	}
	for (int i = 70; i < 80; i++)
		stage1(i, bad);
}

int main(int argc, char **argv) {
	int bad = argc > 1 && strcmp(argv[1], "bad") == 0;
	work(1000, bad);
	sink += rec(5);
	printf("%d\n", sink);
	return 0;
}
