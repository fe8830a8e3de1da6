package reader

import (
	"math"
	"slices"
	"testing"

	"ttd/tracefile"
)

// TestSegmentCosts: a segment costs its instructions plus its share of
// the record bytes and thread starts of the chunks its positions
// overlap (in proportion), a chunk of no span goes whole to the segment
// holding its position, and the chunks after the end (embedded files)
// to none.
func TestSegmentCosts(t *testing.T) {
	ch := func(first uint64, n, threads int) tracefile.ChunkInfo {
		return tracefile.ChunkInfo{FirstPosition: first, Len: n, ThreadStarts: threads}
	}
	tr := &Trace{
		chunks: []tracefile.ChunkInfo{
			ch(0, 1000, 1),   // [0, 100): segment 0 (checkpoints at 0, 100, 300, 400)
			ch(100, 300, 0),  // [100, 100): no span, in segment 1 [100, 300)
			ch(100, 500, 0),  // [100, 200): segment 1
			ch(200, 500, 0),  // [200, 200): no span, in segment 1
			ch(200, 2000, 0), // [200, 400): half in 1, half in 2 [300, 400)
			ch(400, 10, 0),   // at the end: the last segment [400, 400) gets nothing
			ch(400, 9999, 0), // an embedded file after the end
		},
		Summary: tracefile.Summary{Instructions: 400},
	}
	cps := []Checkpoint{{Position: 0}, {Position: 100}, {Position: 300}, {Position: 400}}
	want := []uint64{
		100 + 1000*costPerByte + costPerThreadStart,
		200 + (300+500+500+1000)*costPerByte,
		100 + 1000*costPerByte,
		0,
	}
	got := tr.SegmentCosts(cps)
	for k := range want {
		if d := int64(got[k]) - int64(want[k]); d < -1 || d > 1 {
			t.Errorf("segment %d costs %d, want %d (all: %v)", k, got[k], want[k], got)
		}
	}
	if one := tr.SegmentCosts(cps[:1]); !slices.Equal(one, []uint64{400 + 4300*costPerByte + costPerThreadStart}) {
		t.Errorf("one segment: %v", one)
	}
	// A trace that logs no reads: its bytes are syscall results and
	// memory images, a copy each.
	tr.noReads = true
	if one := tr.SegmentCosts(cps[:1]); !slices.Equal(one, []uint64{400 + 4300*costPerByteNoReads + costPerThreadStartNoReads}) {
		t.Errorf("one segment of a trace with no reads: %v", one)
	}
	// Only such a trace's runs pay a restore at their start.
	if got := tr.RunStartCost(); got != costRunStartNoReads {
		t.Errorf("a run's start in a trace with no reads costs %d, want %d", got, costRunStartNoReads)
	}
	tr.noReads = false
	if got := tr.RunStartCost(); got != 0 {
		t.Errorf("a run's start in a trace logging reads costs %d, want 0", got)
	}
}

// TestSegmentCostParts: the parts SegmentCosts weighs, a chunk's bytes
// and thread starts shared in proportion to the positions each segment
// holds of it, and each segment's cost their weighted sum.
func TestSegmentCostParts(t *testing.T) {
	ch := func(first uint64, n, threads int) tracefile.ChunkInfo {
		return tracefile.ChunkInfo{FirstPosition: first, Len: n, ThreadStarts: threads}
	}
	tr := &Trace{
		chunks: []tracefile.ChunkInfo{
			ch(0, 400, 4),   // [0, 40): three quarters in segment 0 [0, 30), a quarter in 1
			ch(40, 100, 5),  // [40, 40): no span, whole in segment 1 [30, 60)
			ch(40, 600, 2),  // [40, 100): a third in 1, two thirds in 2 [60, 100)
			ch(100, 999, 9), // past the end: nobody's
		},
		Summary: tracefile.Summary{Instructions: 100},
	}
	cps := []Checkpoint{{Position: 0}, {Position: 30}, {Position: 60}}
	want := []SegmentCost{
		{Insts: 30, Bytes: 300, ThreadStarts: 3},
		{Insts: 30, Bytes: 100 + 100 + 200, ThreadStarts: 1 + 5 + 2.0/3},
		{Insts: 40, Bytes: 400, ThreadStarts: 4.0 / 3},
	}
	got := tr.SegmentCostParts(cps)
	costs := tr.SegmentCosts(cps)
	for k := range want {
		g, w := got[k], want[k]
		if g.Insts != w.Insts || math.Abs(g.Bytes-w.Bytes) > 1e-9 || math.Abs(g.ThreadStarts-w.ThreadStarts) > 1e-9 {
			t.Errorf("segment %d: %+v, want %+v", k, g, w)
		}
		if costs[k] != g.Cost() {
			t.Errorf("segment %d costs %d, its parts %d", k, costs[k], g.Cost())
		}
		if c := w.Insts + uint64(w.Bytes*costPerByte) + uint64(w.ThreadStarts*costPerThreadStart); absDiff(costs[k], c) > 1 {
			t.Errorf("segment %d costs %d, want %d", k, costs[k], c)
		}
	}
}

func absDiff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

// TestRunStartCosts: a start at each checkpoint past the first costs the
// base and each frame its restore decompresses (the frames of the
// pages restoreRefs gives there, counted anew here), the first nothing;
// without the checkpoint memory file at Open, RunStartCost at each.
func TestRunStartCosts(t *testing.T) {
	_, path := recordReplayable(t)
	built, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	cps, err := built.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	if got := built.RunStartCosts(cps); got[0] != 0 || len(cps) < 3 || got[1] != built.RunStartCost() {
		t.Errorf("no file at Open: %v, want 0 then %d", got, built.RunStartCost())
	}
	if _, err := built.checkpointMemory(); err != nil {
		t.Fatal(err)
	}
	built.Close()
	tr, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	got := tr.RunStartCosts(cps)
	for k, cp := range cps {
		want := uint64(0)
		if k > 0 {
			rs, err := restoreRefs(tr.cpm.opened, cp.Position)
			if err != nil {
				t.Fatal(err)
			}
			frames := map[int]bool{}
			for _, refs := range rs {
				for _, ref := range refs {
					frames[tracefile.FrameOf(ref)] = true
				}
			}
			want = costRunStartBase + uint64(len(frames))*costPerRestoredFrame
		}
		if got[k] != want {
			t.Errorf("checkpoint %d: start cost %d, want %d", k, got[k], want)
		}
	}
	t.Logf("%d checkpoints: %v", len(cps), got)
}
