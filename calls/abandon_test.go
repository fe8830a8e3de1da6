package calls

import (
	"fmt"
	"strings"
	"testing"

	"ttd/x86"
)

// TestLeafAtAbandonedSlot: a leaf call whose return address goes to the
// slot of a frame that never returned (left by __builtin_longjmp, or by
// a pop and a jump) ends that frame, as a call does that is not a leaf:
// leaf calls from loop, at bail's and skip's slot, are loop's children,
// never bail's or skip's. Every block is translated at once, so the
// leaf calls come as leaf records, some merged (segment.leaf, more);
// the tree is the one the source makes and equals one exact pass, for
// one segment and for intervals cut anywhere.
func TestLeafAtAbandonedSlot(t *testing.T) {
	exe := buildC(t, "testdata/abandon.c")
	defer x86.SetJIT(x86.SetJIT(true, 0))
	const n = 400
	for _, every := range []uint64{1 << 40, 2003, 4999} {
		tr, sym := open(t, record(t, exe, every))
		merged, leaves := mergedCalls.Load(), leafCalls.Load()
		opts := Options{Workers: 1}
		if every < 1<<40 {
			opts.everyCheckpoint = true
		}
		p, err := Analyze(tr, sym, opts)
		if err != nil {
			t.Fatal(err)
		}
		what := fmt.Sprintf("abandon.c, a checkpoint every %d", every)
		if leafCalls.Load() == leaves || mergedCalls.Load() == merged {
			t.Errorf("%s: %d leaf records, %d calls merged: the test tests nothing", what,
				leafCalls.Load()-leaves, mergedCalls.Load()-merged)
		}
		root := p.Threads[0].Root
		if root.Total != p.Instructions {
			t.Errorf("%s: the tree counts %d instructions, the trace has %d", what, root.Total, p.Instructions)
		}
		for _, c := range []struct {
			fn           string
			sites, count int
		}{{"bail", 1, n}, {"leaf", 3, 0}, {"skip", 2, n}, {"tailer", 1, n}} {
			ns := find(root, "main", "loop", c.fn)
			if len(ns) != c.sites {
				t.Errorf("%s: loop calls %s from %d sites, found %d paths", what, c.fn, c.sites, len(ns))
			}
			for _, x := range ns {
				if want := []uint64{3 * n, n, 4 * n}; c.count == 0 && x.Count != want[0] && x.Count != want[1] && x.Count != want[2] {
					t.Errorf("%s: %s (%s): %d calls", what, x.PathString(), x.SiteName, x.Count)
				} else if c.count != 0 && x.Count != uint64(c.count) {
					t.Errorf("%s: %s (%s): %d calls, want %d", what, x.PathString(), x.SiteName, x.Count, c.count)
				}
				if len(x.Children) != 0 {
					t.Errorf("%s: %s has callees %s…: a leaf call at its slot went below it", what,
						x.PathString(), x.Children[0].Func)
				}
			}
		}
		root.Walk(func(x *Node) bool {
			if s := x.PathString(); strings.Contains(s, "bail →") || strings.Contains(s, "skip →") || strings.Contains(s, "tailer →") {
				t.Errorf("%s: path %s (count %d)", what, s, x.Count)
			}
			return true
		})
		sameRows(t, what+" (got: translated, want: one exact pass)", flat(root), flat(analyzeSequential(t, tr, sym).Threads[0].Root))
	}
}
