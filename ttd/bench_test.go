package ttd

import (
	"math/rand"
	"testing"
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
