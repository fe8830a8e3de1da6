// jitcall: calls code without a symbol through a register, as a JIT does.
// It copies a small function into an anonymous executable mapping and
// calls it from run() through a function pointer (call *%reg), then
// prints the mapping's address, so the test knows the callee's entry.
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

typedef int (*fn_t)(int);

// mov eax, edi; add eax, 1; ret
static const unsigned char code[] = {0x89, 0xf8, 0x83, 0xc0, 0x01, 0xc3};

__attribute__((noinline)) int run(fn_t f, int n) {
	int s = 0;
	for (int i = 0; i < n; i++)
		s += f(i);
	return s;
}

int main(void) {
	unsigned char *p = mmap(0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memcpy(p, code, sizeof code);
	int s = run((fn_t)p, 700);
	printf("%p %d\n", (void *)p, s);
	return s == 245350 ? 0 : 2;
}
