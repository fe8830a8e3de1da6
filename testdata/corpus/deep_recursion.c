/* Deep recursion: depth 200000 with a moderate frame on a 64 MiB stack the
 * program maps itself (switching stacks with a few lines of assembly), plus
 * recursion on the normal stack, mutual recursion and Ackermann. */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

long call_on_stack(long arg, long (*fn)(long), void *top);
__asm__(".text\n"
	".globl call_on_stack\n"
	".type call_on_stack,@function\n"
	"call_on_stack:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	mov %rdx, %rsp\n"
	"	call *%rsi\n"
	"	mov %rbp, %rsp\n"
	"	pop %rbp\n"
	"	ret\n"
	".size call_on_stack, .-call_on_stack\n");

static long deep(long n)
{
	volatile char frame[96];
	frame[n % 96] = (char)n;
	if (n == 0)
		return 0;
	long r = deep(n - 1);
	return r + frame[n % 96] + (n & 3);
}

static long shallow(long n)
{
	volatile int frame[4];
	frame[n & 3] = (int)n;
	if (n == 0)
		return 1;
	return (shallow(n - 1) * 31 + frame[n & 3]) % 1000000007;
}

static int is_odd(unsigned n);
static int is_even(unsigned n)
{
	volatile unsigned k = n;
	return k == 0 ? 1 : is_odd(k - 1);
}
static int is_odd(unsigned n)
{
	volatile unsigned k = n;
	return k == 0 ? 0 : is_even(k - 1);
}

static unsigned long ack(unsigned long m, unsigned long n)
{
	if (m == 0)
		return n + 1;
	if (n == 0)
		return ack(m - 1, 1);
	return ack(m - 1, ack(m, n - 1));
}

static long fib(long n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static long mutual_entry(long n) { return is_even((unsigned)n) * 1000 + is_odd((unsigned)n) * 7; }

int main(void)
{
	size_t size = 64u << 20;
	char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (stack == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	void *top = (void *)(((uintptr_t)stack + size) & ~(uintptr_t)15);
	printf("deep(200000) = %ld\n", call_on_stack(200000, deep, top));
	printf("mutual(150001) = %ld\n", call_on_stack(150001, mutual_entry, top));
	printf("deep(1000) on normal stack = %ld\n", deep(1000));
	printf("shallow(40000) = %ld\n", shallow(40000));
	printf("ack(2, 2000) = %lu ack(3, 6) = %lu\n", ack(2, 2000), ack(3, 6));
	printf("fib(24) = %ld\n", fib(24));
	munmap(stack, size);
	return 0;
}
