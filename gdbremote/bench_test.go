package gdbremote

import (
	"debug/elf"
	"fmt"
	"math/rand"
	"sort"
	"testing"
	"time"
)

// The benchmarks drive the server through the protocol, as gdb does, on
// two programs of about 5 million instructions: tune (the watched
// variable has a cache line of its own) and neighbours (nobody tuned for
// it: the watched variable shares its line with an array written on
// every iteration). bench/cmd/gdbbench measures the same on
// 1e9-instruction recordings for the targets of issue 22.

// benchProgram is a benchmark's program: the watched variable's address
// and the function a breakpoint goes on.
type benchProgram struct {
	name, watched, fn string
}

var benchPrograms = []benchProgram{
	{"tune", "first", "mix"},
	{"neighbours", "g+56", "churn"}, // g.watched
}

func benchSymbols(b *testing.B, prog string, names ...string) []uint64 {
	f, err := elf.Open(prog)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	out := make([]uint64, len(names))
	for i, n := range names {
		var off uint64
		if n == "g+56" {
			n, off = "g", 56
		}
		for _, s := range syms {
			if s.Name == n {
				out[i] = s.Value + off
			}
		}
		if out[i] == 0 {
			b.Fatalf("no symbol %s in %s", n, prog)
		}
	}
	return out
}

// reportPercentiles reports the p50 and p99 of ds in milliseconds.
func reportPercentiles(b *testing.B, ds []time.Duration) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	ms := func(q float64) float64 {
		return float64(ds[min(len(ds)-1, int(q*float64(len(ds))))].Microseconds()) / 1000
	}
	b.ReportMetric(ms(0.5), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
}

// BenchmarkReverseContinueWatch: from the end, reverse-continue to the
// one write of the watched variable, at the start.
func BenchmarkReverseContinueWatch(b *testing.B) {
	for _, bp := range benchPrograms {
		b.Run(bp.name, func(b *testing.B) {
			prog, trace := recorded(b, bp.name, "-no-pie")
			addr := benchSymbols(b, prog, bp.watched)[0]
			c, s := newClient(b, trace)
			c.send("qSupported")
			if r := c.send(fmt.Sprintf("Z2,%x,8", addr)); r != "OK" {
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
		})
	}
}

// BenchmarkReverseStepi: one reverse-stepi (bs) from a random position
// (the travel there is not timed); reports the 50th and 99th
// percentiles.
func BenchmarkReverseStepi(b *testing.B) {
	benchFromRandom(b, "", func(end uint64, rng *rand.Rand) uint64 { return 1 + uint64(rng.Int63n(int64(end-1))) }, "bs")
}

// BenchmarkContinue: continue (vCont;c) from a random position to a
// breakpoint a few instructions ahead, as gdb's next and finish do;
// reports the 50th and 99th percentiles.
func BenchmarkContinue(b *testing.B) {
	benchFromRandom(b, "Z0,%x,1", func(end uint64, rng *rand.Rand) uint64 { return end/2 + uint64(rng.Int63n(int64(end/3))) }, "vCont;c")
}

// benchFromRandom times packet, sent from positions from picks (the
// travel there is not timed), on every bench program, after setting a
// breakpoint on its function with the Z packet format bp ("" for none);
// it reports the 50th and 99th percentiles.
func benchFromRandom(b *testing.B, bp string, from func(end uint64, rng *rand.Rand) uint64, packet string) {
	for _, p := range benchPrograms {
		b.Run(p.name, func(b *testing.B) {
			prog, trace := recorded(b, p.name, "-no-pie")
			c, s := newClient(b, trace)
			c.send("qSupported")
			if bp != "" {
				if r := c.send(fmt.Sprintf(bp, benchSymbols(b, prog, p.fn)[0])); r != "OK" {
					b.Fatal(r)
				}
			}
			rng := rand.New(rand.NewSource(1))
			var ds []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				s.Seek(from(s.End(), rng))
				b.StartTimer()
				t0 := time.Now()
				if r := c.send(packet); r == "" || r[0] != 'T' {
					b.Fatal(r)
				}
				ds = append(ds, time.Since(t0))
			}
			reportPercentiles(b, ds)
		})
	}
}
