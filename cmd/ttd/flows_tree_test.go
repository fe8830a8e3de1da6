package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPipelineFlowsAndCalls records a shell pipeline, three processes
// bash forks and that exec seq, sort and head: the flow that starts
// where sort reads seq's numbers crosses all three (and bash, which
// waits for them); the DOT graph has a node per process and the pipe
// messages, forks and waits as edges; 'ttd calls --pid' shows sort's
// tree before its exec continuing bash's call path, and after it with
// the symbols of sort's own libraries.
func TestPipelineFlowsAndCalls(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "pipe.ttd")
	if out, errs, st := ttdCmd(t, "record", "-o", trace, "--", "/bin/bash", "-c", "seq 1000 | sort -r | head -3"); st != 0 || !strings.Contains(out, "999\n998\n997\n") {
		t.Fatalf("record: status %d %s\n%s", st, errs, out)
	}
	out, errs, st := ttdCmd(t, "calls", "--json", "--depth", "40", trace)
	if st != 0 {
		t.Fatalf("calls: %s", errs)
	}
	var cj struct {
		Views []struct {
			Tid, Pid, Exec int
			Process        string
			Paths          []struct {
				Path  []string
				Count uint64
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &cj); err != nil {
		t.Fatal(err)
	}
	pids := map[string]int{}
	for _, v := range cj.Views {
		if v.Process != "" {
			pids[v.Process] = v.Pid
		}
	}
	for _, name := range []string{"bash", "bash/seq", "bash/sort", "bash/head"} {
		if pids[name] == 0 {
			t.Fatalf("no process %s in calls --json: %v", name, pids)
		}
	}
	dot := filepath.Join(dir, "g.dot")
	out, errs, st = ttdCmd(t, "flows", "--json", "--dot", dot, trace)
	if st != 0 {
		t.Fatalf("flows: %s", errs)
	}
	var fj struct {
		Flows []struct {
			ID        int
			Trigger   string
			StartTid  int `json:"start_tid"`
			Processes []int
		}
	}
	if err := json.Unmarshal([]byte(out), &fj); err != nil {
		t.Fatal(err)
	}
	crossed := false
	for _, f := range fj.Flows {
		in := map[int]bool{}
		for _, p := range f.Processes {
			in[p] = true
		}
		// bash waits for the three: their flow goes on in it.
		if f.StartTid == pids["bash/sort"] && strings.HasPrefix(f.Trigger, "read(fd 0") && in[pids["bash/seq"]] && in[pids["bash/head"]] && in[pids["bash"]] {
			crossed = true
		}
	}
	if !crossed {
		t.Errorf("no flow starting at sort's read crosses seq, sort and head (%v):\n%s", pids, out)
	}
	b, err := os.ReadFile(dot)
	if err != nil {
		t.Fatal(err)
	}
	nodes := regexp.MustCompile(`(?m)^  p(\d+) \[label="process (\d+) `).FindAllStringSubmatch(string(b), -1)
	if len(nodes) != 4 {
		t.Errorf("%d process nodes, want 4:\n%s", len(nodes), b)
	}
	edge := func(from, to, label string) {
		t.Helper()
		re := fmt.Sprintf(`(?m)^  p%d -> p%d \[(style=dashed, )?label="%s"\];$`, pids[from], pids[to], regexp.QuoteMeta(label))
		if !regexp.MustCompile(re).Match(b) {
			t.Errorf("no edge %s → %s %q in:\n%s", from, to, label, b)
		}
	}
	// seq 1000 prints 3893 bytes; sort -r passes them all on.
	edge("bash/seq", "bash/sort", "1 messages, 3893 bytes")
	edge("bash/sort", "bash/head", "1 messages, 3893 bytes")
	for _, c := range []string{"bash/seq", "bash/sort", "bash/head"} {
		edge("bash", c, "fork 1")
		edge(c, "bash", "wait 1")
	}
	// sort before its exec: bash's path down to the fork; after: sort's
	// own start-up, named with the libraries it mapped.
	var before, after bool
	for _, v := range cj.Views {
		if v.Pid != pids["bash/sort"] {
			continue
		}
		for _, p := range v.Paths {
			s := strings.Join(p.Path, " ")
			if v.Exec == 0 && strings.Contains(s, " main ") && strings.Contains(s, "make_child") && strings.HasSuffix(s, "_Fork") {
				before = true
			}
			if v.Exec == 1 && strings.HasSuffix(s, "__libc_start_main_impl __libc_start_call_main") && p.Count == 1 {
				after = true
			}
		}
	}
	if !before || !after {
		t.Errorf("calls of sort: before its exec continuing bash's path %v, after it named %v", before, after)
	}
	text, _, st := ttdCmd(t, "calls", "--pid", fmt.Sprint(pids["bash/head"]), "--depth", "2", trace)
	if st != 0 || !strings.Contains(text, fmt.Sprintf("thread %d (process %d, bash/head, after exec 1):", pids["bash/head"], pids["bash/head"])) ||
		strings.Contains(text, fmt.Sprintf("thread %d ", pids["bash/sort"])) {
		t.Errorf("calls --pid head:\n%s", text)
	}
	text, _, st = ttdCmd(t, "calls", "--tid", fmt.Sprint(pids["bash/seq"]), "--depth", "1", trace)
	if st != 0 || strings.Count(text, "thread ") != 2 || !strings.Contains(text, "bash/seq, after exec 1") {
		t.Errorf("calls --tid seq (its trees before and after exec):\n%s", text)
	}
	_, errs, st = ttdCmd(t, "calls", "--pid", "1", trace)
	if st != 1 || !strings.Contains(errs, "its processes: ") {
		t.Errorf("calls --pid 1: status %d %q", st, errs)
	}
}

// TestDiffProcessTrees: two runs of a server forking a worker per
// request, the fifth going wrong in the second: ttd diff matches
// processes by their programs and fork order (pids differ) and ranks
// the bad worker's slow path, with positions in both recordings.
func TestDiffProcessTrees(t *testing.T) {
	src, err := os.ReadFile("../../flows/testdata/forkserver.c")
	if err != nil {
		t.Fatal(err)
	}
	exe := buildC(t, string(src), "-g", "-I"+flowsTestdata(t))
	bad, good := recordWith(t, exe, "5"), recordWith(t, exe)
	out, errs, st := ttdCmd(t, "diff", "--json", bad, good)
	if st != 0 {
		t.Fatalf("diff: %s", errs)
	}
	var res struct {
		Rows []struct {
			Side   string
			Prefix []struct{ Func string }
			Last   []struct{ Func string }
			PosA   uint64 `json:"pos_a"`
			PosB   uint64 `json:"pos_b"`
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range res.Rows {
		if r.Side == "a" && len(r.Prefix) > 0 && regexp.MustCompile(`^\[process (\w+)/(\w+)#6\]$`).MatchString(r.Prefix[0].Func) &&
			len(r.Last) == 1 && r.Last[0].Func == "slow_recover" && r.PosA > 0 && r.PosB > 0 {
			found = true
		}
		for _, s := range r.Prefix {
			if regexp.MustCompile(`\d{3,}`).MatchString(s.Func) && strings.HasPrefix(s.Func, "[process") {
				t.Errorf("a process known by its pid: %s", s.Func)
			}
		}
	}
	t.Run("progress on a terminal only", func(t *testing.T) { progressOnTerminalOnly(t, bad) })
	if !found {
		t.Errorf("no row for worker 5's slow_recover (process NAME/NAME#6: the fifth worker after the client):\n%s", out)
	}
}

// progressOnTerminalOnly: ttd calls draws its progress bar when stderr
// is a terminal (script(1) gives it one) and writes nothing to a pipe.
func progressOnTerminalOnly(t *testing.T, trace string) {
	_, errs, st := ttdCmd(t, "calls", "--jobs", "1", trace)
	if st != 0 || errs != "" {
		t.Errorf("calls with stderr a pipe: status %d, stderr %q", st, errs)
	}
	script, err := exec.LookPath("script")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("script(1) not installed (util-linux)")
		}
		t.Skip("script(1) not installed: SKIPPING the terminal half")
	}
	out, err := exec.Command(script, "-qec", ttdBinary+" calls --jobs 1 "+trace+" >/dev/null", "/dev/null").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "calls "+trace) || !strings.Contains(string(out), "segments") {
		t.Errorf("calls on a terminal drew no bar: %v %q", err, out)
	}
}

// flowsTestdata is the folder of the flows test programs and the header
// they share (work.h), for gcc's -I.
func flowsTestdata(t *testing.T) string {
	dir, err := filepath.Abs("../../flows/testdata")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
