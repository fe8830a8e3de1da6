package emu

import (
	"os"
	"testing"

	"ttd/x86"
)

// rewriteLib is f, the function the programs rewrite, and patch, which
// makes f return v.
const rewriteLib = `#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

__attribute__((noinline, aligned(4096))) int f(void) { return 1; }
int (*volatile fp)(void) = f;

static void patch(int v) {
	unsigned char *p = (unsigned char *)fp;
	uintptr_t pg = (uintptr_t)p & ~(uintptr_t)4095;
	if (mprotect((void *)pg, 4096, PROT_READ | PROT_WRITE | PROT_EXEC)) {
		perror("mprotect");
		_exit(9);
	}
	unsigned char code[6] = {0xb8, (unsigned char)v, 0, 0, 0, 0xc3};
	memcpy(p, code, sizeof code);
	__builtin___clear_cache((char *)p, (char *)p + sizeof code);
}

`

// rewriteSrc forks a child that rewrites a function of its text (mprotect,
// then a write) after it ran it from the code it shares with its parent,
// and forks a grandchild; then the parent runs the function again, execs
// itself in a child, and rewrites the function itself.
const rewriteSrc = rewriteLib + `int main(int argc, char **argv) {
	if (argc > 1) {
		printf("exec'd %d\n", fp());
		return 0;
	}
	printf("parent %d\n", fp());
	fflush(stdout);
	int st;
	pid_t c = fork();
	if (c == 0) {
		printf("child before %d\n", fp());
		patch(2);
		printf("child after %d\n", fp());
		fflush(stdout);
		pid_t g = fork();
		if (g == 0) {
			printf("grandchild %d\n", fp());
			fflush(stdout);
			_exit(0);
		}
		waitpid(g, &st, 0);
		_exit(fp());
	}
	waitpid(c, &st, 0);
	printf("child exit %d, parent %d\n", WEXITSTATUS(st), fp());
	fflush(stdout);
	pid_t e = fork();
	if (e == 0) {
		execl(argv[0], argv[0], "again", (char *)0);
		_exit(8);
	}
	waitpid(e, &st, 0);
	patch(4);
	printf("parent patched %d\n", fp());
	return 0;
}
`

// TestSharedCodeForkRewriteExec: the processes of a tree share decoded
// blocks (x86.CodeStore), yet a fork child that rewrites its text runs the
// new code and its parent the old, as natively; and a child that execs
// the same program takes the blocks its start-up decoded before.
func TestSharedCodeForkRewriteExec(t *testing.T) {
	const out = "parent 1\nchild before 1\nchild after 2\ngrandchild 2\nchild exit 2, parent 1\nexec'd 1\nparent patched 4\n"
	treeTest(t, rewriteSrc, out, func(t *testing.T, store *x86.CodeStore) {
		// The exec'd child's start-up alone runs a few hundred blocks.
		t.Logf("blocks kept %d, taken %d", store.Kept, store.Taken)
		if store.Taken < 200 {
			t.Errorf("the tree's caches took %d blocks from the store, want at least 200", store.Taken)
		}
	})
}

// treeTest runs src built with each toolchain (runTree), then check on
// the tree's code store.
func treeTest(t *testing.T, src, out string, check func(*testing.T, *x86.CodeStore)) {
	for _, tc := range []toolchain{muslStatic, glibcDyn} {
		t.Run(tc.name, func(t *testing.T) { check(t, runTree(t, tc, src, out)) })
	}
}

// runTree builds src with tc, checks that it prints out natively and
// under emu, and returns the code store of the emulated tree.
func runTree(t *testing.T, tc toolchain, src, out string) *x86.CodeStore {
	t.Helper()
	exe := build(t, tc, src)
	env := []string{"TTD_TEST=yes", "PATH=/usr/bin:/bin"}
	if want := runNative(t, exe, env); want.stdout != out {
		t.Fatalf("native run printed %q, want %q", want.stdout, out)
	}
	f, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := NewProcess(Config{Path: exe, Args: []string{exe}, Env: env, Stdout: f})
	if err != nil {
		t.Fatal(err)
	}
	store := p.MM.Code.Store()
	if store == nil {
		t.Fatal("the first process's code cache shares through no store")
	}
	if _, err := p.Run(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != out {
		t.Errorf("ttd printed %q, want %q", got, out)
	}
	return store
}

// hotRewriteSrc is rewriteSrc with f called hot (translated): the parent
// keeps calling it while its child rewrites it, and an exec'd child and
// a grandchild call it too.
const hotRewriteSrc = rewriteLib + `static long hot(int n) {
	long s = 0;
	for (int i = 0; i < n; i++)
		s += fp();
	return s;
}

int main(int argc, char **argv) {
	if (argc > 1) {
		printf("exec'd %ld\n", hot(2000));
		return 0;
	}
	printf("parent %ld\n", hot(2000));
	fflush(stdout);
	int st;
	pid_t c = fork();
	if (c == 0) {
		printf("child before %ld\n", hot(2000));
		patch(2);
		printf("child after %ld\n", hot(2000));
		fflush(stdout);
		pid_t g = fork();
		if (g == 0) {
			printf("grandchild %ld\n", hot(2000));
			fflush(stdout);
			_exit(0);
		}
		waitpid(g, &st, 0);
		_exit(hot(10));
	}
	long during = 0;
	for (int i = 0; i < 100; i++)
		during += hot(2000);
	waitpid(c, &st, 0);
	printf("child exit %d, parent %ld\n", WEXITSTATUS(st), during);
	fflush(stdout);
	pid_t e = fork();
	if (e == 0) {
		execl(argv[0], argv[0], "again", (char *)0);
		_exit(8);
	}
	waitpid(e, &st, 0);
	patch(4);
	printf("parent patched %ld\n", hot(2000));
	return 0;
}
`

// TestSharedXlatForkRewriteExec: the processes of a tree adopt each
// other's translations (x86.CodeStore), yet a fork child that rewrites
// its hot text runs the new code while its parent keeps running the old,
// as natively, and a child that execs the same program adopts the
// translations of the code it runs.
func TestSharedXlatForkRewriteExec(t *testing.T) {
	const out = "parent 2000\nchild before 2000\nchild after 4000\ngrandchild 4000\nchild exit 20, parent 200000\nexec'd 2000\nparent patched 8000\n"
	treeTest(t, hotRewriteSrc, out, func(t *testing.T, store *x86.CodeStore) {
		t.Logf("translations kept %d, adopted %d", store.XlatKept, store.XlatTaken())
		if store.XlatKept == 0 || store.XlatTaken() < 4 {
			t.Errorf("the tree's caches kept %d translations and adopted %d, want some and at least 4", store.XlatKept, store.XlatTaken())
		}
	})
}
