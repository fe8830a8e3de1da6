// File-system and descriptor syscalls; argv[1] is an empty directory.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static int cmp(const void *a, const void *b) { return strcmp(*(char **)a, *(char **)b); }

static void on_alarm(int sig) { (void)sig; }

int main(int argc, char **argv) {
	setvbuf(stdout, 0, _IONBF, 0);
	if (argc < 2 || chdir(argv[1]) != 0) {
		printf("chdir failed\n");
		return 1;
	}
	char cwd[4096];
	getcwd(cwd, sizeof cwd);
	printf("cwd matches %d\n", strcmp(cwd, argv[1]) == 0);

	int fd = open("a.txt", O_CREAT | O_RDWR | O_TRUNC, 0644);
	printf("open fd %d\n", fd);
	printf("write %zd\n", write(fd, "hello, world\n", 13));
	struct iovec iov[2] = {{"abc", 3}, {"defg\n", 5}};
	printf("writev %zd\n", writev(fd, iov, 2));
	printf("lseek %ld\n", (long)lseek(fd, 0, SEEK_SET));
	char buf[64] = {0};
	printf("read %zd %.5s\n", read(fd, buf, sizeof buf), buf);
	printf("pread %zd %.3s\n", pread(fd, buf, 3, 7), buf);
	struct stat st;
	fstat(fd, &st);
	printf("fstat size %ld reg %d mode %o\n", (long)st.st_size, S_ISREG(st.st_mode), st.st_mode & 0777);
	printf("ftruncate %d\n", ftruncate(fd, 5));
	stat("a.txt", &st);
	printf("stat size %ld\n", (long)st.st_size);
	printf("fcntl getfd %d\n", fcntl(fd, F_GETFD));
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	printf("fcntl getfd %d\n", fcntl(fd, F_GETFD));
	printf("fcntl getfl rdwr %d\n", (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR);
	int d = dup(fd);
	printf("dup %d cloexec %d\n", d, fcntl(d, F_GETFD));
	printf("dup2 %d\n", dup2(fd, 10));
	printf("dupfd %d\n", fcntl(fd, F_DUPFD, 20));
	close(d);
	close(10);
	int rc = close(99);
	printf("close bad %d %s\n", rc, strerror(errno));
	ssize_t n = read(99, buf, 1);
	printf("read bad %zd %s\n", n, strerror(errno));
	lseek(fd, 0, SEEK_SET);
	n = read(fd, (void *)8, 1);
	printf("read efault %zd %s\n", n, strerror(errno));
	close(fd);

	printf("mkdir %d\n", mkdir("sub", 0755));
	rc = mkdir("sub", 0755);
	printf("mkdir again %d %s\n", rc, strerror(errno));
	printf("rename %d\n", rename("a.txt", "sub/b.txt"));
	printf("access %d\n", access("sub/b.txt", R_OK | W_OK));
	rc = access("a.txt", F_OK);
	printf("access missing %d %s\n", rc, strerror(errno));
	printf("symlink %d\n", symlink("sub/b.txt", "link"));
	n = readlink("link", buf, sizeof buf);
	printf("readlink %.*s\n", (int)n, buf);
	lstat("link", &st);
	printf("lstat link %d\n", S_ISLNK(st.st_mode));
	printf("link %d\n", link("sub/b.txt", "hard"));
	stat("hard", &st);
	printf("nlink %ld\n", (long)st.st_nlink);
	printf("chmod %d\n", chmod("hard", 0600));
	stat("sub/b.txt", &st);
	printf("mode %o\n", st.st_mode & 0777);
	struct timespec ts[2] = {{1000000000, 0}, {1000000000, 0}};
	printf("utimensat %d\n", utimensat(AT_FDCWD, "hard", ts, 0));
	stat("hard", &st);
	printf("mtime %ld\n", (long)st.st_mtime);
	printf("truncate %d\n", truncate("hard", 2));

	DIR *dir = opendir(".");
	char *names[16];
	int k = 0;
	struct dirent *de;
	while ((de = readdir(dir)) && k < 16)
		names[k++] = strdup(de->d_name);
	closedir(dir);
	qsort(names, k, sizeof *names, cmp);
	printf("dir:");
	for (int i = 0; i < k; i++)
		printf(" %s", names[i]);
	printf("\n");

	int dfd = open("sub", O_RDONLY | O_DIRECTORY);
	int f2 = openat(dfd, "b.txt", O_RDONLY);
	printf("openat read %zd\n", read(f2, buf, 10));
	printf("fstatat %d\n", fstatat(dfd, "b.txt", &st, 0));
	printf("fchdir %d\n", fchdir(dfd));
	printf("relative open %d\n", open("b.txt", O_RDONLY) >= 0);
	chdir("..");
	close(f2);
	close(dfd);
	printf("unlink %d %d %d\n", unlink("link"), unlink("hard"), unlink("sub/b.txt"));
	printf("rmdir %d\n", rmdir("sub"));

	int p[2];
	printf("pipe %d\n", pipe(p));
	write(p[1], "pipe data", 9);
	struct pollfd pfd = {p[0], POLLIN, 0};
	printf("poll %d revents %d\n", poll(&pfd, 1, 1000), pfd.revents);
	fd_set rs;
	FD_ZERO(&rs);
	FD_SET(p[0], &rs);
	struct timeval tv = {1, 0};
	printf("select %d isset %d\n", select(p[0] + 1, &rs, 0, 0, &tv), FD_ISSET(p[0], &rs));
	printf("pipe read %zd\n", read(p[0], buf, sizeof buf));
	pfd.revents = 0;
	printf("poll empty %d\n", poll(&pfd, 1, 0));
	close(p[1]);
	printf("pipe eof %zd\n", read(p[0], buf, sizeof buf));
	close(p[0]);

	int sv[2];
	printf("socketpair %d\n", socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	send(sv[0], "sock", 4, 0);
	n = recv(sv[1], buf, sizeof buf, 0);
	printf("recv %zd %.4s\n", n, buf);
	close(sv[0]);
	close(sv[1]);

	/* A datagram longer than the buffer: MSG_TRUNC answers its whole
	 * length (iproute2 peeks with an empty buffer to size netlink
	 * replies). */
	printf("dgram pair %d\n", socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	send(sv[0], "0123456789", 10, 0);
	send(sv[0], "abcdefghij", 10, 0);
	memset(buf, 0, sizeof buf);
	n = recv(sv[1], buf, 4, MSG_TRUNC);
	printf("recv trunc %zd %s\n", n, buf);
	struct iovec none = {buf, 0};
	struct msghdr mh = {0};
	mh.msg_iov = &none;
	mh.msg_iovlen = 1;
	printf("recvmsg peek %zd flags %#x\n", recvmsg(sv[1], &mh, MSG_PEEK | MSG_TRUNC), mh.msg_flags);
	close(sv[0]);
	close(sv[1]);

	/* FIFOs: a blocking open waits for the other end, which another
	 * process opens (reader first, then writer first); a signal ends
	 * the wait with EINTR; a non-blocking writer with no reader gets
	 * ENXIO. */
	printf("mkfifo %d\n", mkfifo("fifo", 0600));
	pid_t child = fork();
	if (child == 0) {
		int w = open("fifo", O_WRONLY);
		write(w, "through", 7);
		_exit(0);
	}
	int r = open("fifo", O_RDONLY);
	n = read(r, buf, sizeof buf);
	printf("fifo read %zd %.7s\n", n, buf);
	close(r);
	waitpid(child, NULL, 0);
	child = fork();
	if (child == 0) {
		int r2 = open("fifo", O_RDONLY);
		_exit(read(r2, buf, sizeof buf));
	}
	int w = open("fifo", O_WRONLY);
	printf("fifo write %zd\n", write(w, "xyz", 3));
	close(w);
	int status;
	waitpid(child, &status, 0);
	printf("fifo child read %d\n", WEXITSTATUS(status));
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval soon = {{0, 0}, {0, 20000}};
	setitimer(ITIMER_REAL, &soon, NULL);
	errno = 0;
	printf("fifo interrupted %d", open("fifo", O_RDONLY));
	printf(" %s\n", errno == EINTR ? "EINTR" : "?");
	errno = 0;
	printf("fifo no reader %d", open("fifo", O_WRONLY | O_NONBLOCK));
	printf(" %s\n", errno == ENXIO ? "ENXIO" : "?");

	printf("umask %o\n", umask(022));
	printf("isatty bad %d\n", isatty(99));
	return 0;
}
