package reader

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"ttd/tracefile"
)

// TestIndexAlong: a replay from the start of a trace that logs no reads,
// asked to index along (IndexAlong), leaves at the trace's end exactly
// the checkpoint memory file the index pass writes, and the trace then
// starts replays anywhere; one closed before the end, or a request on a
// trace already indexed, leaves nothing.
func TestIndexAlong(t *testing.T) {
	tr, path := recordReplayable(t)
	pages := tracefile.PagesPath(path)
	cps, err := tr.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	run := func(to uint64) {
		t.Helper()
		r, err := tr.NewReplayAtFrom(cps[0], nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.RunTo(to); err != nil && err != ErrEnd {
			t.Fatal(err)
		}
		r.Close()
	}
	leftovers := func() []string {
		m, _ := filepath.Glob(pages + "*")
		return m
	}

	// Cut short: no file, no temporary one.
	if !tr.IndexAlong() {
		t.Fatal("IndexAlong refused a trace with no checkpoint memory")
	}
	run(tr.End() - 1)
	if m := leftovers(); len(m) != 0 || tr.Indexed() {
		t.Fatalf("a replay stopped one instruction before the end left %v (indexed %v)", m, tr.Indexed())
	}
	// Without a request, nothing either.
	run(tr.End())
	if m := leftovers(); len(m) != 0 {
		t.Fatalf("a replay nobody asked to index left %v", m)
	}
	// To the end: the index pass's file.
	if !tr.IndexAlong() {
		t.Fatal("IndexAlong refused")
	}
	run(tr.End())
	if !tr.Indexed() {
		t.Fatal("the trace is not indexed after a replay indexing along to its end")
	}
	along, err := os.ReadFile(pages)
	if err != nil {
		t.Fatal(err)
	}
	if tr.IndexAlong() {
		t.Error("IndexAlong took a request on a trace already indexed")
	}
	var want bytes.Buffer
	tr2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr2.Close()
	if _, err := tr2.BuildPages(&want, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(along, want.Bytes()) {
		t.Fatalf("the file written along (%d bytes) differs from the index pass's (%d)", len(along), want.Len())
	}
	r, err := tr.NewReplayAt(cps[len(cps)/2])
	if err != nil {
		t.Fatalf("a replay from a middle checkpoint after indexing along: %v", err)
	}
	r.Close()
	if m := leftovers(); len(m) != 1 {
		t.Errorf("files %v, want the one", m)
	}
}
