package main

import "testing"

// sharedProtSrc checks that protection is each process's own: a child's
// mprotect of a MAP_SHARED page, the parent's, and a SHM_RDONLY
// attachment (in another process and in the same one) make the page
// read-only there only, while the other sharers still write it and see
// each other's writes. Before the protection moved into each address
// space's page table, the parent's write faulted after the child's
// mprotect ("unexpected SIGSEGV").
const sharedProtSrc = `
// Per-process protection of shared pages: a child's mprotect of a
// MAP_SHARED page and a SHM_RDONLY attachment change that process's
// protection only; the other sharers still write the page and every
// sharer sees every write.
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

static sigjmp_buf env;
static volatile int armed;
static void onsegv(int sig) {
	if (!armed) {
		write(1, "unexpected SIGSEGV\n", 19);
		_exit(3);
	}
	armed = 0;
	siglongjmp(env, 1);
}

// tryWrite writes v at p and reports whether the write faulted.
static int tryWrite(volatile char *p, char v) {
	if (sigsetjmp(env, 1))
		return 1;
	armed = 1;
	*p = v;
	armed = 0;
	return 0;
}

static void step(int rd) { char c; if (read(rd, &c, 1) != 1) _exit(9); }
static void go(int wr) { if (write(wr, "x", 1) != 1) _exit(9); }

int main(void) {
	signal(SIGSEGV, onsegv);
	setvbuf(stdout, 0, _IONBF, 0);
	int toChild[2], toParent[2];
	pipe(toChild);
	pipe(toParent);

	// 1. MAP_SHARED anonymous memory; the child makes it read-only.
	char *m = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	strcpy(m, "start");
	pid_t c = fork();
	if (c == 0) {
		mprotect(m, 4096, PROT_READ);
		printf("child: write after mprotect faulted=%d\n", tryWrite(m, 'X'));
		go(toParent[1]);
		step(toChild[0]);
		printf("child: reads %s\n", m);
		_exit(0);
	}
	step(toParent[0]);
	printf("parent: write faulted=%d\n", tryWrite(m, 'p'));
	strcpy(m, "parent wrote");
	go(toChild[1]);
	int st;
	waitpid(c, &st, 0);
	printf("parent: child status %d, write faulted=%d, %s\n", WEXITSTATUS(st), tryWrite(m + 20, 'q'), m);

	// 2. The parent makes it read-only; the child still writes.
	strcpy(m, "again");
	c = fork();
	if (c == 0) {
		step(toChild[0]);
		printf("child: write faulted=%d\n", tryWrite(m, 'c'));
		strcpy(m, "child wrote");
		go(toParent[1]);
		_exit(0);
	}
	mprotect(m, 4096, PROT_READ);
	go(toChild[1]);
	step(toParent[0]);
	printf("parent: reads %s, write faulted=%d\n", m, tryWrite(m, 'P'));
	waitpid(c, &st, 0);

	// 3. System V shared memory: read-only in the child, read-write in
	// the parent.
	int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	c = fork();
	if (c == 0) {
		char *r = shmat(id, 0, SHM_RDONLY);
		printf("child: rdonly write faulted=%d\n", tryWrite(r, 'R'));
		go(toParent[1]);
		step(toChild[0]);
		printf("child: reads %s\n", r);
		shmdt(r);
		_exit(0);
	}
	char *w = shmat(id, 0, 0);
	step(toParent[0]);
	printf("parent: rw write faulted=%d\n", tryWrite(w, 'W'));
	strcpy(w, "shm from parent");
	go(toChild[1]);
	waitpid(c, &st, 0);

	// 4. One process, two attachments: read-only and read-write.
	char *ro = shmat(id, 0, SHM_RDONLY);
	strcpy(w, "same process");
	printf("ro reads %s, ro write faulted=%d, rw write faulted=%d\n", ro, tryWrite(ro, 'a'), tryWrite(w + 1, 'A'));
	printf("ro reads %s\n", ro);
	shmdt(ro);
	shmdt(w);
	shmctl(id, IPC_RMID, 0);

	// 5. One file mapped MAP_SHARED twice, read-only and read-write:
	// one page, whose writes each mapping sees.
	char path[] = "/tmp/ttd-prot-XXXXXX";
	int fd = mkstemp(path);
	unlink(path);
	ftruncate(fd, 4096);
	char *fro = mmap(0, 4096, PROT_READ, MAP_SHARED, fd, 0);
	char *frw = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	printf("file ro reads '%s'\n", fro);
	strcpy(frw, "through rw");
	printf("file ro reads '%s', ro write faulted=%d\n", fro, tryWrite(fro, 'x'));
	return 0;
}
`

// TestSharedPageProtection runs sharedProtSrc natively, under ttd run,
// ttd record --mode predicted and the default mode (whose replay shares
// the pages, each mapping with its own protection), and replay --verify.
func TestSharedPageProtection(t *testing.T) {
	checkTreeC(t, sharedProtSrc, []string{"-O1", "-g"}, 0, 4, "--mode", "predicted")
	checkTreeShared(t, sharedProtSrc, []string{"-O1", "-g"}, 4)
}
