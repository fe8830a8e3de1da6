package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"slices"
	"strings"

	"ttd/calls"
	"ttd/internal/progress"
	"ttd/reader"
	"ttd/x86"
)

const callsUsage = "[--tid T] [--pid P] [--depth N] [--min-count K] [--json] [--jobs N] TRACE"

func init() {
	register(command{"calls", callsUsage, "the call tree, exactly: calls, instructions (total and self) and first position of every call path, per thread or merged", callsCmd, 70})
	examples["calls"] = "ttd calls --depth 8 --min-count 2 hello.ttd"
}

// callsCmd implements "ttd calls".
func callsCmd(name string, args []string) int {
	fs := newFlags(name, callsUsage)
	tid := fs.Int("tid", 0, "show only thread `T`'s tree (default: every thread's, then all threads merged)")
	pid := fs.Int("pid", 0, "show only process `P`'s threads ('ttd info TRACE' lists a tree's pids; a forked process's tree continues its parent's call path)")
	depth := fs.Int("depth", 0, "show call paths at most `N` calls deep (0: all)")
	minCount := fs.Uint64("min-count", 0, "show only call paths entered at least `K` times")
	asJSON := fs.Bool("json", false, "print JSON: one object per thread and the merged tree, every path in full")
	jobs := fs.Int("jobs", 0, "re-simulate `N` checkpoint intervals at a time (0: one per CPU)")
	if err := parseInterspersed(fs, args); err != nil {
		return flagError(name, callsUsage, err)
	}
	if fs.NArg() != 1 {
		return flagError(name, callsUsage, errors.New("want exactly one trace"))
	}
	p, status := callProfile(fs.Arg(0), *jobs)
	if status != 0 {
		return status
	}
	if x86.StatsOn { // TTD_STATS=1, as for ttd replay (every job's, added up)
		x86.WriteStats(os.Stderr, p.Instructions)
	}
	var views []callView
	switch {
	case *tid != 0:
		// Every tree of the thread: an exec starts another.
		for _, th := range p.Threads {
			if th.Tid == *tid {
				views = append(views, threadView(p, th))
			}
		}
		if len(views) == 0 {
			return fail("thread %d is not in %s (its threads: %s); pick one of them", *tid, fs.Arg(0), tidList(p))
		}
	case *pid != 0:
		for _, th := range p.Threads {
			if th.Pid == *pid {
				views = append(views, threadView(p, th))
			}
		}
		if len(views) == 0 {
			return fail("process %d is not in %s (its processes: %s); pick one of them", *pid, fs.Arg(0), pidList(p))
		}
	default:
		for _, th := range p.Threads {
			views = append(views, threadView(p, th))
		}
		if len(p.Threads) > 1 {
			// Walked from the threads' trees: a merged copy of sort -n's
			// 1.2 million paths was 170 MB.
			views = append(views, callView{Merged: true, walk: p.WalkMerged})
		}
	}
	filter := func(n *calls.Node) bool {
		return (*depth == 0 || int(n.Depth) <= *depth) && n.Count >= *minCount
	}
	if *asJSON {
		w := bufio.NewWriterSize(os.Stdout, 64<<10)
		defer w.Flush()
		writeCallJSON(w, p.Instructions, views, filter, *depth)
		return 0
	}
	// One write per row was 48,000 write calls for python3's tree.
	// 64 KB: sort -n's 2.4 million rows (306 MB) were 75,000 writes of 4 KB.
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	defer w.Flush()
	for i, v := range views {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if v.Merged {
			fmt.Fprintln(w, "all threads merged:")
		} else {
			fmt.Fprintf(w, "thread %d%s:\n", v.Tid, v.title)
		}
		writeCallTree(w, v.walk, filter, *depth)
	}
	return 0
}

// callProfile opens a trace and computes its call tree, with a progress
// bar on a terminal; a non-zero status means it printed why it failed.
func callProfile(path string, jobs int) (*calls.Profile, int) {
	t, err := reader.Open(path)
	if err != nil {
		return nil, fail("%v", err)
	}
	sym, err := calls.Load(t)
	if sym == nil {
		return nil, fail("%v", err)
	}
	bar := progress.New("calls "+path, "segments", 1)
	p, err := calls.Analyze(t, sym, calls.Options{Workers: jobs, Progress: bar.Callback(), HoldGC: holdGC})
	bar.Done()
	if err != nil {
		return nil, fail("%v", err)
	}
	return p, 0
}

type callView struct {
	Tid     int        `json:"tid,omitempty"`
	Pid     int        `json:"pid,omitempty"`
	Process string     `json:"process,omitempty"` // calls.Process.Name
	Exec    int        `json:"exec,omitempty"`    // execs before this tree
	Merged  bool       `json:"merged,omitempty"`
	Paths   []jsonPath `json:"paths"`

	walk  func(fn func(*calls.Node) bool) // Node.Walk of the view's tree
	title string
}

// threadView is one thread's tree, titled with its process in a tree.
func threadView(p *calls.Profile, th *calls.Thread) callView {
	v := callView{Tid: th.Tid, Pid: th.Pid, Exec: th.Exec, walk: th.Root.Walk}
	if p.Tree == nil || len(p.Tree.Procs) < 2 {
		return v
	}
	if pr := p.Tree.Process(th.Pid); pr != nil {
		v.Process = pr.Name
		v.title = fmt.Sprintf(" (process %d, %s", th.Pid, pr.Name)
		if th.Exec > 0 {
			v.title += fmt.Sprintf(", after exec %d", th.Exec)
		}
		v.title += ")"
	}
	return v
}

func pidList(p *calls.Profile) string {
	var s []string
	seen := map[int]bool{}
	for _, th := range p.Threads {
		if !seen[th.Pid] {
			seen[th.Pid] = true
			s = append(s, fmt.Sprint(th.Pid))
		}
	}
	return strings.Join(s, ", ")
}

type jsonPath struct {
	Path  []string `json:"path"`
	Site  string   `json:"site,omitempty"`
	Count uint64   `json:"count"`
	Total uint64   `json:"total"`
	Self  uint64   `json:"self"`
	First uint64   `json:"first"`
	Tid   int      `json:"tid"`
}

// writeCallJSON writes, path by path, what json.Encoder with an indent of
// two blanks wrote for the views with all their paths in one
// document: mk's is 3.5 GB, and the paths, the document and its
// indented copy took 19 GB of RSS. Each view is marshalled with no
// paths, its "paths" (the last field) then written a path at a time.
func writeCallJSON(w io.Writer, instructions uint64, views []callView, keep func(*calls.Node) bool, depth int) error {
	if len(views) == 0 {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Instructions uint64     `json:"instructions"`
			Views        []callView `json:"views"`
		}{instructions, views})
	}
	fmt.Fprintf(w, "{\n  \"instructions\": %d,\n  \"views\": [", instructions)
	for i, v := range views {
		if i > 0 {
			io.WriteString(w, ",")
		}
		v.Paths = []jsonPath{}
		b, err := json.MarshalIndent(v, "    ", "  ")
		if err != nil {
			return err
		}
		const empty = "[]\n    }"
		if !bytes.HasSuffix(b, []byte(empty)) {
			return fmt.Errorf("calls: a view's JSON does not end with its paths: %q", b[max(0, len(b)-40):])
		}
		io.WriteString(w, "\n    ")
		w.Write(b[:len(b)-len(empty)])
		n := 0
		var err2 error
		v.walk(func(m *calls.Node) bool {
			if keep(m) && err2 == nil {
				p, err := json.MarshalIndent(jsonPath{m.Path(), m.SiteName, m.Count, m.Total, m.Self, m.First, m.FirstTid}, "        ", "  ")
				if err != nil {
					err2 = err
				}
				if n == 0 {
					io.WriteString(w, "[\n        ")
				} else {
					io.WriteString(w, ",\n        ")
				}
				w.Write(p)
				n++
			}
			return depth == 0 || int(m.Depth) < depth
		})
		if err2 != nil {
			return err2
		}
		if n == 0 {
			io.WriteString(w, empty)
		} else {
			io.WriteString(w, "\n      ]\n    }")
		}
	}
	_, err := io.WriteString(w, "\n  ]\n}\n")
	return err
}

// writeCallTree prints one row per call path, depth first, the path as
// its function indented under its caller.
func writeCallTree(w io.Writer, walk func(fn func(*calls.Node) bool), keep func(*calls.Node) bool, depth int) {
	fmt.Fprintf(w, "%8s %14s %14s %12s  %s\n", "count", "total", "self", "first", "call path (call site)")
	// The rows as fmt.Fprintf("%8d %14d %14d %12s  %s%s%s\n") printed
	// them, built in one buffer: a tree of a million paths (sort -n's
	// recursive merge sort) spent more in fmt and its allocations than
	// in re-simulating the recording. The buffer holds many rows, written
	// when it passes rowsFlush (one Write a row, each a copy into w's
	// buffer, was a third of printing sort -n's 2.4 million rows).
	b := make([]byte, 0, rowsFlush+4096)
	walk(func(n *calls.Node) bool {
		if keep(n) {
			b = appendRow(b, n)
			if len(b) >= rowsFlush {
				w.Write(b)
				b = b[:0]
			}
		}
		return depth == 0 || int(n.Depth) < depth
	})
	w.Write(b)
}

// appendRow appends n's row to b. The numbers are written right-aligned
// in place, in room grown once for the row: strconv.AppendUint into a
// scratch array, copied after an append of its padding, took 70-76 ns
// of CPU a row of sort -n's shape (BenchmarkCallTreeRows), 60-62 so.
// A row whose numbers fit their columns (all but a row of a recording
// of 10^12 instructions or a path of 10^8 calls) takes its blanks up to
// its path in one copy and its digits written into them (putDigits),
// without counting them or growing b for each: 58-60 ns.
func appendRow(b []byte, n *calls.Node) []byte {
	indent := max(2*(int(n.Depth)-1), 0)
	b = slices.Grow(b, rowHead+4*20+indent+len(n.Func)+len(n.SiteName)+4)
	if n.Count < 1e8 && n.Total < 1e14 && n.Self < 1e14 && (n.First < 1e12 || n.First == ^uint64(0)) {
		at := len(b)
		pad := rowHead + indent
		k := min(pad, len(blanks))
		b = append(b, blanks[:k]...)
		h := (*[rowHead]byte)(b[at:])
		putDigits(h[:8], n.Count)
		putDigits(h[:8+1+14], n.Total)
		putDigits(h[:8+1+14+1+14], n.Self)
		if n.First != ^uint64(0) {
			putDigits(h[:rowHead-2], n.First)
		} else {
			h[rowHead-3] = '-'
		}
		b = appendBlanks(b, pad-k)
	} else {
		b = appendRight(b, n.Count, 8)
		b = append(b, ' ')
		b = appendRight(b, n.Total, 14)
		b = append(b, ' ')
		b = appendRight(b, n.Self, 14)
		b = append(b, ' ')
		if n.First != ^uint64(0) {
			b = appendRight(b, n.First, 12)
		} else {
			b = appendBlanks(b, 11)
			b = append(b, '-')
		}
		b = appendBlanks(b, 2+indent)
	}
	b = append(b, n.Func...)
	if n.SiteName != "" {
		b = append(b, "  ("...)
		b = append(b, n.SiteName...)
		b = append(b, ')')
	}
	return append(b, '\n')
}

// rowHead is the width of a row's columns of numbers, with the blank
// after each and the two before the path: count (8), total (14), self
// (14) and first (12).
const rowHead = 8 + 1 + 14 + 1 + 14 + 1 + 12 + 2

// appendRight appends v in decimal, right-aligned in width columns (wider
// if it needs more), as fmt's %*d does: its digits counted from its bit
// length.
func appendRight(b []byte, v uint64, width int) []byte {
	k := bits.Len64(v) * 1233 >> 12 // digits, or one less
	if v >= pow10s[k] {
		k++
	}
	k = max(k, 1)
	b = slices.Grow(appendBlanks(b, width-k), k)
	b = b[:len(b)+k]
	putDigits(b, v)
	return b
}

// putDigits writes v in decimal at the end of b, which has room for its
// digits, two at a time from the end.
func putDigits(b []byte, v uint64) {
	at := len(b)
	for v >= 100 {
		q := v / 100
		d := (v - q*100) * 2
		at -= 2
		b[at], b[at+1] = digitPairs[d], digitPairs[d+1]
		v = q
	}
	if v >= 10 {
		b[at-2], b[at-1] = digitPairs[v*2], digitPairs[v*2+1]
	} else {
		b[at-1] = byte('0' + v)
	}
}

// digitPairs holds "00" to "99".
const digitPairs = "00010203040506070809" + "10111213141516171819" + "20212223242526272829" +
	"30313233343536373839" + "40414243444546474849" + "50515253545556575859" + "60616263646566676869" +
	"70717273747576777879" + "80818283848586878889" + "90919293949596979899"

// pow10s[k] is 10 to the k (the last, 10^19, the largest a uint64 holds).
var pow10s = [20]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// appendBlanks appends n blanks (none if n <= 0).
func appendBlanks(b []byte, n int) []byte {
	for n > 16 {
		k := min(n, len(blanks))
		b = append(b, blanks[:k]...)
		n -= k
	}
	for range n {
		b = append(b, ' ')
	}
	return b
}

// rowsFlush is how many bytes of rows writeCallTree gathers before it
// writes them.
const rowsFlush = 60 << 10

// blanks pads writeCallTree's columns and indents its paths.
var blanks = []byte(strings.Repeat(" ", 128))

func tidList(p *calls.Profile) string {
	var s []string
	for _, th := range p.Threads {
		if th.Exec == 0 {
			s = append(s, fmt.Sprint(th.Tid))
		}
	}
	return strings.Join(s, ", ")
}

// fail prints one line on stderr and returns status 1.
func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "ttd: "+format+"\n", args...)
	return 1
}
