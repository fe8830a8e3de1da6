// watchpage: watched data on pages the program keeps busy (the live
// watch tests, probe/live). pg.watched shares a page with pg.busy, which
// every iteration reads and writes; o[1] is a heap object between two
// busy neighbours. A read(2) and a memset write across pg.watched from
// unaligned addresses; a forked child writes it too (in its own
// memory: reported with the child's pid). Prints the watched object's address first.
// With a second argument it execs itself (shorter) at the end.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct page {
	long busy[256];
	volatile long watched;
	long tail[8];
} __attribute__((aligned(4096)));
struct page pg;

struct obj {
	volatile long a, b, c;
};

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 100;
	struct obj *o = malloc(sizeof *o * 3);
	memset((void *)o, 0, sizeof *o * 3);
	printf("watched %p obj %p\n", (void *)&pg.watched, (void *)&o[1].b);
	fflush(stdout);
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < 256; j++)
			pg.busy[j] += i ^ j;
		if (i % 10 == 0)
			pg.watched += i;
		o[0].c += i;
		o[2].a += pg.busy[i & 255];
		if (i % 7 == 0)
			o[1].b = i * 3;
		pg.tail[i & 7] = pg.watched;
	}
	volatile long at = 250 * 8 + 3; // unaligned, across busy, watched, tail
	int fd = open(argv[0], O_RDONLY);
	if (fd < 0 || read(fd, (char *)&pg + at, 100) != 100)
		return 2;
	// Again, over the same bytes less the first 30: a recorder's
	// prediction cache holds the rest (a record with a span left out).
	memset((char *)&pg + at, 0, 30);
	if (pread(fd, (char *)&pg + at, 100, 0) != 100)
		return 2;
	close(fd);
	memset((char *)&pg + at + 26, 0x11, 50);
	pid_t c = fork();
	if (c == 0) {
		pg.watched = 99;
		o[1].b = 98;
		_exit(0);
	}
	waitpid(c, NULL, 0);
	printf("%ld %ld %ld %ld\n", pg.watched, o[1].b, pg.tail[3], pg.busy[7]);
	if (argc > 2) {
		// Run again, shorter, in a new image (an exec of the first
		// process: the watched bytes of the old one are gone).
		fflush(stdout);
		char *args[] = {argv[0], "20", NULL};
		execv(argv[0], args);
		return 3;
	}
	return 0;
}
