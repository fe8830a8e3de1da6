package calls

import "sort"

// WalkMerged calls fn with each path of Merged's tree, in the order
// Merged().Walk(fn) would, going below a path when fn returns true,
// without building the tree: sort -n's two threads hold 1.2 million
// paths, and the merged copy Merged makes of them (170 MB of Nodes, most
// of it the kernel's zeroing of new pages) cost as much as printing them.
//
// The paths are walked from every thread's tree together. A path only
// one thread has is that thread's own Node (its fields, Depth and Path
// are the merged path's), and so is every path below it; a path more
// threads have is a Node of the walk's, valid until fn returns, with
// the fields Merged gives it (counts added up, the first thread's names,
// the least first position) and no Children.
func (p *Profile) WalkMerged(fn func(n *Node) bool) {
	if len(p.Threads) == 0 {
		return
	}
	w := mergeWalk{fn: fn}
	srcs := make([]mergeSrc, len(p.Threads))
	for i, th := range p.Threads {
		srcs[i] = mergeSrc{th.Root, th.img}
	}
	w.walk(newRoot(), srcs, 0)
}

// mergeSrc is one thread's node of a merged path, with the thread's
// image (a child's key's img in Merged).
type mergeSrc struct {
	n   *Node
	img int
}

// mergeWalk is WalkMerged's state: scratch for each depth of the paths
// more than one thread has, reused from one such path to the next.
type mergeWalk struct {
	fn     func(n *Node) bool
	levels []*mergeLevel
}

// mergeLevel holds the merged children of one path: each child's Node
// (groups), the thread nodes it adds up (members, from offs[i] to
// offs[i+1] for groups[i], in thread order) and the order to walk them.
type mergeLevel struct {
	ents    []mergeSrc // every source's children, in thread order
	grp     []int32    // ents[i]'s group
	groups  []Node
	infos   []NodeInfo // groups[i]'s NodeInfo, linked once grouped
	offs    []int32
	members []mergeSrc
	next    []int32
	order   []int32 // the groups, sorted as sortChildren sorts
	byKey   map[key]int32
}

// mergeLinear is how many children mergeWalk.walk groups by looking
// through the groups made so far before it keeps a map.
const mergeLinear = 16

// walk walks the merged children of parent, the path srcs (more than
// one thread's node, or the merged root) make together.
func (w *mergeWalk) walk(parent *Node, srcs []mergeSrc, depth int) {
	if depth == len(w.levels) {
		w.levels = append(w.levels, &mergeLevel{})
	}
	l := w.levels[depth]
	l.ents, l.grp, l.groups, l.infos = l.ents[:0], l.grp[:0], l.groups[:0], l.infos[:0]
	for _, s := range srcs {
		for _, c := range s.n.Children {
			l.ents = append(l.ents, mergeSrc{c, s.img})
		}
	}
	useMap := len(l.ents) > mergeLinear
	if useMap {
		if l.byKey == nil {
			l.byKey = map[key]int32{}
		}
		clear(l.byKey)
	}
	// Group the children by key, each group made where Merged first
	// made its node (childIn appends in this order) and its fields
	// added up as addTree adds them.
	for _, e := range l.ents {
		c, k := e.n, key{e.n.Site, e.n.Entry, e.img}
		g := int32(-1)
		if useMap {
			if x, ok := l.byKey[k]; ok {
				g = x
			}
		} else {
			for i := range l.groups {
				if d := &l.groups[i]; d.Site == k.Site && d.Entry == k.Entry && int(l.infos[i].img) == k.img {
					g = int32(i)
					break
				}
			}
		}
		if g < 0 {
			g = int32(len(l.groups))
			l.groups = append(l.groups, Node{Entry: c.Entry, Site: c.Site, First: c.First, FirstTid: c.FirstTid, Parent: parent})
			l.infos = append(l.infos, NodeInfo{Func: c.Func, SiteName: c.SiteName, Depth: parent.Depth + 1, img: int32(e.img)})
			if useMap {
				l.byKey[k] = g
			}
		} else {
			d, di := &l.groups[g], &l.infos[g]
			if di.Func == "" {
				di.Func, di.SiteName, d.FirstTid = c.Func, c.SiteName, c.FirstTid
			}
			if c.First < d.First {
				d.First, d.FirstTid = c.First, c.FirstTid
			}
		}
		d := &l.groups[g]
		d.Count += c.Count
		d.Self += c.Self
		l.infos[g].Total += c.Total
		l.grp = append(l.grp, g)
	}
	for i := range l.groups {
		l.groups[i].NodeInfo = &l.infos[i]
	}
	// Each group's thread nodes, in thread order (a counting sort).
	l.offs = append(l.offs[:0], make([]int32, len(l.groups)+1)...)
	for _, g := range l.grp {
		l.offs[g+1]++
	}
	for i := 1; i < len(l.offs); i++ {
		l.offs[i] += l.offs[i-1]
	}
	l.members = append(l.members[:0], make([]mergeSrc, len(l.ents))...)
	l.next = append(l.next[:0], l.offs[:len(l.groups)]...)
	for i, e := range l.ents {
		g := l.grp[i]
		l.members[l.next[g]] = e
		l.next[g]++
	}
	// Ordered as sortChildren orders Merged's children: the same
	// comparisons of the same starting order give sort.Slice's order.
	l.order = l.order[:0]
	for i := range l.groups {
		l.order = append(l.order, int32(i))
	}
	before := func(i, j int) bool { return childBefore(&l.groups[l.order[i]], &l.groups[l.order[j]]) }
	for i := 1; i < len(l.order); i++ {
		if !before(i-1, i) {
			sort.Slice(l.order, before)
			break
		}
	}
	for _, g := range l.order {
		d := &l.groups[g]
		m := l.members[l.offs[g]:l.offs[g+1]]
		if len(m) == 1 {
			// One thread's path: its own Node and subtree.
			if w.fn(m[0].n) {
				m[0].n.Walk(w.fn)
			}
			continue
		}
		if w.fn(d) {
			w.walk(d, m, depth+1)
		}
	}
}
