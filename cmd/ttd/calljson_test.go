package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"ttd/calls"
)

// TestCallJSONAsOneDocument checks writeCallJSON, which writes a path
// at a time, against the one document json.Encoder made of every view
// and all its paths, byte for byte: views of a thread (with a process,
// after an exec) and merged, a view none of whose paths is kept, names
// JSON escapes (<, &, quotes, non-ASCII), paths with and without call
// sites, the depth filter, and no view at all.
func TestCallJSONAsOneDocument(t *testing.T) {
	names := []string{"main", "std::vector<int>::push_back", `say "a&b"`, "größe", "f"}
	root := chainTree(len(names), func(d int, n *calls.Node) {
		n.Func, n.Count, n.Total, n.Self, n.First, n.FirstTid = names[d], uint64(d+1), uint64(100-d), uint64(d), uint64(d*10), 7
		if d%2 == 1 {
			n.SiteName = fmt.Sprintf("a<b>.c:%d", d)
		}
	})
	thread := callView{Tid: 7, Pid: 7, Process: "sh -c <x>", Exec: 1, walk: root.Walk}
	merged := callView{Merged: true, walk: root.Walk}
	all := func(*calls.Node) bool { return true }
	none := func(*calls.Node) bool { return false }
	some := func(n *calls.Node) bool { return n.Count > 1 }
	for i, tc := range []struct {
		views []callView
		keep  func(*calls.Node) bool
		depth int
	}{
		{[]callView{thread, merged}, all, 0},
		{[]callView{thread, merged}, some, 0},
		{[]callView{thread}, all, 3},
		{[]callView{thread, merged}, none, 0},
		{[]callView{merged}, all, 1},
		{nil, all, 0},
	} {
		var got bytes.Buffer
		if err := writeCallJSON(&got, 12345, tc.views, tc.keep, tc.depth); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if want := oneJSONDocument(12345, tc.views, tc.keep, tc.depth); got.String() != want {
			t.Errorf("case %d:\n%s\nwant\n%s", i, got.String(), want)
		}
	}
}

// oneJSONDocument is the JSON `ttd calls --json` printed before
// writeCallJSON: every view's paths gathered, then one document.
func oneJSONDocument(instructions uint64, views []callView, keep func(*calls.Node) bool, depth int) string {
	views = append([]callView(nil), views...)
	for i := range views {
		out := []jsonPath{}
		views[i].walk(func(n *calls.Node) bool {
			if keep(n) {
				out = append(out, jsonPath{n.Path(), n.SiteName, n.Count, n.Total, n.Self, n.First, n.FirstTid})
			}
			return depth == 0 || int(n.Depth) < depth
		})
		views[i].Paths = out
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.Encode(struct {
		Instructions uint64     `json:"instructions"`
		Views        []callView `json:"views"`
	}{instructions, views})
	return b.String()
}
