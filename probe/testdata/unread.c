// unread: passes take() a pointer to a writable string the program
// never reads, so its recording never saw the bytes (a live probe reads
// them from the running program; a probe over the recording must fault).
#include <stdio.h>
char unread[64] = "never read by the program";
__attribute__((noinline)) void take(char *p) { __asm__ volatile("" :: "r"(p)); }
int main(void) { take(unread); puts("done"); return 0; }
