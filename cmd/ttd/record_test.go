package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"ttd/internal/corpus"
)

// TestRecordReplayCorpus records every corpus program, checks that the
// recording run behaves like a native run, then re-simulates the trace
// with --verify (registers compared at every checkpoint and at the end)
// and checks that the replay shows the same output: the rr way.
func TestRecordReplayCorpus(t *testing.T) {
	for _, p := range corpus.Build(t) {
		p := p
		t.Run(p.Name, func(t *testing.T) { recordReplay(t, p) })
	}
}

// TestRecordReplaySystem does the same for real Debian binaries.
func TestRecordReplaySystem(t *testing.T) {
	for _, p := range corpus.System(t) {
		p := p
		t.Run(strings.TrimPrefix(p.Name, "system/"), func(t *testing.T) { recordReplay(t, p) })
	}
}

func recordReplay(t *testing.T, p corpus.Program) {
	t.Parallel()
	slots <- struct{}{}
	defer func() { <-slots }()
	trace := filepath.Join(t.TempDir(), "t.ttd")
	native := run(t, p)
	// A small checkpoint interval exercises checkpoints in short programs.
	// The recording translates every block to host code at once
	// (TTD_JIT=0, see testMain) and the replay only hot ones, as by
	// default: the two must agree whichever of translator and interpreter
	// ran a block.
	// ttd record ends by building the access summaries (a tracked
	// re-simulation of the whole trace, several times the recording's
	// CPU), hence the longer timeout.
	// The whole corpus in the mode that logs reads; TestReplayableCorpus
	// records it with the default.
	flags := []string{"record", "--mode", "predicted", "--checkpoint-every", "200000", "-o", trace}
	if p.Name == "tree-make-j2-gcc" {
		// make runs gcc, cc1, as and ld: 240M instructions, every
		// process re-simulated. Checkpoints every 200K would make 1,200
		// intervals for --segments; the summaries are a third replay.
		flags = []string{"record", "--mode", "predicted", "--checkpoint-every", "20000000", "--no-summaries", "-o", trace}
	}
	rec := runFor(t, 4*runTimeout, p, append(append([]string{ttdBinary}, flags...), "--")...)
	if rec.TimedOut {
		t.Fatalf("ttd record timed out; stderr:\n%s", corpus.Tail(rec.Stderr, 20))
	}
	if native.Status != rec.Status {
		t.Errorf("exit status: native %s, ttd record %s", native.Describe(), rec.Describe())
	}
	if d := corpus.FirstDifference(native.Stdout, rec.Stdout); d != "" {
		t.Errorf("stdout of ttd record differs from native: %s", d)
	}
	if !bytes.Contains(rec.Stderr, []byte("ttd: recorded ")) {
		t.Fatalf("ttd record did not report the trace; stderr:\n%s", corpus.Tail(rec.Stderr, 20))
	}
	// --segments also starts re-simulation at every checkpoint, as the
	// debugger does: the trace must hold, after each checkpoint, all the
	// code and data that runs after it.
	out, errOut, status := replay(t, trace, "TTD_JIT=50", "--segments")
	if status != 0 {
		t.Fatalf("ttd replay --verify failed (status %d):\n%s", status, corpus.Tail(errOut, 10))
	}
	// Every process of a tree is re-simulated: the replay shows what
	// all of them wrote to the recording's stdout, in the same order.
	if d := corpus.FirstDifference(rec.Stdout, out); d != "" {
		t.Errorf("replayed stdout differs from the recorded run's: %s", d)
	}
	if !bytes.Contains(errOut, []byte("verified")) || !bytes.Contains(errOut, []byte("re-simulated from its checkpoint")) {
		t.Errorf("replay did not verify checkpoints and intervals:\n%s", errOut)
	}
}

func replay(t *testing.T, trace string, extra ...string) (stdout, stderr []byte, status int) {
	t.Helper()
	// A hang detector, not a speed test: --segments of a 300M-instruction
	// Go program re-simulates 1,700 intervals, 14 s alone on this
	// machine and over a minute while CI runs the other packages.
	ctx, cancel := context.WithTimeout(context.Background(), 3*runTimeout)
	defer cancel()
	args := []string{"replay", "--verify"}
	var env []string
	for _, a := range extra {
		if strings.HasPrefix(a, "TTD_") {
			env = append(env, a)
		} else {
			args = append(args, a)
		}
	}
	cmd := exec.CommandContext(ctx, ttdBinary, append(args, trace)...)
	cmd.Env = append(os.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("ttd replay of %s timed out after %v; stderr:\n%s", trace, 3*runTimeout, corpus.Tail(e.Bytes(), 10))
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return o.Bytes(), e.Bytes(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.Bytes(), e.Bytes(), 0
}

// buildC compiles a small C program for the recording tests.
func buildC(t *testing.T, src string, flags ...string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("gcc is missing")
		}
		t.Skip("SKIPPING: gcc is not installed (make deps installs it)")
	}
	dir := t.TempDir()
	c := filepath.Join(dir, "p.c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "p")
	args := append([]string{"-O1", "-o", exe, c}, flags...)
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return exe
}

const spinSrc = `
#include <stdio.h>
#include <unistd.h>
volatile unsigned long sink;
int main(void) {
	printf("started\n");
	fflush(stdout);
	for (unsigned long i = 0;; i++) {
		sink += i * 2654435761u;
		if ((i & 0xfffff) == 0) { write(1, ".", 1); }
	}
}
`

// TestRecordSurvivesKill kills ttd record with SIGKILL in the middle of a
// recording: the trace must open and replay up to its last flushed chunk.
func TestRecordSurvivesKill(t *testing.T) {
	exe := buildC(t, spinSrc)
	trace := filepath.Join(t.TempDir(), "k.ttd")
	cmd := exec.Command(ttdBinary, "record", "--checkpoint-every", "2000000", "-o", trace, "--", exe)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Let it record well past several chunks.
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		if fi, err := os.Stat(trace); err == nil && fi.Size() > 64<<10 {
			break
		}
	}
	time.Sleep(500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	fi, err := os.Stat(trace)
	if err != nil || fi.Size() == 0 {
		t.Fatalf("no trace left after the kill: %v", err)
	}
	info, err := exec.Command(ttdBinary, "info", trace).CombinedOutput()
	if err != nil {
		t.Fatalf("ttd info on a killed recording: %v\n%s", err, info)
	}
	if !bytes.Contains(info, []byte("cut short")) {
		t.Errorf("ttd info should say the recording was cut short:\n%s", info)
	}
	stdout, stderr, status := replay(t, trace)
	if status != 1 || !bytes.Contains(stderr, []byte("recording was cut short")) {
		t.Fatalf("replay of a killed recording: status %d\n%s", status, stderr)
	}
	if !bytes.HasPrefix(stdout, []byte("started\n.")) {
		t.Errorf("replay should show the output up to the last flushed point, got %q", corpus.Tail(stdout, 2))
	}
}

// TestRecordRingSurvivesKill kills ttd record --ring with SIGKILL in the
// middle of a long recording: the window is written while the program
// runs, so the trace left behind opens, says it was cut short and where
// its window starts, and replays from that start to its last write.
func TestRecordRingSurvivesKill(t *testing.T) {
	exe := buildC(t, churnSrc)
	trace := filepath.Join(t.TempDir(), "ring.ttd")
	cmd := exec.Command(ttdBinary, "record", "--ring", "512K", "--checkpoint-every", "300000", "-o", trace, "--", exe)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for a window that no longer starts at 0 (the ring dropped
	// chunks), written by the running recording.
	var rep infoReport
	deadline := time.Now().Add(3 * runTimeout)
	for time.Now().Before(deadline) && rep.WindowStart == 0 {
		time.Sleep(300 * time.Millisecond)
		out, err := exec.Command(ttdBinary, "info", "--json", trace).Output()
		if err == nil {
			json.Unmarshal(out, &rep)
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if rep.WindowStart == 0 {
		t.Fatal("the running ring recording never wrote a window past position 0")
	}
	out, err := exec.Command(ttdBinary, "info", "--json", trace).CombinedOutput()
	if err != nil {
		t.Fatalf("ttd info on a killed ring recording: %v\n%s", err, out)
	}
	rep = infoReport{}
	if err := json.Unmarshal(out, &rep); err != nil || rep.WindowStart == 0 || rep.Instructions <= rep.WindowStart {
		t.Fatalf("ttd info --json: %v, window from %d to %d:\n%s", err, rep.WindowStart, rep.Instructions, out)
	}
	if txt, _ := exec.Command(ttdBinary, "info", trace).CombinedOutput(); !bytes.Contains(txt, []byte("cut short")) {
		t.Errorf("ttd info should say the recording was cut short:\n%s", txt)
	}
	stdout, stderr, status := replay(t, trace)
	if status != 1 || !bytes.Contains(stderr, []byte("recording was cut short")) {
		t.Fatalf("replay of a killed ring recording: status %d\n%s", status, stderr)
	}
	// The window starts in the second loop, after "started" (only
	// dots), or, on a busy machine where the kill came late in the
	// first, before it ("started" once, then dots): the checkpoints of
	// the first loop, which fills the array, fill the ring too.
	if strings.Trim(strings.TrimPrefix(string(stdout), "started\n"), ".") != "" {
		t.Errorf("replay of the window printed %q, want dots only", corpus.Tail(stdout, 2))
	}
}

// churnSrc reads random words of an array larger than the prediction
// cache forever: the reads it logs fill a ring quickly.
const churnSrc = `
#include <stdio.h>
#include <unistd.h>
static unsigned long a[1 << 21];
int main(void) {
	unsigned long x = 88172645463325252ul, sum = 0;
	for (unsigned long i = 0; i < (1ul << 21); i++) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		a[i] = x;
	}
	printf("started\n");
	fflush(stdout);
	for (unsigned long i = 0;; i++) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		sum += a[x & ((1 << 21) - 1)];
		a[(x >> 21) & ((1 << 21) - 1)] = sum;
		if ((i & 0xffff) == 0) { write(1, ".", 1); }
	}
}
`

const crashSrc = `
#include <stdio.h>
int *p;
int main(void) { printf("about to crash\n"); fflush(stdout); return *p; }
`

// TestRecordCrash records a program that dies of SIGSEGV: the trace says
// how it ended and replays to the crash.
func TestRecordCrash(t *testing.T) {
	exe := buildC(t, crashSrc)
	trace := filepath.Join(t.TempDir(), "c.ttd")
	cmd := exec.Command(ttdBinary, "record", "-o", trace, "--", exe)
	out, _ := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != 139 {
		t.Fatalf("ttd record of a crashing program exited %d, want 139:\n%s", cmd.ProcessState.ExitCode(), out)
	}
	info, err := exec.Command(ttdBinary, "info", trace).CombinedOutput()
	if err != nil || !bytes.Contains(info, []byte("killed by signal 11")) {
		t.Fatalf("ttd info should report the crash: %v\n%s", err, info)
	}
	// Replay needs nothing but the trace: delete the binary first.
	os.Remove(exe)
	stdout, stderr, status := replay(t, trace)
	if status != 0 || string(stdout) != "about to crash\n" || !bytes.Contains(stderr, []byte("killed by signal 11")) {
		t.Fatalf("replay: status %d stdout %q\n%s", status, stdout, stderr)
	}
}

// TestRecordDefaultName checks the default trace name and that an existing
// file is never overwritten.
func TestRecordDefaultName(t *testing.T) {
	exe := buildC(t, `int main(void){return 3;}`)
	dir := t.TempDir()
	for i, want := range []string{"p.ttd", "p-2.ttd"} {
		cmd := exec.Command(ttdBinary, "record", exe)
		cmd.Dir = dir
		out, _ := cmd.CombinedOutput()
		if cmd.ProcessState.ExitCode() != 3 {
			t.Fatalf("run %d: exit %d, want 3:\n%s", i, cmd.ProcessState.ExitCode(), out)
		}
		if _, err := os.Stat(filepath.Join(dir, want)); err != nil {
			t.Fatalf("run %d: %s not created:\n%s", i, want, out)
		}
		if !bytes.Contains(out, []byte("bits/instruction")) {
			t.Errorf("record should print the trace's density:\n%s", out)
		}
	}
}

// TestRecordThreadChurn records a program that starts and joins 400
// threads one after another, with a checkpoint every 200,000
// instructions, and replays it with --verify. Each thread has a 2 MiB
// prediction cache while it lives: neither ttd may keep the caches of
// ended threads. Before, both did until the end (record peaked at 200
// MiB, replay at 215, and every checkpoint cleared them all); now they
// peak at about 40 and 70 MiB.
func TestRecordThreadChurn(t *testing.T) {
	exe := buildC(t, `
#include <pthread.h>
#include <stdio.h>
static long sum;
static void *work(void *p) {
	long n = (long)p, s = 0;
	for (long i = 0; i < 2000; i++) s += i ^ n;
	return (void *)s;
}
int main(void) {
	for (long i = 0; i < 400; i++) {
		pthread_t th;
		void *r;
		pthread_create(&th, 0, work, (void *)i);
		pthread_join(th, &r);
		sum += (long)r;
	}
	printf("%ld\n", sum);
	return 0;
}`, "-pthread")
	trace := filepath.Join(t.TempDir(), "churn.ttd")
	want, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatal(err)
	}
	// --no-summaries: the summaries pass after recording is a parallel
	// re-simulation (two at a time), whose caches the replay's peak below
	// checks; here the recorder's own caches are measured.
	rec := exec.Command(ttdBinary, "record", "--no-summaries", "--checkpoint-every", "200000", "-o", trace, exe)
	out, recRSS, err := peakRSS(rec)
	if err != nil || !bytes.HasPrefix(out, want) {
		t.Fatalf("record: %v\n%s\nwant output %q", err, out, want)
	}
	rep := exec.Command(ttdBinary, "replay", "--verify", "--quiet", trace)
	out, repRSS, err := peakRSS(rep)
	if err != nil {
		t.Fatalf("replay --verify: %v\n%s", err, out)
	}
	t.Logf("peak RSS: record %d MiB, replay %d MiB", recRSS>>10, repRSS>>10)
	for i, m := range []int64{recRSS >> 10, repRSS >> 10} {
		if m > 120 {
			t.Errorf("%s: peak RSS %d MiB: the caches of ended threads were kept", []string{"record", "replay"}[i], m)
		}
	}
}

// TestRecordBadCacheSize checks that a prediction cache size out of range
// is a usage error that names the flag and leaves no trace behind (it
// was a crash of the whole process, out of memory, at 2^40 words).
func TestRecordBadCacheSize(t *testing.T) {
	dir := t.TempDir()
	for _, bits := range []string{"3", "29", "40"} {
		trace := filepath.Join(dir, "t.ttd")
		out, _ := exec.Command(ttdBinary, "record", "--cache-bits", bits, "-o", trace, "/bin/true").CombinedOutput()
		if !bytes.Contains(out, []byte("--cache-bits "+bits+": must be 4 to 28")) || bytes.Contains(out, []byte("goroutine")) {
			t.Errorf("--cache-bits %s: want a usage error, got:\n%s", bits, out)
		}
		if _, err := os.Stat(trace); err == nil {
			t.Errorf("--cache-bits %s left a trace", bits)
		}
	}
}

// BenchmarkRecordCorpus records every corpus program once per iteration
// and reports the trace density averaged over the corpus (the issue's
// target: at most 0.5 bits per instruction). TTD_BENCH_RECFLAGS adds
// flags to ttd record here and in BenchmarkRecordCorpusTime (to measure
// --cache-bits or --checkpoint-every, say).
func BenchmarkRecordCorpus(b *testing.B) {
	progs := corpus.Build(b)
	dir := b.TempDir()
	var sum float64
	var n int
	var insts, size int64
	var longSum float64
	var nLong int
	for i := 0; i < b.N; i++ {
		for k, p := range progs {
			trace := filepath.Join(dir, fmt.Sprintf("%d-%d.ttd", i, k))
			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			r, err := p.Run(ctx, append(append([]string{ttdBinary, "record", "-o", trace}, strings.Fields(os.Getenv("TTD_BENCH_RECFLAGS"))...), "--")...)
			cancel()
			if err != nil {
				b.Fatal(err)
			}
			var in int64
			var bits float64
			for _, line := range strings.Split(string(r.Stderr), "\n") {
				if strings.Contains(line, "ttd: recorded ") {
					f := strings.Fields(line)
					for j := 1; j < len(f); j++ {
						switch f[j] {
						case "bits/instruction,":
							fmt.Sscan(f[j-1], &bits)
						case "instructions,":
							fmt.Sscan(f[j-1], &in)
						}
					}
				}
			}
			if in == 0 {
				b.Fatalf("%s: no recording report:\n%s", p.Name, r.Stderr)
			}
			var fsize int64
			if fi, err := os.Stat(trace); err == nil {
				fsize = fi.Size()
				size += fsize
			}
			if i == 0 {
				fmt.Printf("%-34s %11d instructions %9d bytes %8.3f bits/instruction\n", p.Name, in, fsize, bits)
			}
			insts += in
			sum += bits
			n++
			if in >= longProgram {
				longSum += bits
				nLong++
			}
			os.Remove(trace)
		}
	}
	b.ReportMetric(sum/float64(n), "bits/inst(mean)")
	b.ReportMetric(float64(size)*8/float64(insts), "bits/inst(total)")
	if nLong > 0 {
		b.ReportMetric(longSum/float64(nLong), "bits/inst(mean>=1M)")
	}
}

// longProgram is the length from which BenchmarkRecordCorpus counts a
// program in its second mean, of programs whose trace is not mostly fixed
// costs: a trace holds the code that ran (much of it the dynamic loader's
// and libc's start-up), a checkpoint and the tables of mappings and
// modules, several KiB that a program of a few thousand instructions
// cannot spread out (musl's abort: 1770 instructions, 5 KiB, 24 bits per
// instruction). iDNA's average of 0.51 was over programs of billions.
const longProgram = 1_000_000

// BenchmarkRecordCorpusTime times every corpus program natively, under
// ttd run and under ttd record (wall time, the best of several runs) and
// reports the two overhead ratios over the corpus: record/run
// (target 1.5x) and record/native (target 40x), with the programs that
// miss them. Short programs are dominated by fixed costs: starting ttd,
// and interpreting (mostly decoding) the dynamic loader's and libc's
// start-up code, which runs once.
func BenchmarkRecordCorpusTime(b *testing.B) {
	progs := corpus.Build(b)
	dir := b.TempDir()
	// best is the shortest of at least three runs, and of more for short
	// programs (up to 15, or 300 ms of them), whose few milliseconds
	// the machine's noise moves by tens of percent.
	best := func(p corpus.Program, wrapper func(r int) []string) time.Duration {
		var d, total time.Duration
		for r := 0; r < 3 || r < 15 && total < 300*time.Millisecond; r++ {
			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			res, err := p.Run(ctx, wrapper(r)...)
			cancel()
			if err != nil {
				b.Fatal(err)
			}
			if r == 0 || res.Duration < d {
				d = res.Duration
			}
			total += res.Duration
		}
		return d
	}
	for i := 0; i < b.N; i++ {
		var recRun, recNat []float64
		var slowRec, slowNat []string
		for k, p := range progs {
			nat := best(p, func(int) []string { return nil })
			run := best(p, func(int) []string { return []string{ttdBinary, "run", "--"} })
			rec := best(p, func(r int) []string {
				return append(append([]string{ttdBinary, "record", "-o", filepath.Join(dir, fmt.Sprintf("%d-%d-%d.ttd", i, k, r))}, strings.Fields(os.Getenv("TTD_BENCH_RECFLAGS"))...), "--")
			})
			rr, rn := rec.Seconds()/run.Seconds(), rec.Seconds()/nat.Seconds()
			recRun, recNat = append(recRun, rr), append(recNat, rn)
			if rr > 1.5 {
				slowRec = append(slowRec, fmt.Sprintf("%s %.2fx", p.Name, rr))
			}
			if rn > 40 {
				slowNat = append(slowNat, fmt.Sprintf("%s %.0fx (%.1f ms native)", p.Name, rn, nat.Seconds()*1e3))
			}
			if i == 0 {
				fmt.Printf("%-34s native %7.1f ms  run %7.1f ms  record %7.1f ms  record/run %.2fx  record/native %5.1fx\n",
					p.Name, nat.Seconds()*1e3, run.Seconds()*1e3, rec.Seconds()*1e3, rr, rn)
			}
		}
		sort.Float64s(recRun)
		sort.Float64s(recNat)
		b.ReportMetric(recRun[len(recRun)/2], "record/run(median)")
		b.ReportMetric(recRun[len(recRun)-1], "record/run(max)")
		b.ReportMetric(recNat[len(recNat)/2], "record/native(median)")
		b.ReportMetric(recNat[len(recNat)-1], "record/native(max)")
		if i == 0 {
			fmt.Printf("record/run above 1.5x: %d of %d: %s\n", len(slowRec), len(progs), strings.Join(slowRec, ", "))
			fmt.Printf("record/native above 40x: %d of %d: %s\n", len(slowNat), len(progs), strings.Join(slowNat, ", "))
		}
	}
}

// peakRSS runs cmd and returns its combined output and its peak RSS in
// KiB, VmHWM of /proc/PID/status read until it exits. Not the rusage of
// wait4: os/exec starts a child with CLONE_VM|CLONE_VFORK, and at its
// exec the kernel carries the peak of the memory it shared, the test
// process's, into the child's ru_maxrss.
func peakRSS(cmd *exec.Cmd) ([]byte, int64, error) {
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	var peak int64
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(status); err == nil {
			if i := bytes.Index(b, []byte("VmHWM:")); i >= 0 {
				if f := bytes.Fields(b[i+len("VmHWM:"):]); len(f) > 0 {
					if kb, err := strconv.ParseInt(string(f[0]), 10, 64); err == nil {
						peak = max(peak, kb)
					}
				}
			}
		}
		select {
		case err := <-done:
			return buf.Bytes(), peak, err
		case <-tick.C:
		}
	}
}
