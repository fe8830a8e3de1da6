package ttd

import (
	"bytes"
	"math/rand"
	"sort"
	"testing"

	"ttd/x86"
)

// TestTravelMatchesStraightReplay drives a session as gdb does — forward
// and reverse continues to an execution breakpoint, to a write
// watchpoint and to a search predicate, mixed with single steps both
// ways, from random positions — and checks every stop, its registers
// and the watched value against a straight re-simulation. Windows and
// micro snapshots are small and odd-sized, so the forward chunks
// (onward.go) start mid-window, cross window and segment boundaries, and
// the stops fall on all sides of them.
func TestTravelMatchesStraightReplay(t *testing.T) {
	prog := buildC(t, "loop")
	path := recordProg(t, prog, 100_000, "60")
	ref := straight(t, path)
	s := openSessionWith(t, path, Options{FineEvery: 7919, MicroEvery: 1009})
	s.StopOnSignal = false
	acc := symbol(t, s, "acc")

	// An instruction run a few dozen times: an execution breakpoint.
	count := map[uint64]int{}
	for _, st := range ref.states {
		count[st.rip]++
	}
	var pcs []uint64
	for pc, n := range count {
		if n >= 40 && n <= 80 {
			pcs = append(pcs, pc)
		}
	}
	if len(pcs) == 0 {
		t.Fatal("no instruction runs 40 to 80 times")
	}
	sort.Slice(pcs, func(i, j int) bool { return pcs[i] < pcs[j] })
	bp := pcs[len(pcs)/2]
	var hits []uint64
	for p, st := range ref.states {
		if st.rip == bp {
			hits = append(hits, uint64(p))
		}
	}
	writes := ref.writes(acc, 8, true)
	if len(writes) < 40 {
		t.Fatalf("acc written %d times", len(writes))
	}

	// next returns the first of ps after from (forward) or the last
	// before it, and whether there is one.
	next := func(ps []uint64, from uint64, fwd bool) (uint64, bool) {
		i := sort.Search(len(ps), func(i int) bool { return ps[i] > from })
		if fwd {
			return ps[min(i, len(ps)-1)], i < len(ps)
		}
		i = sort.Search(len(ps), func(i int) bool { return ps[i] >= from }) - 1
		return ps[max(i, 0)], i >= 0
	}
	// afterWrites are the forward watchpoint stops (just after each
	// write); backward the stop is the write itself.
	afterWrites := make([]uint64, len(writes))
	for i, w := range writes {
		afterWrites[i] = w + 1
	}
	match := func(_ int, _ *x86.CPU, in *x86.Inst) bool { return in.PC == bp }

	rng := rand.New(rand.NewSource(7))
	for round := 0; round < 12; round++ {
		if _, err := s.Seek(uint64(rng.Int63n(int64(ref.end)))); err != nil {
			t.Fatal(err)
		}
		mode := round % 3
		s.ClearBreakpoints()
		switch mode {
		case 0:
			s.SetBreakpoint(Breakpoint{Kind: BreakExec, Addr: bp})
		case 1:
			s.SetBreakpoint(Breakpoint{Kind: BreakMemory, Addr: acc, Size: 8, Access: AccessWrite})
		}
		for k := 0; k < 8; k++ {
			from := s.Position()
			fwd := rng.Intn(3) > 0
			dir := Backward
			if fwd {
				dir = Forward
			}
			if rng.Intn(4) == 0 {
				// A few single steps, as reverse-stepi and stepi after a stop.
				for n := rng.Intn(5); n >= 0; n-- {
					if _, err := s.Step(dir); err != nil {
						t.Fatal(err)
					}
				}
				checkRegs(t, s, ref, "step after a stop")
				continue
			}
			var st Stop
			var err error
			var want uint64
			var ok bool
			switch mode {
			case 0:
				st, err = s.Continue(dir)
				want, ok = next(hits, from, fwd)
			case 1:
				st, err = s.Continue(dir)
				if fwd {
					want, ok = next(afterWrites, from, true)
				} else {
					want, ok = next(writes, from, false)
				}
			case 2:
				st, err = s.Search(dir, match)
				want, ok = next(hits, from, fwd)
			}
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				want = 0
				if fwd {
					want = ref.end
				}
			}
			if st.Position != want || s.Position() != want {
				t.Fatalf("mode %d: %v from %d stopped at %v (session at %d), straight re-simulation says %d",
					mode, dir, from, st, s.Position(), want)
			}
			checkRegs(t, s, ref, "stop")
			if mode == 1 && ok {
				if st.Reason != StopWatchpoint || st.Old == nil || st.New == nil {
					t.Fatalf("watchpoint stop %v without values", st)
				}
				w := want
				if fwd {
					w--
				}
				old, _ := ref.memAt(acc, 8, w)
				nw, _ := ref.memAt(acc, 8, w+1)
				if !bytes.Equal(st.Old.Data, old) || !bytes.Equal(st.New.Data, nw) {
					t.Fatalf("write at %d: old %x new %x, want %x %x", w, st.Old.Data, st.New.Data, old, nw)
				}
			}
		}
	}
}
