package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"ttd/internal/corpus"
)

// ttdBinary is the ttd executable TestMain builds for the end-to-end tests.
var ttdBinary string

// runTimeout bounds each run of a program, native or under ttd.
const runTimeout = 60 * time.Second

// slots limits how many comparisons run at the same time.
var slots = make(chan struct{}, 2)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	// TTD_JIT=0 makes ttd translate every block to host code the first
	// time it runs (x86/jit.go), so that the comparisons cover the
	// translator on all of a program's code, not only its hot loops. It is
	// set for the native runs too: the programs see the same environment.
	// Benchmarks measure the default.
	flag.Parse()
	if os.Getenv("TTD_JIT") == "" && flag.Lookup("test.bench").Value.String() == "" {
		os.Setenv("TTD_JIT", "0")
	}
	dir, err := os.MkdirTemp("", "ttd-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// The DWARF section cache (symbols/seccache.go) goes into the test's
	// directory, not the user's: filled by the first run, read by the rest.
	if os.Getenv("TTD_DWARF_CACHE") == "" {
		os.Setenv("TTD_DWARF_CACHE", filepath.Join(dir, "dwarf"))
	}
	// So does the cache of decoded code (x86/codefile.go): the first run
	// of each program writes its file, the later runs take blocks from it.
	if os.Getenv("TTD_CODE_CACHE") == "" {
		os.Setenv("TTD_CODE_CACHE", filepath.Join(dir, "code"))
	}
	ttdBinary = filepath.Join(dir, "ttd")
	cmd := exec.Command(goTool(), "build", "-o", ttdBinary, "ttd/cmd/ttd")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // as the Makefile builds it
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building ttd: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// goTool returns the go command: the one in PATH, else the one of the
// toolchain that built the test.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// TestRunCorpus runs every corpus program, in every build variant, natively
// and under "ttd run" and compares stdout, stderr and the exit status.
// With -short, the -O0 and glibc-static variants are left out.
func TestRunCorpus(t *testing.T) {
	for _, p := range corpus.Build(t) {
		p := p
		if testing.Short() && shortSkip(p.Name) {
			continue
		}
		t.Run(p.Name, func(t *testing.T) { compareRuns(t, p) })
	}
}

// shortSkip reports whether -short leaves the program out.
func shortSkip(name string) bool {
	for _, v := range []string{"/gcc-O0", "/gcc-O2-static", "/g++-O0", "/g++-O2-static"} {
		if strings.HasSuffix(name, v) {
			return true
		}
	}
	return false
}

// TestRunSystem does the same for real Debian binaries.
func TestRunSystem(t *testing.T) {
	for _, p := range corpus.System(t) {
		p := p
		t.Run(strings.TrimPrefix(p.Name, "system/"), func(t *testing.T) { compareRuns(t, p) })
	}
}

func compareRuns(t *testing.T, p corpus.Program) {
	t.Parallel()
	slots <- struct{}{}
	defer func() { <-slots }()

	native := run(t, p)
	if native.TimedOut {
		t.Fatalf("native run timed out after %v", runTimeout)
	}
	traced := run(t, p, ttdBinary, "run", "--")
	if traced.TimedOut {
		t.Fatalf("ttd run timed out after %v (native took %v); ttd stderr:\n%s", runTimeout,
			native.Duration.Round(time.Millisecond), corpus.Tail(traced.Stderr, 20))
	}
	failed := false
	if native.Status != traced.Status {
		t.Errorf("exit status: native %s, ttd %s", native.Describe(), traced.Describe())
		failed = true
	}
	if d := corpus.FirstDifference(native.Stdout, traced.Stdout); d != "" {
		t.Errorf("stdout differs: %s", d)
		failed = true
	}
	if msg := stderrMismatch(native, traced); msg != "" {
		t.Errorf("stderr differs: %s", msg)
		failed = true
	}
	if failed {
		t.Logf("tail of ttd's stderr:\n%s", corpus.Tail(traced.Stderr, 20))
	} else if testing.Verbose() {
		t.Logf("status %s; native %v, ttd %v", native.Describe(), native.Duration.Round(time.Millisecond),
			traced.Duration.Round(time.Millisecond))
	}
}

// run runs p (under wrapper if given) with the per-run timeout.
func run(t *testing.T, p corpus.Program, wrapper ...string) *corpus.Result {
	t.Helper()
	return runFor(t, runTimeout, p, wrapper...)
}

// runFor is run with another timeout.
func runFor(t *testing.T, timeout time.Duration, p corpus.Program, wrapper ...string) *corpus.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	r, err := p.Run(ctx, wrapper...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// stderrMismatch compares the two stderr streams. ttd's must equal the
// native one, except that when the program was killed by a signal ttd adds
// exactly one line about it at the end.
func stderrMismatch(native, traced *corpus.Result) string {
	if bytes.Equal(native.Stderr, traced.Stderr) {
		return ""
	}
	if native.Signal != 0 && bytes.HasPrefix(traced.Stderr, native.Stderr) {
		extra := traced.Stderr[len(native.Stderr):]
		if bytes.Count(extra, []byte("\n")) == 1 && bytes.HasSuffix(extra, []byte("\n")) {
			return ""
		}
		return fmt.Sprintf("ttd should add exactly one line about the signal, added %q", corpus.Tail(extra, 5))
	}
	return corpus.FirstDifference(native.Stderr, traced.Stderr)
}

// TestInheritedFDs: a program started by the shell inherits its
// descriptors above 2 (`ttd run prog 3>file 4<file`), under ttd as
// natively, in run, record and replay; ttd's own descriptors (the Go
// runtime's poller, its cgroup files) are not among them.
func TestInheritedFDs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.WriteFile(in, []byte("from fd 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `echo to fd 3 >&3; cat <&4; ls /proc/self/fd | sort -n | tr '\n' ' '`
	run := func(args ...string) (string, string) {
		t.Helper()
		out3 := filepath.Join(dir, "out3")
		w, err := os.Create(out3)
		if err != nil {
			t.Fatal(err)
		}
		r, err := os.Open(in)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.ExtraFiles = []*os.File{w, r}
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		w.Close()
		r.Close()
		if err != nil {
			t.Fatalf("%v: %v\n%s%s", args, err, out, stderr.Bytes())
		}
		got3, _ := os.ReadFile(out3)
		return string(out), string(got3)
	}
	nativeOut, native3 := run("sh", "-c", script)
	// The listing holds ls's own descriptor for /proc/self/fd, natively
	// and under ttd (the test's parent may pass on descriptors of its
	// own: both lists hold them).
	if fds := strings.Fields(nativeOut[strings.LastIndex(nativeOut, "\n")+1:]); len(fds) < 6 || fds[3] != "3" || fds[4] != "4" {
		t.Fatalf("natively: %q", nativeOut)
	}
	trace := filepath.Join(dir, "fd.ttd")
	for _, args := range [][]string{
		{ttdBinary, "run", "sh", "-c", script},
		{ttdBinary, "record", "-o", trace, "sh", "-c", script},
	} {
		out, got3 := run(args...)
		if out != nativeOut {
			t.Errorf("%s: output %q, natively %q", args[1], out, nativeOut)
		}
		if got3 != native3 || native3 != "to fd 3\n" {
			t.Errorf("%s: fd 3 got %q, natively %q", args[1], got3, native3)
		}
	}
	if out, err := exec.Command(ttdBinary, "replay", "--verify", trace).CombinedOutput(); err != nil {
		t.Fatalf("replay --verify: %v\n%s", err, out)
	}
}
