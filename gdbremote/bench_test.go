package gdbremote

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"
	"time"
)

// The benchmarks drive the server through the protocol, as gdb does, on
// the loop program (about 4 million instructions); bench/cmd/gdbbench
// measures the same on a 1e9-instruction recording for the targets.

// BenchmarkReverseContinueWatch: from the end, reverse-continue to the
// one write of g.first near the start, over a loop whose writes share
// its cache line.
func BenchmarkReverseContinueWatch(b *testing.B) {
	prog, trace := recorded(b, "loop", "-no-pie")
	first, _, _ := loopLayout(b, prog)
	c, s := newClient(b, trace)
	c.send("qSupported")
	if r := c.send(fmt.Sprintf("Z2,%x,8", first)); r != "OK" {
		b.Fatal(r)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s.Seek(s.End())
		b.StartTimer()
		if r := c.send("bc"); r == "" || r[0] != 'T' {
			b.Fatal(r)
		}
	}
}

// BenchmarkReverseStepi: one reverse-stepi (bs) from a random position
// (the travel there is not timed); reports the 99th percentile.
func BenchmarkReverseStepi(b *testing.B) {
	_, trace := recorded(b, "loop", "-no-pie")
	c, s := newClient(b, trace)
	c.send("qSupported")
	rng := rand.New(rand.NewSource(1))
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s.Seek(1 + uint64(rng.Int63n(int64(s.End()-1))))
		b.StartTimer()
		t0 := time.Now()
		if r := c.send("bs"); r == "" || r[0] != 'T' {
			b.Fatal(r)
		}
		ds = append(ds, time.Since(t0))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds())/1000, "p99-ms")
}
