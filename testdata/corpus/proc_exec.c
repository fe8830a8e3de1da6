// proc_exec: vfork+exec, posix_spawn with file actions, exec of a missing
// file and of a non-executable one (the caller goes on), a #! script, and
// close-on-exec across exec.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void show(const char *what, int st) {
	if (WIFEXITED(st))
		printf("%s: exited %d\n", what, WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		printf("%s: killed by signal %d\n", what, WTERMSIG(st));
	else
		printf("%s: status %#x\n", what, st);
}

// capture runs argv with stdout into a pipe and returns what it printed.
static void capture(const char *what, char *const argv[]) {
	int p[2];
	pipe2(p, O_CLOEXEC);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	pid_t pid;
	int r = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (r != 0) {
		printf("%s: posix_spawnp failed: %s\n", what, strerror(r));
		close(p[0]);
		return;
	}
	char buf[256];
	ssize_t n, total = 0;
	while ((n = read(p[0], buf + total, sizeof buf - 1 - total)) > 0) total += n;
	buf[total] = 0;
	close(p[0]);
	int st;
	waitpid(pid, &st, 0);
	printf("%s printed [%s]", what, buf);
	show("", st);
}

int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0);
	int st;

	// vfork + exec: the parent goes on once the child has execed.
	pid_t c = vfork();
	if (c == 0) {
		char *argv[] = {"sh", "-c", "echo from sh after vfork; exit 4", NULL};
		execv("/bin/sh", argv);
		_exit(127);
	}
	waitpid(c, &st, 0);
	show("vfork+exec", st);

	// vfork, then the child exits without exec.
	c = vfork();
	if (c == 0) _exit(12);
	waitpid(c, &st, 0);
	show("vfork+_exit", st);

	// posix_spawn and posix_spawnp.
	char *echo[] = {"echo", "spawned", "echo", NULL};
	capture("posix_spawnp echo", echo);
	char *sh[] = {"sh", "-c", "printf 'a%sb' x; exit 2", NULL};
	capture("posix_spawnp sh", sh);
	char *missing[] = {"./no-such-program", NULL};
	capture("posix_spawnp missing", missing);

	// Exec of a missing file fails with ENOENT and the caller goes on.
	char *args[] = {"x", NULL};
	int r = execv("./does-not-exist", args);
	printf("execv missing: %d %s\n", r, strerror(errno));
	// A file without execute permission: EACCES.
	int fd = open("plain.txt", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	write(fd, "not a program\n", 14);
	close(fd);
	r = execv("./plain.txt", args);
	printf("execv not executable: %d %s\n", r, strerror(errno));
	// Executable garbage: ENOEXEC from execve (the shell would run it).
	fd = open("garbage", O_CREAT | O_WRONLY | O_TRUNC, 0755);
	write(fd, "\x7f" "ELF garbage", 12);
	close(fd);
	r = execv("./garbage", args);
	printf("execv garbage: %d %s\n", r, strerror(errno));

	// A #! script, with an argument on the #! line.
	fd = open("script.sh", O_CREAT | O_WRONLY | O_TRUNC, 0755);
	const char *script = "#!/bin/sh -e\necho \"script says $1 $2\"\nexit 6\n";
	write(fd, script, strlen(script));
	close(fd);
	c = fork();
	if (c == 0) {
		char *sargv[] = {"./script.sh", "one", "two", NULL};
		execv("./script.sh", sargv);
		_exit(127);
	}
	waitpid(c, &st, 0);
	show("#! script", st);

	// Close-on-exec: the child's shell sees fd 5 but not fd 6.
	int a = open("/dev/null", O_RDONLY), b = open("/dev/null", O_RDONLY | O_CLOEXEC);
	dup2(a, 5);
	dup3(b, 6, O_CLOEXEC);
	c = fork();
	if (c == 0) {
		char *cargv[] = {"sh", "-c", "if [ -e /proc/self/fd/5 ]; then echo fd5 open; fi;"
		                 "if [ -e /proc/self/fd/6 ]; then echo fd6 open; else echo fd6 closed; fi", NULL};
		execv("/bin/sh", cargv);
		_exit(127);
	}
	waitpid(c, &st, 0);
	show("cloexec", st);

	// The exit status of an exec'd program that exits through a signal.
	c = fork();
	if (c == 0) {
		char *kargv[] = {"sh", "-c", "kill -USR1 $$", NULL};
		execv("/bin/sh", kargv);
		_exit(127);
	}
	waitpid(c, &st, 0);
	show("sh kills itself", st);
	return 0;
}
