package calls

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"ttd/emu"
	"ttd/internal/testtmp"
	"ttd/reader"
	"ttd/recorder"
)

// Fixtures: C programs from testdata (and the corpus), built once per
// test process with gcc -O1 -g, recorded per test with checkpoints close
// together, so that intervals start in the middle of calls.

var builds sync.Map // source path → binary path or error

// buildRoot holds every program the tests build; TestMain removes it.
var buildRoot string

func TestMain(m *testing.M) { testtmp.Main(m, "ttd-calls-", &buildRoot) }

func buildC(t testing.TB, src string, flags ...string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("gcc not installed")
		}
		t.Skip("gcc not installed: SKIPPING (make deps installs it)")
	}
	k := src + strings.Join(flags, " ")
	if v, ok := builds.Load(k); ok {
		return v.(string)
	}
	dir, err := os.MkdirTemp(buildRoot, "build-")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), filepath.Ext(src)))
	args := append([]string{"-O1", "-g", "-o", out, src}, flags...)
	if b, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", src, err, b)
	}
	builds.Store(k, out)
	return out
}

// record records prog with args, a checkpoint every `every` instructions.
func record(t testing.TB, prog string, every uint64, args ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), filepath.Base(prog)+".ttd")
	null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer null.Close()
	st, _, err := recorder.Record(emu.Config{Path: prog, Args: append([]string{prog}, args...), Env: []string{"PATH=/usr/bin:/bin"},
		Stdout: null, Stderr: null},
		recorder.Options{Path: path, CheckpointEvery: every})
	if err != nil {
		t.Fatalf("recording %s: %v", prog, err)
	}
	if st.Signal != 0 {
		t.Fatalf("%s ended with %v", prog, st)
	}
	return path
}

// recordPrinting records prog as record does, and returns what it
// printed too.
func recordPrinting(t testing.TB, prog string, every uint64) (path string, printed []byte) {
	t.Helper()
	path = filepath.Join(t.TempDir(), filepath.Base(prog)+".ttd")
	out, err := os.Create(path + ".out")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer null.Close()
	st, _, err := recorder.Record(emu.Config{Path: prog, Args: []string{prog}, Env: []string{"PATH=/usr/bin:/bin"},
		Stdout: out, Stderr: null}, recorder.Options{Path: path, CheckpointEvery: every})
	printed, _ = os.ReadFile(out.Name())
	if err != nil || st.ExitCode() != 0 {
		t.Fatalf("recording %s: %v, %v; output %q", prog, err, st, printed)
	}
	return path, printed
}

func open(t testing.TB, path string) (*reader.Trace, Symbolizer) {
	t.Helper()
	tr, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	sym, err := Load(tr)
	if sym == nil {
		t.Fatal(err)
	}
	return tr, sym
}

// analyzeSequential is the reference: one re-simulation of the whole
// trace, from its start, as one segment, hooking every instruction (not
// only the blocks with calls and rets, the others running translated).
func analyzeSequential(t testing.TB, tr *reader.Trace, sym Symbolizer) *Profile {
	t.Helper()
	cps, tree := checkpointsAndTree(t, tr)
	if tree.Images() > 1 {
		t.Fatal("analyzeSequential: the reference names one program's functions")
	}
	s, err := runSegment(tr, sym, []reader.Checkpoint{cps[0]}, 0, 1, &Options{everyInstruction: true, tree: tree, syms: []Symbolizer{sym}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := stitch([]*segment{s}, sym)
	p.Instructions = tr.End()
	p.finish(sym)
	return p
}

// checkpointsAndTree returns tr's checkpoints and process tree.
func checkpointsAndTree(t testing.TB, tr *reader.Trace) ([]reader.Checkpoint, *Tree) {
	t.Helper()
	cps, err := tr.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	tree, err := NewTree(tr)
	if err != nil {
		t.Fatal(err)
	}
	return cps, tree
}

// flat lists a tree's paths with their numbers, one line each, sorted.
func flat(root *Node) []string {
	var out []string
	root.Walk(func(n *Node) bool {
		out = append(out, fmt.Sprintf("%s @%s count=%d self=%d total=%d first=%d", n.PathString(), n.SiteName, n.Count, n.Self, n.Total, n.First))
		return true
	})
	sort.Strings(out)
	return out
}

// find returns the node of the path whose functions end with suffix.
func find(root *Node, suffix ...string) []*Node {
	var out []*Node
	want := strings.Join(suffix, " → ")
	root.Walk(func(n *Node) bool {
		if s := n.PathString(); s == want || strings.HasSuffix(s, " → "+want) {
			out = append(out, n)
		}
		return true
	})
	return out
}
