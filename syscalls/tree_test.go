package syscalls

import (
	"slices"
	"strings"
	"testing"

	"ttd/internal/linux"
	"ttd/reader"
)

// TestStraceTreeBuffers: the buffers of a tree's children are exported
// from their own memory (reader.Replay.TrackProcesses, spaces.go), as
// strace -f prints them. testdata/forkpipe.c's child reads what its
// parent wrote before the fork and writes into a pipe, then execs echo;
// bash -c 'echo hi | cat' forks a child that writes into a pipe and
// one that execs cat. Every process's read, write, pipe, dup2 and
// execve lines are compared, the first program's included (as a
// multiset: natively, the processes' lines interleave by timing).
func TestStraceTreeBuffers(t *testing.T) {
	for _, tc := range []struct {
		name string
		prog string
		args []string
		want []string // lines of the children that must be there
	}{
		{"forkpipe", buildC(t, "testdata/forkpipe.c"), nil,
			[]string{`read(5, "to the child", 32) = 12`, `write(1, "to the child", 12) = 12`, `write(1, " and back\n", 10) = 10`,
				`write(1, "exec'd echo\n", 12) = 12`, `execve("/bin/echo", ["echo", "exec'd echo"], PTR /* 1 var */) = 0`}},
		{"bash-pipe", "/bin/bash", []string{"-c", "echo hi | cat"},
			[]string{`write(1, "hi\n", 3) = 3`, `read(0, "hi\n", 131072) = 3`, `execve("/usr/bin/cat", ["cat"], PTR /* 4 vars */) = 0`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			native := straceNative(t, tc.prog, t.TempDir(), "32", tc.args...)
			got := exportText(t, record(t, tc.prog, t.TempDir(), tc.args...), 32)
			pick := func(out []byte) []string {
				var ls []string
				for _, l := range normalise(out, "", "", "", nil) {
					switch name, _, _ := strings.Cut(l, "("); name {
					case "read", "write", "pipe2", "dup2", "execve":
						ls = append(ls, l)
					}
				}
				slices.Sort(ls)
				return ls
			}
			w, g := pick(native), pick(got)
			for _, l := range tc.want {
				if !slices.Contains(w, l) {
					t.Errorf("strace -f did not print %s: the test is wrong", l)
				}
			}
			compareLinesN(t, w, g, len(tc.want))
		})
	}
}

// TestStraceTtyFutex compares testdata/ttyfutex.c's calls: TCGETS and
// TCSETS with their struct termios on a pseudo-terminal, TCGETS's
// ENOTTY on a pipe, the pty ioctls, and futex FUTEX_WAKE_OP's encoded
// operation with each operation and comparison.
func TestStraceTtyFutex(t *testing.T) {
	prog := buildC(t, "testdata/ttyfutex.c")
	native := straceNative(t, prog, t.TempDir(), "32")
	got := exportText(t, record(t, prog, t.TempDir()), 32)
	from, to := `write(-1, "START", 5)`, `write(-1, "END", 3)`
	w := normalise(native, from, to, "", nil)
	if !slices.ContainsFunc(w, func(l string) bool {
		return strings.HasPrefix(l, "futex(PTR, FUTEX_WAKE_OP_PRIVATE, 1, 1, PTR, FUTEX_OP_SET<<28|")
	}) {
		t.Fatalf("strace printed no FUTEX_WAKE_OP:\n%s", strings.Join(w, "\n"))
	}
	compareLines(t, w, normalise(got, from, to, "", nil))
}

// TestExportChildPids: every call of a fork's child carries the
// child's pid (jsonl, csv, Parquet and reanimate's per-process
// descriptor tables rely on it), not its parent's.
func TestExportChildPids(t *testing.T) {
	tr, err := reader.Open(record(t, buildC(t, "testdata/forkpipe.c"), t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var l callLog
	if _, err := Export(tr, Options{StrSize: -1}, &l); err != nil {
		t.Fatal(err)
	}
	first := tr.Processes()[0].Pid
	n := 0
	for _, c := range l.calls {
		if c.Nr == linux.SysRead && len(c.Buffers) == 1 && string(c.Buffers[0].Data) == "to the child" {
			n++
			if c.Pid == first || c.Pid != c.Tid {
				t.Errorf("the child's %s: pid %d tid %d (first process %d)", c.Text, c.Pid, c.Tid, first)
			}
		}
	}
	if n != 1 {
		t.Fatalf("%d reads of the child found, want 1", n)
	}
}
