/* File-system syscalls for the syscall export and reanimation tests: it
 * builds and modifies a tree under its working directory, and every call
 * is deterministic (no times, no addresses in what it prints). The
 * write(-1, "START", 5) and write(-1, "END", 3) markers bracket the
 * calls the strace comparison looks at. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define CHECK(x)                                                             \
	do {                                                                 \
		if ((x) < 0) {                                               \
			fprintf(stderr, "line %d: %s: %s\n", __LINE__, #x, strerror(errno)); \
			exit(1);                                             \
		}                                                            \
	} while (0)

int main(void)
{
	char buf[256];
	write(-1, "START", 5);
	umask(022);
	CHECK(mkdir("tree", 0755));
	mkdir("tree", 0755); /* EEXIST */
	CHECK(mkdir("tree/sub", 0700));
	int fd = open("tree/a.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd);
	CHECK(write(fd, "hello, world\n", 13));
	struct iovec iov[3] = {{"one ", 4}, {"two ", 4}, {"three\n", 6}};
	CHECK(writev(fd, iov, 3));
	CHECK(pwrite(fd, "HELLO", 5, 0));
	CHECK(lseek(fd, 0, SEEK_END));
	char bin[40];
	for (int i = 0; i < 40; i++)
		bin[i] = (char)(i * 7);
	CHECK(write(fd, bin, sizeof bin));
	CHECK(fsync(fd));
	CHECK(fdatasync(fd));
	CHECK(close(fd));
	close(fd); /* EBADF */
	fd = open("tree/a.txt", O_RDONLY | O_CLOEXEC);
	CHECK(fd);
	CHECK(read(fd, buf, 10));
	CHECK(pread(fd, buf, 8, 7));
	char r1[4], r2[6];
	struct iovec riov[2] = {{r1, sizeof r1}, {r2, sizeof r2}};
	CHECK(lseek(fd, 0, SEEK_SET));
	CHECK(readv(fd, riov, 2));
	struct stat st;
	CHECK(fstat(fd, &st));
	CHECK(fcntl(fd, F_GETFL));
	CHECK(fcntl(fd, F_GETFD));
	CHECK(fcntl(fd, F_SETFD, 0));
	int fd2 = dup(fd);
	CHECK(fd2);
	CHECK(dup2(fd, 10));
	CHECK(close(10));
	CHECK(close(fd2));
	CHECK(close(fd));
	CHECK(stat("tree/a.txt", &st));
	stat("tree/missing", &st); /* ENOENT */
	CHECK(access("tree/a.txt", R_OK | W_OK));
	access("tree/missing", F_OK);
	fd = creat("tree/b.bin", 0600);
	CHECK(fd);
	CHECK(write(fd, "0123456789abcdefghij", 20));
	CHECK(ftruncate(fd, 12));
	CHECK(fchmod(fd, 0640));
	CHECK(close(fd));
	CHECK(truncate("tree/b.bin", 30));
	CHECK(rename("tree/b.bin", "tree/sub/c.bin"));
	CHECK(syscall(SYS_renameat2, AT_FDCWD, "tree/sub/c.bin", AT_FDCWD, "tree/d.bin", 1 /* RENAME_NOREPLACE */));
	CHECK(link("tree/a.txt", "tree/a.link"));
	CHECK(symlink("a.txt", "tree/a.sym"));
	CHECK(symlink("../../outside", "tree/sub/escape"));
	ssize_t n = readlink("tree/a.sym", buf, sizeof buf);
	CHECK(n);
	CHECK(lstat("tree/a.sym", &st));
	CHECK(chmod("tree/a.txt", 0600));
	struct timespec ts[2] = {{1000000000, 0}, {1200000000, 500}};
	CHECK(utimensat(AT_FDCWD, "tree/a.txt", ts, 0));
	CHECK(utimensat(AT_FDCWD, "tree/a.sym", ts, AT_SYMLINK_NOFOLLOW));
	CHECK(mkdir("tree/gone", 0755));
	CHECK(rmdir("tree/gone"));
	rmdir("tree"); /* ENOTEMPTY */
	fd = open("tree/tmp", O_RDWR | O_CREAT | O_EXCL, 0644);
	CHECK(fd);
	CHECK(write(fd, "temporary", 9));
	CHECK(close(fd));
	CHECK(unlink("tree/tmp"));
	unlink("tree/tmp"); /* ENOENT */
	int p[2];
	CHECK(pipe2(p, O_CLOEXEC));
	CHECK(write(p[1], "through a pipe", 14));
	CHECK(read(p[0], buf, sizeof buf));
	CHECK(close(p[0]));
	CHECK(close(p[1]));
	int dfd = open("tree", O_RDONLY | O_DIRECTORY);
	CHECK(dfd);
	CHECK(mkdirat(dfd, "deep", 0750));
	fd = openat(dfd, "deep/e.txt", O_WRONLY | O_CREAT | O_APPEND, 0664);
	CHECK(fd);
	CHECK(write(fd, "appended\n", 9));
	CHECK(close(fd));
	CHECK(unlinkat(dfd, "a.link", 0));
	CHECK(close(dfd));
	CHECK(chdir("tree/sub"));
	fd = open("f.txt", O_WRONLY | O_CREAT, 0644);
	CHECK(fd);
	CHECK(write(fd, "in sub\n", 7));
	CHECK(close(fd));
	CHECK(chdir("../.."));
	write(-1, "END", 3);
	return 0;
}
