package calls

import (
	"fmt"
	"testing"
)

// hardProgram is a program whose call tree is hard to get right, with
// the checkpoint interval to record it at (short: intervals start
// inside PLT stubs, trampolines, handlers and recursion).
type hardProgram struct {
	src   string
	every uint64
}

// hardPrograms longjmp out of deep recursion and out of signal
// handlers, take signals, bind lazily and run threads.
var hardPrograms = []hardProgram{
	{"testdata/deep.c", 3001},
	{"../testdata/corpus/setjmp_longjmp.c", 7919},
	{"../testdata/corpus/signals.c", 7919},
	{"../testdata/corpus/threads_signals.c", 50021},
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
	for _, c := range append(hardPrograms, hardProgram{"../flows/testdata/forkserver.c", 7919}) {
		exe := buildC(t, c.src, "-pthread")
		tr, sym := open(t, record(t, exe, c.every))
		p, err := Analyze(tr, sym, Options{})
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
