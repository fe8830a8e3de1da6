package probe

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"ttd/symbols"

	"ttd/emu"
	"ttd/reader"
	"ttd/recorder"
)

// Scripts over a recorded program whose answers are known facts: calls.c
// calls mid(i) for i < n, which calls leaf twice; it opens two files,
// writes 7 lines of known lengths and prints its counter.

var build struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
	os.Exit(code)
}

func buildCalls(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("gcc not installed")
		}
		t.Skip("gcc not installed: SKIPPING the probe tests over recordings")
	}
	build.once.Do(func() {
		build.dir, build.err = os.MkdirTemp("", "ttd-probe-")
		if build.err != nil {
			return
		}
		src, _ := filepath.Abs("testdata/calls.c")
		if b, err := exec.Command("gcc", "-O1", "-g", "-o", filepath.Join(build.dir, "calls"), src).CombinedOutput(); err != nil {
			build.err = &buildError{string(b)}
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return filepath.Join(build.dir, "calls")
}

type buildError struct{ out string }

func (e *buildError) Error() string { return "gcc: " + e.out }

var traces sync.Map // checkpoint interval -> path

// recordCalls records calls.c with n=300 and a checkpoint every `every`
// instructions (once per interval per process).
func recordCalls(t testing.TB, every uint64) string {
	t.Helper()
	prog := buildCalls(t)
	key := every
	if p, ok := traces.Load(key); ok {
		return p.(string)
	}
	path := filepath.Join(build.dir, "calls-"+strings.Repeat("x", int(every%7))+"-"+itoa(every)+".ttd")
	null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer null.Close()
	st, _, err := recorder.Record(emu.Config{Path: prog, Args: []string{prog, "300"}, Env: []string{"PATH=/usr/bin:/bin"}, Stdout: null, Stderr: null},
		recorder.Options{Path: path, CheckpointEvery: every})
	if err != nil || st.Code != 0 {
		t.Fatalf("recording: %v %v", st, err)
	}
	traces.Store(key, path)
	return path
}

func itoa(v uint64) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + v%10)}, b...)
		v /= 10
		if v == 0 {
			return string(b)
		}
	}
}

var targets sync.Map // path and index flag -> *Target, open for the process

// openCached opens a target once per process (symbol tables take a while
// to load).
func openCached(t testing.TB, path string, index bool) *Target {
	key := path + map[bool]string{true: "+index"}[index]
	if tg, ok := targets.Load(key); ok {
		return tg.(*Target)
	}
	tg, _, _, err := OpenTarget(path, index, nil)
	if err != nil {
		t.Fatal(err)
	}
	targets.Store(key, tg)
	return tg
}

// runScript runs src over the trace with jobs workers and returns
// stdout, stderr and the outcome.
func runScript(t testing.TB, path, src string, jobs int) (string, string, *Outcome) {
	t.Helper()
	p, err := Compile(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	tg := openCached(t, path, p.NeedsMemory())
	b, err := p.Bind(tg)
	if err != nil {
		t.Fatal(err)
	}
	o, err := p.Run([]*Bound{b}, RunOptions{Jobs: jobs})
	if err != nil {
		t.Fatal(err)
	}
	var out, errs strings.Builder
	o.Print(&out, &errs)
	return out.String(), errs.String(), o
}

const countScript = `#pragma D option quiet
fn::leaf:entry { @calls["leaf"] = count(); }
fn::mid:entry { @calls["mid"] = count(); @arg = sum(arg0); @lq = lquantize(arg0, 0, 300, 100); }
fn::mid:return { @ret = max(arg1); }
syscall::write:entry /arg0 == 1/ { @writes = count(); @sizes = quantize(arg2); }
END { printa("%s=%@d\n", @calls); }
`

func TestKnownCounts(t *testing.T) {
	path := recordCalls(t, 4000)
	out, errs, o := runScript(t, path, `#pragma D option quiet
fn::leaf:entry { @c["leaf"] = count(); }
fn::mid:entry { @c["mid"] = count(); @s = sum(arg0); }
fn::mid:return { @m = max(arg1); }
syscall::write:entry /arg0 == 1/ { @w = count(); @bytes = sum(arg2); }
END { printa("%s %@d\n", @c); }
`, 2)
	if errs != "" {
		t.Fatalf("stderr: %s", errs)
	}
	if o.Segments < 10 {
		t.Fatalf("only %d segments: the test needs many", o.Segments)
	}
	// mid(i) = leaf(i) + leaf(i+1) = 4i+2; the last is mid(299) = 1198.
	// The program writes lines "line I of output " + I*5 spaces + "x\n"
	// for I < 7 with write(1, ...) and then one printf line.
	bytes := 0
	for i := 0; i < 7; i++ {
		bytes += len("line 0 of output ") + max(i*5, 1) + 1
	}
	bytes += len("sum 179700 counter 600\n")
	for _, want := range []string{"mid 300\n", "leaf 600\n", "\n            44850\n", "\n             1198\n", "\n                8\n", "\n" + strings.Repeat(" ", 16-len(itoa(uint64(bytes)))) + " " + itoa(uint64(bytes)) + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestSplitsAndJobs: the same script gives the same output for every
// number of jobs and every split of the trace into segments.
func TestSplitsAndJobs(t *testing.T) {
	src := countScript + `fn::mid:entry /arg0 % 50 == 0/ { printf("mid(%d) at %d\n", arg0, tid); }
fn::mid:entry /arg0 == 120/ { printa(@calls); trunc(@calls, 1); }
fn::mid:entry /arg0 == 200/ { clear(@lq); }
`
	var ref string
	for _, c := range []struct {
		every uint64
		jobs  []int
	}{{2500, []int{1, 3}}, {7000, []int{2}}, {50_000_000, []int{1}}} {
		every := c.every
		path := recordCalls(t, every)
		for _, jobs := range c.jobs {
			out, errs, _ := runScript(t, path, src, jobs)
			if errs != "" {
				t.Fatalf("stderr: %s", errs)
			}
			if ref == "" {
				ref = out
				if !strings.Contains(out, "mid(250) at") || !strings.Contains(out, "Distribution") {
					t.Fatalf("output lacks its records:\n%s", out)
				}
				continue
			}
			if out != ref {
				t.Fatalf("checkpoints every %d, %d jobs:\n%s\nwant (first run):\n%s", every, jobs, out, ref)
			}
		}
	}
}

// TestThreadLocalsAcrossSegments: self-> set at entry and read at return
// stays right when the two fall in different segments; globals too. With
// as many jobs as segments, every segment is a re-simulation of its own
// (chainRuns) and the fix-up pass evaluates again those that read what
// an earlier one set; with one job, one re-simulation carries the state
// from segment to segment and nothing is evaluated again.
func TestThreadLocalsAcrossSegments(t *testing.T) {
	src := `#pragma D option quiet
fn::mid:entry { self->arg = arg0; self->t = pos; n++; }
fn::mid:return /self->arg != 0 || n == 1/ { @sum = sum(self->arg); @len = max(pos - self->t); self->arg = 0; }
fn::leaf:entry /n > 0/ { @leaves = count(); }
END { printf("n=%d\n", n); }
`
	var ref string
	for _, every := range []uint64{2500, 50_000_000} {
		for _, jobs := range []int{1, 2, 1000} {
			path := recordCalls(t, every)
			out, _, o := runScript(t, path, src, jobs)
			if !strings.Contains(out, "n=300\n") || !strings.Contains(out, "\n            44850\n") || !strings.Contains(out, "\n              600\n") {
				t.Fatalf("checkpoints every %d, %d jobs: %s", every, jobs, out)
			}
			if every == 2500 && jobs == 1000 && o.Reruns == 0 {
				t.Errorf("no segment was fixed up: the test does not exercise the fix-up pass")
			}
			if jobs == 1 && o.Reruns != 0 {
				t.Errorf("checkpoints every %d, one job: %d segments evaluated again; the chain did not carry the state", every, o.Reruns)
			}
			if ref != "" && out != ref {
				t.Fatalf("split changes the output:\n%s\nvs\n%s", out, ref)
			}
			ref = out
		}
	}
}

// The paper's examples, as written apart from provider names.
func TestPaperExamples(t *testing.T) {
	path := recordCalls(t, 4000)
	out, errs, _ := runScript(t, path, `syscall::openat:entry { @files[copyinstr(arg1)] = count(); }`, 2)
	if errs != "" || !strings.Contains(out, "  /etc/hostname ") || !strings.Contains(out, "  /nonexistent/file ") {
		t.Errorf("openat files:\n%s\nstderr: %s", out, errs)
	}
	out, _, _ = runScript(t, path, `syscall::write:entry { @[execname] = quantize(arg2); }`, 2)
	if !strings.Contains(out, "  calls ") || !strings.Contains(out, "------------- Distribution -------------") {
		t.Errorf("write.d:\n%s", out)
	}
	out, _, _ = runScript(t, path, `#pragma D option flowindent
fn::mid:entry /arg0 == 7/ { self->follow = 1; }
fn:::entry, fn:::return /self->follow/ {}
fn::mid:return /self->follow/ { self->follow = 0; }`, 2)
	want := []string{"  -> mid", "    -> leaf", "    <- leaf", "  <- mid"}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 7 {
		t.Fatalf("flowindent:\n%s", out)
	}
	for i, w := range []int{0, 1, 2, 1, 2, 3} {
		if !strings.HasSuffix(lines[i+1], want[w]) {
			t.Errorf("flowindent line %d: %q, want ...%q", i+1, lines[i+1], want[w])
		}
	}
}

// Faults are counted and reported; the run goes on.
func TestRuntimeFaults(t *testing.T) {
	path := recordCalls(t, 4000)
	out, errs, o := runScript(t, path, `#pragma D option quiet
fn::mid:entry /arg0 < 3/ { printf("%s", copyinstr(arg0)); }
fn::mid:entry /arg0 >= 3 && arg0 < 5/ { x = 10 / (arg0 - arg0); }
fn::mid:entry { @n = count(); }`, 2)
	if o.Faults != 5 || !strings.Contains(errs, "invalid address (0x0)") || !strings.Contains(errs, "divide-by-zero") || !strings.Contains(out, "300") {
		t.Errorf("faults %d\nstdout %s\nstderr %s", o.Faults, out, errs)
	}
}

// A probe description that matches nothing is an error before the run.
func TestBindErrors(t *testing.T) {
	path := recordCalls(t, 4000)
	p, err := Compile("BEGIN {}\nfn::no_such_function:entry { }", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Bind(openCached(t, path, false)); err == nil || !strings.HasPrefix(err.Error(), "2:1: probe description fn::no_such_function:entry does not match") {
		t.Errorf("bind: %v", err)
	}
}

// TestPartialsAPI: what a Beam runner does — evaluate each segment on
// its own, send the partials through JSON, merge them in any order —
// gives the local runner's output.
func TestPartialsAPI(t *testing.T) {
	path := recordCalls(t, 2500)
	src := countScript + `fn::mid:entry /arg0 % 100 == 0/ { printf("mid(%d)\n", arg0); }
fn::mid:entry /arg0 == 120/ { trunc(@calls, 1); }`
	want, _, _ := runScript(t, path, src, 2)
	p, err := Compile(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.CarriesState() {
		t.Fatal("the script carries no state")
	}
	b, err := p.Bind(openCached(t, path, false))
	if err != nil {
		t.Fatal(err)
	}
	var parts []*Partial
	for k := 0; k < b.Segments(); k++ {
		pt, err := b.EvalSegment(k, nil)
		if err != nil {
			t.Fatal(err)
		}
		js, err := json.Marshal(pt)
		if err != nil {
			t.Fatal(err)
		}
		var back Partial
		if err := json.Unmarshal(js, &back); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, &back)
	}
	rand.New(rand.NewSource(3)).Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	// Merge in a tree of random shape.
	for len(parts) > 1 {
		i := len(parts) / 3
		parts = append(append(parts[:i:i], Merge(parts[i], parts[i+1])), parts[i+2:]...)
	}
	var out, errs strings.Builder
	p.Finish(b, parts...).Print(&out, &errs)
	if out.String() != want {
		t.Errorf("merged partials:\n%s\nlocal runner:\n%s", out.String(), want)
	}
}

// The other providers, with known answers: leaf writes counter 600
// times (values 1..600) and reads it 601 times (600 increments and the
// final printf); line 7 is leaf's; the program exits with 0.
func TestOtherProviders(t *testing.T) {
	var ref string
	for _, every := range []uint64{2500, 50_000_000} {
		path := recordCalls(t, every)
		out, errs, _ := runScript(t, path, `#pragma D option quiet
watch:counter:4:write { @w = count(); @v = max(arg1); }
watch:counter:4:read { @r = count(); }
line:calls.c:7 { @l = count(); }
profile:::1000 { @p = count(); }
proc:::exit { printf("exit %d\n", arg0); }`, 2)
		if errs != "" {
			t.Fatalf("stderr: %s", errs)
		}
		tr, err := reader.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		ticks := (tr.End() - 1) / 1000
		tr.Close()
		for _, want := range []string{"exit 0\n", "\n              600\n", "\n              600\n\n              600\n\n              601\n\n              600\n", "\n" + fmt.Sprintf("%17d", ticks) + "\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("checkpoints every %d: output lacks %q:\n%s", every, want, out)
			}
		}
		if ref != "" && out != ref {
			t.Errorf("the split changes the output:\n%s\nvs\n%s", out, ref)
		}
		ref = out
	}
}

// ustack unwinds through CFI from a probe, as DTrace prints it.
func TestUstack(t *testing.T) {
	path := recordCalls(t, 2500)
	out, errs, _ := runScript(t, path, `#pragma D option quiet
fn::leaf:entry /arg0 == 5/ { @[ustack(3)] = count(); }`, 2)
	for _, want := range []string{"\n              calls`leaf\n              calls`mid+0x", "\n              calls`main+0x"} {
		if !strings.Contains(out, want) || errs != "" {
			t.Errorf("output lacks %q:\n%s\nstderr: %s", want, out, errs)
		}
	}
	if strings.Count(out, "calls`leaf") != 2 {
		t.Errorf("leaf(5) is called from two places in mid:\n%s", out)
	}
}

// TestDerefWidth: *(T *)p reads the bytes of a T, with T's sign, as in
// C and D: counter's writes read back through int, char and unsigned
// short pointers give the value written, truncated and extended (600
// writes, so the char's low byte passes 0x80 and reads negative).
func TestDerefWidth(t *testing.T) {
	path := recordCalls(t, 50_000_000)
	out, errs, _ := runScript(t, path, `#pragma D option quiet
watch:counter:4:write {
	@n = count();
	@int = sum(*(int *)arg0 != arg1);
	@char = sum(*(char *)arg0 != (char)arg1);
	@short = sum(*(unsigned short *)arg0 != (arg1 & 0xffff));
	@neg = min(*(char *)arg0);
}
END { printa("n=%@d\n", @n); printa("int=%@d\n", @int); printa("char=%@d\n", @char); printa("short=%@d\n", @short); printa("neg=%@d\n", @neg); }`, 1)
	if errs != "" {
		t.Fatalf("stderr: %s", errs)
	}
	if want := "n=600\nint=0\nchar=0\nshort=0\nneg=-128\n"; out != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

// overlappingTree records staticamb.c, whose child runs bigro: a tree of
// two programs at the same addresses.
func overlappingTree(t *testing.T) *fixtureRun {
	t.Helper()
	buildCalls(t) // the shared build directory
	child := filepath.Join(build.dir, "bigro")
	src, _ := filepath.Abs("testdata/bigro.c")
	if b, err := exec.Command("gcc", "-O0", "-o", child, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	f := recordFixture(t, "staticamb.c", "gcc", []string{"-O0"}, child)
	return f
}

// TestStaticReadsOfOverlappingPrograms: in a tree whose processes ran
// different programs at the same addresses, a byte nothing recorded is
// not read from whichever program's read-only data covers it: reading
// the parent's unread counter faults (DTrace's invalid address), where
// it used to give the child's 0xabababab.
func TestStaticReadsOfOverlappingPrograms(t *testing.T) {
	f := overlappingTree(t)
	if f.native != "0 7\n" {
		t.Fatalf("native run printed %q", f.native)
	}
	out, errs, _ := runScript(t, f.trace, `#pragma D option quiet
fn::mark:entry { printf("%d\n", *(int *)&`+"`"+`counter); }`, 1)
	if out != "" || !strings.Contains(errs, "invalid address") {
		t.Fatalf("reading the unread counter gave %q, stderr %q; want an invalid address", out, errs)
	}
}

// TestTreeProgramsShareModules: the tables of a tree's programs take
// their modules from the cache the tree-wide table was loaded through
// (OpenTargetJobs), at the same addresses: Bind loads none again, and
// the script's output is the same for 1, 2 and 3 jobs.
func TestTreeProgramsShareModules(t *testing.T) {
	f := overlappingTree(t)
	p, err := Compile(`fn::mark:entry { @[probemod] = count(); }`, nil)
	if err != nil {
		t.Fatal(err)
	}
	var outs []string
	for jobs := 1; jobs <= 3; jobs++ {
		tg, closeT, _, err := OpenTargetJobs(f.trace, p, jobs, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer closeT()
		before, loads := tg.images.Len(), symbols.CacheLoads()
		b, err := p.Bind(tg)
		if err != nil {
			t.Fatal(err)
		}
		if n := symbols.CacheLoads() - loads; n != 0 {
			t.Errorf("Bind loaded %d modules (the tree-wide table has them all)", n)
		}
		if b.progs == nil || b.progs.Len() < 2 {
			t.Fatalf("the tree has %v programs, want 2", b.progs)
		}
		if after := tg.images.Len(); after != before {
			t.Errorf("Bind loaded %d modules again (%d before)", after-before, before)
		}
		o, err := p.Run([]*Bound{b}, RunOptions{Jobs: jobs})
		if err != nil {
			t.Fatal(err)
		}
		var out, errs strings.Builder
		o.Print(&out, &errs)
		outs = append(outs, out.String())
	}
	if outs[0] != outs[1] || outs[0] != outs[2] || !strings.Contains(outs[0], "staticamb") {
		t.Errorf("outputs for 1, 2 and 3 jobs:\n%s\n%s\n%s", outs[0], outs[1], outs[2])
	}
}
