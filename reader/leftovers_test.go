package reader

import (
	"testing"

	"ttd/x86"
)

// TestLeftoversReplayAsFresh starts re-simulations at checkpoints with
// what another one left (its pages, holding another position's bytes,
// and its code store), from checkpoints after and before theirs, in a
// single process and in a process tree, and checks that each runs as
// the re-simulation from the start: the state before every instruction
// (hooked: interpreted), then, translated, the registers at every
// checkpoint (Verify) and at the end.
func TestLeftoversReplayAsFresh(t *testing.T) {
	for _, tc := range []struct {
		name string
		path func(t testing.TB) string
	}{
		{"loop", func(t testing.TB) string { return recordLoop(t, 50_000, "40") }},
		{"tree", func(t testing.TB) string { return recordTree(t, 30_000) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, all, cps := fromStart(t, tc.path(t))
			n := len(cps)
			want := finalRegs(t, tr, cps[0], nil)
			// (first, then, where the first stops): a later
			// re-simulation's leftovers, an earlier one's, one's
			// that stopped midway (a tree's processes then share
			// pages since their fork), and those of one that itself
			// started with leftovers.
			for _, p := range [][3]int{{n - 2, 1, n}, {1, n - 2, n}, {0, 1, n / 2}, {n / 2, n / 2, n}, {0, n / 2, n}} {
				stop := ^uint64(0)
				if p[2] < n {
					stop = cps[p[2]].Position
				}
				lo := leftAfter(t, tr, cps[p[0]], stop)
				had := len(lo.at) + len(lo.free)
				r, err := tr.NewReplayAtFrom(cps[p[1]], lo)
				if err != nil {
					t.Fatal(err)
				}
				r.Verify = true
				got := states(t, r)
				if len(lo.at)+len(lo.free) >= had {
					t.Fatalf("from checkpoint %d: none of the %d pages left was taken", p[1], had)
				}
				from := cps[p[1]].Position
				if from+uint64(len(got)) != uint64(len(all)) {
					t.Fatalf("from checkpoint %d with %d's leftovers: %d instructions, want %d", p[1], p[0], len(got), uint64(len(all))-from)
				}
				for i := range got {
					if got[i] != all[from+uint64(i)] {
						t.Fatalf("from checkpoint %d with %d's leftovers, position %d: %+v, from the start %+v", p[1], p[0], from+uint64(i), got[i], all[from+uint64(i)])
					}
				}
				// Translated, with what this one leaves.
				lo = r.CloseLeaving()
				store := lo.store
				if regs := finalRegs(t, tr, cps[p[1]], lo); regs != want {
					t.Fatalf("from checkpoint %d with leftovers, translated: final registers %v, want %v", p[1], regs, want)
				}
				if store.Taken == 0 {
					t.Errorf("from checkpoint %d: no block taken from the last replay's store", p[1])
				}
			}
		})
	}
}

// leftAfter re-simulates from cp to stop (past the end: the end),
// translated, and returns what it leaves, which must hold pages.
func leftAfter(t *testing.T, tr *Trace, cp Checkpoint, stop uint64) *Leftovers {
	t.Helper()
	r, err := tr.NewReplayAt(cp)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.RunTo(stop); err != nil && (err != ErrEnd || stop < tr.End()) {
		t.Fatalf("re-simulation from %d to %d: %v", cp.Position, stop, err)
	}
	lo := r.CloseLeaving()
	if len(lo.at)+len(lo.free) == 0 {
		t.Fatalf("re-simulation from %d left no pages", cp.Position)
	}
	return lo
}

// finalRegs re-simulates from cp to the end, translated and verified,
// and returns the last thread's registers there.
func finalRegs(t *testing.T, tr *Trace, cp Checkpoint, lo *Leftovers) [16]uint64 {
	t.Helper()
	r, err := tr.NewReplayAtFrom(cp, lo)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.Verify = true
	if err := r.RunTo(^uint64(0)); err != ErrEnd {
		t.Fatalf("re-simulation from %d: %v", cp.Position, err)
	}
	if r.Checkpoints < 2 && cp.Position+1 < tr.End() {
		t.Fatalf("from %d: %d checkpoints verified", cp.Position, r.Checkpoints)
	}
	_, c := r.Current()
	if c == nil {
		t.Fatal("no thread at the end")
	}
	return c.R
}

// TestLeftoversTake hands out a page's own number first, then any page
// left, each once, then none.
func TestLeftoversTake(t *testing.T) {
	p1, p2, p3 := &x86.Page{}, &x86.Page{}, &x86.Page{}
	lo := &Leftovers{at: map[uint64]*x86.Page{1: p1, 2: p2}, free: []*x86.Page{p3}}
	if got := lo.take(2); got != p2 {
		t.Fatalf("take(2) = %p, want page 2's %p", got, p2)
	}
	seen := map[*x86.Page]bool{}
	for range 2 {
		p := lo.take(7)
		if p == nil || p == p2 || seen[p] {
			t.Fatalf("take(7) = %p (page 2 %p, taken %v)", p, p2, seen)
		}
		seen[p] = true
	}
	if p := lo.take(1); p != nil {
		t.Fatalf("take(1) = %p after every page went", p)
	}
	if (*Leftovers)(nil).take(1) != nil {
		t.Fatal("nil leftovers gave a page")
	}
}
