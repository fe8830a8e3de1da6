package main

import "testing"

// procFDListSrc lists /proc/self/fd as ls does (opendir, readdir,
// readlink of each entry) in a process and in its forked child: on
// Linux the descriptor of the directory being read is in the listing,
// naming /proc/PID/fd. ttd used to leave it out.
const procFDListSrc = `
// Lists /proc/self/fd as ls does (opendir, readdir, readlink of each
// entry) in a process and in its forked child: the descriptor of the
// directory being read is in the listing, naming /proc/PID/fd.
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

static void list(const char *who) {
	DIR *d = opendir("/proc/self/fd");
	if (!d) {
		perror("opendir");
		exit(1);
	}
	int fds[64], n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < 64) {
		if (e->d_name[0] != '.')
			fds[n++] = atoi(e->d_name);
	}
	qsort(fds, n, sizeof fds[0], cmp);
	char self[64];
	snprintf(self, sizeof self, "/proc/%d/fd", (int)getpid());
	for (int i = 0; i < n; i++) {
		char p[64], t[256];
		snprintf(p, sizeof p, "/proc/self/fd/%d", fds[i]);
		ssize_t k = readlink(p, t, sizeof t - 1);
		t[k < 0 ? 0 : k] = 0;
		if (strncmp(t, "pipe:[", 6) == 0)
			strcpy(t, "pipe");
		if (strcmp(t, self) == 0)
			strcpy(t, "/proc/PID/fd");
		printf("%s: %d -> %s%s\n", who, fds[i], t, fds[i] == dirfd(d) ? " (the listing)" : "");
	}
	closedir(d);
}

int main(void) {
	setvbuf(stdout, 0, _IONBF, 0);
	int extra = open("/dev/null", O_RDONLY);
	list("parent");
	pid_t c = fork();
	if (c == 0) {
		close(extra);
		dup2(1, 7);
		list("child");
		_exit(0);
	}
	int st;
	waitpid(c, &st, 0);
	list("parent again");
	return 0;
}
`

// TestProcSelfFDListing runs procFDListSrc natively, under ttd run, ttd
// record and replay --verify.
func TestProcSelfFDListing(t *testing.T) {
	checkTreeC(t, procFDListSrc, []string{"-O1"}, 0, 2)
}

// devFDSrc uses the links of /dev that lead into /proc/self (/dev/fd,
// /dev/stdin) as bash's process substitution and shell scripts do: a
// pipe at descriptor 63 opened and stat'ed as /dev/fd/63, a file made
// standard input and opened as /dev/stdin, /dev/fd listed, and the
// links themselves read with readlink and lstat. Under ttd these paths
// used to reach ttd's own descriptors: `diff <(seq 1 10) <(seq 1 11)`
// failed with "/dev/fd/63/62: No such file or directory".
const devFDSrc = `
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void readall(const char *path) {
	int fd = open(path, O_RDONLY);
	char b[64];
	int n = fd < 0 ? -1 : (int)read(fd, b, sizeof b);
	printf("%s: %.*s|\n", path, n < 0 ? 0 : n, b);
	if (fd >= 0)
		close(fd);
}

static int entries(const char *dir) {
	DIR *d = opendir(dir);
	int n = 0;
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

int main(void) {
	setvbuf(stdout, 0, _IONBF, 0);
	int p[2];
	if (pipe(p) != 0)
		return 1;
	write(p[1], "piped\n", 6);
	close(p[1]);
	dup2(p[0], 63);
	close(p[0]);
	struct stat st;
	int r = stat("/dev/fd/63", &st);
	printf("stat /dev/fd/63: %d fifo %d\n", r, S_ISFIFO(st.st_mode));
	printf("access /dev/fd/63: %d\n", access("/dev/fd/63", R_OK));
	readall("/dev/fd/63");

	char tmpl[] = "/tmp/ttd-devfd-XXXXXX";
	int f = mkstemp(tmpl);
	write(f, "from a file\n", 12);
	lseek(f, 0, SEEK_SET);
	dup2(f, 0);
	close(f);
	unlink(tmpl);
	readall("/dev/stdin");
	r = stat("/dev/stdin", &st);
	printf("stat /dev/stdin: regular %d size %ld\n", r == 0 && S_ISREG(st.st_mode), (long)st.st_size);
	printf("lstat /dev/stdin: link %d\n", lstat("/dev/stdin", &st) == 0 && S_ISLNK(st.st_mode));
	printf("lstat /dev/fd: link %d\n", lstat("/dev/fd", &st) == 0 && S_ISLNK(st.st_mode));
	char t[256];
	ssize_t k = readlink("/dev/stdin", t, sizeof t - 1);
	t[k < 0 ? 0 : k] = 0;
	printf("readlink /dev/stdin: %s\n", t);
	printf("entries of /dev/fd and /proc/self/fd: %d %d\n", entries("/dev/fd"), entries("/proc/self/fd"));
	return 0;
}
`

// TestDevFDLinks runs devFDSrc natively, under ttd run, ttd record and
// replay --verify.
func TestDevFDLinks(t *testing.T) {
	checkTreeC(t, devFDSrc, []string{"-O1"}, 0, 1)
}
