package calls

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// walkRows is what ttd calls prints of each path fn is called with,
// and fn's answer: a path below Depth 3 is gone into only when its
// count is odd, so that a pruned walk is compared too.
func walkRows(walk func(fn func(*Node) bool), prune bool) []string {
	var rows []string
	walk(func(n *Node) bool {
		rows = append(rows, fmt.Sprintf("%s %s %s %d %d %d %d %d %d", strings.Join(n.Path(), ">"), n.Func, n.SiteName,
			n.Count, n.Self, n.Total, n.First, n.FirstTid, n.Depth))
		return !prune || n.Depth < 3 || n.Count%2 == 1
	})
	return rows
}

// shrink keeps three children of root, three of each of them, and
// none below, with their totals.
func shrink(root *Node) {
	root.Children = root.Children[:min(len(root.Children), 3)]
	for _, c := range root.Children {
		c.Children = c.Children[:min(len(c.Children), 3)]
		c.Total = c.Self
		for _, d := range c.Children {
			d.Children = nil
			d.Total = d.Self
			c.Total += d.Total
		}
	}
}

// TestWalkMergedAsMerged: WalkMerged calls fn with the paths, fields
// and order Merged().Walk does, for one to seven threads of one or two
// images (paths of the same call site and function in two images are
// two paths, tied in order when neither was called), with and without
// pruning, and leaves the threads' trees as they were.
func TestWalkMergedAsMerged(t *testing.T) {
	r := rand.New(rand.NewSource(26))
	for trial := range 90 {
		threads := randomThreads(r, trial, 7)
		if trial >= 60 {
			// Few paths: threads of two images meet where walk
			// groups children without its map.
			for _, th := range threads {
				shrink(th.Root)
			}
		}
		p := &Profile{Threads: threads}
		before := walkRows(func(fn func(*Node) bool) {
			for _, th := range threads {
				th.Root.Walk(fn)
			}
		}, false)
		for _, prune := range []bool{false, true} {
			want := walkRows(p.Merged().Walk, prune)
			got := walkRows(p.WalkMerged, prune)
			if len(got) != len(want) {
				t.Fatalf("trial %d (%d threads, prune %v): %d rows, want %d", trial, len(threads), prune, len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("trial %d (%d threads, prune %v): row %d is %q, want %q", trial, len(threads), prune, i, got[i], want[i])
				}
			}
		}
		after := walkRows(func(fn func(*Node) bool) {
			for _, th := range threads {
				th.Root.Walk(fn)
			}
		}, false)
		if strings.Join(before, "\n") != strings.Join(after, "\n") {
			t.Fatalf("trial %d: WalkMerged changed the threads' trees", trial)
		}
	}
	(&Profile{}).WalkMerged(func(*Node) bool { t.Fatal("a path of no thread"); return false })
}
