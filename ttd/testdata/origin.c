// origin gives the value-origin tests chains they know: a constant that
// goes through a local, a function argument and a return value into a
// global; bytes a syscall wrote that memcpy copies; and a computed value.
#include <string.h>
#include <unistd.h>

int source;        // 41: from the constant in main, through pass()
int computed;      // source * 3 + 1: computed in main
char buf[16];      // read(2) from a pipe: "ABCDEFGH"
char copied[16];   // memcpy of buf
char moved[32];    // memmove of copied's bytes 4 bytes further, overlapping
volatile size_t n = 8;
char untouched[8192]; // never accessed

__attribute__((noinline)) int pass(int v) {
	int local = v;
	return local;
}

int main(void) {
	int a = 41;
	int b = a;
	source = pass(b);
	computed = source * 3 + 1;
	int p[2];
	if (pipe(p) != 0 || write(p[1], "ABCDEFGH", 8) != 8 || read(p[0], buf, 8) != 8)
		return 1;
	memcpy(copied, buf, n);
	memcpy(moved, copied, n);
	memmove(moved + 4, moved, n);
	return copied[0] == 'A' && computed == 124 ? 0 : 2;
}
