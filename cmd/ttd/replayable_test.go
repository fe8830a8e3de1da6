package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"ttd/internal/corpus"
)

// TestReplayableCorpus records every corpus program with ttd record's
// default mode, replayable (no read logged: the replay reads its own
// memory; TestRecordReplayCorpus records them with --mode predicted) and
// memory hashes at every checkpoint (TTD_MEMHASH=1), checks the
// recording run against a native one, then replays with --verify:
// registers and memory compared at every checkpoint, the output
// compared with the recording's. A kernel write, a page of a mapped file
// or a thread switch the trace got wrong changes a register or the
// memory's hash. Memory mapped at two places (a file mapped twice, shared
// memory a fork shares: behind_its_back, shared_fork) is one page in the
// replay too, or a write through one would not show at the other. Then every checkpoint
// interval is re-simulated on its own (--segments) from the memory the
// index pass wrote, and compared the same way.
func TestReplayableCorpus(t *testing.T) {
	for _, p := range corpus.Build(t) {
		p := p
		if testing.Short() && (strings.HasSuffix(p.Name, "-O0") || strings.HasSuffix(p.Name, "gcc-O2-static") || strings.HasSuffix(p.Name, "g++-O2-static")) {
			// -short: one dynamic glibc build, musl's static one and
			// the Go programs (the full matrix took 4 minutes of
			// this package's 10 at load 12).
			continue
		}
		t.Run(p.Name, func(t *testing.T) { recordReplayable(t, p) })
	}
}

// TestReplayableSystem does the same for real Debian binaries
// (TestRecordReplaySystem records them with --mode predicted).
func TestReplayableSystem(t *testing.T) {
	for _, p := range corpus.System(t) {
		p := p
		t.Run(strings.TrimPrefix(p.Name, "system/"), func(t *testing.T) { recordReplayable(t, p) })
	}
}

func recordReplayable(t *testing.T, p corpus.Program) {
	t.Parallel()
	slots <- struct{}{}
	defer func() { <-slots }()
	trace := filepath.Join(t.TempDir(), "t.ttd")
	native := run(t, p)
	wrapper := []string{"env", "TTD_MEMHASH=1"}
	if strings.HasPrefix(p.Name, "environ/") {
		wrapper = nil // it prints its environment, which ttd passes on
	}
	rec := runFor(t, 4*runTimeout, p, append(wrapper, ttdBinary, "record",
		"--checkpoint-every", "200000", "-o", trace, "--")...)
	if rec.TimedOut {
		t.Fatalf("ttd record timed out; stderr:\n%s", corpus.Tail(rec.Stderr, 20))
	}
	if d := corpus.FirstDifference(native.Stdout, rec.Stdout); d != "" {
		t.Errorf("stdout of ttd record differs from native: %s", d)
	}
	if native.Status != rec.Status {
		t.Errorf("exit status: native %s, ttd record %s", native.Describe(), rec.Describe())
	}
	if !bytes.Contains(rec.Stderr, []byte("ttd: recorded ")) {
		t.Fatalf("ttd record did not report the trace; stderr:\n%s", corpus.Tail(rec.Stderr, 20))
	}
	out, errOut, status := replay(t, trace, "TTD_JIT=50")
	if status != 0 {
		t.Fatalf("ttd replay --verify failed (status %d):\n%s", status, corpus.Tail(errOut, 10))
	}
	if d := corpus.FirstDifference(rec.Stdout, out); d != "" {
		t.Errorf("replayed stdout differs from the recorded run's: %s", d)
	}
	if !bytes.Contains(errOut, []byte("verified")) {
		t.Errorf("replay did not verify checkpoints:\n%s", errOut)
	}
	// Every interval re-simulated from its checkpoint, with the memory
	// the index pass wrote (built here on demand), reaches the next
	// checkpoint with the recorded registers and memory hash.
	_, errOut, status = replay(t, trace, "--segments")
	if status != 0 || !bytes.Contains(errOut, []byte("each re-simulated from its checkpoint")) {
		t.Errorf("ttd replay --verify --segments: status %d:\n%s", status, corpus.Tail(errOut, 5))
	}
	if _, err := os.Stat(trace + ".pages"); err != nil {
		t.Errorf("no checkpoint memory next to the trace: %v", err)
	}
	if info, err := exec.Command(ttdBinary, "info", trace).Output(); err != nil || !bytes.Contains(info, []byte("mode:           replayable")) {
		t.Errorf("ttd info does not name the mode (%v):\n%s", err, info)
	}
}

// TestQueryReplayable records globals.c in both modes, with checkpoints
// every 20,000 instructions, and checks that ttd query gives the same
// answers on the replayable trace (whose replays start at checkpoints
// with the memory its index pass wrote, built here on first use) as on
// the default one: positions count instructions, so they must agree.
// The chain of --find-prev-write of counter from the end, and the
// registers and a global's bytes at a position in the middle.
func TestQueryReplayable(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../../ttd/testdata/globals.c")
	if err != nil {
		t.Fatal(err)
	}
	exe := buildC(t, string(src), "-O0", "-g")
	dir := t.TempDir()
	// "replayable" is recorded in Linux's layout (TTD_WINDOW=0), in
	// which the predicted mode always records, so that registers
	// compare; "window" as `ttd record` records by default, in `ttd
	// run`'s host window, where the stack and the libraries sit below
	// 1 TiB.
	traces := map[string]string{"predicted": filepath.Join(dir, "p.ttd"), "replayable": filepath.Join(dir, "r.ttd"), "window": filepath.Join(dir, "w.ttd")}
	for name, trace := range traces {
		mode, env := name, "TTD_WINDOW=0"
		switch name {
		case "window":
			mode, env = "replayable", "TTD_WINDOW=1"
		case "predicted":
			env = "TTD_WINDOW=1" // which it does not use
		}
		cmd := exec.Command(ttdBinary, "record", "--mode", mode, "--checkpoint-every", "20000", "-o", trace, "--", exe)
		cmd.Env = append(os.Environ(), env)
		var errs strings.Builder
		cmd.Stderr = &errs
		if out, err := cmd.Output(); err != nil || string(out) != "hi\n190 7 10\n" {
			t.Fatalf("record --mode %s (%s): %v, stdout %q, stderr %s", mode, env, err, out, errs.String())
		}
	}
	at := map[string]string{"predicted": "end", "replayable": "end", "window": "end"}
	for i := 0; i < 5; i++ {
		var found [3]queryJSON
		for k, mode := range []string{"predicted", "replayable", "window"} {
			q, st := queryJSONOut(t, "--at", at[mode], "--find-prev-write", "counter", traces[mode])
			if st != 0 || q.Found == nil || q.Found.AfterValue == nil {
				t.Fatalf("%s: write %d from %s: status %d %+v", mode, i, at[mode], st, q.Found)
			}
			found[k] = q
			at[mode] = strconv.FormatUint(q.Position, 10)
		}
		p := found[0].Found
		for k, mode := range []string{"replayable", "window"} {
			r := found[k+1].Found
			if found[0].Position != found[k+1].Position || *p.AfterValue != *r.AfterValue || p.Function != r.Function || p.Line != r.Line || p.Instruction != r.Instruction {
				t.Errorf("write %d: predicted %d %+v, %s %d %+v", i, found[0].Position, *p, mode, found[k+1].Position, *r)
			}
		}
	}
	mid, _ := queryJSONOut(t, "--at", "50%", traces["predicted"])
	pos := strconv.FormatUint(mid.Position, 10)
	var regs, mem [2]string
	for k, mode := range []string{"predicted", "replayable"} {
		q, st := queryJSONOut(t, "--at", pos, "--regs", "--mem", "table:64", traces[mode])
		if st != 0 || q.Registers == nil || q.Memory == nil {
			t.Fatalf("%s: --at %s: status %d %+v", mode, pos, st, q)
		}
		regs[k] = fmt.Sprint(q.Registers.Regs)
		mem[k] = q.Memory.Bytes
	}
	if regs[0] != regs[1] {
		t.Errorf("registers at %s: predicted %s, replayable %s", pos, regs[0], regs[1])
	}
	if mem[0] != mem[1] && !strings.Contains(mem[0], "??") {
		t.Errorf("table at %s: predicted %s, replayable %s", pos, mem[0], mem[1])
	}
	// The default recording ran in the host window: its stack is
	// below 1 TiB; the other two (the predicted mode whatever
	// TTD_WINDOW says) in Linux's layout, near 128 TiB.
	for _, c := range []struct {
		trace  string
		window bool
	}{{"window", true}, {"replayable", false}, {"predicted", false}} {
		q, st := queryJSONOut(t, "--at", pos, "--regs", traces[c.trace])
		if st != 0 || q.Registers == nil {
			t.Fatalf("%s: --at %s --regs: status %d", c.trace, pos, st)
		}
		rsp, err := strconv.ParseUint(strings.TrimPrefix(q.Registers.Regs["rsp"], "0x"), 16, 64)
		if err != nil || (rsp < 1<<40) != c.window {
			t.Errorf("%s: rsp %s at %s (%v): want it below 1 TiB %v", c.trace, q.Registers.Regs["rsp"], pos, err, c.window)
		}
	}
}

// TestReplayGDBReplayable runs TestReplayGDB's gdb session on a
// replayable recording of globals.c with checkpoints every 20,000
// instructions: gdb's reverse steps resume snapshots and start replays
// at checkpoints, with the memory the index pass wrote.
func TestReplayGDBReplayable(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("gdb"); err != nil {
		t.Skip("SKIPPED LOUDLY: gdb not installed (make deps installs it)")
	}
	src, err := os.ReadFile("../../ttd/testdata/globals.c")
	if err != nil {
		t.Fatal(err)
	}
	exe := buildC(t, string(src), "-O0", "-g")
	trace := filepath.Join(t.TempDir(), "g.ttd")
	if out, errs, st := ttdCmd(t, "record", "--mode", "replayable", "--checkpoint-every", "20000", "-o", trace, "--", exe); st != 0 || out != "hi\n190 7 10\n" {
		t.Fatalf("record: status %d, stdout %q, stderr %s", st, out, errs)
	}
	gdbGlobals(t, trace)
}

// checkTreeShared checks src, whose processes share writable memory,
// recorded with ttd record's default mode and memory hashes at every
// checkpoint, one every 1,000 instructions (a hash between one process's
// touch of a shared page and another's next write catches a page the
// replay did not make exist where the recording did): replay --verify,
// then from every checkpoint (checkTreeC).
// The replay must share the pages as the recording did.
func checkTreeShared(t *testing.T, src string, cflags []string, nprocs int) {
	t.Helper()
	t.Setenv("TTD_MEMHASH", "1")
	checkTreeC(t, src, cflags, 0, nprocs, "--checkpoint-every", "1000")
}

// TestSharedForkReplayable records shared_fork.c (anonymous shared
// memory a fork shares, each process writing what the other waits for)
// with the default mode and memory hashes, checkpoints every 3,000
// instructions, and checks replay --verify --segments (every interval
// from the checkpoint memory, which must make the parent's and the
// child's pages one again) and that probe --jobs 2, whose segments start
// after the fork, prints what --jobs 1 does: the length of the line
// the parent printed with the value it read from the page the child
// wrote.
func TestSharedForkReplayable(t *testing.T) {
	src, err := os.ReadFile("../../testdata/corpus/shared_fork.c")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TTD_MEMHASH", "1")
	trace, _ := recordTreeC(t, string(src), []string{"-O1"}, 0, 2, "--checkpoint-every", "3000")
	if _, errs, st := ttdCmd(t, "replay", "--verify", "--segments", trace); st != 0 || !strings.Contains(errs, "each re-simulated from its checkpoint") {
		t.Fatalf("replay --verify --segments: status %d\n%s", st, errs)
	}
	// (The length of "child wrote 40\n": copyinstr reads no memory of a
	// default trace yet.)
	script := `syscall::write:entry { @[arg2] = count(); }`
	one, errs, st := ttdCmd(t, "probe", "--jobs", "1", "-n", script, trace)
	if st != 0 || !strings.Contains(one, " 15 ") {
		t.Fatalf("probe --jobs 1: status %d, output %q\n%s", st, one, errs)
	}
	two, errs, st := ttdCmd(t, "probe", "--jobs", "2", "-n", script, trace)
	if st != 0 || two != one {
		t.Errorf("probe --jobs 2: status %d, output %q, want --jobs 1's %q\n%s", st, two, one, errs)
	}
}
