/* Process identity, priority, limits and a few plain calls for the
 * strace comparison: the set*id family (with -1 for "unchanged"), process
 * groups and sessions, tkill, getpriority/setpriority, setrlimit,
 * epoll_create, eventfd and preadv/pwritev, each through syscall(2) so
 * that glibc's wrappers choose nothing else; readv at the end of the file
 * and failing; sigaltstack's stack_t in and out; the ids and the CPU
 * that getresuid, getgroups and getcpu write. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

int main(void)
{
	int fd = open("data", O_RDWR | O_CREAT | O_TRUNC, 0644);
	void *altstack = malloc(65536); /* before START: malloc's first call asks getrandom */
	write(-1, "START", 5);
	uid_t uid = getuid();
	gid_t gid = getgid();
	syscall(SYS_setuid, uid);
	syscall(SYS_setgid, gid);
	syscall(SYS_setreuid, -1, uid);
	syscall(SYS_setregid, gid, -1);
	syscall(SYS_setresuid, -1, uid, -1);
	syscall(SYS_setresgid, -1, -1, gid);
	syscall(SYS_setpgid, 0, 0);
	syscall(SYS_getpgid, 0);
	syscall(SYS_getsid, 0);
	syscall(SYS_getsid, 999999999); /* ESRCH */
	syscall(SYS_tkill, syscall(SYS_gettid), 0);
	syscall(SYS_getpriority, PRIO_PROCESS, 0);
	syscall(SYS_setpriority, PRIO_PROCESS, 0, 0);
	syscall(SYS_getpriority, 7, 0); /* EINVAL */
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	syscall(SYS_setrlimit, RLIMIT_NOFILE, &rl);
	syscall(SYS_epoll_create, 4);
	syscall(SYS_epoll_create, 0); /* EINVAL */
	syscall(SYS_eventfd, 3);
	char a[] = "ab", b[] = "cde";
	struct iovec w[2] = {{a, 2}, {b, 3}};
	syscall(SYS_pwritev, fd, w, 2, 0, 0);
	char x[4], y[8];
	struct iovec r[2] = {{x, sizeof x}, {y, sizeof y}};
	syscall(SYS_preadv, fd, r, 2, 1, 0);
	lseek(fd, 0, SEEK_END);
	readv(fd, r, 2); /* 0: both buffers "" */
	readv(-1, r, 2); /* EBADF: the buffers' addresses */
	stack_t o, n = {.ss_sp = altstack, .ss_flags = 0, .ss_size = 65536};
	sigaltstack(NULL, &o);
	sigaltstack(&n, NULL);
	sigaltstack(&n, &o);
	n.ss_flags = SS_DISABLE;
	sigaltstack(&n, &o);
	n.ss_flags = 7; /* EINVAL */
	sigaltstack(&n, &o);
	n.ss_flags = 4;
	sigaltstack(&n, &o);
	n.ss_flags = 1u << 31; /* SS_AUTODISARM */
	n.ss_size = 100;      /* ENOMEM */
	sigaltstack(&n, NULL);
	sigaltstack((stack_t *)8, NULL); /* EFAULT */
	uid_t ra, rb, rc;
	syscall(SYS_getresuid, &ra, &rb, &rc);
	syscall(SYS_getresgid, &ra, &rb, &rc);
	syscall(SYS_getresuid, &ra, (void *)8, &rc); /* EFAULT */
	gid_t groups[64];
	syscall(SYS_getgroups, 0, NULL);
	syscall(SYS_getgroups, 64, groups);
	syscall(SYS_getgroups, -1, groups); /* EINVAL */
	unsigned node;
	syscall(SYS_getcpu, NULL, &node, NULL);
	write(-1, "END", 3);
	return 0;
}
