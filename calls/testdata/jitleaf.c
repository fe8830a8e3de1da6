// jitleaf: code without a symbol (copied into an anonymous mapping, as a
// JIT makes it) makes leaf calls: g1 calls leaf at its third instruction,
// within the window after its own call in which ttd calls looks for its
// function's entry, and twice after a loop of 81 instructions; g2 only
// after the loop. run() calls both through registers, n times. The
// program prints the two entries, so the test knows the frames' names.
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

typedef void (*gfn)(int (*)(void));

// push rbx; mov rbx, rdi; call rbx; mov ecx, 40; 1: dec ecx; jnz 1b;
// call rbx; call rbx; pop rbx; ret
static const unsigned char g1[] = {0x53, 0x48, 0x89, 0xfb, 0xff, 0xd3, 0xb9, 0x28, 0, 0, 0, 0xff, 0xc9,
	0x75, 0xfc, 0xff, 0xd3, 0xff, 0xd3, 0x5b, 0xc3};
// push rbx; mov rbx, rdi; mov ecx, 40; 1: dec ecx; jnz 1b; call rbx;
// call rbx; pop rbx; ret
static const unsigned char g2[] = {0x53, 0x48, 0x89, 0xfb, 0xb9, 0x28, 0, 0, 0, 0xff, 0xc9, 0x75, 0xfc,
	0xff, 0xd3, 0xff, 0xd3, 0x5b, 0xc3};

static volatile int hits;

__attribute__((noinline)) int leaf(void) { return ++hits; }

__attribute__((noinline)) void run(gfn a, gfn b, int n) {
	for (int i = 0; i < n; i++) {
		a(leaf);
		b(leaf);
	}
}

int main(void) {
	unsigned char *p = mmap(0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memcpy(p, g1, sizeof g1);
	memcpy(p + 64, g2, sizeof g2);
	run((gfn)p, (gfn)(p + 64), 300);
	printf("%p %p %d\n", (void *)p, (void *)(p + 64), hits);
	return hits == 1500 ? 0 : 2;
}
