// adjacent writes a watched 8-byte cell (cell.mid) with stores on
// consecutive instructions, with stores that overlap it in part and with
// a syscall, and
// its neighbours (cell.lo, cell.hi) without touching it. The ttd tests
// watch cell.mid and check every stop at these boundaries.
#include <stdio.h>
#include <time.h>

struct {
	unsigned char lo[8], mid[8], hi[8];
} cell __attribute__((aligned(64)));

int main(void) {
	__asm__ volatile(
	    "movq $0x11, cell+8(%%rip)\n\t"  // W1: all of mid
	    "movq $0x22, cell+8(%%rip)\n\t"  // W2: the very next instruction
	    "movq $0x33, cell+16(%%rip)\n\t" // hi only: not a hit
	    "movq $0x44, cell(%%rip)\n\t"    // lo only: not a hit
	    "movl $0x55, cell+12(%%rip)\n\t" // W3: mid[4..8)
	    "movq $-1, cell+4(%%rip)\n\t"    // W4: lo[4..8) and mid[0..4)
	    "movw $0x66, cell+15(%%rip)\n\t" // W5: mid[7] and hi[0]
	    "movq cell+8(%%rip), %%rax\n\t"  // R1: a read of all of mid
	    "movb $0x77, cell+16(%%rip)\n\t" // hi only
	    ::: "rax", "memory");
	// W6: the kernel writes mid and hi (a syscall's output buffer).
	clock_gettime(CLOCK_MONOTONIC, (struct timespec *)cell.mid);
	printf("%x\n", cell.mid[0]);
	return 0;
}
