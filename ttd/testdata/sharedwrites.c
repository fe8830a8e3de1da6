/* sharedwrites: a parent and its child writing memory they share, each
 * through its own mapping: anonymous MAP_SHARED memory the fork shares
 * (at the same address), and a System V segment the child attaches
 * elsewhere, which it writes with an instruction and with read(2). */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

volatile int *anon;
char *seg;

int main(void)
{
	anon = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	seg = shmat(id, NULL, 0);
	anon[0] = 1;
	strcpy(seg, "parent");
	pid_t c = fork();
	if (c == 0) {
		shmdt(seg);
		mmap(NULL, 5 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char *mine = shmat(id, NULL, 0);
		anon[1] = mine != seg; /* 1: attached elsewhere */
		anon[0] = 2;
		strcpy(mine, "child");
		int p[2];
		pipe(p);
		write(p[1], "hello", 5);
		read(p[0], mine + 64, 5);
		_exit(0);
	}
	waitpid(c, NULL, 0);
	printf("%d %d %s %s\n", anon[0], anon[1], seg, seg + 64);
	shmctl(id, IPC_RMID, 0);
	return 0;
}
