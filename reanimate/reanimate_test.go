package reanimate

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"ttd/emu"
	"ttd/internal/linux"
	"ttd/reader"
	"ttd/recorder"
)

func skipOutsideCI(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("needs "+format, args...)
	}
	t.Skipf("SKIPPED (not in CI): needs "+format, args...)
}

func buildC(t testing.TB, src string) string {
	t.Helper()
	return buildCArgs(t, src)
}

func buildCArgs(t testing.TB, src string, flags ...string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		skipOutsideCI(t, "gcc: %v", err)
	}
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), ".c"))
	if b, err := exec.Command("gcc", append(append([]string{"-O2"}, flags...), "-o", out, src)...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", src, err, b)
	}
	return out
}

func tool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		skipOutsideCI(t, "%s: %v", name, err)
	}
	return p
}

// native runs prog in dir.
func native(t testing.TB, dir, prog string, args ...string) {
	t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s natively: %v\n%s", prog, err, b)
	}
}

// record records prog run in dir and returns the trace.
func record(t testing.TB, dir, prog string, args ...string) string {
	t.Helper()
	out, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	trace := filepath.Join(t.TempDir(), "t.ttd")
	st, _, err := recorder.Record(emu.Config{Path: prog, Args: append([]string{prog}, args...), Dir: dir,
		Env: []string{"PATH=/usr/bin:/bin"}, Stdout: out, Stderr: out}, recorder.Options{Path: trace, CheckpointEvery: 1 << 20})
	if err != nil || st.Code != 0 || st.Signal != 0 {
		b, _ := os.ReadFile(out.Name())
		t.Fatalf("recording %s: %v %v\n%s", prog, err, st, b)
	}
	return trace
}

func reanimate(t testing.TB, trace, root, base string) *Report {
	t.Helper()
	tr, err := reader.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var log bytes.Buffer
	rep, err := Replay(tr, Options{Root: root, Base: base, Verify: true, Log: &log})
	if err != nil {
		t.Fatalf("reanimate: %v\n%s", err, log.String())
	}
	for _, d := range rep.Divergences {
		t.Errorf("divergence: %s", d)
	}
	if rep.Calls == 0 {
		t.Fatalf("nothing re-executed")
	}
	t.Logf("%d calls, %.0f calls/s\n%s", rep.Calls, rep.Rate(), log.String())
	return rep
}

// sameTree compares two trees as diff -r would, and modes and symlink
// targets too.
func sameTree(t testing.TB, want, got string) {
	t.Helper()
	if b, err := exec.Command("diff", "-r", "--no-dereference", want, got).CombinedOutput(); err != nil {
		t.Errorf("diff -r %s %s: %v\n%s", want, got, err, b)
	}
	list := func(root string) map[string]string {
		m := map[string]string{}
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, p)
			if rel == "." {
				return nil // the directory the program ran in, not its work
			}
			info, _ := os.Lstat(p)
			desc := info.Mode().String()
			switch {
			case info.Mode()&fs.ModeSymlink != 0:
				l, _ := os.Readlink(p)
				desc += " -> " + l
			case info.Mode().IsRegular():
				b, _ := os.ReadFile(p)
				desc += " " + string(rune(len(b))) + string(b)
			}
			m[rel] = desc
			return nil
		})
		return m
	}
	w, g := list(want), list(got)
	for k, v := range w {
		if g[k] != v {
			t.Errorf("%s: want %.60q, got %.60q", k, v, g[k])
		}
	}
	for k := range g {
		if _, ok := w[k]; !ok {
			t.Errorf("%s: only in the reanimated tree", k)
		}
	}
	if len(w) < 1 {
		t.Fatalf("the native tree is empty: the test compared nothing")
	}
}

// threeWays runs setup then prog natively in one empty directory,
// recorded in a second, reanimated into a third, and compares the trees.
func threeWays(t *testing.T, setup func(dir string), useBase bool, prog string, args ...string) {
	dirA, dirB, root := t.TempDir(), t.TempDir(), t.TempDir()
	setup(dirA)
	setup(dirB)
	base := ""
	if useBase {
		base = t.TempDir()
		setup(base)
	}
	native(t, dirA, prog, args...)
	trace := record(t, dirB, prog, args...)
	rep := reanimate(t, trace, root, base)
	sameTree(t, dirA, filepath.Join(root, rep.Cwd))
}

func none(string) {}

func TestReanimateFsops(t *testing.T) {
	threeWays(t, none, false, buildC(t, "../syscalls/testdata/fsops.c"))
}

func TestReanimateGzip(t *testing.T) {
	gz := tool(t, "gzip")
	setup := func(dir string) {
		var b bytes.Buffer
		for i := 0; i < 5000; i++ {
			b.WriteString(strings.Repeat("x", i%37) + "line\n")
		}
		os.WriteFile(filepath.Join(dir, "data.txt"), b.Bytes(), 0o640)
	}
	t.Run("materialised", func(t *testing.T) { threeWays(t, setup, false, gz, "-k", "data.txt") })
	t.Run("base", func(t *testing.T) { threeWays(t, setup, true, gz, "-k", "data.txt") })
}

func TestReanimateTar(t *testing.T) {
	tarBin := tool(t, "tar")
	archive := filepath.Join(t.TempDir(), "src.tar")
	if b, err := exec.Command(tarBin, "-C", ".", "-cf", archive, "testdata", "doc.go", "root.go").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, b)
	}
	data, _ := os.ReadFile(archive)
	setup := func(dir string) { os.WriteFile(filepath.Join(dir, "src.tar"), data, 0o644) }
	threeWays(t, setup, false, tarBin, "xf", "src.tar")
}

// TestReanimateStaysInRoot records a program that writes through an
// absolute symlink, a relative one climbing out and a path of ".."s;
// reanimated, nothing outside the root may change.
func TestReanimateStaysInRoot(t *testing.T) {
	prog := buildC(t, "testdata/escape.c")
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim.txt")
	dir := filepath.Join(t.TempDir(), "run")
	os.Mkdir(dir, 0o755)
	probe := "/tmp/ttd-reanimate-escape-probe"
	os.Remove(probe)
	trace := record(t, dir, prog, victim, "../climbed.txt")
	for _, p := range []string{victim, filepath.Join(dir, "../climbed.txt"), probe} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("the recorded run did not write %s: the test would prove nothing", p)
		}
		os.Remove(p)
	}
	defer os.Remove(probe)
	root := t.TempDir()
	reanimate(t, trace, root, "")
	for _, p := range []string{victim, filepath.Join(dir, "../climbed.txt"), probe} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("reanimate wrote %s, outside the root", p)
		}
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("%s was not re-created inside the root: %v", p, err)
		}
	}
}

// TestReanimateSqlite: sqlite3 creates, fills, indexes and updates a
// database (pwrite, fdatasync, journals created and unlinked, locks).
func TestReanimateSqlite(t *testing.T) {
	sq := tool(t, "sqlite3")
	sql := "create table t(a, b); insert into t values (1, 'one'), (2, 'two'); create index i on t(b); " +
		"update t set a = a + 10; delete from t where a = 11; insert into t select a*2, b || b from t;"
	threeWays(t, none, false, sq, "db.sqlite", sql)
}

// TestReanimateMmap: files written through MAP_SHARED mappings (msync,
// munmap, exit) and a private mapping that must not write, natively,
// recorded (emu writes back) and reanimated (the write-backs replayed).
func TestReanimateMmap(t *testing.T) {
	threeWays(t, none, false, buildC(t, "testdata/mmap_write.c"))
}

// TestReanimateThreads: threads writing files of their own and passing
// lines through a pipe; the replay runs a worker per recorded thread.
// The native run's pipe order differs from the recording's, so the
// recorded run's tree is the reference for from_pipe.txt.
// TestReanimateMremap: a shared file mapping moved and grown by mremap,
// and one shrunk by it, write their bytes back from where they went.
func TestReanimateMremap(t *testing.T) {
	threeWays(t, none, false, buildC(t, "testdata/mremap_write.c"))
}

func TestReanimateThreads(t *testing.T) {
	prog := buildCArgs(t, "testdata/threads_files.c", "-pthread")
	dirB, root := t.TempDir(), t.TempDir()
	trace := record(t, dirB, prog)
	rep := reanimate(t, trace, root, "")
	sameTree(t, dirB, filepath.Join(root, rep.Cwd))
}

// TestReanimateArgv: paths that are the program's arguments, never read
// by it.
func TestReanimateArgv(t *testing.T) {
	threeWays(t, none, false, buildC(t, "testdata/argv_files.c"), "out.txt", "out.txt", "link")
}

// TestVerifyReportsDivergence: reanimated over a base whose input file
// differs from the recorded one (other bytes, and shorter), --verify
// reports the read that returned other data, at the read's position, and
// nothing when the base is the original.
func TestVerifyReportsDivergence(t *testing.T) {
	sort := tool(t, "sort")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "in.txt"), []byte("recorded contents\n"), 0o644)
	trace := record(t, dir, sort, "in.txt")
	tr, err := reader.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var readAt uint64
	err = tr.ScanEvents(reader.Checkpoint{}, func(ev *reader.Event) bool {
		if ev.Kind != reader.EventSyscall {
			return true
		}
		if sc := &ev.Record.Syscall; linux.SyscallName(sc.Nr) == "read" && sc.Result == 18 {
			readAt = ev.Position
		}
		return true
	})
	if err != nil || readAt == 0 {
		t.Fatalf("no read of in.txt's 18 bytes in the recording (%v)", err)
	}
	for _, c := range []struct {
		contents string
		diverge  bool
	}{{"recorded contents\n", false}, {"other contents!!!\n", true}, {"short\n", true}} {
		base := t.TempDir()
		os.WriteFile(filepath.Join(base, "in.txt"), []byte(c.contents), 0o644)
		rep, err := Replay(tr, Options{Root: t.TempDir(), Base: base, Verify: true, Log: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, d := range rep.Divergences {
			t.Logf("base %q: %s", c.contents, d)
			found = found || d.Pos == readAt && strings.HasPrefix(d.Call, "read(")
		}
		if found != c.diverge || !c.diverge && len(rep.Divergences) > 0 {
			t.Errorf("base %q: divergences %v, want one at the read (position %d): %v", c.contents, rep.Divergences, readAt, c.diverge)
		}
	}
}
