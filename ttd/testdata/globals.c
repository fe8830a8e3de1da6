// globals writes a global in a few places, from main and from a helper,
// around a syscall, and reads an array in a loop. The ttd tests look for
// these writes by symbol.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int counter;           // written at the four "counter =" lines
long table[8];         // written once, read twice
char never_touched[64]; // never accessed: unknown at every position
volatile int in_handler;

__attribute__((noinline)) int helper(int x) {
	counter = x;
	return x * 2;
}

static void on_usr1(int sig) { in_handler = sig; }

int main(void) {
	int s = 0;
	counter = 1;
	for (int i = 0; i < 8; i++)
		table[i] = i * 3;
	counter = 2;
	write(1, "hi\n", 3);
	s += helper(5);
	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);
	for (int r = 0; r < 2; r++)
		for (int i = 0; i < 8; i++)
			s += table[i];
	s += helper(6);
	counter = 7;
	printf("%d %d %d\n", s, counter, in_handler);
	return 0;
}
