package calls

import (
	"strings"
	"testing"
)

// TestDiffRanksTheDecisionFirst: deep.c's bad run takes another branch
// in check, five calls below main; Diff must rank that decision first,
// as check → [fixup], with positions in both recordings.
func TestDiffRanksTheDecisionFirst(t *testing.T) {
	exe := buildC(t, "testdata/deep.c")
	bad, symA := open(t, record(t, exe, 20_000, "bad"))
	good, symB := open(t, record(t, exe, 20_000, "good"))
	pa, err := Analyze(bad, symA, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pb, err := Analyze(good, symB, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rank := range []string{RankFirst, RankShort} {
		res := Diff(pa.Merged(), pb.Merged(), DiffOptions{Rank: rank})
		if len(res.Rows) == 0 {
			t.Fatalf("%s: no differences", rank)
		}
		for i, r := range res.Rows {
			t.Logf("%s %d: %s %s a@%d b@%d", rank, i+1, r.Side, r.String(), r.PosA, r.PosB)
		}
		top := res.Rows[0]
		if top.Side != "a" || !strings.HasSuffix(top.String(), "stage1 → stage2 → check → fixup") {
			t.Errorf("%s: first row is %s %s, want check → fixup only in the bad run", rank, top.Side, top.String())
		}
		if len(top.Last) != 1 || top.Last[0].Site == "" {
			t.Errorf("%s: the row's call has no call site: %+v", rank, top.Last)
		}
		// fixup → leaf is in Δa too, but follows from check → fixup.
		for _, r := range res.Rows {
			if strings.Contains(r.String(), "fixup → leaf") {
				t.Errorf("%s: %s is kept although its prefix is a difference", rank, r.String())
			}
		}
		// Positions: in A the call of fixup, in B the first call of
		// check (where the good run went the other way).
		if top.PosA == 0 || top.PosB == 0 || top.PosA <= top.PosB-1000 {
			t.Errorf("%s: positions a@%d b@%d", rank, top.PosA, top.PosB)
		}
		if !res.Divergence.Found || res.Divergence.PathA[len(res.Divergence.PathA)-1].Func != "fixup" {
			t.Errorf("%s: first divergence %+v, want the call of fixup", rank, res.Divergence)
		}
	}
	// The same run against itself differs in nothing.
	if res := Diff(pb.Merged(), pb.Merged(), DiffOptions{}); len(res.Rows) != 0 || res.Divergence.Found {
		t.Errorf("a run differs from itself: %+v", res)
	}
}

// TestDiffMergesSiblings: paths that differ only in their last call
// become one composite row, and longer paths below a difference go.
func TestDiffMergesSiblings(t *testing.T) {
	mk := func(paths ...string) *Node {
		root := &Node{First: noPos}
		pos := uint64(1)
		for _, p := range paths {
			n := root
			for _, f := range strings.Split(p, " ") {
				c := n.child(key{Site: uint64(len(f)), Entry: uint64(f[0])})
				c.Func, c.SiteName = f, "s"
				if c.First == noPos {
					c.First = pos
					pos++
				}
				c.Count++
				n = c
			}
		}
		return root
	}
	a := mk("main", "main B", "main A", "main A B", "main A C", "main D", "main E F")
	b := mk("main", "main B", "main E")
	res := Diff(a, b, DiffOptions{})
	var got []string
	for _, r := range res.Rows {
		got = append(got, r.Side+" "+r.String())
	}
	want := []string{"a main → [A, D]", "a main → E → F"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("rows %q, want %q", got, want)
	}
	if res.OnlyA != 5 {
		t.Errorf("Δa has %d paths, want 5", res.OnlyA)
	}
	res = Diff(b, a, DiffOptions{Rank: RankShort})
	if len(res.Rows) != 2 || res.Rows[0].Side != "n" || res.Rows[0].String() != "main → [A, D]" {
		t.Errorf("reversed: %+v", res.Rows)
	}
}
