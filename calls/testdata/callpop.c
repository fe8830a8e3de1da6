// callpop: functions that read their own PC the i386 way, a call to the
// next instruction and a pop, so the call's frame ends without a ret of
// its own: the caller's ret then returns from both frames (thunk_pc;
// both's call to work goes to the abandoned frame's slot instead). And
// signals taken at a syscall made straight from main, right after a ret
// back to it: the frame they interrupt is named.
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) unsigned long thunk_pc(void) {
	unsigned long pc;
	__asm__ volatile("call 1f\n1: pop %0" : "=r"(pc));
	return pc;
}

__attribute__((noinline)) unsigned long work(unsigned long x) { return x * 3 + 1; }

__attribute__((noinline)) unsigned long both(unsigned long x) {
	unsigned long pc;
	__asm__ volatile("call 1f\n1: pop %0" : "=r"(pc));
	return work(x) + (pc & 1);
}

static volatile unsigned long hits;

static void on_usr1(int sig) { hits += sig; }

int main(void) {
	unsigned long s = 0;
	for (unsigned long i = 0; i < 100000; i++) {
		s += thunk_pc() & 0xff;
		s += both(i);
	}
	signal(SIGUSR1, on_usr1);
	long pid = getpid();
	for (unsigned long i = 0; i < 2000; i++) {
		s += both(i);
		long r;
		__asm__ volatile("syscall" : "=a"(r) : "a"(62L), "D"(pid), "S"((long)SIGUSR1) : "rcx", "r11", "memory");
		s += (unsigned long)r;
	}
	printf("%lu %lu\n", s, hits);
	return 0;
}
