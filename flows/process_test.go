package flows

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// dotGraph is a parsed DOT graph: node labels by name, and edges.
type dotGraph struct {
	nodes map[string]string
	edges []dotEdge
}

type dotEdge struct{ from, to, label string }

// parseDOT reads the node and edge statements WriteDOT writes; any other
// statement but the graph's attributes fails the test.
func parseDOT(t *testing.T, text string) *dotGraph {
	t.Helper()
	g := &dotGraph{nodes: map[string]string{}}
	node := regexp.MustCompile(`^(\w+) \[label="((?:[^"\\]|\\.)*)"(?:, shape=\w+)?\];$`)
	edge := regexp.MustCompile(`^(\w+) -> (\w+) \[(?:style=dashed, )?label="([^"]*)"\];$`)
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) < 2 || lines[0] != "digraph flows {" || lines[len(lines)-1] != "}" {
		t.Fatalf("not a digraph:\n%s", text)
	}
	for _, l := range lines[1 : len(lines)-1] {
		l = strings.TrimSpace(l)
		if m := edge.FindStringSubmatch(l); m != nil {
			for _, n := range m[1:3] {
				if _, ok := g.nodes[n]; !ok {
					t.Errorf("edge %q before its node is declared", l)
				}
			}
			g.edges = append(g.edges, dotEdge{m[1], m[2], m[3]})
		} else if m := node.FindStringSubmatch(l); m != nil {
			g.nodes[m[1]] = m[2]
		} else if !strings.HasPrefix(l, "rankdir=") {
			t.Errorf("unexpected DOT statement %q", l)
		}
	}
	return g
}

// count is the number of edges from → to whose label starts with label.
func (g *dotGraph) count(from, to, label string) int {
	n := 0
	for _, e := range g.edges {
		if e.from == from && e.to == to && strings.HasPrefix(e.label, label) {
			n++
		}
	}
	return n
}

// TestForkServerFlows: a server process forks a worker process per
// request (forkserver.c). Each request is a flow of its own that crosses
// three processes (the client, the server, that request's worker), and
// the worker's calls continue the server's call path; the communication
// graph has the ten processes as nodes and the messages, forks and waits
// between them as edges.
func TestForkServerFlows(t *testing.T) {
	_, res := analyzeProgram(t, buildProgram(t, &forkServer, "forkserver"), "")
	wantFlows(t, res, 9, "the background and 8 requests")
	procs := res.Split.Tree.Procs
	if len(procs) != 10 {
		t.Fatalf("%d processes, want 10", len(procs))
	}
	srv, client := procs[0].Pid, procs[1].Pid
	checkAllCharged(t, res)
	workers := map[int]bool{}
	for _, f := range res.Flows[1:] {
		if !strings.HasPrefix(f.Trigger, "recvfrom(") || f.StartTid != srv || len(f.Processes) != 3 ||
			f.Processes[0] != srv || f.Processes[1] != client {
			t.Errorf("flow %d: trigger %q in %d, processes %v", f.ID, f.Trigger, f.StartTid, f.Processes)
			continue
		}
		w := f.Processes[2]
		if workers[w] || res.Split.Tree.Process(w).Ppid != srv {
			t.Errorf("flow %d: worker %d shared or not the server's child", f.ID, w)
		}
		workers[w] = true
		// The request (128 bytes) to the server and to the worker, the
		// worker's answer (4) and the reply (16).
		if f.BytesSent != 128+128+4+16 {
			t.Errorf("flow %d sent %d bytes, want 276", f.ID, f.BytesSent)
		}
		if !hasPath(f, "main server serve worker work checksum", 2) {
			t.Errorf("flow %d: no main → server → serve → worker → work → checksum (the worker's path continuing the server's)", f.ID)
		}
	}
	var dot strings.Builder
	res.WriteDOT(&dot)
	g := parseDOT(t, dot.String())
	if len(g.nodes) != 10 {
		t.Errorf("%d nodes, want the 10 processes:\n%s", len(g.nodes), dot.String())
	}
	p := func(pid int) string { return "p" + itoa(pid) }
	if g.count(p(client), p(srv), "8 messages, 1024 bytes") != 1 || g.count(p(srv), p(client), "8 messages, 128 bytes") != 1 {
		t.Errorf("client ↔ server messages missing:\n%s", dot.String())
	}
	for _, pr := range procs[1:] {
		if g.count(p(srv), p(pr.Pid), "fork 1") != 1 || g.count(p(pr.Pid), p(srv), "wait 1") != 1 {
			t.Errorf("process %d: no fork or wait edge:\n%s", pr.Pid, dot.String())
		}
		if workers[pr.Pid] && (g.count(p(srv), p(pr.Pid), "1 messages, 128 bytes") != 1 || g.count(p(pr.Pid), p(srv), "1 messages, 4 bytes") != 1) {
			t.Errorf("worker %d: request or answer edge missing:\n%s", pr.Pid, dot.String())
		}
	}
}

// TestForkServerAnomaly: request 5's worker goes the slow way; its flow
// ranks first against the known-normal run, against common behaviour,
// and with coverage profiles against the normal run.
func TestForkServerAnomaly(t *testing.T) {
	exe := buildProgram(t, &forkServer, "forkserver")
	badPath, bad := analyzeProgram(t, exe, "5")
	goodPath, good := analyzeProgram(t, exe, "")
	cands := candidates
	for _, c := range []struct {
		normals  []Candidate
		coverage bool
	}{{cands(goodPath, good), false}, {nil, false}, {cands(goodPath, good), true}} {
		ranked := RankWith(cands(badPath, bad), c.normals, RankOptions{Coverage: c.coverage})
		for i, s := range ranked {
			t.Logf("normals %d coverage %v: %d. flow %d score %.3f (%s)", len(c.normals), c.coverage, i+1, s.Flow.ID, s.Score, s.Top)
		}
		if ranked[0].Flow.ID != 5 || ranked[0].Score <= ranked[1].Score*1.5 {
			t.Errorf("normals %d coverage %v: flow %d ranks first (%.3f, next %.3f), want 5 well ahead",
				len(c.normals), c.coverage, ranked[0].Flow.ID, ranked[0].Score, ranked[1].Score)
		}
		if !strings.Contains(ranked[0].Top, "slow_recover") {
			t.Errorf("flow 5 differs most in %q, want slow_recover", ranked[0].Top)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
