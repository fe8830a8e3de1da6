package emu

import (
	"strings"
	"testing"
)

// TestShmNattch checks shm_nattch against the host as attachments come
// and go: shmat, shmdt, fork, a child's exec and exit, an mprotect that
// splits the mapping, removal while attached.
func TestShmNattch(t *testing.T) {
	got := compare(t, build(t, glibcDyn, "shmattach.c"))
	for _, want := range []string{"child sees 2\n", "child execed 1\n", "child exited 1, wrote x\n", "split 3\n", "gone -1\n",
		"created: atime 0 dtime 0\n", "attached: atime 1 dtime 0\n", "detached: atime 1 dtime 1\n"} {
		if !strings.Contains(got.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, got.stdout)
		}
	}
}
