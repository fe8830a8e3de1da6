/* Record locks and socket addresses for the strace comparison: fcntl's
 * struct flock (F_SETLK, F_SETLKW, F_GETLK, F_OFD_*), and a struct
 * sockaddr_un whose path strcpy filled, passed with sizeof the struct as
 * glibc's nscd client does: the bytes after the path's NUL were never
 * written, and strace prints the path alone. Then memory locks: mlock,
 * mlock2, mlockall with its flags, and the errors of bad ones. */
#define _GNU_SOURCE
#include <alloca.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

/* deep: its frame is in stack pages nothing touched before */
static __attribute__((noinline)) void sun_connect(const char *path)
{
	struct sockaddr_un sun; /* not cleared: only the path is written */
	sun.sun_family = AF_UNIX;
	strcpy(sun.sun_path, path);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	connect(s, (struct sockaddr *)&sun, sizeof sun); /* ENOENT */
	close(s);
}

int main(void)
{
	int fd = open("lockfile", O_RDWR | O_CREAT | O_TRUNC, 0644);
	write(-1, "START", 5);
	struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 1073741824, .l_len = 1};
	fcntl(fd, F_SETLK, &fl);
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_CUR;
	fl.l_start = 2;
	fl.l_len = 510;
	fcntl(fd, F_SETLKW, &fl);
	fl.l_type = F_UNLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = 0;
	fl.l_len = 0;
	fcntl(fd, F_SETLK, &fl);
	struct flock q = {.l_type = F_WRLCK, .l_whence = SEEK_END, .l_start = -4, .l_len = 4};
	fcntl(fd, F_GETLK, &q);
	struct flock o = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 8};
	fcntl(fd, F_OFD_SETLK, &o);
	/* another open file description sees the OFD lock: l_pid -1 */
	int fd2 = open("lockfile", O_RDWR);
	struct flock o2 = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 4, .l_len = 1};
	fcntl(fd2, F_OFD_GETLK, &o2);
	fcntl(fd, F_SETLK, (struct flock *)0); /* EFAULT */
	volatile char *pad = alloca(256 << 10);
	pad[0] = 0;
	sun_connect("/nonexistent/ttd-socket");
	char *m = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mlock(m + 100, 8192);
	munlock(m, 3 * 4096);
	syscall(SYS_mlock2, m, 4096, MLOCK_ONFAULT);
	syscall(SYS_mlock2, m, 4096, 8); /* EINVAL */
	munmap(m + 2 * 4096, 4096);
	mlock(m, 3 * 4096); /* ENOMEM: the last page is gone */
	mlockall(MCL_CURRENT | MCL_FUTURE);
	mlockall(0); /* EINVAL */
	munlockall();
	write(-1, "END", 3);
	/* after END: its time differs between the runs */
	struct timeval tv;
	syscall(SYS_gettimeofday, &tv, (void *)0);
	return 0;
}
