package calls

import (
	"fmt"
	"testing"

	"ttd/x86"
)

// TestLeafInUnnamedFrame: leaf calls made from frames whose function has
// no symbol (code copied into an anonymous mapping), one right after the
// frame's own call, while ttd calls still looks for the function's
// entry, and others long after. The leaf records name the frame by its
// entry (the register run() called) on the way (segment.leaf), as a
// call's record would: the tree is main → run → 0xG1 → leaf from three
// sites and → 0xG2 → leaf from two, 300 calls each, and equals one exact
// pass, for one segment and for intervals cut anywhere.
func TestLeafInUnnamedFrame(t *testing.T) {
	exe := buildC(t, "testdata/jitleaf.c")
	defer x86.SetJIT(x86.SetJIT(true, 0))
	for _, every := range []uint64{1 << 40, 997, 3001} {
		what := fmt.Sprintf("jitleaf.c, a checkpoint every %d", every)
		path, printed := recordPrinting(t, exe, every)
		var g1, g2 uint64
		var hits int
		if _, err := fmt.Sscanf(string(printed), "0x%x 0x%x %d", &g1, &g2, &hits); err != nil {
			t.Fatalf("output %q: %v", printed, err)
		}
		tr, sym := open(t, path)
		namings := leafNamings.Load()
		opts := Options{Workers: 1}
		if every < 1<<40 {
			opts.everyCheckpoint = true
		}
		p, err := Analyze(tr, sym, opts)
		if err != nil {
			t.Fatal(err)
		}
		// (In short intervals run's frame is open at the checkpoint,
		// and each ret to it makes ttd calls look for a trampoline's
		// jump for a while, where leaf records take the slow path.)
		if every == 1<<40 && leafNamings.Load() == namings {
			t.Errorf("%s: no leaf record named its caller's frame: the test tests nothing", what)
		}
		root := p.Threads[0].Root
		for _, c := range []struct {
			g     uint64
			sites int
		}{{g1, 3}, {g2, 2}} {
			name := fmt.Sprintf("%#x", c.g)
			gs := find(root, "main", "run", name)
			if len(gs) != 1 || gs[0].Count != 300 || gs[0].Entry != c.g {
				t.Errorf("%s: main → run → %s: %d paths, want one of 300 calls:\n%s", what, name, len(gs), flatString(p))
				continue
			}
			ls := find(root, "main", "run", name, "leaf")
			if len(ls) != c.sites {
				t.Errorf("%s: %s calls leaf from %d sites, want %d", what, name, len(ls), c.sites)
			}
			for _, l := range ls {
				if l.Count != 300 {
					t.Errorf("%s: %s (%s): %d calls, want 300", what, l.PathString(), l.SiteName, l.Count)
				}
			}
		}
		sameRows(t, what+" (got: translated, want: one exact pass)", flat(root), flat(analyzeSequential(t, tr, sym).Threads[0].Root))
	}
}
