package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"

	"ttd/internal/corpus"
)

// The x86-64 levels end to end: programs compiled for x86-64-v2 and v3
// run under ttd run and ttd record as natively, and their traces replay
// with --verify; a signal handler that uses YMM registers leaves the
// interrupted code's intact; a program sees the same CPU through CPUID,
// /proc/cpuinfo and the auxiliary vector; an instruction above the level
// is SIGILL.

// hostV3 skips a test that runs x86-64-v3 code natively on a host
// without it (loudly; CI machines have it).
func hostV3(t *testing.T) {
	if !(cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasBMI2) {
		if os.Getenv("CI") != "" {
			t.Fatal("the CI host has no x86-64-v3 (AVX2, FMA, BMI2)")
		}
		t.Skip("SKIPPING: the host CPU has no x86-64-v3, so v3 programs cannot run natively")
	}
}

// compileISA compiles src (relative to the repository root) with flags.
func compileISA(t *testing.T, src, name string, flags ...string) string {
	t.Helper()
	cc := "gcc"
	if strings.HasSuffix(src, ".cpp") {
		cc = "g++"
	}
	if _, err := exec.LookPath(cc); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing", cc)
		}
		t.Skipf("SKIPPING: %s is not installed (make deps installs it)", cc)
	}
	exe := filepath.Join(t.TempDir(), name)
	args := append([]string{"-o", exe, filepath.Join("..", "..", src)}, flags...)
	args = append(args, "-lm", "-pthread")
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cc, err, out)
	}
	return exe
}

// runRecordReplay compares a native run of p with ttd run and ttd record
// at CPU level, and replays the trace with --verify (extra: TTD_ env
// settings for the replay).
func runRecordReplay(t *testing.T, p corpus.Program, level string, extra ...string) {
	t.Helper()
	native := run(t, p)
	traced := run(t, p, ttdBinary, "run", "--cpu", level, "--")
	if native.Status != traced.Status || !bytes.Equal(native.Stdout, traced.Stdout) {
		t.Fatalf("ttd run --cpu %s: status %s (native %s), stdout %s\n%s", level, traced.Describe(), native.Describe(),
			corpus.FirstDifference(native.Stdout, traced.Stdout), corpus.Tail(traced.Stderr, 5))
	}
	trace := filepath.Join(t.TempDir(), "t.ttd")
	rec := run(t, p, ttdBinary, "record", "--cpu", level, "--checkpoint-every", "500000", "-o", trace, "--")
	if native.Status != rec.Status || !bytes.Equal(native.Stdout, rec.Stdout) {
		t.Fatalf("ttd record --cpu %s: status %s (native %s), stdout %s\n%s", level, rec.Describe(), native.Describe(),
			corpus.FirstDifference(native.Stdout, rec.Stdout), corpus.Tail(rec.Stderr, 5))
	}
	out, errOut, status := replay(t, trace, extra...)
	if status != 0 || !bytes.Equal(out, rec.Stdout) || !bytes.Contains(errOut, []byte("verified")) {
		t.Fatalf("ttd replay --verify (%v): status %d, stdout %s\n%s", extra, status, corpus.FirstDifference(rec.Stdout, out),
			corpus.Tail(errOut, 10))
	}
}

func isaProgram(name, exe string, env ...string) corpus.Program {
	return corpus.Program{Name: name, Path: exe, Env: append([]string{"PATH=/usr/bin:/bin", "LC_ALL=C"}, env...)}
}

// TestISALevelsCorpus builds a handful of corpus programs with -O3 for
// x86-64-v2 and v3 (auto-vectorised: SSE4.1 rounding, AVX2, FMA, BMI2)
// and checks them under run, record and replay. The v3 traces replay a
// second time with the host's instruction-set paths off (TTD_HOSTISA=0),
// as on a host without AVX2: replay never depends on the host.
func TestISALevelsCorpus(t *testing.T) {
	srcs := []string{"float_math.c", "sha256.c", "qsort_bsearch.c", "bit_ops.c", "cxx_stl.cpp"}
	for _, lv := range []string{"v2", "v3"} {
		for _, src := range srcs {
			lv, src := lv, src
			t.Run(lv+"/"+src, func(t *testing.T) {
				t.Parallel()
				slots <- struct{}{}
				defer func() { <-slots }()
				if lv == "v3" {
					hostV3(t)
				}
				exe := compileISA(t, filepath.Join("testdata", "corpus", src), strings.TrimSuffix(src, filepath.Ext(src)),
					"-O3", "-march=x86-64-"+lv)
				p := isaProgram(src, exe)
				if lv == "v3" {
					runRecordReplay(t, p, lv, "TTD_HOSTISA=0")
				} else {
					runRecordReplay(t, p, lv)
				}
			})
		}
	}
}

// TestISAYMMSignal: a handler that overwrites YMM registers returns to
// code whose ymm8 is intact (the frame's XSAVE area), recorded and
// replayed too.
func TestISAYMMSignal(t *testing.T) {
	hostV3(t)
	exe := compileISA(t, "testdata/isa/ymm_signal.c", "ymm_signal", "-O2", "-mavx2")
	p := isaProgram("ymm_signal", exe)
	runRecordReplay(t, p, "v3")
	if r := run(t, p, ttdBinary, "run", "--cpu", "v3", "--"); !bytes.Contains(r.Stdout, []byte("ymm8 intact")) {
		t.Fatalf("ymm8 not intact after the handler: %s", r.Stdout)
	}
}

// TestISACPUIdentity: at every level, CPUID and /proc/cpuinfo agree
// (the program exits 1 otherwise), and they report the level's
// extensions.
func TestISACPUIdentity(t *testing.T) {
	exe := compileISA(t, "testdata/isa/cpuinfo.c", "cpuinfo", "-O2")
	p := isaProgram("cpuinfo", exe)
	want := map[string][]string{
		"v1": {"sse3 cpuid=0", "popcnt cpuid=0", "avx2 cpuid=0"},
		"v2": {"sse4.2 cpuid=1", "popcnt cpuid=1", "avx cpuid=0"},
		"v3": {"avx2 cpuid=1", "fma cpuid=1", "bmi2 cpuid=1", "movbe cpuid=1"},
	}
	for lv, lines := range want {
		r := run(t, p, ttdBinary, "run", "--cpu", lv, "--")
		if r.Status != 0 {
			t.Errorf("--cpu %s: CPUID and /proc/cpuinfo disagree:\n%s", lv, r.Stdout)
		}
		for _, l := range lines {
			if !bytes.Contains(r.Stdout, []byte(l+" cpuinfo=")) {
				t.Errorf("--cpu %s: no %q in\n%s", lv, l, r.Stdout)
			}
		}
	}
}

// TestISASIGILLBelowLevel: a v3 program under --cpu v2 dies of SIGILL as
// on a v2 processor, and --verbose names the instruction and extension.
func TestISASIGILLBelowLevel(t *testing.T) {
	exe := compileISA(t, "testdata/isa/ymm_signal.c", "ymm_signal", "-O2", "-mavx2")
	r := run(t, isaProgram("ymm_signal", exe), ttdBinary, "run", "--cpu", "v2", "--verbose", "--")
	if r.Signal != 0 || r.Status != 128+4 {
		t.Fatalf("status %s, want 132 (SIGILL)", r.Describe())
	}
	if !bytes.Contains(r.Stderr, []byte("needs avx, which the guest CPU does not have (--cpu v2)")) {
		t.Fatalf("--verbose does not name the missing extension:\n%s", r.Stderr)
	}
	bad := run(t, isaProgram("ymm_signal", exe), ttdBinary, "run", "--cpu", "v4", "--")
	if bad.Status != 2 || !bytes.Contains(bad.Stderr, []byte(`unknown CPU level "v4"`)) {
		t.Fatalf("--cpu v4: status %s\n%s", bad.Describe(), bad.Stderr)
	}
}

// TestISAGo: a Go program built with GOAMD64=v3 runs at --cpu v3 (and
// refuses to start at v2, as on such a CPU), and a `go test -race`
// binary (SSE3 in the race runtime) runs and replays at the default
// level.
func TestISAGo(t *testing.T) {
	hostV3(t)
	gocmd := goTool()
	dir := t.TempDir()
	build := func(name string, env []string, args ...string) string {
		out := filepath.Join(dir, name)
		cmd := exec.Command(gocmd, append(args, "-o", out)...)
		cmd.Dir = filepath.Join(dir, "src")
		cmd.Env = append(os.Environ(), env...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %v: %v\n%s", args, err, b)
		}
		return out
	}
	src := filepath.Join(dir, "src")
	os.MkdirAll(src, 0o755)
	main, err := os.ReadFile("../../testdata/corpus/go/go_goroutines/main.go")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(src, "go.mod"), []byte("module isa\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(src, "main.go"), main, 0o644)
	os.WriteFile(filepath.Join(src, "r_test.go"), []byte(raceTestSrc), 0o644)
	v3 := build("gov3", []string{"GOAMD64=v3", "CGO_ENABLED=0"}, "build")
	runRecordReplay(t, isaProgram("gov3", v3), "v3")
	r := run(t, isaProgram("gov3", v3), ttdBinary, "run", "--cpu", "v2", "--")
	if r.Status == 0 || !bytes.Contains(r.Stderr, []byte("v3 microarchitecture")) {
		t.Errorf("a GOAMD64=v3 program at --cpu v2: status %s\n%s", r.Describe(), corpus.Tail(r.Stderr, 3))
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("SKIPPING the -race part: no C compiler for cgo")
	}
	race := build("race.test", []string{"CGO_ENABLED=1"}, "test", "-race", "-c")
	p := isaProgram("race.test", race)
	p.Args = []string{"-test.run", "Counter"}
	runRecordReplay(t, p, "v2")
}

const raceTestSrc = `package main

import (
	"sync"
	"testing"
)

func TestCounter(t *testing.T) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	n := 0
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 200; k++ {
				mu.Lock()
				n++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if n != 800 {
		t.Fatal(n)
	}
}
`
