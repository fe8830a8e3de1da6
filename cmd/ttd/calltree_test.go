package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"ttd/calls"
)

// TestCallTreeRowsAsFmt checks writeCallTree's rows against the
// fmt.Fprintf format they replaced, byte for byte: numbers narrower
// than, as wide as and wider than their columns, a path with no first
// position, names with and without call sites, deep indentation, and
// the depth and keep filters.
func TestCallTreeRowsAsFmt(t *testing.T) {
	vs := []uint64{0, 1, 9, 12345678, 123456789, 99999999999999, 123456789012345, ^uint64(0) - 1, 42}
	root := chainTree(len(vs), func(d int, n *calls.Node) {
		v := vs[d]
		n.Func, n.Count, n.Total, n.Self, n.First = fmt.Sprintf("f%d", d), v, v*3, v/7, v
		if d%2 == 1 {
			n.SiteName = fmt.Sprintf("file.c:%d", d)
		}
		if d == 4 {
			n.First = ^uint64(0)
		}
	})
	want := func(keep func(*calls.Node) bool, depth int) string { return fmtCallTree(root, keep, depth) }
	all := func(*calls.Node) bool { return true }
	some := func(n *calls.Node) bool { return n.Count > 1 }
	for _, tc := range []struct {
		keep  func(*calls.Node) bool
		depth int
	}{{all, 0}, {all, 3}, {some, 0}, {some, 5}} {
		var got bytes.Buffer
		writeCallTree(&got, root.Walk, tc.keep, tc.depth)
		if w := want(tc.keep, tc.depth); got.String() != w {
			t.Errorf("depth %d: rows\n%s\nwant\n%s", tc.depth, got.String(), w)
		}
	}
	var got bytes.Buffer
	writeCallTree(&got, root.Walk, all, 0)
	if rows := strings.Count(got.String(), "\n"); rows != 19 {
		t.Errorf("%d lines, want a header and 18 paths: the test tests less than it says", rows)
	}
}

// TestCallTreeRowsAtColumnEdges checks rows against fmt where appendRow
// leaves its fast path (a number wider than its column): each column's
// number one short of, as wide as and one wider than the column, with
// the other numbers small, and paths with no first position.
func TestCallTreeRowsAtColumnEdges(t *testing.T) {
	type row struct{ count, total, self, first uint64 }
	var rows []row
	for col, width := range []int{8, 14, 14, 12} {
		p := pow10(width) + 1 // 10^width
		for _, v := range []uint64{0, 100, p / 10, p - 2, p - 1, p, p + 1} {
			r := row{7, 1234, 5, 99}
			switch col {
			case 0:
				r.count = v
			case 1:
				r.total = v
			case 2:
				r.self = v
			case 3:
				r.first = v
			}
			rows = append(rows, r, row{r.count, r.total, r.self, ^uint64(0)})
		}
	}
	root := chainTree(len(rows), func(d int, n *calls.Node) {
		r := rows[d]
		n.Func, n.Count, n.Total, n.Self, n.First = fmt.Sprintf("f%d", d), r.count, r.total, r.self, r.first
		n.SiteName = fmt.Sprintf("edge.c:%d", d)
	})
	all := func(*calls.Node) bool { return true }
	var got bytes.Buffer
	writeCallTree(&got, root.Walk, all, 0)
	if w := fmtCallTree(root, all, 0); got.String() != w {
		t.Errorf("rows\n%s\nwant\n%s", got.String(), w)
	}
}

// TestAppendRightAsFmt checks appendRight against fmt's %*d at every
// number of digits, where its digit count changes: 10^k-1, 10^k and
// 10^k+1, 0 and the largest uint64, in columns narrower than, as wide
// as and wider than the number.
func TestAppendRightAsFmt(t *testing.T) {
	vs := []uint64{0, ^uint64(0)}
	for k, p := 0, uint64(1); k < 20; k, p = k+1, p*10 {
		vs = append(vs, p-1, p, p+1)
	}
	for _, v := range vs {
		for _, width := range []int{1, 8, 14, 25} {
			got := string(appendRight([]byte("x"), v, width))
			if want := fmt.Sprintf("x%*d", width, v); got != want {
				t.Errorf("appendRight(%d, %d) = %q, want %q", v, width, got, want)
			}
		}
	}
}

// chainTree is a path depth calls deep below a new root, node d set by
// set, each with a sibling "leaf" after it, so that a walk comes back up.
func chainTree(depth int, set func(d int, n *calls.Node)) *calls.Node {
	root := &calls.Node{NodeInfo: &calls.NodeInfo{}}
	parent := root
	for d := range depth {
		n := &calls.Node{Parent: parent, NodeInfo: &calls.NodeInfo{Depth: int32(d) + 1}}
		set(d, n)
		parent.Children = append(parent.Children, n, &calls.Node{Count: 1, First: ^uint64(0), Parent: parent, NodeInfo: &calls.NodeInfo{Func: "leaf", Depth: int32(d) + 1}})
		parent = n
	}
	return root
}

// fmtCallTree is writeCallTree's rows as fmt.Fprintf printed them.
func fmtCallTree(root *calls.Node, keep func(*calls.Node) bool, depth int) string {
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
			fmt.Fprintf(&w, "%8d %14d %14d %12s  %s%s%s\n", n.Count, n.Total, n.Self, first, strings.Repeat("  ", int(n.Depth)-1), n.Func, site)
		}
		return depth == 0 || int(n.Depth) < depth
	})
	return w.String()
}

// TestCallTreeRowsAsFmtManyWrites: a tree whose rows pass rowsFlush
// several times (writeCallTree writes them in chunks), with paths
// indented deeper than blanks is long, prints as fmt did, in writes of
// whole rows each at most rowsFlush and a row long.
func TestCallTreeRowsAsFmtManyWrites(t *testing.T) {
	root := &calls.Node{NodeInfo: &calls.NodeInfo{}}
	rows := 0
	for chain := 0; rows*90 < 4*rowsFlush; chain++ {
		parent := root
		for d := range 70 {
			// Numbers of every width up to 16 digits: one short of a
			// column's too (one blank of padding).
			n := &calls.Node{Count: pow10(d % 10), Self: pow10(d % 15), First: pow10((d + 2*chain) % 13), Parent: parent,
				NodeInfo: &calls.NodeInfo{Func: fmt.Sprintf("f%d_%d", chain, d), Total: pow10((d+chain)%17) + uint64(rows), Depth: int32(d) + 1}}
			if d%3 == 0 {
				n.SiteName = fmt.Sprintf("deep.c:%d", d)
			}
			parent.Children = append(parent.Children, n)
			parent = n
			rows++
		}
	}
	if 2*70 <= len(blanks) {
		t.Fatalf("the paths are indented %d, no deeper than blanks (%d): the test tests less than it says", 2*69, len(blanks))
	}
	var got chunks
	writeCallTree(&got, root.Walk, func(*calls.Node) bool { return true }, 0)
	if w := fmtCallTree(root, func(*calls.Node) bool { return true }, 0); got.String() != w {
		t.Fatalf("%d rows differ from fmt's (%d bytes, want %d)", rows, got.Len(), len(w))
	}
	// A header, then chunks of whole rows.
	if len(got.writes) < 4 {
		t.Errorf("%d writes of %d bytes: the rows never passed rowsFlush", len(got.writes), got.Len())
	}
	for i, n := range got.writes[1:] {
		if n > rowsFlush+4096 {
			t.Errorf("write %d: %d bytes, more than rowsFlush and a row", i+1, n)
		}
	}
}

// chunks is a bytes.Buffer that keeps the size of each write, and
// checks that each ends a row.
type chunks struct {
	bytes.Buffer
	writes []int
}

func (c *chunks) Write(p []byte) (int, error) {
	if len(p) > 0 && p[len(p)-1] != '\n' {
		panic("a write that does not end a row")
	}
	c.writes = append(c.writes, len(p))
	return c.Buffer.Write(p)
}

// pow10 is 10 to the k, less one (k digits of 9; 0 for k=0).
func pow10(k int) uint64 {
	p := uint64(1)
	for range k {
		p *= 10
	}
	return p - 1
}

// BenchmarkCallTreeRows prints a tree shaped as sort -n's merge sort
// (paths 2 to 40 deep, two children each, numbers of 1 to 10 digits)
// through callsCmd's writer to /dev/null, as the measurements of ttd
// calls do: sort -n prints 2.4 million rows. The metric is ns/row.
//
//	go test ./cmd/ttd -run XXX -bench CallTreeRows -count 5
func BenchmarkCallTreeRows(b *testing.B) {
	root := &calls.Node{NodeInfo: &calls.NodeInfo{}}
	rows := 0
	var grow func(parent *calls.Node, d int)
	grow = func(parent *calls.Node, d int) {
		for i := range 2 {
			v := uint64(rows*7919+i) % pow10(1+rows%10)
			n := &calls.Node{Count: v % 1000, Self: v, First: v * 11, Parent: parent,
				NodeInfo: &calls.NodeInfo{Func: "msort_with_tmp", SiteName: fmt.Sprintf("msort.c:%d", 297+i*3), Total: v * 3, Depth: int32(d) + 1}}
			if d%5 == 4 {
				n.Func, n.SiteName = "compare", "sort.c:2790"
			}
			parent.Children = append(parent.Children, n)
			rows++
			if d < 17 {
				grow(n, d+1)
			}
		}
	}
	grow(root, 0)
	null, err := os.Create(os.DevNull)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	all := func(*calls.Node) bool { return true }
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		w := bufio.NewWriterSize(null, 64<<10)
		writeCallTree(w, root.Walk, all, 0)
		w.Flush()
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/float64(rows), "cpu-ns/row")
}

// processCPU is the process's CPU time (user and system) in nanoseconds:
// the machine is shared, and wall time counts the others' work too.
func processCPU() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
