package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const sysxSrc = `
#include <fcntl.h>
#include <unistd.h>
int main(void) {
	int fd = open("out.txt", O_WRONLY | O_CREAT | O_TRUNC, 0640);
	write(fd, "exported in full: no -s cut\n", 28);
	close(fd);
	unlink("missing.txt");
	return 0;
}
`

// TestSyscallsAndReanimateCLI drives ttd syscalls and ttd reanimate on a
// small recording, and their errors on bad input.
func TestSyscallsAndReanimateCLI(t *testing.T) {
	exe := buildC(t, sysxSrc, "-O2")
	dir := t.TempDir()
	trace := filepath.Join(t.TempDir(), "s.ttd")
	rec := exec.Command(ttdBinary, "record", "-o", trace, "--", exe)
	rec.Dir = dir
	if b, err := rec.CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, b)
	}
	out, errOut, st := ttdCmd(t, "syscalls", trace)
	if st != 0 {
		t.Fatalf("syscalls: %s", errOut)
	}
	for _, want := range []string{
		`openat(AT_FDCWD, "out.txt", O_WRONLY|O_CREAT|O_TRUNC, 0640) = 3`,
		`write(3, "exported in full: no -s cut\n", 28) = 28`,
		`unlink("missing.txt")                   = -1 ENOENT (No such file or directory)`,
		"+++ exited with 0 +++",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("ttd syscalls lacks %q:\n%s", want, out)
		}
	}
	out, _, _ = ttdCmd(t, "syscalls", trace, "-s", "8", "--format", "jsonl")
	if !strings.Contains(out, `"name":"write"`) || !strings.Contains(out, `"errno":"ENOENT"`) {
		t.Errorf("jsonl:\n%s", out)
	}
	root := t.TempDir()
	_, errOut, st = ttdCmd(t, "reanimate", "--root", root, "--verify", trace)
	if st != 0 || !strings.Contains(errOut, "verified: no divergence") || !strings.Contains(errOut, "calls/s") {
		t.Fatalf("reanimate (status %d):\n%s", st, errOut)
	}
	b, err := os.ReadFile(filepath.Join(root, dir, "out.txt"))
	if err != nil || string(b) != "exported in full: no -s cut\n" {
		t.Errorf("reanimated out.txt: %q %v", b, err)
	}
	// Bad input: one clear line, a status, never a Go panic.
	bad := filepath.Join(t.TempDir(), "bad.ttd")
	os.WriteFile(bad, []byte("not a trace at all"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"syscalls", "--format", "xml", trace}, "unknown format"},
		{[]string{"syscalls", "--format", "parquet", trace}, "parquet needs -o FILE"},
		{[]string{"syscalls", bad}, "bad.ttd"},
		{[]string{"syscalls"}, "want exactly one trace"},
		{[]string{"reanimate", trace}, "--root DIR is required"},
		{[]string{"reanimate", "--root", filepath.Join(root, "nope"), trace}, "no such file"},
		{[]string{"reanimate", "--root", root, bad}, "bad.ttd"},
	} {
		_, errOut, st := ttdCmd(t, c.args...)
		if st == 0 || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "goroutine") {
			t.Errorf("ttd %s: status %d, stderr:\n%s", strings.Join(c.args, " "), st, errOut)
		}
	}
}
