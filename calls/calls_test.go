package calls

import (
	"strings"
	"testing"
)

// TestCallsExact checks the call tree of deep.c against the calls its
// source makes, and the stitched intervals (a checkpoint every 5,000
// instructions: most start inside calls) against one sequential pass.
func TestCallsExact(t *testing.T) {
	exe := buildC(t, "testdata/deep.c")
	tr, sym := open(t, record(t, exe, 5000))
	p, err := Analyze(tr, sym, Options{Workers: 2, everyCheckpoint: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Segments < 20 {
		t.Fatalf("only %d intervals: the test needs many", p.Segments)
	}
	if len(p.Threads) != 1 {
		t.Fatalf("%d threads, want 1", len(p.Threads))
	}
	root := p.Threads[0].Root
	if root.Total != p.Instructions {
		t.Errorf("the tree counts %d instructions, the trace has %d", root.Total, p.Instructions)
	}
	for _, c := range []struct {
		path  []string
		count uint64
	}{
		{[]string{"main", "work"}, 1},
		{[]string{"main", "work", "leaf"}, 1000},
		{[]string{"main", "work", "mid"}, 100},
		{[]string{"main", "work", "mid", "leaf"}, 100}, // two call sites, 100 each
		{[]string{"main", "work", "stage1", "stage2", "check", "audit"}, 10},
		{[]string{"main", "rec", "rec", "rec", "rec", "rec", "rec"}, 1},
	} {
		ns := find(root, c.path...)
		if len(ns) == 0 {
			t.Errorf("no path %s", strings.Join(c.path, " → "))
			continue
		}
		for _, n := range ns {
			if n.Count != c.count {
				t.Errorf("%s (%s): %d calls, want %d", n.PathString(), n.SiteName, n.Count, c.count)
			}
		}
	}
	if ns := find(root, "main", "work", "mid", "leaf"); len(ns) != 2 {
		t.Errorf("mid calls leaf from 2 call sites, found %d paths", len(ns))
	}
	if ns := find(root, "main", "rec", "rec", "rec", "rec", "rec", "rec", "rec"); len(ns) != 0 {
		t.Errorf("rec recursed 6 deep")
	}
	// A leaf's instructions are its own: leaf is 4 instructions at -O1
	// (add, mov, ret and the load), whatever the interval cuts.
	for _, n := range find(root, "main", "work", "leaf") {
		if n.Self != n.Total || n.Self%n.Count != 0 {
			t.Errorf("leaf: self %d total %d over %d calls", n.Self, n.Total, n.Count)
		}
	}
	want := flat(analyzeSequential(t, tr, sym).Threads[0].Root)
	got := flat(root)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		for i := 0; i < len(got) && i < len(want); i++ {
			if got[i] != want[i] {
				t.Fatalf("stitched intervals differ from one pass at row %d:\n got %s\nwant %s", i, got[i], want[i])
			}
		}
		t.Fatalf("stitched intervals: %d paths, one pass: %d", len(got), len(want))
	}
}

// TestCallsThreads: a multi-threaded program's trees, stitched from
// intervals, equal one pass, and every instruction is in some thread's.
func TestCallsThreads(t *testing.T) {
	exe := buildC(t, "../testdata/corpus/threads_sync.c", "-pthread")
	tr, sym := open(t, record(t, exe, 50_000))
	p, err := Analyze(tr, sym, Options{everyCheckpoint: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Threads) < 2 {
		t.Fatalf("%d threads", len(p.Threads))
	}
	var sum uint64
	for _, th := range p.Threads {
		sum += th.Root.Total
	}
	if sum != p.Instructions {
		t.Errorf("the trees count %d instructions, the trace has %d", sum, p.Instructions)
	}
	ref := analyzeSequential(t, tr, sym)
	for i, th := range p.Threads {
		got, want := flat(th.Root), flat(ref.Threads[i].Root)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("thread %d: stitched intervals differ from one pass (%d vs %d paths)", th.Tid, len(got), len(want))
			t.Logf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	m := p.Merged()
	if m.Total != p.Instructions {
		t.Errorf("merged tree: %d instructions, want %d", m.Total, p.Instructions)
	}
	if len(find(m, "start_thread")) == 0 && len(find(m, "clone3")) == 0 {
		t.Errorf("no thread entry in the merged tree")
	}
}
