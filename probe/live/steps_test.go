package live

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"ttd/emu"
	"ttd/probe"
	"ttd/reader"
)

// buildTwins compiles testdata/twins: the program, libtwin.so (a twin
// of the program's twin) and liblate.so (dlopened); it returns the
// program and the path of liblate.so. twinsB, beside it, is the program
// with its twin named twinb, at the same address.
func buildTwins(t *testing.T) (string, string) {
	needGCC(t)
	dir := t.TempDir()
	src, _ := filepath.Abs("testdata/twins")
	for _, c := range [][]string{
		{"-shared", "-fPIC", "-o", filepath.Join(dir, "libtwin.so"), filepath.Join(src, "twin.c")},
		{"-shared", "-fPIC", "-o", filepath.Join(dir, "liblate.so"), filepath.Join(src, "late.c")},
		{"-o", filepath.Join(dir, "twins"), filepath.Join(src, "main.c"), "-L" + dir, "-ltwin", "-ldl", "-Wl,-rpath," + dir},
		{"-Dtwin=twinb", "-o", filepath.Join(dir, "twinsB"), filepath.Join(src, "main.c"), "-L" + dir, "-ltwin", "-ldl", "-Wl,-rpath," + dir},
	} {
		if b, err := exec.Command("gcc", append([]string{"-O1", "-g"}, c...)...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %s", c, b)
		}
	}
	return filepath.Join(dir, "twins"), filepath.Join(dir, "liblate.so")
}

// twinsScript only counts at its fn probes (probe.Program.CountsOnly),
// keyed by the function and by module and function; a probe binds only
// once the program dlopens liblate.so, and a syscall clause prints and
// clears its counts between the calls.
const twinsScript = `#pragma D option quiet
fn:::entry { @[probefunc] = count(); }
fn:::entry { @m[probemod, probefunc] = count(); }
syscall::write:entry { printa("%s %@d\n", @late); clear(@late); }
fn::late_fn:entry { @late[probefunc] = count(); }
END { printa("%s %s %@d\n", @m); }
`

// TestLiveStepsMatchExits: live without a trace, a script that only
// counts at its fn probes has translated code log narrow records,
// tallied by PC and counted at the next event (probe/livesteps.go). Its
// output equals the one with every probed instruction leaving
// translated code (TTD_HOOKLOG=off), live with a trace, and over the
// recording with one and two workers; and the known facts hold: twin
// runs 300 times in the program and 600 in libtwin.so (one probefunc
// key, two probemod keys), late_fn 900 times in 100s between writes,
// and callfirst, whose first instruction calls retfirst, a lone ret,
// 300 times each (one leaf call's record for both: x86.StepLeaf). A
// tally of two slots gives the same.
func TestLiveStepsMatchExits(t *testing.T) {
	prog, late := buildTwins(t)
	p, err := probe.Compile(twinsScript, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !p.CountsOnly() {
		t.Fatal("the script does not only count")
	}
	cfg := emu.Config{Path: prog, Args: []string{prog, "300", late}, Env: []string{"PATH=/usr/bin:/bin"}}
	_, steps, res, out := liveRun(t, cfg, twinsScript, noTrace)
	// A tally of two slots: PCs take each other's slots, and the tally
	// is counted whenever it holds 8 of them.
	was := probe.SetTallyBits(1)
	_, small, _, _ := liveRun(t, cfg, twinsScript, noTrace)
	probe.SetTallyBits(was)
	if res.Status.Code != 0 || !strings.HasSuffix(out, "1439116\n") {
		t.Fatalf("program: %v %q", res.Status, out)
	}
	flat := strings.Join(strings.Fields(steps), " ")
	for _, want := range []string{"twins twin 300", "libtwin.so twin 600", "liblate.so late_fn 900", "twins callfirst 300",
		"twins retfirst 300", "twin 900", "callfirst 300", "retfirst 300"} {
		if !strings.Contains(flat, want) {
			t.Errorf("live output lacks %q:\n%s", want, steps)
		}
	}
	if n := len(regexp.MustCompile(`(?m)^late_fn 100$`).FindAllString(steps, -1)); n != 9 {
		t.Errorf("%d counts of 100 late_fn calls between writes, want 9:\n%s", n, steps)
	}
	hookLog := reader.SetHookLog(false)
	_, exits, _, _ := liveRun(t, cfg, twinsScript, noTrace)
	reader.SetHookLog(hookLog)
	trace, traced, _, _ := liveRun(t, cfg, twinsScript, 20_000)
	for name, got := range map[string]string{"every probe leaving translated code": exits, "live with a trace": traced, "a tally of two slots": small} {
		if got != steps {
			t.Errorf("narrow records differ from %s:\n--- narrow\n%s\n--- %s\n%s", name, steps, name, got)
		}
	}
	for _, jobs := range []int{1, 2} {
		if got, _ := recorded(t, trace, twinsScript, jobs); got != steps {
			t.Errorf("--jobs %d over the recording differs from live:\n--- live\n%s\n--- recorded\n%s", jobs, steps, got)
		}
	}
}

// TestCountsOnly: which scripts' fn probes may be logged in narrow
// records (probe.Program.CountsOnly).
func TestCountsOnly(t *testing.T) {
	for _, c := range []struct {
		src  string
		want bool
	}{
		{`fn:::entry { @[probefunc] = count(); }`, true},
		{`fn::malloc:entry { @[probemod, probefunc] = count(); } syscall::write:entry { printa(@); clear(@); } END { printf("x"); }`, true},
		{`pid$target::malloc:entry { @[probefunc] = count(); }`, true},
		{`fn::main:1a { @[probename] = count(); }`, true},
		{`fn:::entry { @[probefunc] = count(); } fn::malloc:entry /arg0 > 4/ { @[probefunc] = count(); }`, false},
		{`fn:::entry { @[probefunc] = count(); } fn::malloc:entry { @s = sum(arg0); }`, false},
		{`fn:::entry { @n = count(); }`, false},
		{`fn:::entry { @[probefunc] = count(); @[probefunc] = count(); }`, false},
		{`fn:::return { @[probefunc] = count(); }`, false},
		{`fn::malloc: { @[probefunc] = count(); }`, false},
		{`fn::malloc:* { @[probefunc] = count(); }`, false},
		{`syscall::write:entry { @[probefunc] = count(); }`, false},
	} {
		p, err := probe.Compile(c.src, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if got := p.CountsOnly(); got != c.want {
			t.Errorf("CountsOnly(%s) = %v, want %v", c.src, got, c.want)
		}
	}
}

// TestLiveStepsTree: twins and twinsB run at once (sh -c 'A & B;
// wait'), each a program of its own with its functions at the same
// addresses, and the scheduler switches between them with no event in
// between: the records tallied in one program are counted under its
// probes before the other's (stepTally.sp; counted in the other, 74 of
// liblate.so's late_fn calls went missing). The counts are the calls
// the programs make, with a tally of 2048 slots and of two.
func TestLiveStepsTree(t *testing.T) {
	prog, late := buildTwins(t)
	dir := filepath.Dir(prog)
	cfg := emu.Config{Path: "/bin/sh", Args: []string{"sh", "-c", "./twins 3000 " + late + " & ./twinsB 3000 " + late + "; wait"},
		Env: []string{"PATH=/usr/bin:/bin"}, Dir: dir}
	src := "fn:::entry { @m[probemod, probefunc] = count(); }"
	for _, bits := range []int{11, 1} {
		was := probe.SetTallyBits(bits)
		_, got, res, _ := liveRun(t, cfg, src, noTrace)
		probe.SetTallyBits(was)
		if res.Status.Code != 0 {
			t.Fatalf("program: %v", res.Status)
		}
		flat := strings.Join(strings.Fields(got), " ")
		for _, want := range []string{"twins twin 3000", "twinsB twinb 3000", "libtwin.so twin 12000", "liblate.so late_fn 18000",
			"twins callfirst 3000", "twins retfirst 3000", "twinsB callfirst 3000", "twinsB retfirst 3000"} {
			if !strings.Contains(flat, want) {
				t.Errorf("%d slots: the output lacks %q:\n%s", 1<<bits, want, got)
			}
		}
	}
}

// TestLiveStepsExit: exit() at the first write(2) kills twins there:
// its twin's 300 calls are counted, libtwin.so's twin (called after)
// never, live without a trace as over the recording.
func TestLiveStepsExit(t *testing.T) {
	prog, late := buildTwins(t)
	cfg := emu.Config{Path: prog, Args: []string{prog, "300", late}, Env: []string{"PATH=/usr/bin:/bin"}}
	src := "fn:::entry { @m[probemod, probefunc] = count(); } syscall::write:entry { exit(3); }"
	_, bare, res, _ := liveRun(t, cfg, src, noTrace)
	if res.Outcome.ExitCode() != 3 {
		t.Fatalf("exit %d", res.Outcome.ExitCode())
	}
	flat := strings.Join(strings.Fields(bare), " ")
	if !strings.Contains(flat, "twins twin 300") || strings.Contains(flat, "libtwin.so twin") {
		t.Errorf("counts past exit():\n%s", bare)
	}
	trace, _, _, _ := liveRun(t, cfg, src, 20_000)
	if got, _ := recorded(t, trace, src, 1); got != bare {
		t.Errorf("over the recording differs from live:\n--- live\n%s\n--- recorded\n%s", bare, got)
	}
}
