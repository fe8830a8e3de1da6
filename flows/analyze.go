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
	bg.Processes = sp.pids(bg.Threads)
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

// WriteDOT writes the communication graph as Graphviz DOT: one node per
// process (its pid, program and threads), the outside of the recording
// as one node, and as edges the messages between them (count and bytes;
// between threads of one process, a loop), the processes each forked,
// the children each reaped (wait) and the threads each started (clone).
func (r *Result) WriteDOT(w io.Writer) {
	fmt.Fprintln(w, "digraph flows {")
	fmt.Fprintln(w, "  rankdir=LR; node [shape=box, fontname=\"monospace\"];")
	tr := r.Split.Tree
	threads := map[int][]string{}
	for _, th := range r.Calls.Threads {
		if th.Exec == 0 {
			threads[tr.PidOf(th.Tid)] = append(threads[tr.PidOf(th.Tid)], fmt.Sprint(th.Tid))
		}
	}
	for _, p := range tr.Procs {
		prog := ""
		if len(p.Argv) > 0 {
			prog = strings.Join(p.Argv, " ")
		}
		tids := threads[p.Pid]
		fmt.Fprintf(w, "  p%d [label=\"process %d %s\\nthreads %s\"];\n", p.Pid, p.Pid, dotEscape(prog), strings.Join(tids, " "))
	}
	type arc struct {
		from, to int
		kind     string
		// threads: a message between two threads of one process
		threads string
	}
	sum := map[arc]*Edge{}
	var order []arc
	outside := false
	node := func(tid int) int {
		if tid == 0 {
			outside = true
			return 0
		}
		return tr.PidOf(tid)
	}
	for _, e := range r.Split.Edges {
		a := arc{node(e.From), node(e.To), e.Kind, ""}
		if a.from == a.to && e.Kind == "message" {
			a.threads = fmt.Sprintf("thread %d → %d: ", e.From, e.To)
		}
		if sum[a] == nil {
			sum[a] = &Edge{Kind: e.Kind}
			order = append(order, a)
		}
		sum[a].Count += e.Count
		sum[a].Bytes += e.Bytes
	}
	if outside {
		fmt.Fprintln(w, "  outside [label=\"outside the recording\", shape=ellipse];")
	}
	name := func(pid int) string {
		if pid == 0 {
			return "outside"
		}
		return fmt.Sprintf("p%d", pid)
	}
	for _, a := range order {
		e := sum[a]
		switch a.kind {
		case "message":
			fmt.Fprintf(w, "  %s -> %s [label=\"%s%d messages, %d bytes\"];\n", name(a.from), name(a.to), a.threads, e.Count, e.Bytes)
		default:
			fmt.Fprintf(w, "  %s -> %s [style=dashed, label=\"%s %d\"];\n", name(a.from), name(a.to), a.kind, e.Count)
		}
	}
	fmt.Fprintln(w, "}")
}

func dotEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}
