package live

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"ttd/emu"
	"ttd/internal/corpus"
	"ttd/probe"
	"ttd/recorder"
)

// Live and recorded runs of one program must give the same output: the
// script runs live (the recording made at the same time is kept), then
// over that recording with one and two workers.

// liveRun runs p's program live and returns the trace, the script's
// output (stdout then stderr), the result and the program's stdout.
func liveRun(t *testing.T, cfg emu.Config, src string, every uint64, margs ...string) (string, string, *Result, string) {
	t.Helper()
	p, err := probe.Compile(src, margs)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	trace := filepath.Join(dir, "prog.ttd")
	out, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	null, _ := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	defer null.Close()
	cfg.Stdout, cfg.Stderr, cfg.Stdin = out, null, null
	if cfg.Dir == "" {
		cfg.Dir = dir
	}
	opts := recorder.Options{Path: trace, CheckpointEvery: every}
	if every == noTrace {
		trace, opts = "", recorder.Options{}
	}
	res, err := Run(cfg, p, opts, Output{})
	if res == nil {
		t.Fatalf("live: %v", err)
	}
	if res.Unmatched != nil {
		t.Fatalf("live: %v", res.Unmatched)
	}
	var w, errw bytes.Buffer
	res.Outcome.Print(&w, &errw)
	prog, _ := os.ReadFile(out.Name())
	return trace, w.String() + errw.String(), res, string(prog)
}

// noTrace as liveRun's checkpoint interval runs without a recording.
const noTrace = ^uint64(0)

// bindTrace compiles src and binds it to the trace, opened with its
// index (for the memory scripts read and usdt semaphores) until the
// test ends.
func bindTrace(t *testing.T, trace, src string, margs ...string) *probe.Bound {
	t.Helper()
	p, err := probe.Compile(src, margs)
	if err != nil {
		t.Fatal(err)
	}
	tg, closeT, _, err := probe.OpenTarget(trace, p.NeedsMemory() || p.UsesUSDT(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeT)
	b, err := p.Bind(tg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// recorded probes a trace with jobs workers.
func recorded(t *testing.T, trace, src string, jobs int, margs ...string) (string, *probe.Outcome) {
	t.Helper()
	b := bindTrace(t, trace, src, margs...)
	o, err := b.P.Run([]*probe.Bound{b}, probe.RunOptions{Jobs: jobs})
	if err != nil {
		t.Fatal(err)
	}
	var w, errw bytes.Buffer
	o.Print(&w, &errw)
	return w.String() + errw.String(), o
}

func needGCC(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("gcc not installed")
		}
		t.Skip("gcc not installed: SKIPPING the live probe tests")
	}
}

// buildCalls compiles probe's calls.c fixture: main calls mid(i) for
// i < n, mid calls leaf twice, then 5 mallocs, 2 opens, 7 writes.
func buildCalls(t *testing.T) string { return buildFixture(t, "calls") }

// buildFixture compiles probe/testdata/NAME.c with -O1 -g.
func buildFixture(t *testing.T, name string) string {
	needGCC(t)
	src, _ := filepath.Abs("../testdata/" + name + ".c")
	out := filepath.Join(t.TempDir(), name)
	if b, err := exec.Command("gcc", "-O1", "-g", "-o", out, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %s", b)
	}
	return out
}

const factsScript = `
fn::leaf:entry { @calls[probefunc] = count(); @arg = sum(arg0); }
fn::mid:return { @ret = sum(arg1); @q = quantize(arg1); }
fn::mid:entry /arg0 % 100 == 7/ { printf("mid %d\n", arg0); }
fn::malloc:entry /execname == "calls"/ { @mallocs = count(); @sizes = quantize(arg0); }
syscall::openat:entry { @files[copyinstr(arg1)] = count(); }
syscall::openat:return /errno != 0/ { @errs[errno] = count(); }
syscall::write:entry /arg0 == 1/ { @w = sum(arg2); printf("write %d\n", arg2); }
proc:::exit { printf("exit %d\n", arg0); }
END { printf("counter %d\n", ` + "`counter" + `); }
`

func TestLiveMatchesRecorded(t *testing.T) {
	prog := buildCalls(t)
	trace, live, res, out := liveRun(t, emu.Config{Path: prog, Args: []string{prog, "300"}, Env: []string{"PATH=/usr/bin:/bin"}}, factsScript, 20_000)
	if res.Status.Code != 0 || !strings.Contains(out, "sum 180000 counter 600") {
		t.Fatalf("program: %v %q", res.Status, out)
	}
	// The known facts: leaf runs 600 times with i and i+1 for i < 300.
	for _, want := range []string{"leaf  600", "90000", "write 19", "counter 600", "exit 0", "/etc/hostname", "/nonexistent/file"} {
		if !strings.Contains(strings.Join(strings.Fields(live), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("live output lacks %q:\n%s", want, live)
		}
	}
	for _, jobs := range []int{1, 2} {
		if got, _ := recorded(t, trace, factsScript, jobs); got != live {
			t.Errorf("--jobs %d over the recording differs from live:\n--- live\n%s\n--- recorded\n%s", jobs, live, got)
		}
	}
}

// TestLiveExitStopsProgram: exit() at the 10th call of leaf kills the
// program before it prints, and the recording of the killed run gives
// the same output.
func TestLiveExitStopsProgram(t *testing.T) {
	prog := buildCalls(t)
	src := `fn::leaf:entry { n = n + 1; @c = count(); } fn::leaf:entry /n == 10/ { printf("stop at %d\n", arg0); exit(7); } END { printf("end %d\n", n); }`
	trace, live, res, out := liveRun(t, emu.Config{Path: prog, Args: []string{prog, "300"}}, src, 20_000)
	if res.Status.Signal != unix.SIGKILL || strings.Contains(out, "sum") {
		t.Fatalf("the program was not stopped: %v, printed %q", res.Status, out)
	}
	if res.Outcome.ExitCode() != 7 || !strings.Contains(live, "stop at 5") || !strings.Contains(live, "end 10") {
		t.Fatalf("live: exit %d\n%s", res.Outcome.ExitCode(), live)
	}
	if got, _ := recorded(t, trace, src, 2); got != live {
		t.Errorf("recorded differs from live:\n--- live\n%s\n--- recorded\n%s", live, got)
	}
}

// TestLiveCorpus runs scripts live over corpus programs (threads,
// processes, signals, files) and compares with their recordings.
func TestLiveCorpus(t *testing.T) {
	needGCC(t)
	want := map[string]string{
		"threads_sync/gcc-O2": `thread:::start { @t = count(); } fn::pthread_create:entry { @c[probefunc] = count(); } syscall::futex:entry { @f = count(); }`,
		"proc_fork/gcc-O2":    `proc:::fork { @forks = count(); } proc:::exit { @exits[arg0] = count(); } syscall::wait4:return { @w[pid] = count(); }`,
		"signals/gcc-O2":      `signal:::deliver { @sig[arg0] = count(); } syscall::rt_sigaction:entry { @a = count(); }`,
		"files_dirs/gcc-O2":   `syscall::openat:entry { @files[basename(copyinstr(arg1))] = count(); } fn::write:entry { @w = sum(arg2); }`,
	}
	seen := 0
	for _, p := range corpus.Build(t) {
		src, ok := want[p.Name]
		if !ok {
			continue
		}
		seen++
		t.Run(p.Name, func(t *testing.T) {
			dir := t.TempDir()
			if p.Setup != nil {
				if err := p.Setup(dir); err != nil {
					t.Fatal(err)
				}
			}
			cfg := emu.Config{Path: p.Path, Args: append([]string{p.Path}, p.Args...), Env: p.Env, Dir: dir}
			trace, live, _, _ := liveRun(t, cfg, src, 2_000_000)
			if !strings.Contains(live, "@") && strings.TrimSpace(live) == "" {
				t.Fatalf("no output")
			}
			if got, _ := recorded(t, trace, src, 2); got != live {
				t.Errorf("recorded differs from live:\n--- live\n%s\n--- recorded\n%s", live, got)
			}
		})
	}
	if seen != len(want) {
		t.Fatalf("found %d of the %d corpus programs", seen, len(want))
	}
}

// TestLivePaperExamples: the paper's examples as written (provider
// names apart) and DTrace's run-time error reports, live and over the
// recording of the same run.
func TestLivePaperExamples(t *testing.T) {
	prog := buildCalls(t)
	cfg := emu.Config{Path: prog, Args: []string{prog, "40"}, Env: []string{"PATH=/usr/bin:/bin"}}
	for _, c := range []struct {
		name, src string
		want      []string
	}{
		{"openat", `syscall::openat:entry { @files[copyinstr(arg1)] = count(); }`, []string{"  /etc/hostname ", "  /nonexistent/file "}},
		{"write.d", `syscall::write:entry { @counts[execname] = count(); }
syscall::write:entry /execname == "calls"/ { @[arg0] = quantize(arg2); }`, []string{"  calls ", "------------- Distribution -------------"}},
		{"flowindent", `#pragma D option flowindent
fn::mid:entry /arg0 == 7/ { self->follow = 1; }
fn:::entry, fn:::return /self->follow/ {}
fn::mid:return /self->follow/ { self->follow = 0; }`, []string{"  -> mid", "    -> leaf", "    <- leaf", "  <- mid"}},
		{"faults", `#pragma D option quiet
fn::mid:entry /arg0 < 3/ { printf("%s", copyinstr(arg0)); }
fn::mid:entry /arg0 >= 3 && arg0 < 5/ { x = 10 / (arg0 - arg0); }
fn::mid:entry { @n = count(); }`, []string{"invalid address (0x0)", "divide-by-zero", "ttd probe: 5 error(s) on enabled probes", "40"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			trace, live, _, _ := liveRun(t, cfg, c.src, 20_000)
			for _, w := range c.want {
				if !strings.Contains(live, w) {
					t.Errorf("live output lacks %q:\n%s", w, live)
				}
			}
			if got, _ := recorded(t, trace, c.src, 2); got != live {
				t.Errorf("recorded differs from live:\n--- live\n%s\n--- recorded\n%s", live, got)
			}
		})
	}
}

// TestLiveLanguage: the rest of the language over one run, live and
// recorded, with answers known from calls.c (n = 40: mid(i) for i < 40
// calls leaf(i) and leaf(i+1); leaf returns 2x, mid 4i+2; leaf
// increments counter).
func TestLiveLanguage(t *testing.T) {
	prog := buildCalls(t)
	cfg := emu.Config{Path: prog, Args: []string{prog, "40"}, Env: []string{"PATH=/usr/bin:/bin"}}
	src := `#pragma D option quiet
BEGIN { limit = $1; }
fn::mid:entry /arg0 < limit/ { self->spec = speculation(); speculate(self->spec); printf("spec %d\n", arg0); }
fn::mid:return /self->spec && arg1 % 8 == 2/ { commit(self->spec); self->spec = 0; }
fn::mid:return /self->spec/ { discard(self->spec); self->spec = 0; }
fn::leaf:return { @mn = min(arg1); @mx = max(arg1); @av = avg(arg1); @sd = stddev(arg1); @s[probefunc, probemod] = sum(arg1); }
fn::mid:entry /arg0 == 3/ { this->x = arg0 * 2; a[this->x, "k"] = this->x + 1; printf("a %d %s %d\n", a[6, "k"], execname, pid == tid); }
syscall::openat:entry /copyinstr(arg1) == "/etc/hostname"/ { printf("copyin %s\n", copyin(arg1, 4)); }
fn::leaf:entry /arg0 == 39/ { printf("counter %d wall %d\n", ` + "`counter" + `, walltimestamp > 0); @st[ustack(2)] = count(); }
END { printa("%s %s %@d\n", @s); printa("min %@d\n", @mn); trunc(@s); clear(@mn); }
`
	trace, live, _, _ := liveRun(t, cfg, src, 20_000, "4")
	// Speculations of mid(0..3) committed for even i (4i+2 = 2 mod 8).
	for _, want := range []string{"spec 0\nspec 2\na 7 calls 1\n", "counter 77 wall 1\ncounter 78 wall 1\n", "copyin /etc\n",
		"leaf calls 3200\n", "min 0\n", "\n               80\n", "\n               40\n", "calls`leaf\n              calls`mid+0x"} {
		if !strings.Contains(live, want) {
			t.Errorf("live output lacks %q:\n%s", want, live)
		}
	}
	if strings.Contains(live, "spec 1") || strings.Contains(live, "spec 3") {
		t.Errorf("discarded speculations printed:\n%s", live)
	}
	if got, _ := recorded(t, trace, src, 2, "4"); got != live {
		t.Errorf("recorded differs from live:\n--- live\n%s\n--- recorded\n%s", live, got)
	}
}

// TestLiveStreams: a live run prints each record as its event happens,
// as dtrace -c does: the program's own output and the script's, written
// to one file, interleave (each write's entry record, then its data),
// and exit() at the last write loses nothing (END still prints).
func TestLiveStreams(t *testing.T) {
	prog := buildCalls(t)
	for _, c := range []struct {
		name, src, want string
		probes          int
	}{
		{"quiet", `#pragma D option quiet
syscall::write:entry /arg0 == 1/ { printf("probe %d\n", arg2); }
END { printf("end\n"); }`, "probe 19\nline 0 of output x\nprobe 23\nline 1 of output x\n", 8},
		{"exit", `#pragma D option quiet
syscall::write:entry /arg0 == 1/ { printf("probe %d\n", arg2); n++; }
syscall::write:entry /n == 7/ { exit(3); }
END { printf("end %d\n", n); }`, "probe 48\nline 6 of output x\nend 7\n", 7},
		{"lines", `syscall::write:entry /arg0 == 1/ { trace(arg2); }`, "POS TID PROBE\n", 0},
		{"lines2", `syscall::write:entry /arg0 == 1/ { trace(arg2); }`, "syscall::write:entry 19\nline 0 of output x\n", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := probe.Compile(c.src, nil)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			f, err := os.Create(filepath.Join(dir, "out"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cfg := emu.Config{Path: prog, Args: []string{prog, "4"}, Stdout: f, Stderr: f, Dir: dir}
			res, err := Run(cfg, p, recorder.Options{Path: filepath.Join(dir, "t.ttd")}, Output{Stdout: f, Stderr: f})
			if res == nil {
				t.Fatal(err)
			}
			res.Outcome.Print(f, f)
			b, _ := os.ReadFile(f.Name())
			got := strings.Join(strings.Fields(string(b)), " ")
			if !strings.Contains(got, strings.Join(strings.Fields(c.want), " ")) {
				t.Fatalf("output lacks %q:\n%s", c.want, b)
			}
			if n := strings.Count(string(b), "probe "); n != c.probes {
				t.Fatalf("records lost or printed twice:\n%s", b)
			}
		})
	}
}

// TestLiveCopyinstrUnseen: copyinstr of a string the program never
// reads. Live, the probe reads the running program's memory; over the
// recording the bytes are unknown, and the probe faults as DTrace
// reports a bad address (counted, the run goes on), never inventing
// them.
func TestLiveCopyinstrUnseen(t *testing.T) {
	prog := buildFixture(t, "unread")
	script := `#pragma D option quiet
fn::take:entry { printf("[%s]\n", copyinstr(arg0)); }
fn::take:entry { @n = count(); }`
	trace, live, _, out := liveRun(t, emu.Config{Path: prog, Args: []string{prog}}, script, 0)
	if out != "done\n" || !strings.HasPrefix(live, "[never read by the program]\n") || strings.Contains(live, "error") {
		t.Fatalf("live: program %q, probe:\n%s", out, live)
	}
	got, o := recorded(t, trace, script, 1)
	if o.Faults != 1 || strings.Contains(got, "never") || !strings.Contains(got, "invalid address (0x") ||
		!strings.Contains(got, "ttd probe: 1 error(s) on enabled probes") || !strings.Contains(got, "\n                1\n") {
		t.Fatalf("over the recording (%d faults):\n%s", o.Faults, got)
	}
}

// TestLiveInterrupt: ^C (forwarded to the program, as ttd probe does)
// kills cat waiting for input; the record before it was printed as it
// happened, and END and the aggregations still print, as dtrace does on
// ^C. The test runs itself as the child that probes cat.
func TestLiveInterrupt(t *testing.T) {
	if os.Getenv("TTD_LIVE_INTERRUPT_CHILD") == "1" {
		p, err := probe.Compile(`#pragma D option quiet
syscall::read:entry { @reads = count(); }
syscall::read:entry /arg0 == 0/ { printf("reading %d\n", arg2); }
syscall::write:entry { printf("wrote %d\n", arg2); }
END { printf("end\n"); }`, nil)
		if err != nil {
			t.Fatal(err)
		}
		cat, err := exec.LookPath("cat")
		if err != nil {
			t.Fatal(err)
		}
		cfg := emu.Config{Path: cat, Args: []string{"cat"}, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, ForwardSignals: true}
		// As ttd probe: the signal kills cat, Run returns, the rest
		// prints.
		// Not t.TempDir: the child ends in os.Exit, which skips the
		// test's cleanups.
		dir, err := os.MkdirTemp("", "ttd-live-interrupt-")
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(cfg, p, recorder.Options{Path: filepath.Join(dir, "cat.ttd")}, Output{Stdout: os.Stdout, Stderr: os.Stderr})
		os.RemoveAll(dir)
		if res == nil {
			t.Fatal(err)
		}
		res.Outcome.Print(os.Stdout, os.Stderr)
		os.Exit(int(res.Status.Signal))
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLiveInterrupt$")
	cmd.Env = append(os.Environ(), "TTD_LIVE_INTERRUPT_CHILD=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var out []byte
	buf := make([]byte, 4096)
	// syscall::read:entry fires as cat starts waiting in read, before
	// it has anything to read (emu.SyscallEntryObserver).
	for !bytes.Contains(out, []byte("reading ")) {
		n, err := r.Read(buf)
		if err != nil {
			t.Fatalf("the child ended before its read entry record: %s", out)
		}
		out = append(out, buf[:n]...)
	}
	in.Write([]byte("hello\n"))
	for !bytes.Contains(out, []byte("wrote 6\n")) {
		n, err := r.Read(buf)
		if err != nil {
			t.Fatalf("the child ended before its first record: %s", out)
		}
		out = append(out, buf[:n]...)
	}
	// cat waits in read again: ^C.
	time.Sleep(200 * time.Millisecond)
	cmd.Process.Signal(unix.SIGINT)
	rest, _ := io.ReadAll(r)
	out = append(out, rest...)
	err = cmd.Wait()
	if ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Exited() || ws.ExitStatus() != int(unix.SIGINT) {
		t.Errorf("cat did not die of SIGINT: %v", err)
	}
	got := strings.Join(strings.Fields(string(out)), " ")
	if !strings.Contains(got, "reading 131072 wrote 6 hello reading 131072 end ") || !regexp.MustCompile(`end \d+$`).MatchString(got) {
		t.Fatalf("output lacks the record, END or the aggregation:\n%s", out)
	}
}

// TestLiveWatch: watch probes live (every access reported by the
// recorder: recorder.AccessTap) fire at the positions, with the values,
// the re-simulation gives them. calls.c's leaf increments counter 2n
// times: 2n reads and 2n writes, the last write of 2n. read(2) fills
// hostname: a syscall's write, reported in pieces of 8 bytes from the
// syscall instruction.
func TestLiveWatch(t *testing.T) {
	prog := buildCalls(t)
	cfg := emu.Config{Path: prog, Args: []string{prog, "30"}, Env: []string{"PATH=/usr/bin:/bin"}}
	src := `watch:counter:4:write { @w = count(); @last = max(arg1); @pc[arg3 != 0] = count(); }
watch:counter:4:read { @r = count(); }
watch:counter:4:read /arg1 == 7/ { printf("read 7 at %d size %d\n", pos, arg2); }
syscall::write:entry /arg0 == 1/ { @out = count(); }
watch:hostname:64:write { @k[arg2, arg3 != 0] = count(); }
syscall::read:entry /arg2 == 64/ { printf("read entry %d %d\n", pos, arg2); }
syscall::read:return /arg0 >= 0/ { printf("read return %d\n", pos); }`
	trace, live, _, _ := liveRun(t, cfg, src, 20_000)
	// @w, @last, @pc (all from instructions), @r (60 and main's
	// printf), @out.
	// The entry of read(hostname) is at its completion's position over
	// the recording, as live.
	want := []string{"read 7 at ", " size 4\n", "read entry ", " 60 60 1 60 61 8 "}
	host, _ := os.ReadFile("/etc/hostname")
	if n := min(len(host), 64); n >= 8 {
		want = append(want, fmt.Sprintf(" 8 1 %d ", n/8))
	}
	if n := min(len(host), 64); n%8 != 0 {
		want = append(want, fmt.Sprintf(" %d 1 1 ", n%8))
	}
	for _, want := range want {
		if !strings.Contains(" "+strings.Join(strings.Fields(live), " ")+" ", want) && !strings.Contains(live, want) {
			t.Errorf("live output lacks %q:\n%s", want, live)
		}
	}
	for _, jobs := range []int{1, 2} {
		if got, _ := recorded(t, trace, src, jobs); got != live {
			t.Errorf("--jobs %d over the recording differs from live:\n--- live\n%s\n--- recorded\n%s", jobs, live, got)
		}
	}
	// Without a trace: translated, the watched pages out of the TLBs.
	if _, bare, _, _ := liveRun(t, cfg, src, noTrace); bare != live {
		t.Errorf("live without a trace differs from with one:\n--- without\n%s\n--- with\n%s", bare, live)
	}
}

// TestLiveProfile: profile:::N live (the threads are stopped at the
// multiples of N: emu.BudgetObserver) fires at the positions, in the
// threads, the recording gives, over a program whose four threads'
// runs interleave, with two periods (one tick where both divide the
// count fires both).
func TestLiveProfile(t *testing.T) {
	prog := buildFixture(t, "threads")
	src := `#pragma D option quiet
profile:::997 { printf("%d %d %x\n", pos, tid, arg0); @ticks[tid] = count(); }
profile:::1994 { @even = count(); }`
	for _, every := range []uint64{30_000, 50_000_000} {
		trace, live, _, _ := liveRun(t, emu.Config{Path: prog, Args: []string{prog}}, src, every)
		tids := map[string]bool{}
		for _, l := range strings.Split(live, "\n") {
			if f := strings.Fields(l); len(f) == 3 {
				tids[f[1]] = true
			}
		}
		if len(tids) < 4 {
			t.Fatalf("profile ticks in %d threads, want 4:\n%s", len(tids), live)
		}
		for _, jobs := range []int{1, 2} {
			if got, _ := recorded(t, trace, src, jobs); got != live {
				t.Errorf("checkpoints every %d, --jobs %d over the recording differs from live:\n--- live\n%s\n--- recorded\n%s", every, jobs, live, got)
			}
		}
	}
}

// TestLiveWithoutTrace: without -o nothing is recorded (the program runs
// translated without prediction caches: x86.MemoryBlind) and the
// positions are counted as the recorder counts them: the same output,
// positions included, as a live run that records, for fn, syscall
// (entry and return), proc and profile probes, one thread and four.
func TestLiveWithoutTrace(t *testing.T) {
	calls := buildCalls(t)
	threads := buildFixture(t, "threads")
	for _, c := range []struct {
		name string
		cfg  emu.Config
		src  string
	}{
		{"calls", emu.Config{Path: calls, Args: []string{calls, "300"}, Env: []string{"PATH=/usr/bin:/bin"}}, factsScript + `
fn::mid:entry /arg0 % 50 == 1/ { printf("%d %d\n", pos, tid); }
syscall:::entry /pos % 3 == 0/ { printf("%d %s\n", pos, probefunc); }`},
		{"threads", emu.Config{Path: threads, Args: []string{threads}}, `#pragma D option quiet
profile:::997 { printf("%d %d %x\n", pos, tid, arg0); }
thread:::start { printf("start %d %d\n", pos, tid); }
syscall::futex:return { printf("futex %d %d %d\n", pos, tid, arg0); }`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, recorded, _, _ := liveRun(t, c.cfg, c.src, 20_000)
			_, bare, res, _ := liveRun(t, c.cfg, c.src, noTrace)
			if res.Stats.Path != "" {
				t.Errorf("recorded %s", res.Stats.Path)
			}
			if bare != recorded || strings.Count(bare, "\n") < 20 {
				t.Errorf("without a trace differs from with one:\n--- without\n%s\n--- with\n%s", bare, recorded)
			}
		})
	}
}

// TestLiveBlockedSyscall: a thread that blocks in read(2) while another
// runs. The entry probe fires at the read's syscall instruction and the
// return at its completion, with the other thread's events between
// them: the same records (position, thread, order) live, live without a
// trace, and over the recording with one and two workers and
// checkpoints at several spacings (one falls inside a blocked read).
func TestLiveBlockedSyscall(t *testing.T) {
	prog := buildFixture(t, "pipeblock")
	cfg := emu.Config{Path: prog, Args: []string{prog}}
	src := `#pragma D option quiet
syscall::read:entry { printf("%d %d entry %d\n", pos, tid, arg2); }
syscall::read:return { printf("%d %d return %d\n", pos, tid, arg0); }
syscall::getpid:entry, syscall::write:return { printf("%d %d %s\n", pos, tid, probefunc); }`
	_, bare, _, out := liveRun(t, cfg, src, noTrace)
	if out != "read 15\n" {
		t.Fatalf("program: %q", out)
	}
	// Some read blocks: between its entry and its return the other
	// thread runs.
	blocked := 0
	lines := strings.Split(strings.TrimSpace(bare), "\n")
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) != 4 || f[2] != "entry" {
			continue
		}
		for _, m := range lines[i+1:] {
			g := strings.Fields(m)
			if g[1] == f[1] {
				break
			}
			blocked++
		}
	}
	if blocked < 3 {
		t.Fatalf("no read blocked while the other thread ran:\n%s", bare)
	}
	sameWithTraces(t, cfg, src, bare, 3_000, 20_000, 50_000_000)
}

// TestLiveExecFromThread: a thread other than the leader execs. The
// leader's thread:::exit fires before proc:::exec (in the execing
// thread, by its own tid); after it the thread has the leader's tid
// (its last thread:::exit included), as the recording gives: the same
// records live without a trace, live with one (whose recording replays)
// and over it with one and two workers.
func TestLiveExecFromThread(t *testing.T) {
	prog := buildFixture(t, "execthread")
	cfg := emu.Config{Path: prog, Args: []string{prog}}
	src := `#pragma D option quiet
syscall::write:entry, syscall::exit_group:entry, syscall::execve:entry, syscall::execve:return { printf("%d %d %d %s\n", pos, tid, pid, probefunc); }
proc:::exec { printf("%d %d %d exec\n", pos, tid, pid); }
thread:::exit { printf("%d %d thread-exit\n", pos, tid); }`
	_, bare, res, out := liveRun(t, cfg, src, noTrace)
	if res.Status.Code != 0 || out != "execed again\n" {
		t.Fatalf("program: %v %q", res.Status, out)
	}
	// execve's entry, the leader's end and the exec are the execing
	// thread's; after them every record is the leader's tid, the pid.
	lines := strings.Split(strings.TrimSpace(bare), "\n")
	if len(lines) != 7 {
		t.Fatalf("want 7 records:\n%s", bare)
	}
	pid := strings.Fields(lines[0])[2]
	if f := strings.Fields(lines[0]); f[1] == pid {
		t.Fatalf("execve by the leader:\n%s", bare)
	}
	for _, l := range lines[3:] {
		if f := strings.Fields(l); f[1] != pid {
			t.Errorf("%q: not the leader's tid %s:\n%s", l, pid, bare)
		}
	}
	sameWithTraces(t, cfg, src, bare, 3_000, 50_000_000)
}

// sameWithTraces checks that src gives the records bare (live, without
// a trace) also live with a trace checkpointed every each of everies,
// and over that trace with one and two workers.
func sameWithTraces(t *testing.T, cfg emu.Config, src, bare string, everies ...uint64) {
	t.Helper()
	for _, every := range everies {
		trace, live, _, _ := liveRun(t, cfg, src, every)
		if live != bare {
			t.Errorf("checkpoints every %d: live with a trace differs from without:\n--- with\n%s\n--- without\n%s", every, live, bare)
		}
		for _, jobs := range []int{1, 2} {
			if got, _ := recorded(t, trace, src, jobs); got != bare {
				t.Errorf("checkpoints every %d, --jobs %d over the recording differs from live:\n--- live\n%s\n--- recorded\n%s", every, jobs, bare, got)
			}
		}
	}
}

// TestLiveCountCleared: a probe-keyed count (the clause countFast runs
// from its cached entry) cut by printa and clear at known calls counts
// into the new part after each: leaf runs twice per mid(i), so 200
// calls before mid(100), 200 between mid(100) and mid(200), 200 after;
// live (logged and not) and over the recording.
func TestLiveCountCleared(t *testing.T) {
	prog := buildCalls(t)
	cfg := emu.Config{Path: prog, Args: []string{prog, "300"}, Env: []string{"PATH=/usr/bin:/bin"}}
	src := `#pragma D option quiet
fn::leaf:entry { @[probefunc] = count(); }
fn::mid:entry /arg0 == 100 || arg0 == 200/ { printa("%s %@d\n", @); clear(@); }
END { printa("%s %@d\n", @); }`
	want := "leaf 200\nleaf 200\nleaf 200\n"
	trace, live, _, _ := liveRun(t, cfg, src, 20_000)
	_, bare, _, _ := liveRun(t, cfg, src, noTrace)
	for name, got := range map[string]string{"live": live, "live without a trace": bare} {
		if got != want {
			t.Errorf("%s: got\n%s\nwant\n%s", name, got, want)
		}
	}
	for _, jobs := range []int{1, 2} {
		if got, _ := recorded(t, trace, src, jobs); got != want {
			t.Errorf("--jobs %d over the recording: got\n%s\nwant\n%s", jobs, got, want)
		}
	}
}

// TestLiveWatchBusyPage: live watch probes without a trace run the
// program translated, with only the accesses to the watched pages
// leaving for Go (x86.Memory.WatchPages). The adversarial layout of
// watchpage.c: a watched global on the page of an array every
// iteration reads and writes, a watched heap object between two busy
// neighbours, a read(2) and a memset across the global from unaligned
// addresses (kernel writes in reader.KernelPieces' pieces; memset's
// vector stores), a forked child writing both (in its own memory).
// Positions, pcs and values equal those over the recording (with two
// checkpoint intervals, --jobs 1 and 2) and live with a trace.
func TestLiveWatchBusyPage(t *testing.T) {
	prog := buildFixture(t, "watchpage")
	cfg := emu.Config{Path: prog, Args: []string{prog, "500"}, Env: []string{"PATH=/usr/bin:/bin"}}
	_, _, _, out := liveRun(t, cfg, `BEGIN {}`, noTrace)
	var w, o uint64
	if _, err := fmt.Sscanf(out, "watched 0x%x obj 0x%x", &w, &o); err != nil {
		t.Fatalf("program output %q: %v", out, err)
	}
	src := fmt.Sprintf(`#pragma D option quiet
watch:%#x:8:write { @w[arg2, arg3 != 0] = count(); printf("w %%d %%x %%d %%x %%d\n", pos, arg0, arg2, arg1, arg3 != 0); }
watch:%#x:8:read { @r[arg2] = count(); @rs = sum(arg1 & 0xffff); }
watch:%#x:8:write { printf("o %%d %%d %%d %%d\n", pos, arg1, arg2, arg3 != 0); }
watch:%#x:8:read { @or = count(); }
watch:%#x:100:write /arg3 != 0 && arg2 != 1/ { printf("k %%d %%x %%d %%x\n", pos, arg0, arg2, arg1); }
END { printf("end %%x\n", *(long *)%#x); }`, w, w, o, o, w-45, w)
	_, bare, res, progOut := liveRun(t, cfg, src, noTrace)
	if res.Status.Code != 0 || !strings.Contains(progOut, "1229782938247303441 1491 ") {
		t.Fatalf("exit %+v, output %q", res.Status, progOut)
	}
	// pg.watched: 50 writes by += (i%10 == 0), the child's one,
	// read(2)'s and pread(2)'s (one aligned piece of 8, from the
	// syscall), memset's 8 byte stores (rep stosb); 500 reads by
	// pg.tail[i&7] = pg.watched, 50 by +=, one by the last printf.
	// o[1].b: 72 writes (i%7 == 0), the child's one and the first
	// memset's two 4-byte stores. (Before watch probes saw every
	// process, the child's writes were not reported: 52 and 74.)
	norm := " " + strings.Join(strings.Fields(bare), " ") + " "
	for _, want := range []string{" 1 1 8 8 1 53 ", " 8 551 ", " 1491 8 1 ", " end 1111111111111111 "} {
		if !strings.Contains(norm, want) {
			t.Errorf("live output lacks %q:\n%s", want, bare)
		}
	}
	if n := strings.Count("\n"+bare, "\no "); n != 75 {
		t.Errorf("%d writes of the heap object, want 75 (72, the child's and memset's two halves)", n)
	}
	if os.Getenv("SHOW") != "" {
		t.Log(bare)
	}
	sameWithTraces(t, cfg, src, bare, 20_000, 1_000_000)
}

// TestLiveWatchExec: the first process execs itself. Over the recording
// the watched bytes of the old image get one read and one write each at
// the position before the exec (reader.AccessExec, pc 0, value 0:
// reader.ExecPieces); live, with and without a trace, the same, then the
// new image's accesses.
func TestLiveWatchExec(t *testing.T) {
	prog := buildFixture(t, "watchpage")
	cfg := emu.Config{Path: prog, Args: []string{prog, "30", "exec"}, Env: []string{"PATH=/usr/bin:/bin"}}
	_, _, _, out := liveRun(t, cfg, `BEGIN {}`, noTrace)
	var w, o uint64
	if _, err := fmt.Sscanf(out, "watched 0x%x obj 0x%x", &w, &o); err != nil {
		t.Fatalf("program output %q: %v", out, err)
	}
	src := fmt.Sprintf(`#pragma D option quiet
watch:%#x:12:read, watch:%#x:12:write { printf("%%s %%d %%x %%d %%x %%d\n", probename, pos, arg0, arg2, arg1, arg3 != 0); }
proc:::exec { printf("exec %%d\n", pos); }`, w, w)
	_, bare, res, progOut := liveRun(t, cfg, src, noTrace)
	if res.Status.Code != 0 || strings.Count(progOut, "watched ") != 2 {
		t.Fatalf("exit %+v, output %q", res.Status, progOut)
	}
	// The exec: 8 bytes of watched and 4 of tail, read and written.
	m := regexp.MustCompile(`read (\d+) ([0-9a-f]+) 8 0 0\nwrite (\d+) [0-9a-f]+ 8 0 0\nread \d+ [0-9a-f]+ 4 0 0\nwrite \d+ [0-9a-f]+ 4 0 0\nexec (\d+)\n`).FindStringSubmatch(bare)
	if m == nil {
		t.Fatalf("no exec accesses before the exec:\n%s", bare)
	}
	if p, _ := strconv.ParseUint(m[1], 10, 64); m[1] != m[3] || strconv.FormatUint(p+1, 10) != m[4] || m[2] != strconv.FormatUint(w, 16) {
		t.Errorf("exec accesses %q: want at the position before the exec's, from %x", m[0], w)
	}
	sameWithTraces(t, cfg, src, bare, 20_000)
}
