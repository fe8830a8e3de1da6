package calls

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"
	"unsafe"
)

// refMerged is Merged as it was before the first thread was copied:
// every thread's tree added in with child, node by node (refAddTree),
// then ordered.
func refMerged(threads []*Thread) *Node {
	root := newRoot()
	for _, th := range threads {
		refAddTree(th.Root, root, th.img)
	}
	sortTree(root)
	return root
}

// refAddTree is addTree as it was before it copied new subtrees: every
// path found again, or made, with child.
func refAddTree(src, dst *Node, img int) {
	dst.Self += src.Self
	dst.Total += src.Total
	for _, c := range src.Children {
		d := dst.child(key{c.Site, c.Entry, img})
		if d.Func == "" {
			d.Func, d.SiteName, d.FirstTid = c.Func, c.SiteName, c.FirstTid
		}
		d.Count += c.Count
		if c.First < d.First {
			d.First, d.FirstTid = c.First, c.FirstTid
		}
		refAddTree(c, d, img)
	}
}

// randomThread is a finished thread tree of random paths: few keys, so
// threads share paths, some nodes with more than kidsInline children
// and some never called (First noPos).
func randomThread(r *rand.Rand, tid, img int) *Thread {
	th := &Thread{Tid: tid, Pid: 1, Root: newRoot(), img: img}
	for range 1 + r.Intn(300) {
		n := th.Root
		for range 1 + r.Intn(6) {
			c := n.child(key{uint64(r.Intn(12)), uint64(100 + r.Intn(3)), 0})
			c.Func, c.SiteName = fmt.Sprintf("f%d", c.Entry), fmt.Sprintf("s%d", c.Site)
			if r.Intn(8) > 0 {
				c.Count++
				if pos := uint64(r.Intn(2000)); pos < c.First {
					c.First, c.FirstTid = pos, tid+r.Intn(2)
				}
			}
			c.Self += uint64(r.Intn(50))
			n = c
		}
	}
	var total func(n *Node) uint64
	total = func(n *Node) uint64 {
		n.Total = n.Self
		for _, c := range n.Children {
			n.Total += total(c)
		}
		sortChildren(n)
		return n.Total
	}
	total(th.Root)
	return th
}

// randomThreads is trial's randomThreads: 1+trial%n of them, of images
// 0 and 1 by turns.
func randomThreads(r *rand.Rand, trial, n int) []*Thread {
	var threads []*Thread
	for i := range 1 + trial%n {
		threads = append(threads, randomThread(r, 10+i, (trial/n+i)%2))
	}
	return threads
}

// sameTree reports where a and b (the merged trees) differ: the rows
// ttd calls prints, each node's depth, parent and image.
func sameTree(a, b *Node, path string) error {
	if a.Func != b.Func || a.SiteName != b.SiteName || a.Entry != b.Entry || a.Site != b.Site ||
		a.Count != b.Count || a.Self != b.Self || a.Total != b.Total || a.First != b.First ||
		a.FirstTid != b.FirstTid || a.Depth != b.Depth || a.img != b.img {
		return fmt.Errorf("%s: %+v, want %+v", path, *a, *b)
	}
	if len(a.Children) != len(b.Children) {
		return fmt.Errorf("%s: %d children, want %d", path, len(a.Children), len(b.Children))
	}
	for i := range a.Children {
		if a.Children[i].Parent != a {
			return fmt.Errorf("%s: child %d has another parent", path, i)
		}
		if err := sameTree(a.Children[i], b.Children[i], fmt.Sprintf("%s/%d", path, i)); err != nil {
			return err
		}
	}
	return nil
}

// TestMergedCopiesFirstThread: Merged, which copies the first thread's
// tree and merges the others into the copy, gives the tree merging
// every thread gave, for one to four threads of one or two images; the
// copy's nodes are found again by child under their image, and adding
// to the copy leaves the thread's tree alone.
func TestMergedCopiesFirstThread(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	for trial := range 40 {
		threads := randomThreads(r, trial, 4)
		p := &Profile{Threads: threads}
		got, want := p.Merged(), refMerged(threads)
		if err := sameTree(got, want, fmt.Sprintf("trial %d (%d threads)", trial, len(threads))); err != nil {
			t.Fatal(err)
		}
		th := threads[0]
		for _, c := range th.Root.Children {
			if g := got.child(key{c.Site, c.Entry, th.img}); g.Func != c.Func || g.Count < c.Count {
				t.Fatalf("trial %d: %+v not found again in the merged tree", trial, *c)
			}
		}
		count := func(n *Node) (k int) {
			n.Walk(func(*Node) bool { k++; return true })
			return k
		}
		// Nor any other thread's, whose new subtrees addTree copies.
		before := make([]int, len(threads))
		for i, th := range threads {
			before[i] = count(th.Root)
		}
		got.child(key{999, 999, th.img})
		got.Walk(func(c *Node) bool {
			c.child(key{998, 998, th.img})
			return c.Site != 998
		})
		for i, th := range threads {
			if count(th.Root) != before[i] {
				t.Fatalf("trial %d: adding to the merged tree changed thread %d's", trial, i)
			}
		}
	}
}

// TestSortChildrenAsSortSlice: sortChildren, which leaves children
// already in strictly increasing order alone, orders every list as
// sort.Slice did, ties (equal first, site and entry: two images) and
// lists sorted but for one pair included.
func TestSortChildrenAsSortSlice(t *testing.T) {
	r := rand.New(rand.NewSource(23))
	for trial := range 3000 {
		n := 1 + r.Intn(20)
		var kids []*Node
		for i := range n {
			kids = append(kids, &Node{First: uint64(r.Intn(4)), Site: uint64(r.Intn(3)), Entry: uint64(r.Intn(2)), Count: uint64(i)})
		}
		if trial%3 == 0 {
			// Sorted, then one neighbouring pair swapped (or not).
			sort.Slice(kids, func(i, j int) bool { return childBefore(kids[i], kids[j]) })
			if i := r.Intn(n); i+1 < n && r.Intn(2) == 0 {
				kids[i], kids[i+1] = kids[i+1], kids[i]
			}
		}
		want := append([]*Node(nil), kids...)
		sort.Slice(want, func(i, j int) bool {
			a, b := want[i], want[j]
			if a.First != b.First {
				return a.First < b.First
			}
			if a.Site != b.Site {
				return a.Site < b.Site
			}
			return a.Entry < b.Entry
		})
		nd := &Node{NodeInfo: &NodeInfo{Children: kids}}
		sortChildren(nd)
		for i := range want {
			if nd.Children[i] != want[i] {
				t.Fatalf("trial %d: child %d is %+v, sort.Slice put %+v there", trial, i, *nd.Children[i], *want[i])
			}
		}
	}
}

// refMerge is merge as it was before it made a fresh node's children
// without looking them up: every child found again, or made, by childIn,
// oldest first.
func refMerge(s *segNode, g *Node, a *treeAlloc) {
	g.Self += s.Self
	var kids []*segNode
	for c := s.kid; c != nil; c = c.next {
		kids = append(kids, c)
		if c.next == s.kid {
			break
		}
	}
	if len(kids) > 0 {
		// kids[0] is the newest, then the oldest and on.
		kids = append(kids[1:], kids[0])
	}
	for _, sc := range kids {
		k := sc.skey()
		gc := g.childIn(key{k.Site, k.Entry, 0}, a)
		gc.Count += sc.Count
		if sc.First < gc.First {
			gc.First, gc.FirstTid = sc.First, sc.FirstTid
		}
		refMerge(sc, gc, a)
	}
}

// randomSegTree is a segment's tree of random paths below a new root:
// few keys, some nodes with more than kidsInline children, some never
// called (first noPos).
func randomSegTree(r *rand.Rand, c *childCache) *segNode {
	root := &segNode{First: noPos}
	for range 1 + r.Intn(200) {
		n := root
		for range 1 + r.Intn(5) {
			n = c.make(n, segKey{uint64(r.Intn(14)), uint64(100 + r.Intn(2))})
			if r.Intn(6) > 0 {
				n.Count++
				if pos := uint64(r.Intn(5000)); pos < n.First {
					n.First, n.FirstTid = pos, r.Intn(3)
				}
			}
			n.Self += uint64(r.Intn(40))
		}
	}
	return root
}

// TestMergeIntoFreshNodes: merging segments' trees one after the other
// into a real tree (the first into an empty one, whose nodes merge makes
// without lookups; the later ones into nodes that have children, or
// not) gives the tree childIn's lookups gave, node for node, and every
// path is found again by child afterwards (the kids maps made late).
func TestMergeIntoFreshNodes(t *testing.T) {
	r := rand.New(rand.NewSource(24))
	for trial := range 60 {
		got, want := newRoot(), newRoot()
		var ga, wa treeAlloc
		for range 1 + trial%3 {
			s := randomSegTree(r, new(childCache))
			merge(s, got, &ga)
			refMerge(s, want, &wa)
		}
		if err := sameTree(got, want, fmt.Sprintf("trial %d", trial)); err != nil {
			t.Fatal(err)
		}
		if len(ga.nodes) != 0 {
			t.Fatalf("trial %d: merge made Nodes, where it adopts the segments' own", trial)
		}
		var walk func(g *Node)
		walk = func(g *Node) {
			for _, c := range g.Children {
				if g.child(key{c.Site, c.Entry, 0}) != c {
					t.Fatalf("trial %d: %+v not found again", trial, *c)
				}
				walk(c)
			}
		}
		walk(got)
		if err := sameTree(got, want, fmt.Sprintf("trial %d, after lookups", trial)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMergeAdoptsSegmentNodes: a segment's tree merged into an empty one
// (--jobs 1) is the segment's own nodes, made real (Parent, Depth),
// with each node's children by first position already (sortChildren
// has nothing to do); no Node is made for it.
func TestMergeAdoptsSegmentNodes(t *testing.T) {
	r := rand.New(rand.NewSource(27))
	c := new(childCache)
	root := &segNode{First: noPos}
	stack := []*segNode{root}
	var made []*segNode
	for pos := uint64(0); pos < 20000; pos++ {
		if top := stack[len(stack)-1]; len(stack) == 1 || len(stack) < 12 && r.Intn(2) == 0 {
			n := c.make(top, segKey{uint64(r.Intn(4)), uint64(100 + r.Intn(3))})
			if n.Count == 0 {
				made = append(made, n)
			}
			n.Count++
			n.First = min(n.First, pos)
			stack = append(stack, n)
		} else {
			stack = stack[:len(stack)-1]
		}
	}
	g := &Node{First: noPos, NodeInfo: &NodeInfo{Depth: 3}}
	var a treeAlloc
	merge(root, g, &a)
	if len(a.nodes) != 0 {
		t.Fatalf("merge made %d Nodes", allocBlock-len(a.nodes))
	}
	seen := map[*Node]bool{}
	g.Walk(func(n *Node) bool {
		seen[n] = true
		if n.Depth != n.Parent.Depth+1 || n.Depth < 4 {
			t.Fatalf("%+v: depth %d below %d", *n, n.Depth, n.Parent.Depth)
		}
		for i := 1; i < len(n.Children); i++ {
			if !childBefore(n.Children[i-1], n.Children[i]) {
				t.Fatalf("children of %+v not by first position", *n)
			}
		}
		for _, k := range n.Children {
			if k.Parent != n {
				t.Fatalf("%+v: child's parent %p, not %p", *k, k.Parent, n)
			}
		}
		return true
	})
	if len(seen) != len(made) {
		t.Fatalf("%d nodes in the tree, the segment made %d", len(seen), len(made))
	}
	for _, n := range made {
		if !seen[n] {
			t.Fatalf("segment node %+v not in the tree", *n)
		}
	}
}

// TestNodeHotPartSmall: the fields a segment's following touches per
// record stay in a Node of at most 112 bytes, the rest behind NodeInfo
// (calls25: the 192-byte Node made the bash+python3 tree's
// childCache.lookup miss more).
func TestNodeHotPartSmall(t *testing.T) {
	if s := unsafe.Sizeof(Node{}); s > 112 {
		t.Fatalf("Node is %d bytes, more than 112", s)
	}
	var n Node
	if o := unsafe.Offsetof(n.NodeInfo); o != unsafe.Sizeof(n)-8 {
		t.Fatalf("NodeInfo at %d: not the Node's last field", o)
	}
}
