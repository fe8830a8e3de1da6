package main

import (
	"math"
	"testing"

	"ttd/reader"
)

// TestFitRecoversTheModel: segments timed exactly by a known model give
// back its parameters, and a part no segment has (no thread starts)
// gets zero instead of spoiling the others.
func TestFitRecoversTheModel(t *testing.T) {
	a, b, c := 0.8e-9, 2e-9, 0.017
	var segs []seg
	for k := range 12 {
		p := reader.SegmentCost{Insts: uint64(3e7 + 1e6*k*k), Bytes: float64(1e6 + 7e5*(k%5)), ThreadStarts: float64(k % 3)}
		segs = append(segs, seg{k: k, parts: p, secs: a*float64(p.Insts) + b*p.Bytes + c*p.ThreadStarts})
	}
	ga, gb, gc := fit(segs)
	for _, x := range [][2]float64{{ga, a}, {gb, b}, {gc, c}} {
		if math.Abs(x[0]-x[1]) > 1e-6*x[1] {
			t.Errorf("fit gave %g, want %g (all: %g %g %g)", x[0], x[1], ga, gb, gc)
		}
	}
	for i := range segs {
		segs[i].secs -= c * segs[i].parts.ThreadStarts
		segs[i].parts.ThreadStarts = 0
	}
	ga, gb, gc = fit(segs)
	if math.Abs(ga-a) > 1e-6*a || math.Abs(gb-b) > 1e-6*b || gc != 0 {
		t.Errorf("without thread starts: %g %g %g, want %g %g 0", ga, gb, gc, a, b)
	}
}
