/* abandon.c: leaf calls made at the stack slot of a frame that never
   returned. bail is called from loop and leaves by __builtin_longjmp (a
   jump, no call, no ret), so its frame is still on top when loop, back at
   the same stack pointer, calls leaf: leaf's return address goes to the
   very slot bail's went to, and bail's frame must end there, not become
   leaf's caller. skip does the same by a hand-made tail jump: it pops its
   own return address and jumps to it, so the caller runs on after it
   without a ret. The tree is main → loop → {bail, leaf, skip, tailer}
   and nothing below bail, skip or tailer. */
#include <stdio.h>

static volatile int sink;
static void *jb[5];
static volatile int runs = 3; /* not a constant: no unrolling */

__attribute__((noinline)) void leaf(int i) { sink += i; }

__attribute__((noinline)) void bail(int i) {
	sink += i;
	__builtin_longjmp(jb, 1);
}

/* skip: returns to its caller by pop and jmp, not ret. */
__asm__(".text\n"
	".globl skip\n"
	".type skip, @function\n"
	"skip:\n"
	"\taddl %edi, sink(%rip)\n"
	"\tpopq %rax\n"
	"\tjmp *%rax\n"
	".size skip, .-skip\n");
void skip(int i);

/* tailer: jumps to leaf (a tail call); called through a pointer, its
   frame is named by its own entry, the first one after the call, not by
   leaf's, the second. */
__asm__(".text\n"
	".globl tailer\n"
	".type tailer, @function\n"
	"tailer:\n"
	"\tjmp leaf\n"
	".size tailer, .-tailer\n");
void tailer(int i);
static void (*volatile hop)(int) = tailer;

__attribute__((noinline)) void loop(int n) {
	for (int i = 0; i < n; i++) {
		if (__builtin_setjmp(jb) == 0)
			bail(i);
		/* At bail's slot: a run of leaf calls from one call site
		   (merged into one record by translated code). */
		for (int j = 0; j < runs; j++)
			leaf(i + j);
		skip(i);
		leaf(i);
		skip(i);
		for (int j = 0; j < runs + 1; j++)
			leaf(i * j);
		hop(i);
	}
}

int main(void) {
	loop(400);
	printf("%d\n", sink);
	return 0;
}
