package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"ttd/calls"
	"ttd/flows"
	"ttd/internal/progress"
	"ttd/reader"
)

const flowsUsage = "[--json] [--dot FILE] [--paths N] [--jobs N] TRACE"
const anomaliesUsage = "[--normal REF.ttd]... [--coverage] [--json] [--jobs N] TRACE..."

func init() {
	register(command{"flows", flowsUsage, "cut a recording into flows (work coming in on a socket or a pipe, followed through threads): call paths, instruction share, bytes sent, positions; the communication graph as DOT", flowsCmd, 75})
	register(command{"anomalies", anomaliesUsage, "rank the flows of recordings by how unlike the common (or --normal) behaviour their call-path profiles are", anomaliesCmd, 76})
	examples["flows"] = "ttd flows --dot server.dot server.ttd && dot -Tsvg server.dot > server.svg"
	examples["anomalies"] = "ttd anomalies --normal good.ttd bad.ttd"
}

// flowsOf analyses one recording's flows with a progress bar; a non-zero
// status means it printed why it failed.
func flowsOf(path string, jobs int) (*flows.Result, int) {
	t, err := reader.Open(path)
	if err != nil {
		return nil, fail("%v", err)
	}
	sym, err := calls.Load(t)
	if sym == nil {
		return nil, fail("%v", err)
	}
	bar := progress.New("flows "+path, "segments", 1)
	res, err := flows.Analyze(t, sym, calls.Options{Workers: jobs, Progress: bar.Callback(), HoldGC: holdGC})
	bar.Done()
	if err != nil {
		return nil, fail("%v", err)
	}
	return res, 0
}

// flowsCmd implements "ttd flows".
func flowsCmd(name string, args []string) int {
	fs := newFlags(name, flowsUsage)
	asJSON := fs.Bool("json", false, "print JSON")
	dot := fs.String("dot", "", "write the communication graph (Graphviz DOT) to `FILE` (default: TRACE with .flows.dot for .ttd; - for stdout)")
	npaths := fs.Int("paths", 5, "show each flow's `N` heaviest call paths (0: all)")
	jobs := fs.Int("jobs", 0, "re-simulate `N` checkpoint intervals at a time (0: one per CPU)")
	if err := parseInterspersed(fs, args); err != nil {
		return flagError(name, flowsUsage, err)
	}
	if fs.NArg() != 1 {
		return flagError(name, flowsUsage, errors.New("want exactly one trace"))
	}
	path := fs.Arg(0)
	res, st := flowsOf(path, *jobs)
	if st != 0 {
		return st
	}
	dotPath := *dot
	if dotPath == "" {
		dotPath = strings.TrimSuffix(path, ".ttd") + ".flows.dot"
	}
	if dotPath == "-" {
		res.WriteDOT(os.Stdout)
	} else {
		f, err := os.Create(dotPath)
		if err != nil {
			return fail("%v; pass --dot FILE to write the graph elsewhere", err)
		}
		res.WriteDOT(f)
		if err := f.Close(); err != nil {
			return fail("%v", err)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(struct {
			Flows []*flows.Flow `json:"flows"`
			Edges []*flows.Edge `json:"edges"`
			DOT   string        `json:"dot,omitempty"`
		}{res.Flows, res.Split.Edges, dotPath})
		return 0
	}
	fmt.Printf("%d flows in %s (flow 0 is the work no input started):\n", len(res.Flows), path)
	for _, f := range res.Flows {
		trigger := f.Trigger
		if f.ID == 0 {
			trigger = "background"
		}
		if f.ID == 0 {
			fmt.Printf("\nflow 0: background; threads %v%s\n", f.Threads, procsOf(f))
		} else {
			fmt.Printf("\nflow %d: %s in thread %d at position %d; positions %d–%d; threads %v%s\n", f.ID, trigger, f.StartTid, f.At, f.Start, f.End, f.Threads, procsOf(f))
		}
		fmt.Printf("  %d instructions (%.1f%%), %d bytes sent\n", f.Instructions, 100*f.Share, f.BytesSent)
		for i, p := range f.Paths {
			if *npaths > 0 && i >= *npaths {
				fmt.Printf("  … %d more call paths (--paths 0 shows all)\n", len(f.Paths)-i)
				break
			}
			sent := ""
			if p.Sent > 0 {
				sent = fmt.Sprintf(", sent %d bytes", p.Sent)
			}
			fmt.Printf("  %10d instructions, %d calls%s: %s\n", p.Self, p.Count, sent, strings.Join(shortPath(p.Path), " → "))
		}
	}
	if dotPath != "-" {
		fmt.Printf("\ncommunication graph: %s (dot -Tsvg %s > graph.svg)\n", dotPath, dotPath)
	}
	return 0
}

// shortPath drops the start-up frames above main or a thread's start
// routine for display.
func shortPath(p []string) []string {
	for i, f := range p {
		if f == "main" || f == "start_thread" && i+1 < len(p) {
			if f == "start_thread" {
				return p[i+1:]
			}
			return p[i:]
		}
	}
	return p
}

// anomaliesCmd implements "ttd anomalies".
func anomaliesCmd(name string, args []string) int {
	fs := newFlags(name, anomaliesUsage)
	var normals multiFlag
	fs.Var(&normals, "normal", "a recording of known-normal behaviour (`REF.ttd`; repeatable): flows are scored by their distance to its flows")
	coverage := fs.Bool("coverage", false, "compare coverage profiles (which call paths each flow ran, 1 each) instead of the time and bytes-sent shares per call path")
	asJSON := fs.Bool("json", false, "print JSON")
	jobs := fs.Int("jobs", 0, "re-simulate `N` checkpoint intervals at a time (0: one per CPU)")
	if err := parseInterspersed(fs, args); err != nil {
		return flagError(name, anomaliesUsage, err)
	}
	if fs.NArg() == 0 {
		return flagError(name, anomaliesUsage, errors.New("want at least one trace"))
	}
	collect := func(paths []string) ([]flows.Candidate, int) {
		var out []flows.Candidate
		for _, p := range paths {
			res, st := flowsOf(p, *jobs)
			if st != 0 {
				return nil, st
			}
			for _, f := range res.Flows {
				if f.ID != 0 { // the background is not a request
					out = append(out, flows.Candidate{Trace: p, Flow: f})
				}
			}
		}
		return out, 0
	}
	cands, st := collect(fs.Args())
	if st != 0 {
		return st
	}
	refs, st := collect(normals)
	if st != 0 {
		return st
	}
	if len(cands) == 0 {
		return fail("no flows in %s: no work came in on a socket or a pipe ('ttd flows' shows the split)", strings.Join(fs.Args(), ", "))
	}
	if len(normals) > 0 && len(refs) == 0 {
		return fail("no flows in the --normal recordings %s to compare with", strings.Join(normals, ", "))
	}
	ranked := flows.RankWith(cands, refs, flows.RankOptions{Coverage: *coverage})
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(ranked)
		return 0
	}
	against := "the median distance to the other flows"
	if len(normals) > 0 {
		against = "the distance to the nearest flow of " + strings.Join(normals, ", ")
	}
	fmt.Printf("%d flows ranked by suspect score (%s):\n", len(ranked), against)
	fmt.Printf("%4s %7s  %-24s %12s  %s\n", "rank", "score", "flow", "input at", "differs most in")
	for i, s := range ranked {
		fmt.Printf("%4d %7.3f  %-24s %12d  %s\n", i+1, s.Score, fmt.Sprintf("%s#%d", s.Trace, s.Flow.ID), s.Flow.At, shortComponent(s.Top))
	}
	if len(ranked) > 0 {
		s := ranked[0]
		fmt.Printf("\nthe most suspect flow's work came in at: ttd query %s --at %d --where\n", s.Trace, s.Flow.At)
	}
	return 0
}

func shortComponent(k string) string {
	kind, path, ok := strings.Cut(k, " ")
	if !ok {
		return k
	}
	return kind + " " + strings.Join(shortPath(strings.Split(path, " → ")), " → ")
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// procsOf names a flow's processes when it crossed more than one.
func procsOf(f *flows.Flow) string {
	if len(f.Processes) < 2 {
		return ""
	}
	return fmt.Sprintf(" in processes %v", f.Processes)
}
