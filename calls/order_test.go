package calls

import (
	"fmt"
	"slices"
	"testing"
)

// TestThreadsInOrderOfAppearance: a process tree's call trees come in
// the order they start (Profile.Threads), whatever the segments: one
// segment, one per worker, or one per checkpoint interval. Stitching
// meets a segment's forked children with their parent, so before the
// sort a child's tree after its exec came after the next child's.
func TestThreadsInOrderOfAppearance(t *testing.T) {
	exe := buildC(t, "testdata/forkexec.c")
	tr, sym := open(t, record(t, exe, 20_000))
	order := func(p *Profile) (ids []string, starts []uint64) {
		for _, th := range p.Threads {
			ids = append(ids, fmt.Sprintf("%d/%d", th.Tid, th.Exec))
			starts = append(starts, th.start)
		}
		return ids, starts
	}
	ref, err := Analyze(tr, sym, Options{Workers: 2, everyCheckpoint: true})
	if err != nil {
		t.Fatal(err)
	}
	want, starts := order(ref)
	if len(want) != 5 || !slices.IsSorted(starts) || want[3][len(want[3])-2:] != "/1" || want[4][:len(want[4])-2] != want[1][:len(want[1])-2] {
		t.Fatalf("a segment per interval: trees %v starting at %v, want 5 in order, the first child's exec last", want, starts)
	}
	for _, w := range []int{1, 2, 3} {
		p, err := Analyze(tr, sym, Options{Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := order(p); !slices.Equal(got, want) {
			t.Errorf("%d workers (%d segments): trees %v, want %v", w, p.Segments, got, want)
		}
	}
}
