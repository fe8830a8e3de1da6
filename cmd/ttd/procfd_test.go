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
