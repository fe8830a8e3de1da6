/* inotify, for the strace comparison and natively against ttd: a watch on
 * a directory sees a file created, written, closed, renamed and removed;
 * a second watch with IN_MASK_ADD; a bad path; removing a watch (its
 * IN_IGNORED); inotify_init1's flags; a blocking read woken by a child. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void drain(int fd)
{
	char buf[4096] __attribute__((aligned(8)));
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *e = (struct inotify_event *)p;
			printf("wd=%d mask=%#x cookie-set=%d name=%s\n", e->wd, e->mask, e->cookie != 0, e->len ? e->name : "-");
			p += sizeof *e + e->len;
		}
	}
}

int main(void)
{
	char dir[] = "inotify-test-XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	write(-1, "START", 5);
	int fd = syscall(SYS_inotify_init1, IN_NONBLOCK | IN_CLOEXEC);
	printf("init1 ok=%d cloexec=%d\n", fd >= 0, (fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
	int wd = syscall(SYS_inotify_add_watch, fd, dir, IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE);
	int wd2 = syscall(SYS_inotify_add_watch, fd, dir, IN_ATTRIB | IN_MASK_ADD);
	printf("wd=%d same=%d\n", wd, wd == wd2);
	printf("missing: %d\n", (int)syscall(SYS_inotify_add_watch, fd, "no-such-dir/x", IN_ALL_EVENTS));
	char path[64], path2[64];
	snprintf(path, sizeof path, "%s/f", dir);
	snprintf(path2, sizeof path2, "%s/g", dir);
	int f = open(path, O_CREAT | O_WRONLY, 0644);
	write(f, "x", 1);
	close(f);
	chmod(path, 0600);
	rename(path, path2);
	unlink(path2);
	drain(fd);
	/* A blocking read, woken by a child's file. */
	int bfd = syscall(SYS_inotify_init);
	syscall(SYS_inotify_add_watch, bfd, dir, IN_CREATE);
	if (fork() == 0) {
		usleep(20000);
		close(open(path, O_CREAT | O_WRONLY, 0644));
		_exit(0);
	}
	char buf[256] __attribute__((aligned(8)));
	ssize_t n = read(bfd, buf, sizeof buf);
	struct inotify_event *e = (struct inotify_event *)buf;
	printf("blocking read %zd: mask=%#x name=%s\n", n, e->mask, e->name);
	wait(NULL);
	printf("rm_watch=%d\n", (int)syscall(SYS_inotify_rm_watch, fd, wd));
	drain(fd);
	printf("rm_watch again=%d\n", (int)syscall(SYS_inotify_rm_watch, fd, wd));
	write(-1, "END", 3);
	unlink(path);
	rmdir(dir);
	return 0;
}
