/* Device nodes, FIFOs and regular files made by mknod and mknodat, tee
 * and splice between pipes, mincore's vector, get_robust_list, unshare
 * (ttd refuses namespaces: EPERM) and setns, and System V shared memory
 * (its ids are ttd's own), for the strace comparison. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

int main(void)
{
	int p[2], q[2];
	unsigned char vec[4];
	void *head;
	size_t len;
	pipe(p);
	pipe(q);
	write(-1, "START", 5);
	mknodat(AT_FDCWD, "fifo1", S_IFIFO | 0644, 0);
	syscall(SYS_mknod, "fifo2", S_IFIFO | 0600, 0);
	mknod("dev", S_IFCHR | 0600, makedev(1, 3));
	syscall(SYS_mknodat, AT_FDCWD, "reg", S_IFREG | 0640, 0);
	write(p[1], "hello", 5);
	syscall(SYS_tee, p[0], q[1], 4096, 0);
	syscall(SYS_splice, p[0], NULL, q[1], NULL, 4096, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	syscall(SYS_splice, q[0], NULL, p[1], NULL, 3, 0);
	char *m = mmap(NULL, 16384, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	m[0] = 1;
	m[8192] = 1;
	syscall(SYS_mincore, m, 16384, vec);
	syscall(SYS_mincore, m + 1, 4096, vec); /* EINVAL */
	syscall(SYS_get_robust_list, 0, &head, &len);
	syscall(SYS_unshare, CLONE_NEWNS | CLONE_NEWUTS);
	syscall(SYS_unshare, 0);
	syscall(SYS_setns, p[0], CLONE_NEWNET); /* EINVAL: a pipe */
	int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	shmget(0x1234, 0, 0); /* ENOENT */
	char *s = shmat(id, NULL, SHM_RDONLY);
	shmdt(s);
	shmctl(id, IPC_RMID, NULL);
	shmctl(id, 99, NULL); /* EINVAL */
	write(-1, "END", 3);
	return 0;
}
