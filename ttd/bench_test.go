package ttd

import (
	"math/rand"
	"testing"
	"time"
	"ttd/internal/cputime"
)

// The benchmarks run on a recording of testdata/loop.c (about 6 million
// instructions, a checkpoint every million). bench/cmd/travel measures
// the same operations on gzip -9 (1e9 instructions) for the targets.

func benchSession(b *testing.B) *Session {
	prog := buildC(b, "loop")
	path := recordProg(b, prog, 1_000_000, "2000")
	s := openSession(b, path, 0)
	return s
}

// BenchmarkStepBackward steps back once from a random position (the
// Seek there is not timed).
func BenchmarkStepBackward(b *testing.B) {
	s := benchSession(b)
	rng := rand.New(rand.NewSource(1))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s.Seek(1 + uint64(rng.Int63n(int64(s.End()-1))))
		b.StartTimer()
		if _, err := s.Step(Backward); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFindPrevWrite finds, from the end, the one write to `first`
// near the start.
func BenchmarkFindPrevWrite(b *testing.B) {
	s := benchSession(b)
	first := symbol(b, s, "first")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.FindPrevWrite(first, 8, s.End()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadMemory reads 64 bytes at the end of the trace: the current
// window, then the index's deltas back to the start.
func BenchmarkReadMemory(b *testing.B) {
	s := benchSession(b)
	first := symbol(b, s, "first")
	s.Seek(s.End())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.ReadMemory(first, 64); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReverseContinueRareBreak reverse-continues from the end of a
// recording of one checkpoint interval (loop.c, about 6 million
// instructions; the session has visited it, so it knows its windows) to
// an execution breakpoint whose code runs once, near the start, on the
// same code page as the loop: the windows that never ran it are
// skipped. It reports CPU time (wall time depends on the machine's
// load).
func BenchmarkReverseContinueRareBreak(b *testing.B) {
	prog := buildC(b, "loop")
	s := openSession(b, recordProg(b, prog, 100_000_000, "2000"), 0)
	s.StopOnSignal = false
	if _, err := s.Seek(s.End()); err != nil {
		b.Fatal(err)
	}
	// The store to first, found as the instruction before the write.
	w, err := s.FindPrevWrite(symbol(b, s, "first"), 8, s.End())
	if err != nil || w == nil {
		b.Fatalf("no write to first: %v", err)
	}
	if _, err := s.SetBreakpoint(Breakpoint{Kind: BreakExec, Addr: w.PC}); err != nil {
		b.Fatal(err)
	}
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s.Seek(s.End())
		b.StartTimer()
		c0 := cputime.Now()
		st, err := s.Continue(Backward)
		if err != nil || st.Reason != StopBreakpoint {
			b.Fatalf("reverse-continue: %v %v", st, err)
		}
		cpu += cputime.Now() - c0
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}
