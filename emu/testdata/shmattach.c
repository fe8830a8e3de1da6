// shmattach.c: shm_nattch (IPC_STAT) as attachments come and go: shmat,
// shmdt, a fork (the child inherits the attachment), a child's exec and
// exit (which detach), an mprotect that splits the mapping, and a
// segment removed while attached; the attach and detach times.
#include <stdio.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

static int id;

static long nattch(void) {
	struct shmid_ds ds;
	if (shmctl(id, IPC_STAT, &ds) < 0)
		return -1;
	return (long)ds.shm_nattch;
}

// times says which of the attach and detach times are set.
static void times(const char *when) {
	struct shmid_ds ds;
	shmctl(id, IPC_STAT, &ds);
	printf("%s: atime %d dtime %d\n", when, ds.shm_atime != 0, ds.shm_dtime != 0);
}

int main(void) {
	id = shmget(IPC_PRIVATE, 3 * 4096, IPC_CREAT | 0600);
	printf("created %ld\n", nattch());
	times("created");
	char *p = shmat(id, 0, 0);
	times("attached");
	printf("attached %ld\n", nattch());
	char *q = shmat(id, 0, SHM_RDONLY);
	printf("attached twice %ld\n", nattch());
	shmdt(q);
	printf("detached one %ld\n", nattch());
	times("detached");
	fflush(stdout);

	// A child inherits the attachment, then execs (which detaches).
	int go[2], ready[2];
	pipe(go);
	pipe(ready);
	pid_t c = fork();
	if (c == 0) {
		printf("child sees %ld\n", nattch());
		fflush(stdout);
		dup2(go[0], 0);
		close(go[1]);
		close(ready[0]);
		// ready's write end closes at exec (close-on-exec): the
		// parent's read returns 0 once the exec happened.
		fcntl(ready[1], F_SETFD, FD_CLOEXEC);
		execl("/bin/cat", "cat", (char *)0);
		_exit(127);
	}
	close(go[0]);
	close(ready[1]);
	char b;
	while (read(ready[0], &b, 1) > 0)
		;
	printf("child execed %ld\n", nattch());
	close(go[1]);
	waitpid(c, 0, 0);

	// A child that exits without detaching.
	c = fork();
	if (c == 0) {
		p[0] = 'x';
		_exit(0);
	}
	waitpid(c, 0, 0);
	printf("child exited %ld, wrote %c\n", nattch(), p[0]);

	// mprotect of the middle splits the mapping: Linux counts each part.
	mprotect(p + 4096, 4096, PROT_READ);
	printf("split %ld\n", nattch());
	mprotect(p + 4096, 4096, PROT_READ | PROT_WRITE);

	// Removed while attached: stays until the last detach.
	shmctl(id, IPC_RMID, 0);
	printf("removed %ld\n", nattch() > 0);
	shmdt(p);
	printf("gone %ld\n", nattch());
	return 0;
}
