package flows

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"ttd/calls"
	"ttd/reader"
)

// Result is a recording's flows with their profiles.
type Result struct {
	Split   *Split
	Calls   *calls.Profile
	Flows   []*Flow // Split.Flows, filled in
	Program string
}

// Analyze splits t into flows and computes each flow's call paths,
// instructions and bytes sent (one re-simulation, intervals in
// parallel).
func Analyze(t *reader.Trace, sym calls.Symbolizer, opts calls.Options) (*Result, error) {
	sp, err := NewSplit(t)
	if err != nil {
		return nil, err
	}
	opts.FlowOf, opts.Sent = sp.FlowOf, sp.Sent
	p, err := calls.Analyze(t, sym, opts)
	if err != nil {
		return nil, err
	}
	res := &Result{Split: sp, Calls: p, Flows: sp.Flows, Program: t.Header.ProgramPath}
	threads := map[int]map[int]bool{}
	for id, m := range p.Flows {
		if id < 0 || id >= len(sp.Flows) {
			return nil, fmt.Errorf("flows: flow %d out of range", id)
		}
		f := sp.Flows[id]
		paths := map[string]*PathStat{}
		for n, st := range m {
			f.Instructions += st.Self
			f.BytesSent += st.Sent
			k := n.PathString()
			ps := paths[k]
			if ps == nil {
				ps = &PathStat{Path: n.Path()}
				paths[k] = ps
			}
			ps.Self += st.Self
			ps.Count += st.Count
			ps.Sent += st.Sent
		}
		for _, ps := range paths {
			f.Paths = append(f.Paths, *ps)
		}
		sort.Slice(f.Paths, func(i, j int) bool {
			a, b := f.Paths[i], f.Paths[j]
			if a.Self != b.Self {
				return a.Self > b.Self
			}
			return strings.Join(a.Path, " ") < strings.Join(b.Path, " ")
		})
	}
	for _, th := range p.Threads {
		// The background has every thread that ran outside a flow.
		for n, st := range p.Flows[0] {
			if st.Self > 0 && rootOf(n) == th.Root {
				if threads[0] == nil {
					threads[0] = map[int]bool{}
				}
				threads[0][th.Tid] = true
			}
		}
	}
	bg := sp.Flows[0]
	bg.Threads = nil
	for tid := range threads[0] {
		bg.Threads = append(bg.Threads, tid)
	}
	sort.Ints(bg.Threads)
	for _, f := range sp.Flows {
		if p.Instructions > 0 {
			f.Share = float64(f.Instructions) / float64(p.Instructions)
		}
	}
	return res, nil
}

func rootOf(n *calls.Node) *calls.Node {
	for n.Parent != nil {
		n = n.Parent
	}
	return n
}

// WriteDOT writes the communication graph as Graphviz DOT: the process
// as a cluster of its threads, messages (with their count and bytes) and
// thread creations as edges, the outside of the recording as one node.
func (r *Result) WriteDOT(w io.Writer) {
	fmt.Fprintln(w, "digraph flows {")
	fmt.Fprintln(w, "  rankdir=LR; node [shape=box, fontname=\"monospace\"];")
	fmt.Fprintf(w, "  subgraph cluster_p%d {\n    label=\"process %d %s\";\n", r.Split.Pid, r.Split.Pid, dotEscape(r.Program))
	for _, th := range r.Calls.Threads {
		fmt.Fprintf(w, "    t%d [label=\"thread %d\"];\n", th.Tid, th.Tid)
	}
	fmt.Fprintln(w, "  }")
	outside := false
	for _, e := range r.Split.Edges {
		if e.From == 0 || e.To == 0 {
			outside = true
		}
	}
	if outside {
		fmt.Fprintln(w, "  outside [label=\"outside the recording\", shape=ellipse];")
	}
	name := func(tid int) string {
		if tid == 0 {
			return "outside"
		}
		return fmt.Sprintf("t%d", tid)
	}
	for _, e := range r.Split.Edges {
		switch e.Kind {
		case "clone":
			fmt.Fprintf(w, "  %s -> %s [style=dashed, label=\"clone\"];\n", name(e.From), name(e.To))
		default:
			fmt.Fprintf(w, "  %s -> %s [label=\"%d messages, %d bytes\"];\n", name(e.From), name(e.To), e.Count, e.Bytes)
		}
	}
	fmt.Fprintln(w, "}")
}

func dotEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}
