package calls

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ttd/x86"
)

// hardProgram is a program whose call tree is hard to get right, with
// the checkpoint interval to record it at (short: intervals start
// inside PLT stubs, trampolines, handlers and recursion).
type hardProgram struct {
	src   string
	every uint64
}

// hardPrograms longjmp out of deep recursion and out of signal
// handlers, take signals, bind lazily, run threads, and leave frames
// made by a call to the next instruction by their caller's ret
// (callpop.c: follow's in-line ret pops one frame only).
var hardPrograms = []hardProgram{
	{"testdata/deep.c", 3001},
	{"../testdata/corpus/setjmp_longjmp.c", 7919},
	{"../testdata/corpus/signals.c", 7919},
	{"../testdata/corpus/threads_signals.c", 50021},
	{"testdata/callpop.c", 100003},
}

// TestStitchingMatchesOnePass: for programs that longjmp out of deep
// recursion and out of signal handlers, take signals, bind lazily and
// run threads, the call tree stitched from short intervals (cut inside
// PLT stubs, trampolines and handlers) equals one pass over the whole
// recording, row for row, and holds every instruction.
func TestStitchingMatchesOnePass(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	// And a process forking a worker per request: each worker's tree
	// continues its parent's stack at the fork, wherever the
	// checkpoints fall.
	merged := mergedCalls.Load()
	defer func() {
		// deep.c's work calls leaf 1000 times in a loop: some of
		// those calls are merged (x86.LeafMerger), which the
		// reference does not do (every instruction hooked).
		if mergedCalls.Load() == merged {
			t.Errorf("no call merged into a leaf call's record")
		}
	}()
	for _, c := range append(hardPrograms, hardProgram{"../flows/testdata/forkserver.c", 7919}) {
		exe := buildC(t, c.src, "-pthread")
		tr, sym := open(t, record(t, exe, c.every))
		p, err := Analyze(tr, sym, Options{everyCheckpoint: true})
		if err != nil {
			t.Fatal(err)
		}
		ref := analyzeSequential(t, tr, sym)
		var sum uint64
		for i, th := range p.Threads {
			sum += th.Root.Total
			sameRows(t, fmt.Sprintf("%s, a checkpoint every %d, thread %d", c.src, c.every, th.Tid),
				flat(th.Root), flat(ref.Threads[i].Root))
		}
		if sum != p.Instructions {
			t.Errorf("%s: the trees hold %d of %d instructions", c.src, sum, p.Instructions)
		}
	}
}

// TestLazyBindingAcrossCheckpoints: intervals that start inside lazy
// binding, with _dl_runtime_resolve's frame open at the checkpoint
// (_dl_fixup runs, returns to it, and it jumps to the function called),
// stitch to the tree of one pass: the trampoline's frame becomes the
// called function's. Every block translated at once, _dl_fixup's rets
// are logged, never leaving translated code: watch finds the jump
// through the hooks alone (segThread.baseLookTo). (Before, such a ret
// was guarded to open the gate after it; removing the guard failed no
// test, as _dl_runtime_resolve_xsave's xrstor leaves translated code
// right after the ret anyway.)
func TestLazyBindingAcrossCheckpoints(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	exe := buildC(t, "testdata/lazybind.c", "-Wl,-z,lazy")
	defer x86.SetJIT(x86.SetJIT(true, 0))
	n := trampJumps.Load()
	for _, every := range []uint64{997, 1499, 2003, 3001} {
		stitchedAsOnePass(t, record(t, exe, every), fmt.Sprintf("lazybind, a checkpoint every %d", every))
	}
	if trampJumps.Load() == n {
		t.Error("no interval started inside a lazy-binding trampoline: the test tested nothing")
	}
	t.Logf("%d trampoline frames open at a checkpoint", trampJumps.Load()-n)
	// The program's path moves every checkpoint against the code (the
	// loader reads it): paths of 1 to 24 more bytes put checkpoints a
	// few instructions before a trampoline's jump, whose target's
	// entry then makes no record (watch's baseJmp). The test ran in 1
	// of 4 CI runs into one of them (by its temporary directory's
	// name) and its trampoline kept the function's instructions.
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	j := jumpsPastEntry.Load()
	for k := 1; k <= 24; k++ {
		dir := filepath.Join(t.TempDir(), strings.Repeat("d", k))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		moved := filepath.Join(dir, "lazybind")
		if err := os.WriteFile(moved, b, 0o755); err != nil {
			t.Fatal(err)
		}
		stitchedAsOnePass(t, record(t, moved, 3001), fmt.Sprintf("lazybind at a path %d bytes longer, a checkpoint every 3001", k))
	}
	if jumpsPastEntry.Load() == j {
		t.Error("no checkpoint fell before a trampoline's jump whose target made no record")
	}
}

// stitchedAsOnePass checks that the call tree of the trace at path,
// stitched from one segment per checkpoint interval, equals one pass's,
// row for row, thread by thread.
func stitchedAsOnePass(t *testing.T, path, what string) {
	t.Helper()
	tr, sym := open(t, path)
	p, err := Analyze(tr, sym, Options{Workers: 1, everyCheckpoint: true})
	if err != nil {
		t.Fatal(err)
	}
	ref := analyzeSequential(t, tr, sym)
	for i, th := range p.Threads {
		sameRows(t, fmt.Sprintf("%s, thread %d", what, th.Tid), flat(th.Root), flat(ref.Threads[i].Root))
	}
}

// TestSegmentsOfSeveralIntervals: segments that span several checkpoint
// intervals (segmentStarts: one per worker, or two per worker) stitch to
// the same tree as a segment per interval, for every worker count, and
// the segments cover the recording without gap or overlap.
func TestSegmentsOfSeveralIntervals(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	exe := buildC(t, "testdata/deep.c", "-pthread")
	tr, sym := open(t, record(t, exe, 3001))
	cps, err := tr.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	rows := func(p *Profile) []string {
		var out []string
		for _, th := range p.Threads {
			out = append(out, flat(th.Root)...)
		}
		return out
	}
	ref, err := Analyze(tr, sym, Options{Workers: 2, everyCheckpoint: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{1, 2, 3} {
		opts := Options{Workers: w}
		starts := segmentStarts(cps, tr.End(), &opts)
		want := 1
		if w > 1 {
			want = segmentsPerWorker * w
		}
		if len(starts) != want || starts[0] != 0 {
			t.Errorf("%d workers: %d segments from checkpoint %d, want %d from 0", w, len(starts), starts[0], want)
		}
		for k := 1; k < len(starts); k++ {
			if starts[k] <= starts[k-1] {
				t.Errorf("%d workers: segment %d starts at checkpoint %d, not after segment %d's %d", w, k, starts[k], k-1, starts[k-1])
			}
		}
		p, err := Analyze(tr, sym, opts)
		if err != nil {
			t.Fatal(err)
		}
		if p.Segments != len(starts) {
			t.Errorf("%d workers: %d segments re-simulated, want %d", w, p.Segments, len(starts))
		}
		sameRows(t, fmt.Sprintf("deep.c, %d workers (%d segments)", w, p.Segments), rows(p), rows(ref))
	}
}
