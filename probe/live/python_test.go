package live

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"ttd/emu"
	"ttd/recorder"
	"ttd/symbols"
)

// Python's usdt probes are guarded by semaphores: live, ttd raises them
// as systemtap does and function__entry fires as often as natively with
// the semaphore raised (gdb sets it and counts the nop's hits); over a
// recording made without a tracer, probing says the probe cannot fire.

const pyProg = `
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
class K:
    def __init__(self, v): self.v = v
    def get(self): return self.v
print(fib(12), sum(K(i).get() for i in range(50)))
`

func python(t *testing.T) (string, symbols.USDTProbe) {
	exe, err := filepath.EvalSymlinks("/usr/bin/python3")
	if err == nil {
		var tb *symbols.Table
		if tb, err = symbols.Load([]symbols.Module{{Path: exe}}); err == nil {
			for _, up := range tb.USDTProbes() {
				if up.Provider == "python" && up.Name == "function__entry" && up.Semaphore != 0 {
					return exe, up
				}
			}
			err = fmt.Errorf("%s has no python:function__entry probe with a semaphore", exe)
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("Debian's python3 with its stapsdt notes is needed: %v", err)
	}
	t.Skipf("SKIPPING python usdt test: %v", err)
	return "", symbols.USDTProbe{}
}

func TestLivePythonUSDT(t *testing.T) {
	exe, up := python(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "prog.py")
	if err := os.WriteFile(script, []byte(pyProg), 0o644); err != nil {
		t.Fatal(err)
	}
	// Python 3.11 runs Python-to-Python calls inside one evaluation
	// loop: function__entry fires for frames entered from C (the
	// generator expression that sum() calls...), natively too.
	counts := `usdt:python3*:python:function__entry { @n = count(); @l[arg2] = count(); }`
	src := counts + ` usdt:python3*:python:function__entry { @f[copyinstr(arg1)] = count(); }`
	cfg := emu.Config{Path: exe, Args: []string{exe, script}, Env: []string{"PATH=/usr/bin:/bin"}}
	trace, live, res, out := liveRun(t, cfg, src, 5_000_000)
	if !strings.Contains(out, "144 1225") {
		t.Fatalf("python printed %q", out)
	}
	if res.Semaphores == 0 {
		t.Fatal("no semaphore raised")
	}
	n, ok := res.Outcome.Aggs["n"]
	if !ok || len(n) != 1 {
		t.Fatalf("function__entry never fired live:\n%s", live)
	}
	var fired int64
	for _, v := range n {
		fired = v.State.N
	}
	if !strings.Contains(live, "<genexpr>") {
		t.Errorf("no <genexpr> entry:\n%s", live)
	}
	// The native count, with gdb raising the semaphore (a non-PIE
	// python: its addresses are the notes').
	if f, err := elf.Open(exe); err == nil && f.Type == elf.ET_EXEC {
		f.Close()
		if hits, err := gdbHits(exe, script, up); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatal(err)
			}
			t.Logf("SKIPPING the native count: %v", err)
		} else if hits != fired {
			t.Errorf("function__entry fired %d times live, %d natively under gdb", fired, hits)
		} else {
			t.Logf("function__entry fired %d times, live and natively", fired)
		}
	}
	// The recording made during the live run has the raised semaphore:
	// probing it gives the same counts. (The function names are not
	// compared: python's static strings lie in its writable data, which
	// a recording knows only where the program read or wrote it.)
	got, o := recorded(t, trace, counts, 2)
	for _, agg := range []string{"n", "l"} {
		if !reflect.DeepEqual(o.Aggs[agg], res.Outcome.Aggs[agg]) {
			t.Errorf("@%s: recorded differs from live:\n--- live\n%s\n--- recorded\n%s", agg, live, got)
		}
	}
	// A recording made without a tracer: the probe cannot fire, and
	// Bind says why.
	plain := filepath.Join(dir, "plain.ttd")
	null, _ := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	defer null.Close()
	cfg.Stdout, cfg.Stderr = null, null
	if _, _, err := recorder.Record(cfg, recorder.Options{Path: plain, CheckpointEvery: 5_000_000}); err != nil {
		t.Fatal(err)
	}
	if w := bindTrace(t, plain, src).SemaphoreWarnings(); len(w) != 1 || !strings.Contains(w[0], "was 0 while the program was recorded") {
		t.Errorf("warnings over a recording made without a tracer: %q", w)
	}
}

// gdbHits counts the hits of up's nop in a native run with its
// semaphore raised.
func gdbHits(exe, script string, up symbols.USDTProbe) (int64, error) {
	if _, err := exec.LookPath("gdb"); err != nil {
		return 0, err
	}
	out, err := exec.Command("gdb", "-q", "-batch", "-nx", "-ex", "starti",
		"-ex", fmt.Sprintf("set {short}%#x = 1", up.Semaphore),
		"-ex", fmt.Sprintf("break *%#x", up.Addr), "-ex", "ignore 1 100000000",
		"-ex", "continue", "-ex", "info breakpoints", "--args", exe, script).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("gdb: %v: %s", err, out)
	}
	m := regexp.MustCompile(`already hit (\d+) time`).FindSubmatch(out)
	if m == nil {
		return 0, nil
	}
	return strconv.ParseInt(string(m[1]), 10, 64)
}
