// Command segfit measures what each checkpoint segment of recordings
// costs to re-simulate under `ttd probe --jobs 1` and fits the cost
// model the job scheduler splits by (reader.SegmentCosts): seconds =
// a × instructions + b × record bytes + c × thread starts, least squares
// over every segment of every trace given. It prints each segment's
// parts, its time and the model's, and the constants the fit gives
// (reader's costPerByte = b/a and costPerThreadStart = c/a, in
// instruction equivalents). A segment's time is the CPU the process
// spent while the one job evaluated it, the least of -reps runs: the
// job's own, and the chunk decoding its prefetch does on another core,
// which two jobs must share the two cores with (-wall times the wall
// clock instead, what one job waits for).
//
// Usage (from the repository root):
//
//	go run ./bench/cmd/segfit [-n SCRIPT] [-reps 3] TRACE...
package main

import (
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"syscall"
	"time"

	"ttd/bench"
	"ttd/probe"
	"ttd/reader"
)

var (
	script = flag.String("n", "fn::malloc:entry { @ = count(); }", "the probe script")
	reps   = flag.Int("reps", 3, "runs of each trace; each segment's least time is kept")
	wall   = flag.Bool("wall", false, "time segments by the wall clock, not by the process's CPU")
)

// now is the process's CPU time (user and system), or the wall clock
// with -wall, in seconds.
func now() float64 {
	if *wall {
		return float64(time.Now().UnixNano()) / 1e9
	}
	var ru syscall.Rusage
	bench.Check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// seg is one segment's parts and time.
type seg struct {
	trace string
	k     int
	parts reader.SegmentCost
	secs  float64
}

func main() {
	flag.Parse()
	if flag.NArg() == 0 {
		bench.Fail("usage: segfit [-n SCRIPT] [-reps 3] TRACE...")
	}
	var segs []seg
	for _, path := range flag.Args() {
		ts := measure(path)
		a, b, c := fit(ts)
		fmt.Printf("%s: %.3f s per 1e9 instructions, %.4f s per MB of records, %.4f s per thread start", filepath.Base(path), a*1e9, b*1e6, c)
		if a > 0 {
			fmt.Printf(" (costPerByte %.1f, costPerThreadStart %.3g)", b/a, c/a)
		}
		fmt.Println()
		segs = append(segs, ts...)
	}
	a, b, c := fit(segs)
	fmt.Printf("%-12s %4s %12s %12s %8s %9s %9s\n", "trace", "seg", "insts", "bytes", "starts", "secs", "model")
	for _, s := range segs {
		fmt.Printf("%-12s %4d %12d %12.0f %8.1f %9.4f %9.4f\n", s.trace, s.k, s.parts.Insts, s.parts.Bytes, s.parts.ThreadStarts,
			s.secs, a*float64(s.parts.Insts)+b*s.parts.Bytes+c*s.parts.ThreadStarts)
	}
	fmt.Printf("fit: %.3f s per 1e9 instructions, %.4f s per MB of records, %.4f s per thread start\n", a*1e9, b*1e6, c)
	if a > 0 {
		fmt.Printf("constants: costPerByte = %.1f, costPerThreadStart = %.3g\n", b/a, c/a)
	}
}

// measure times each segment of the trace at path, the least of -reps
// runs of the script with one job.
func measure(path string) []seg {
	p, err := probe.Compile(*script, nil)
	bench.Check(err)
	p.SetQuiet()
	var segs []seg
	for r := 0; r < *reps; r++ {
		t, closeT, _, err := probe.OpenTargetJobs(path, p, 1, nil)
		bench.Check(err)
		b, err := p.Bind(t)
		bench.Check(err)
		cps, err := t.Trace.Checkpoints()
		bench.Check(err)
		parts := t.Trace.SegmentCostParts(cps)
		if segs == nil {
			for k := range parts {
				segs = append(segs, seg{trace: filepath.Base(path), k: k, parts: parts[k], secs: math.Inf(1)})
			}
		}
		last := now()
		_, err = p.Run([]*probe.Bound{b}, probe.RunOptions{Jobs: 1, Progress: func(done, total int) {
			// One job evaluates the segments in order: the done-th
			// to finish is segment done-1.
			t := now()
			segs[done-1].secs = min(segs[done-1].secs, t-last)
			last = t
		}})
		bench.Check(err)
		closeT()
	}
	return segs
}

// fit solves the least-squares problem secs = a·insts + b·bytes +
// c·starts over segs (the normal equations; a parameter whose column
// is all zero is left at zero).
func fit(segs []seg) (a, b, c float64) {
	var m [3][4]float64
	for _, s := range segs {
		x := [3]float64{float64(s.parts.Insts), s.parts.Bytes, s.parts.ThreadStarts}
		for i := range 3 {
			for j := range 3 {
				m[i][j] += x[i] * x[j]
			}
			m[i][3] += x[i] * s.secs
		}
	}
	// Scale the columns so that elimination works on numbers near 1.
	var scale [3]float64
	for i := range 3 {
		scale[i] = math.Sqrt(m[i][i])
		if scale[i] == 0 {
			scale[i] = 1
			m[i][i] = 1 // the parameter stays 0
		}
	}
	for i := range 3 {
		for j := range 3 {
			m[i][j] /= scale[i] * scale[j]
		}
		m[i][3] /= scale[i]
	}
	for i := range 3 {
		for r := i + 1; r < 3; r++ {
			f := m[r][i] / m[i][i]
			for j := i; j < 4; j++ {
				m[r][j] -= f * m[i][j]
			}
		}
	}
	var x [3]float64
	for i := 2; i >= 0; i-- {
		v := m[i][3]
		for j := i + 1; j < 3; j++ {
			v -= m[i][j] * x[j]
		}
		x[i] = v / m[i][i]
	}
	return x[0] / scale[0], x[1] / scale[1], x[2] / scale[2]
}
