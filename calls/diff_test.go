package calls

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiffRanksTheDecisionFirst: deep.c's bad run takes another branch
// in check, five calls below main; Diff must rank that decision first,
// as check → [fixup], with positions in both recordings.
func TestDiffRanksTheDecisionFirst(t *testing.T) {
	exe := buildC(t, "testdata/deep.c")
	pa, pb := analyzeRuns(t, exe, "bad", exe, "good")
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
		root := newRoot()
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

// TestDiffByNameAcrossBuilds: the good run comes from another build of
// deep.c, its source shifted by three lines, so
// no call site matches: by call site every path differs, by name the
// known decision still ranks first, with positions in both recordings.
// (A build with other optimisations inlines other calls: its paths differ
// by name too.)
func TestDiffByNameAcrossBuilds(t *testing.T) {
	src, err := os.ReadFile("testdata/deep.c")
	if err != nil {
		t.Fatal(err)
	}
	shifted := filepath.Join(t.TempDir(), "deep.c")
	if err := os.WriteFile(shifted, append([]byte("/*\n moved\n*/\n"), src...), 0o644); err != nil {
		t.Fatal(err)
	}
	pa, pb := analyzeRuns(t, buildC(t, "testdata/deep.c"), "bad", buildC(t, shifted), "good")
	bySite := Diff(pa.Merged(), pb.Merged(), DiffOptions{})
	res := Diff(pa.Merged(), pb.Merged(), DiffOptions{ByName: true})
	for i, r := range res.Rows {
		t.Logf("by name %d: %s %s a@%d b@%d", i+1, r.Side, r.String(), r.PosA, r.PosB)
	}
	if bySite.OnlyA <= res.OnlyA {
		t.Errorf("by call site %d paths only in A, by name %d: the builds' call sites match", bySite.OnlyA, res.OnlyA)
	}
	if len(res.Rows) == 0 || res.Rows[0].Side != "a" || !strings.HasSuffix(res.Rows[0].String(), "check → fixup") ||
		res.Rows[0].PosA == 0 || res.Rows[0].PosB == 0 {
		t.Fatalf("by name, the first row is not check → fixup with positions in both: %+v", res.Rows)
	}
	if res.Rows[0].Last[0].Site != "" {
		t.Errorf("by name, rows name no call sites: %+v", res.Rows[0].Last)
	}
}

// analyzeRuns records exeA with argument argA and exeB with argB, and
// computes both call trees.
func analyzeRuns(t *testing.T, exeA, argA, exeB, argB string) (*Profile, *Profile) {
	t.Helper()
	var ps [2]*Profile
	for i, run := range [2][2]string{{exeA, argA}, {exeB, argB}} {
		tr, sym := open(t, record(t, run[0], 20_000, run[1]))
		p, err := Analyze(tr, sym, Options{everyCheckpoint: true})
		if err != nil {
			t.Fatal(err)
		}
		ps[i] = p
	}
	return ps[0], ps[1]
}

// TestDifferenceNamesSitesOfOneFunction: a composite row whose last
// calls are one function from two sites tells them apart by site.
func TestDifferenceNamesSitesOfOneFunction(t *testing.T) {
	d := Difference{Prefix: []Step{{Func: "main"}}, Last: []Step{{Func: "f", Site: "a.c:3"}, {Func: "f", Site: "a.c:9"}, {Func: "g", Site: "a.c:4"}}}
	if got, want := d.String(), "main → [f@a.c:3, f@a.c:9, g]"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	d.Last = d.Last[:1]
	if got, want := d.String(), "main → f"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}
