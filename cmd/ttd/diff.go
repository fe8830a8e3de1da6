package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"ttd/calls"
)

const diffUsage = "[--rank first|short] [--by-name] [--flow N] [--json] [--jobs N] A.ttd B.ttd"

func init() {
	register(command{"diff", diffUsage, "root cause: where recording A (the run to explain) went another way than B (a normal run), by call path", diffCmd, 80})
	examples["diff"] = "ttd diff --rank first bad.ttd good.ttd"
}

// diffCmd implements "ttd diff".
func diffCmd(name string, args []string) int {
	fs := newFlags(name, diffUsage)
	rank := fs.String("rank", calls.RankFirst, "order the differences by `first` occurrence, or `short`est path first")
	byName := fs.Bool("by-name", false, "match call paths by function names only, not call sites (recordings of different builds)")
	flow := fs.Int("flow", 0, "compare only flow `N` of A (see 'ttd flows') with the matching flow of B")
	asJSON := fs.Bool("json", false, "print JSON")
	jobs := fs.Int("jobs", 0, "re-simulate `N` checkpoint intervals at a time (0: one per CPU)")
	if err := parseInterspersed(fs, args); err != nil {
		return flagError(name, diffUsage, err)
	}
	if fs.NArg() != 2 {
		return flagError(name, diffUsage, errors.New("want two traces: the run to explain, then a normal run"))
	}
	if *rank != calls.RankFirst && *rank != calls.RankShort {
		return flagError(name, diffUsage, fmt.Errorf("--rank %q: want first or short", *rank))
	}
	a, b := fs.Arg(0), fs.Arg(1)
	ta, tb, status := diffTrees(a, b, *flow, *jobs)
	if status != 0 {
		return status
	}
	res := calls.Diff(ta, tb, calls.DiffOptions{ByName: *byName, Rank: *rank})
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(res)
		return 0
	}
	d := res.Divergence
	if !d.Found {
		fmt.Printf("%s and %s made the same calls from the same call sites.\n", a, b)
		return 0
	}
	fmt.Println("first divergence:")
	fmt.Printf("  %s at position %d (thread %d): %s\n", a, d.PosA, d.TidA, stepsString(d.PathA))
	fmt.Printf("  %s at position %d (thread %d): %s\n", b, d.PosB, d.TidB, stepsString(d.PathB))
	fmt.Printf("\n%d call paths only in %s (Δa), %d only in %s (Δn); %d rows after dropping the paths that follow from another and merging siblings, ranked by %s:\n",
		res.OnlyA, a, res.OnlyN, b, len(res.Rows), *rank)
	fmt.Printf("%4s %-4s %12s %12s  %s\n", "rank", "only", "pos in A", "pos in B", "call path")
	for i, r := range res.Rows {
		only := "A"
		if r.Side == "n" {
			only = "B"
		}
		site := ""
		if len(r.Last) == 1 && r.Last[0].Site != "" {
			site = "  (" + r.Last[0].Site + ")"
		}
		fmt.Printf("%4d %-4s %12d %12d  %s%s\n", i+1, only, r.PosA, r.PosB, r.String(), site)
	}
	if len(res.Rows) > 0 {
		r := res.Rows[0]
		fmt.Printf("\nopen the first: ttd query %s --at %d --where; ttd query %s --at %d --where\n", a, r.PosA, b, r.PosB)
	}
	return 0
}

func stepsString(p []calls.Step) string {
	var s []string
	for _, st := range p {
		s = append(s, st.Func)
	}
	if len(p) > 0 && p[len(p)-1].Site != "" {
		return strings.Join(s, " → ") + " (" + p[len(p)-1].Site + ")"
	}
	return strings.Join(s, " → ")
}

// diffTrees computes the two call trees to compare: the merged trees of
// all threads, or one flow's.
func diffTrees(a, b string, flow, jobs int) (*calls.Node, *calls.Node, int) {
	if flow != 0 {
		return flowTrees(a, b, flow, jobs)
	}
	pa, st := callProfile(a, jobs)
	if st != 0 {
		return nil, nil, st
	}
	pb, st := callProfile(b, jobs)
	if st != 0 {
		return nil, nil, st
	}
	return treeOf(pa), treeOf(pb), 0
}

// treeOf is the tree diff compares: all threads merged; for a process
// tree, below one node per process known by its programs and fork order
// ("[process sh/sort]"), not by its pid.
func treeOf(p *calls.Profile) *calls.Node {
	if p.Tree != nil && len(p.Tree.Procs) > 1 {
		return p.ByProcess()
	}
	return p.Merged()
}

// flowTrees gives flow N of A and the flow of B with the same number
// (the same request, when both runs served the same requests in order).
func flowTrees(a, b string, flow, jobs int) (*calls.Node, *calls.Node, int) {
	ra, st := flowsOf(a, jobs)
	if st != 0 {
		return nil, nil, st
	}
	rb, st := flowsOf(b, jobs)
	if st != 0 {
		return nil, nil, st
	}
	if flow >= len(ra.Flows) {
		return nil, nil, fail("%s has flows 0 to %d, not %d ('ttd flows %s' lists them)", a, len(ra.Flows)-1, flow, a)
	}
	if flow >= len(rb.Flows) {
		return nil, nil, fail("%s has flows 0 to %d, not %d to compare with flow %d of %s", b, len(rb.Flows)-1, flow, flow, a)
	}
	ta, tb := ra.Calls.FlowTree(flow), rb.Calls.FlowTree(flow)
	if ta == nil || tb == nil {
		return nil, nil, fail("flow %d ran no instructions in %s or %s", flow, a, b)
	}
	return ta, tb, 0
}
