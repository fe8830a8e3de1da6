package calls

import (
	"sort"
	"strings"
)

// Step is one call of a call path: the function and, unless the diff
// matches by name only, where it was called from.
type Step struct {
	Func string `json:"func"`
	Site string `json:"site,omitempty"`
}

func (s Step) String() string {
	if s.Site == "" {
		return s.Func
	}
	return s.Func + "@" + s.Site
}

// DiffOptions configure Diff.
type DiffOptions struct {
	// ByName matches call paths by function names only, ignoring call
	// sites: for recordings of different builds, whose call sites
	// moved.
	ByName bool
	// Rank orders the differences: RankFirst (by first occurrence, the
	// default) or RankShort (shortest paths first).
	Rank string
}

// Rankings of DiffOptions.Rank.
const (
	RankFirst = "first"
	RankShort = "short"
)

// Difference is one row of a diff: call paths present in one recording
// only, merged when they differ only in their last call (Prefix → [Last…]).
type Difference struct {
	// Side is "a" for paths only in A (the run to explain, Δa) and "n"
	// for paths only in B (the normal run, Δn).
	Side   string   `json:"side"`
	Prefix []Step   `json:"prefix"`
	Last   []Step   `json:"last"`
	Count  []uint64 `json:"count"` // calls of each Last
	// PosA and PosB are positions to open: the path's first call in the
	// recording that has it, and in the other the first call of its
	// prefix (the point where the other run went another way).
	PosA uint64 `json:"pos_a"`
	PosB uint64 `json:"pos_b"`
	TidA int    `json:"tid_a"`
	TidB int    `json:"tid_b"`
}

// String is "main → stage → [A, D]".
func (d *Difference) String() string {
	var parts []string
	for _, s := range d.Prefix {
		parts = append(parts, s.Func)
	}
	// A function called from several sites shows each site
	// ("[f@a.c:3, f@a.c:9]"), not its name twice.
	seen := map[string]int{}
	for _, s := range d.Last {
		seen[s.Func]++
	}
	var last []string
	for _, s := range d.Last {
		if seen[s.Func] > 1 {
			last = append(last, s.String())
		} else {
			last = append(last, s.Func)
		}
	}
	l := strings.Join(last, ", ")
	if len(d.Last) > 1 {
		l = "[" + l + "]"
	}
	return strings.Join(append(parts, l), " → ")
}

// Divergence is the first call where the two recordings went different
// ways: the first call path, in order of first occurrence, that differs.
type Divergence struct {
	Found bool   `json:"found"`
	PathA []Step `json:"path_a,omitempty"`
	PathB []Step `json:"path_b,omitempty"`
	PosA  uint64 `json:"pos_a"`
	PosB  uint64 `json:"pos_b"`
	TidA  int    `json:"tid_a"`
	TidB  int    `json:"tid_b"`
}

// DiffResult is the root-cause report of two recordings.
type DiffResult struct {
	Divergence Divergence `json:"divergence"`
	// OnlyA and OnlyN count Δa and Δn before the prefix and merge
	// transformations.
	OnlyA, OnlyN int
	Rows         []Difference `json:"rows"`
}

// pathSet indexes a call tree's paths by their keys.
type pathSet struct {
	nodes map[string]*Node
	order []*Node // by first position
	steps map[*Node][]Step
}

func indexPaths(root *Node, byName bool) *pathSet {
	ps := &pathSet{nodes: map[string]*Node{}, steps: map[*Node][]Step{}}
	var walk func(n *Node, prefix []Step)
	walk = func(n *Node, prefix []Step) {
		for _, c := range n.Children {
			st := Step{Func: c.Func}
			if !byName {
				st.Site = c.SiteName
			}
			p := append(append([]Step(nil), prefix...), st)
			k := pathKey(p)
			if old := ps.nodes[k]; old == nil || c.First < old.First {
				// Two call sites at one source line, or a merged view:
				// the earliest stands for the path.
				ps.nodes[k] = c
				ps.steps[c] = p
			}
			walk(c, p)
		}
	}
	walk(root, nil)
	for _, n := range ps.nodes {
		ps.order = append(ps.order, n)
	}
	sort.Slice(ps.order, func(i, j int) bool {
		a, b := ps.order[i], ps.order[j]
		if a.First != b.First {
			return a.First < b.First
		}
		return pathKey(ps.steps[a]) < pathKey(ps.steps[b])
	})
	return ps
}

func pathKey(p []Step) string {
	var b strings.Builder
	for _, s := range p {
		b.WriteString(s.Func)
		b.WriteByte('@')
		b.WriteString(s.Site)
		b.WriteByte('\x00')
	}
	return b.String()
}

// Diff compares the call trees of A (the run to explain) and B (a normal
// run) with the root-cause algorithm of the self-propelled
// instrumentation paper (§4.2): the first divergence; Δa and Δn, the
// call paths present in only one of them; without the paths whose prefix
// is already in the set (they follow from it); paths differing only in
// their last call merged (the cause is in their common caller); ranked
// by first occurrence or shortest first.
func Diff(a, b *Node, opts DiffOptions) *DiffResult {
	pa, pb := indexPaths(a, opts.ByName), indexPaths(b, opts.ByName)
	res := &DiffResult{}
	// The first divergence: the first entry, in order of first
	// occurrence, where the two runs' sequences of new call paths differ.
	for i := 0; i < len(pa.order) || i < len(pb.order); i++ {
		var ka, kb string
		if i < len(pa.order) {
			ka = pathKey(pa.steps[pa.order[i]])
		}
		if i < len(pb.order) {
			kb = pathKey(pb.steps[pb.order[i]])
		}
		if ka == kb {
			continue
		}
		res.Divergence.Found = true
		if i < len(pa.order) {
			n := pa.order[i]
			res.Divergence.PathA, res.Divergence.PosA, res.Divergence.TidA = pa.steps[n], n.First, n.FirstTid
		}
		if i < len(pb.order) {
			n := pb.order[i]
			res.Divergence.PathB, res.Divergence.PosB, res.Divergence.TidB = pb.steps[n], n.First, n.FirstTid
		}
		break
	}
	rowsA, onlyA := deltas("a", pa, pb)
	rowsN, onlyN := deltas("n", pb, pa)
	res.OnlyA, res.OnlyN = onlyA, onlyN
	res.Rows = append(rowsA, rowsN...)
	first := func(d *Difference) uint64 {
		if d.Side == "a" {
			return d.PosA
		}
		return d.PosB
	}
	sort.SliceStable(res.Rows, func(i, j int) bool {
		x, y := &res.Rows[i], &res.Rows[j]
		if opts.Rank == RankShort && len(x.Prefix) != len(y.Prefix) {
			return len(x.Prefix) < len(y.Prefix)
		}
		if fx, fy := first(x), first(y); fx != fy {
			return fx < fy
		}
		return x.Side < y.Side
	})
	return res
}

// deltas computes the rows of the paths of `in` that `other` lacks.
func deltas(side string, in, other *pathSet) ([]Difference, int) {
	var delta []*Node
	inDelta := map[string]bool{}
	for _, n := range in.order {
		k := pathKey(in.steps[n])
		if other.nodes[k] == nil {
			delta = append(delta, n)
			inDelta[k] = true
		}
	}
	// Drop the paths whose proper prefix is in the set: they follow from
	// it.
	var kept []*Node
	for _, n := range delta {
		p := in.steps[n]
		covered := false
		for l := 1; l < len(p) && !covered; l++ {
			covered = inDelta[pathKey(p[:l])]
		}
		if !covered {
			kept = append(kept, n)
		}
	}
	// Merge the paths that differ only in their last call.
	groups := map[string]int{}
	var rows []Difference
	for _, n := range kept { // in order of first occurrence
		p := in.steps[n]
		pk := pathKey(p[:len(p)-1])
		i, ok := groups[pk]
		if !ok {
			i = len(rows)
			groups[pk] = i
			d := Difference{Side: side, Prefix: p[:len(p)-1]}
			// Where the other run was at the common prefix.
			var at *Node
			for l := len(p) - 1; l > 0 && at == nil; l-- {
				at = other.nodes[pathKey(p[:l])]
			}
			var pos uint64
			var tid int
			if at != nil {
				pos, tid = at.First, at.FirstTid
			}
			if side == "a" {
				d.PosA, d.TidA, d.PosB, d.TidB = n.First, n.FirstTid, pos, tid
			} else {
				d.PosB, d.TidB, d.PosA, d.TidA = n.First, n.FirstTid, pos, tid
			}
			rows = append(rows, d)
		}
		rows[i].Last = append(rows[i].Last, p[len(p)-1])
		rows[i].Count = append(rows[i].Count, n.Count)
	}
	return rows, len(delta)
}
