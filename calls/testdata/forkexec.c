// forkexec: two children; the first execs /bin/true only after the
// second has, so the trees' order of appearance is neither the children's
// nor their ids' (TestThreadsInOrderOfAppearance).
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
	int p[2];
	if (pipe(p) != 0)
		return 1;
	pid_t a = fork();
	if (a == 0) {
		char ch;
		read(p[0], &ch, 1);
		execl("/bin/true", "true", (char *)0);
		_exit(1);
	}
	pid_t b = fork();
	if (b == 0) {
		execl("/bin/true", "true", (char *)0);
		_exit(1);
	}
	waitpid(b, 0, 0);
	write(p[1], "x", 1);
	waitpid(a, 0, 0);
	return 0;
}
