#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
int counter; char hostname[64];
__attribute__((noinline)) int leaf(int x) { counter++; return x * 2; }
__attribute__((noinline)) int mid(int x) { return leaf(x) + leaf(x + 1); }
int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 100;
	long s = 0;
	for (int i = 0; i < n; i++) s += mid(i);
	for (int i = 0; i < 5; i++) { void *p = malloc(16 << i); free(p); }
	int fd = open("/etc/hostname", O_RDONLY); if (fd >= 0) { read(fd, hostname, sizeof hostname); close(fd); }
	fd = open("/nonexistent/file", O_RDONLY);
	char buf[100];
	for (int i = 0; i < 7; i++) { int k = snprintf(buf, sizeof buf, "line %d of output %*s\n", i, i * 5, "x"); write(1, buf, k); }
	printf("sum %ld counter %d\n", s, counter);
	return 0;
}
