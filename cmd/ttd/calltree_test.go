package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"ttd/calls"
)

// TestCallTreeRowsAsFmt checks writeCallTree's rows against the
// fmt.Fprintf format they replaced, byte for byte: numbers narrower
// than, as wide as and wider than their columns, a path with no first
// position, names with and without call sites, deep indentation, and
// the depth and keep filters.
func TestCallTreeRowsAsFmt(t *testing.T) {
	root := &calls.Node{}
	parent := root
	for d, v := range []uint64{0, 1, 9, 12345678, 123456789, 99999999999999, 123456789012345, ^uint64(0) - 1, 42} {
		n := &calls.Node{Func: fmt.Sprintf("f%d", d), Count: v, Total: v * 3, Self: v / 7, First: v, Depth: d + 1, Parent: parent}
		if d%2 == 1 {
			n.SiteName = fmt.Sprintf("file.c:%d", d)
		}
		if d == 4 {
			n.First = ^uint64(0)
		}
		parent.Children = append(parent.Children, n)
		// A sibling, so that the walk comes back up.
		parent.Children = append(parent.Children, &calls.Node{Func: "leaf", Count: 1, First: ^uint64(0), Depth: d + 1, Parent: parent})
		parent = n
	}
	want := func(keep func(*calls.Node) bool, depth int) string {
		var w strings.Builder
		fmt.Fprintf(&w, "%8s %14s %14s %12s  %s\n", "count", "total", "self", "first", "call path (call site)")
		root.Walk(func(n *calls.Node) bool {
			if keep(n) {
				first := "-"
				if n.First != ^uint64(0) {
					first = fmt.Sprint(n.First)
				}
				site := ""
				if n.SiteName != "" {
					site = "  (" + n.SiteName + ")"
				}
				fmt.Fprintf(&w, "%8d %14d %14d %12s  %s%s%s\n", n.Count, n.Total, n.Self, first, strings.Repeat("  ", n.Depth-1), n.Func, site)
			}
			return depth == 0 || n.Depth < depth
		})
		return w.String()
	}
	all := func(*calls.Node) bool { return true }
	some := func(n *calls.Node) bool { return n.Count > 1 }
	for _, tc := range []struct {
		keep  func(*calls.Node) bool
		depth int
	}{{all, 0}, {all, 3}, {some, 0}, {some, 5}} {
		var got bytes.Buffer
		writeCallTree(&got, root, tc.keep, tc.depth)
		if w := want(tc.keep, tc.depth); got.String() != w {
			t.Errorf("depth %d: rows\n%s\nwant\n%s", tc.depth, got.String(), w)
		}
	}
	var got bytes.Buffer
	writeCallTree(&got, root, all, 0)
	if rows := strings.Count(got.String(), "\n"); rows != 19 {
		t.Errorf("%d lines, want a header and 18 paths: the test tests less than it says", rows)
	}
}
