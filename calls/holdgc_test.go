package calls

import (
	"runtime/debug"
	"testing"
)

// TestHoldGCWhileStitching: Analyze holds the collector (Options.HoldGC)
// while it stitches and finishes segments of many nodes, releases it
// before it returns, and not at all for few; without HoldGC it turns
// GOGC off itself and puts it back.
func TestHoldGCWhileStitching(t *testing.T) {
	exe := buildC(t, "testdata/deep.c")
	tr, sym := open(t, record(t, exe, 5000))
	defer func(n int) { collectBeforeStitch = n }(collectBeforeStitch)
	for _, many := range []bool{false, true} {
		// One segment, deep.c's few paths: one slab of nodes.
		collectBeforeStitch = nodeSlab + 1
		if many {
			collectBeforeStitch = nodeSlab
		}
		held, released := 0, 0
		hold := func() func() {
			held++
			return func() { released++ }
		}
		if _, err := Analyze(tr, sym, Options{Workers: 1, HoldGC: hold}); err != nil {
			t.Fatal(err)
		}
		want := 0
		if many {
			want = 1
		}
		if held != want || released != want {
			t.Errorf("many nodes %v: held %d, released %d times, want %d", many, held, released, want)
		}
	}

	defer debug.SetGCPercent(debug.SetGCPercent(150))
	if p := debug.SetGCPercent(150); p != 150 {
		t.Fatalf("GOGC %d", p)
	}
	release := holdGC(&Options{})
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Errorf("GOGC %d while held, want -1", p)
	}
	release()
	if p := debug.SetGCPercent(150); p != 150 {
		t.Errorf("GOGC %d after release, want 150 put back", p)
	}

	// Holds nest: the first released first leaves collection off, the
	// last puts GOGC back; Options.HoldGC is asked by the first only.
	asked := 0
	hold := func() func() {
		asked++
		p := debug.SetGCPercent(-1)
		return func() { debug.SetGCPercent(p) }
	}
	first, second := holdGC(&Options{HoldGC: hold}), holdGC(&Options{HoldGC: hold})
	first()
	if p := debug.SetGCPercent(-1); p != -1 || asked != 1 {
		t.Errorf("one of two holds released: GOGC %d, HoldGC asked %d times; want -1, once", p, asked)
	}
	second()
	if p := debug.SetGCPercent(150); p != 150 {
		t.Errorf("both released: GOGC %d, want 150 put back", p)
	}
}
