// moves.c: output written by sendfile, splice, tee and copy_file_range
// instead of write. argv[1] is a scratch file. Errors (copy_file_range
// and splice to a terminal, tee to a non-pipe) are printed on stderr,
// as they are the same natively.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/sendfile.h>
#include <unistd.h>

static void report(const char *what, ssize_t n) {
	if (n < 0)
		fprintf(stderr, "%s: %s\n", what, strerror(errno));
}

int main(int argc, char **argv) {
	const char text[] = "one: sendfile\ntwo: splice through a pipe\nthree: copy_file_range\n";
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, text, sizeof text - 1) != sizeof text - 1)
		return 2;
	write(1, "start\n", 6);
	off_t off = 0;
	report("sendfile", sendfile(1, fd, &off, 14));
	int p[2];
	pipe(p);
	loff_t lo = 14;
	ssize_t n = splice(fd, &lo, p[1], NULL, 27, 0);
	report("splice in", n);
	if (n > 0)
		report("splice out", splice(p[0], NULL, 1, NULL, n, 0));
	write(p[1], "four: tee\n", 10);
	report("tee", tee(p[0], 1, 10, 0));
	char rest[16];
	read(p[0], rest, sizeof rest);
	loff_t ci = 41;
	report("copy_file_range", copy_file_range(fd, &ci, 1, NULL, 24, 0));
	/* sendfile from the file's own offset, which it advances. */
	lseek(fd, 0, SEEK_SET);
	report("sendfile2", sendfile(1, fd, NULL, 4));
	char b[4];
	printf("after: %ld %zd\n", (long)lseek(fd, 0, SEEK_CUR), read(fd, b, 3));
	fflush(stdout);
	/* Some to stderr. */
	off = 0;
	report("sendfile3", sendfile(2, fd, &off, 4));
	write(2, "\n", 1);
	return 0;
}
