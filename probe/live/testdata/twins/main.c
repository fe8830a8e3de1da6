// twins: a function named twin in the program and in libtwin.so, a
// function late_fn in a library it dlopens, and two functions whose
// first instruction is a call and a ret (a leaf call's narrow record
// stands for both probes: x86.StepLeaf), between write(2)s.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline, noclone)) int twin(int x) { return x * 3 + 1; }

int lib_twin_calls(int n); // libtwin.so: calls its own twin n times

void callfirst(void);
asm(".text\n"
    ".globl callfirst\n.type callfirst,@function\ncallfirst:\n\tcall retfirst\n\tret\n.size callfirst,.-callfirst\n"
    ".globl retfirst\n.type retfirst,@function\nretfirst:\n\tret\n.size retfirst,.-retfirst\n");

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 100;
	volatile int s = 0;
	for (int i = 0; i < n; i++)
		s += twin(i);
	write(1, "a\n", 2);
	s += lib_twin_calls(2 * n);
	for (int i = 0; i < n; i++)
		callfirst();
	write(1, "b\n", 2);
	void *h = dlopen(argv[2], RTLD_NOW);
	if (!h)
		return 2;
	int (*late)(int) = (int (*)(int))dlsym(h, "late_fn");
	for (int i = 0; i < 3 * n; i++) {
		s += late(i);
		if (i % 100 == 99)
			write(1, "c\n", 2);
	}
	printf("%d\n", s);
	return 0;
}
