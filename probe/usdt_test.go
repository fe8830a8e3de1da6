package probe

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"ttd/emu"
	"ttd/recorder"
)

// Programs built with flags, run natively (the oracle: they print the
// values they pass to their probes and the calls they make) and
// recorded.

var fixtures sync.Map // name+flags -> *fixtureRun

// pidsVary names the programs that print pids, which differ from run to
// run: their outputs are compared with the numbers masked.
var (
	pidsVary  = map[string]bool{"fork.c": true}
	pidNumber = regexp.MustCompile(`[0-9]+`)
)

type fixtureRun struct {
	exe, trace, native string
}

// recordFixture builds testdata/src with compiler and flags, runs it
// natively with args, and records it; both are cached per process.
func recordFixture(t testing.TB, src, compiler string, flags []string, args ...string) *fixtureRun {
	t.Helper()
	if _, err := exec.LookPath(compiler); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not installed", compiler)
		}
		t.Skipf("SKIPPING: %s not installed", compiler)
	}
	buildCalls(t) // makes the shared build directory
	key := src + strings.Join(flags, " ") + strings.Join(args, " ")
	if f, ok := fixtures.Load(key); ok {
		return f.(*fixtureRun)
	}
	name := strings.TrimSuffix(src, filepath.Ext(src)) + strings.ReplaceAll(strings.Join(flags, ""), "-", "_")
	exe := filepath.Join(build.dir, name)
	abs, _ := filepath.Abs(filepath.Join("testdata", src))
	cmd := exec.Command(compiler, append(append([]string{}, flags...), "-g", "-o", exe, abs)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", compiler, err, b)
	}
	native, err := exec.Command(exe, args...).Output()
	if err != nil {
		t.Fatalf("native %s: %v", exe, err)
	}
	trace := exe + ".ttd"
	outF, err := os.Create(exe + ".out")
	if err != nil {
		t.Fatal(err)
	}
	st, _, err := recorder.Record(emu.Config{Path: exe, Args: append([]string{exe}, args...), Env: []string{"PATH=/usr/bin:/bin"}, Stdout: outF, Stderr: outF},
		recorder.Options{Path: trace, CheckpointEvery: 20000})
	outF.Close()
	if err != nil || st.Code != 0 {
		t.Fatalf("recording %s: %v %v", exe, st, err)
	}
	if out, _ := os.ReadFile(exe + ".out"); !bytes.Equal(out, native) && !(pidsVary[src] && bytes.Equal(pidNumber.ReplaceAll(out, []byte("N")), pidNumber.ReplaceAll(native, []byte("N")))) {
		t.Fatalf("%s under ttd printed\n%s\nnatively\n%s", exe, out, native)
	}
	f := &fixtureRun{exe: exe, trace: trace, native: string(native)}
	fixtures.Store(key, f)
	return f
}

func needSDT(t *testing.T) {
	if _, err := os.Stat("/usr/include/x86_64-linux-gnu/sys/sdt.h"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("sys/sdt.h (systemtap-sdt-dev) is required under CI")
		}
		t.Skip("SKIPPING: sys/sdt.h missing (apt-get install systemtap-sdt-dev)")
	}
}

// TestUSDTArgsMatchNative: a script printing a usdt probe's arguments
// prints what the program itself printed next to the probe, at -O0
// (stack operands -4@-36(%rbp), a constant) and -O2 (parts of registers,
// -8@total(%rip)), for every split into segments.
func TestUSDTArgsMatchNative(t *testing.T) {
	needSDT(t)
	const script = `#pragma D option quiet
usdt:a.out:demo:tick { printf("tick %d %d %s %d %u\n", arg0, arg1, copyinstr(arg2), arg3, arg4); }
usdt:usdt*:demo:done { printf("done %d %d\n", args[0], args[1]); }
`
	for _, opt := range []string{"-O0", "-O2"} {
		f := recordFixture(t, "usdt.c", "gcc", []string{opt}, "40")
		for _, jobs := range []int{1, 2} {
			out, errs, o := runScript(t, f.trace, script, jobs)
			if errs != "" {
				t.Fatalf("%s: stderr: %s", opt, errs)
			}
			if out != f.native {
				t.Errorf("%s jobs %d: the script printed\n%s\nthe program\n%s", opt, jobs, out, f.native)
			}
			if jobs == 2 && o.Segments < 2 {
				t.Errorf("%s: %d segments, want several", opt, o.Segments)
			}
		}
	}
}

// TestUSDTBind: wildcards bind every probe; an unknown one is an error.
func TestUSDTBind(t *testing.T) {
	needSDT(t)
	f := recordFixture(t, "usdt.c", "gcc", []string{"-O2"}, "40")
	out, _, _ := runScript(t, f.trace, `#pragma D option quiet
usdt:::* { @[probeprov, probemod, probefunc, probename] = count(); }`, 1)
	for _, want := range []string{"usdt  usdt_O2  demo  tick  40", "usdt  usdt_O2  demo  done  1"} {
		if !strings.Contains(strings.Join(strings.Fields(out), "  "), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	p, err := Compile(`usdt:a.out:demo:nosuch { }`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Bind(openCached(t, f.trace, false)); err == nil || !strings.Contains(err.Error(), "1:1") {
		t.Errorf("unknown usdt probe: %v", err)
	}
}
