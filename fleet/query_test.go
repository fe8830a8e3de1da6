package fleet

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"ttd/reader"
)

// workRuns are the argument of each recording of work.c: the number of
// calls of work.
var workRuns = []int{3, 5, 2}

// workTraces records work.c once per workRuns entry.
func workTraces(t *testing.T) (paths []string, recs map[string]recording) {
	prog := buildC(t, "work")
	recs = map[string]recording{}
	for _, n := range workRuns {
		rec := record(t, prog, fmt.Sprint(n))
		paths = append(paths, rec.path)
		recs[rec.path] = rec
	}
	return paths, recs
}

// workResults parses the program's output: "work(i) = r" per call.
func workResults(t *testing.T, stdout []byte) (results []uint64, lens []int) {
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	for sc.Scan() {
		var i int
		var r uint64
		if _, err := fmt.Sscanf(sc.Text(), "work(%d) = %d", &i, &r); err != nil || i != len(results)+1 {
			t.Fatalf("unexpected output line %q", sc.Text())
		}
		results = append(results, r)
		lens = append(lens, len(sc.Text())+1)
	}
	return results, lens
}

func sortCalls(cs []Call) {
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].Trace != cs[j].Trace {
			return cs[i].Trace < cs[j].Trace
		}
		return cs[i].Entry < cs[j].Entry
	})
}

func queryCalls(t *testing.T, opts Options, paths []string) []Call {
	return collect[Call](t, func(s beam.Scope, out string) {
		calls, err := Open(s, opts, paths...).Calls(s, "work")
		if err != nil {
			t.Fatal(err)
		}
		WriteJSON(s, out, calls)
	})
}

// TestCalls: every call of work in every recording, with its argument
// and return value as the program printed them, including the calls
// whose entry and return fall in different segments; the segmented
// pipeline gives exactly the rows of whole-recording re-simulation.
func TestCalls(t *testing.T) {
	paths, recs := workTraces(t)
	calls := queryCalls(t, Options{}, paths)
	sortCalls(calls)
	byTrace := map[string][]Call{}
	for _, c := range calls {
		byTrace[c.Trace] = append(byTrace[c.Trace], c)
	}
	crossing := 0
	for _, path := range paths {
		want, _ := workResults(t, recs[path].stdout)
		got := byTrace[path]
		if len(got) != len(want) {
			t.Fatalf("%s: %d calls of work, the program made %d", path, len(got), len(want))
		}
		segs, err := Split(context.Background(), path, false)
		if err != nil {
			t.Fatal(err)
		}
		cps := make([]reader.Checkpoint, len(segs))
		for k, sg := range segs {
			cps[k] = reader.Checkpoint{Position: sg.Start}
		}
		for i, c := range got {
			if c.Args[0] != uint64(i+1) || !c.Returned || c.Retval != want[i] || c.Return <= c.Entry {
				t.Errorf("%s: call %d: %+v; want work(%d) = %d", path, i, c, i+1, want[i])
			}
			if c.Pid == 0 || c.Tid != c.Pid {
				t.Errorf("%s: call %d: pid %d tid %d", path, i, c.Pid, c.Tid)
			}
			if reader.CheckpointAt(cps, c.Entry) != reader.CheckpointAt(cps, c.Return) {
				crossing++
			}
		}
	}
	if crossing == 0 {
		t.Fatal("no call spans a checkpoint: the test checks nothing about segments")
	}
	whole := queryCalls(t, Options{Whole: true}, paths)
	sortCalls(whole)
	if !reflect.DeepEqual(whole, calls) {
		t.Errorf("segmented and whole re-simulation differ:\n%+v\n%+v", calls, whole)
	}
}

// TestSyscallsAndMemory: the write(2) calls (their sizes are the
// printed lines') and the writes of the global counter (the running sum
// of the arguments), filters pushed down.
func TestSyscallsAndMemory(t *testing.T) {
	paths, recs := workTraces(t)
	sys := collect[Syscall](t, func(s beam.Scope, out string) {
		rows, err := Open(s, Options{}, paths...).Syscalls(s, "write")
		if err != nil {
			t.Fatal(err)
		}
		WriteJSON(s, out, rows)
	})
	sort.Slice(sys, func(i, j int) bool {
		return sys[i].Trace < sys[j].Trace || sys[i].Trace == sys[j].Trace && sys[i].Pos < sys[j].Pos
	})
	mem := collect[Access](t, func(s beam.Scope, out string) {
		rows, err := Open(s, Options{}, paths...).Memory(s, Watch{Ranges: []string{"counter"}, Write: true})
		if err != nil {
			t.Fatal(err)
		}
		WriteJSON(s, out, rows)
	})
	sort.Slice(mem, func(i, j int) bool {
		return mem[i].Trace < mem[j].Trace || mem[i].Trace == mem[j].Trace && mem[i].Pos < mem[j].Pos
	})
	for _, path := range paths {
		_, lens := workResults(t, recs[path].stdout)
		var got []int
		for _, sc := range sys {
			if sc.Trace == path {
				if sc.Name != "write" || sc.Args[0] != 1 || sc.Ret != int64(sc.Args[2]) {
					t.Errorf("%s: %+v", path, sc)
				}
				got = append(got, int(sc.Args[2]))
			}
		}
		if !reflect.DeepEqual(got, lens) {
			t.Errorf("%s: write sizes %v, the program wrote lines of %v", path, got, lens)
		}
		var sums []uint64
		for _, a := range mem {
			if a.Trace == path {
				if !a.Write || a.Size != 8 || a.Source != "instruction" {
					t.Errorf("%s: %+v", path, a)
				}
				sums = append(sums, a.Value)
			}
		}
		var want []uint64
		for i := range lens {
			want = append(want, uint64((i+1)*(i+2)/2))
		}
		if !reflect.DeepEqual(sums, want) {
			t.Errorf("%s: counter written %v, want %v", path, sums, want)
		}
	}
}

// TestBadRecordingNamed: a recording that cannot be re-simulated, and a
// pattern that matches nothing, are named in the pipeline's error.
func TestBadRecordingNamed(t *testing.T) {
	paths, _ := workTraces(t)
	b, err := os.ReadFile(paths[1])
	if err != nil {
		t.Fatal(err)
	}
	for i := len(b) / 3; i < len(b)/3+256 && i < len(b); i++ {
		b[i] ^= 0x5a
	}
	bad := filepath.Join(t.TempDir(), "corrupt.ttd")
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "nothing-*.ttd")
	for _, c := range []struct{ name, pattern string }{{"corrupt", bad}, {"missing", missing}} {
		t.Run(c.name, func(t *testing.T) {
			p, s := beam.NewPipelineWithRoot()
			calls, err := Open(s, Options{}, paths[0], c.pattern).Calls(s, "work")
			if err != nil {
				t.Fatal(err)
			}
			WriteJSON(s, filepath.Join(t.TempDir(), "out.jsonl"), calls)
			err = run(t, p)
			if err == nil {
				t.Fatal("the pipeline succeeded")
			}
			if !strings.Contains(err.Error(), c.pattern) {
				t.Fatalf("the error does not name %s: %v", c.pattern, err)
			}
			t.Logf("error: %v", err)
		})
	}
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
