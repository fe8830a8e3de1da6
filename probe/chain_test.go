package probe

import "testing"

// TestChainRuns: the local runner evaluates consecutive segments in one
// re-simulation per job (evalChain), split where the instruction counts
// balance; a script that reads memory keeps a re-simulation per segment.
func TestChainRuns(t *testing.T) {
	path := recordCalls(t, 2500)
	bind := func(src string) []Unit {
		p, err := Compile(src, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := p.Bind(openCached(t, path, p.NeedsMemory()))
		if err != nil {
			t.Fatal(err)
		}
		var units []Unit
		for k := 0; k < b.Segments(); k++ {
			units = append(units, Unit{b, k})
		}
		return units
	}
	units := bind(`fn::mid:entry { n++; }`)
	if len(units) < 10 {
		t.Fatalf("%d segments: too few to split", len(units))
	}
	insts := func(r chainRun) uint64 {
		var n uint64
		for _, u := range units[r.i : r.i+r.n] {
			from, to := u.B.segmentRange(u.K)
			n += to - from
		}
		return n
	}
	var longest uint64
	for _, u := range units {
		from, to := u.B.segmentRange(u.K)
		longest = max(longest, to-from)
	}
	for _, jobs := range []int{1, 2, 3, 7} {
		runs := chainRuns(units, jobs)
		if len(runs) != jobs {
			t.Fatalf("%d jobs: %d runs %+v", jobs, len(runs), runs)
		}
		next := 0
		var lo, hi uint64 = ^uint64(0), 0
		for _, r := range runs {
			if r.i != next || r.n == 0 {
				t.Fatalf("%d jobs: runs %+v do not cover the segments in order", jobs, runs)
			}
			next = r.i + r.n
			lo, hi = min(lo, insts(r)), max(hi, insts(r))
		}
		if next != len(units) {
			t.Fatalf("%d jobs: runs %+v end at %d of %d segments", jobs, runs, next, len(units))
		}
		if hi-lo > longest {
			t.Errorf("%d jobs: runs of %d to %d instructions, more apart than a segment (%d)", jobs, lo, hi, longest)
		}
	}
	if runs := chainRuns(units, 10*len(units)); len(runs) != len(units) {
		t.Errorf("more jobs than segments: %d runs for %d segments", len(runs), len(units))
	}
	if runs := chainRuns(bind(`fn::mid:entry { @[copyinstr(arg1)] = count(); }`), 2); runs != nil {
		t.Errorf("a script reading memory chains: %+v", runs)
	}
}
