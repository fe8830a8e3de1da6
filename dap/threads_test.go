package dap

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-dap"
)

// TestCThreads: a multi-threaded C program. Breakpoints in the threads'
// function stop each thread; thread-local and _Atomic variables show
// their values; steps in both directions, by line and by instruction,
// stay on the thread they were asked for.
func TestCThreads(t *testing.T) {
	dir := buildFixtures(t)
	src, _ := filepath.Abs("../ttd/testdata/threads.c")
	body, ret := markLine(t, src, "worker-body"), markLine(t, src, "worker-return")
	c := startServer(t, Config{})
	// >> launch (record and debug) stopped on entry, breakpoint in
	// worker; continue: << stopped in each thread.
	stop := launchFixture(t, c, filepath.Join(dir, "cthreads"), map[string]any{"stopOnEntry": true}, map[string][]int{src: {body}})
	seen := map[int]bool{}
	var third int
	for i := 0; i < 3; i++ {
		stop = stepAndWait(t, c, "continue", stop.Body.ThreadId, nil)
		if stop.Body.Reason != "breakpoint" {
			t.Fatalf("stop %d: %q, want breakpoint", i, stop.Body.Reason)
		}
		tid := stop.Body.ThreadId
		if seen[tid] {
			t.Fatalf("thread %d stopped twice in worker", tid)
		}
		seen[tid] = true
		fr := top(t, c, tid)
		wantFrame(t, fr[0], "worker", body)
		third = tid
	}
	eval := func(expr string, tid int) string { t.Helper(); return evalTop(t, c, expr, tid) }
	// The third thread starts when the others are done (1000 rounds
	// each); its own mine is 0.
	if got := eval("arg", third); got != "0x2" {
		t.Fatalf("arg = %q, want 0x2", got)
	}
	if got := eval("total", third); got != "2000" {
		t.Errorf("total (_Atomic) = %q, want 2000", got)
	}
	if got := eval("mine", third); got != "0" {
		t.Errorf("mine (__thread) = %q, want 0", got)
	}
	// Over work(id): its thousand rounds.
	stepAndWait(t, c, "next", third, nil)
	if stop = stepAndWait(t, c, "next", third, nil); stop.Body.ThreadId != third {
		t.Fatalf("next stopped on thread %d, want %d", stop.Body.ThreadId, third)
	}
	wantFrame(t, top(t, c, third)[0], "worker", ret)
	if got := eval("mine", third); got != "2000" {
		t.Errorf("mine after work(2) = %q, want 2000", got)
	}
	if got := eval("total", third); got != "3000" {
		t.Errorf("total after work(2) = %q, want 3000", got)
	}
	// Backwards: lines, then instructions, all on the third thread.
	for i, want := range []int{ret - 1, body} {
		stop = stepAndWait(t, c, "stepBack", third, nil)
		if stop.Body.ThreadId != third {
			t.Fatalf("stepBack %d stopped on thread %d, want %d", i, stop.Body.ThreadId, third)
		}
		wantFrame(t, top(t, c, third)[0], "worker", want)
	}
	for i := 0; i < 3; i++ {
		stop = stepAndWait(t, c, "stepBack", third, map[string]any{"granularity": "instruction"})
		if stop.Body.ThreadId != third {
			t.Fatalf("instruction stepBack %d stopped on thread %d, want %d", i, stop.Body.ThreadId, third)
		}
	}
	for i := 0; i < 3; i++ {
		stop = stepAndWait(t, c, "next", third, map[string]any{"granularity": "instruction"})
		if stop.Body.ThreadId != third {
			t.Fatalf("instruction next %d stopped on thread %d, want %d", i, stop.Body.ThreadId, third)
		}
	}
	wantFrame(t, top(t, c, third)[0], "worker", body)
}

// TestProcessTree: a recording of a parent and its forked child, which
// starts a thread. The threads list shows every process's threads as
// "PROGRAM[PID] tid TID", the stopped event names the process, and a
// global evaluates in the memory of the thread's own process (the child
// wrote 20 into its copy, the parent's holds 10).
func TestProcessTree(t *testing.T) {
	dir := buildFixtures(t)
	src, _ := filepath.Abs("../ttd/testdata/forktree.c")
	c := startServer(t, Config{})
	// >> launch, breakpoint in mark; continue until mark(30), in the
	// child's second thread.
	stop := launchFixture(t, c, filepath.Join(dir, "forktree"), map[string]any{"stopOnEntry": true}, map[string][]int{src: {markLine(t, src, "mark-body")}})
	eval := func(expr string, tid int) string { t.Helper(); return evalTop(t, c, expr, tid) }
	for i := 0; ; i++ {
		stop = stepAndWait(t, c, "continue", stop.Body.ThreadId, nil)
		if stop.Body.Reason != "breakpoint" {
			t.Fatalf("stop %d: %q, want breakpoint", i, stop.Body.Reason)
		}
		if eval("v", stop.Body.ThreadId) == "30" {
			break
		}
		if i == 3 {
			t.Fatal("mark(30) never ran")
		}
	}
	tid := stop.Body.ThreadId
	// << threads: the parent's one thread, the child's two.
	c.request("threads", nil)
	r, ok := c.read().(*dap.ThreadsResponse)
	if !ok || !r.Success {
		t.Fatalf("threads: %+v", r)
	}
	name := regexp.MustCompile(`^forktree\[(\d+)\] tid (\d+)$`)
	perPid := map[string][]int{}
	childPid := ""
	for _, th := range r.Body.Threads {
		m := name.FindStringSubmatch(th.Name)
		if m == nil || m[2] != strconv.Itoa(th.Id) {
			t.Fatalf("thread %d is named %q", th.Id, th.Name)
		}
		perPid[m[1]] = append(perPid[m[1]], th.Id)
		if th.Id == tid {
			childPid = m[1]
		}
	}
	if len(perPid) != 2 || len(perPid[childPid]) != 2 {
		t.Fatalf("threads by process: %v (the child, %s, has two)", perPid, childPid)
	}
	if want := fmt.Sprintf("in forktree[%s] tid %d", childPid, tid); !strings.Contains(stop.Body.Description, want) {
		t.Errorf("stopped event %q does not say %q", stop.Body.Description, want)
	}
	if got := eval("who", tid); got != "20" {
		t.Errorf("who in the child = %s, want 20", got)
	}
	for pid, tids := range perPid {
		if pid != childPid {
			if got := eval("who", tids[0]); got != "10" {
				t.Errorf("who in the parent = %s, want 10", got)
			}
		}
	}
}

// TestLibraryTLS: __thread variables of a shared library evaluate in
// each thread (through its dynamic thread vector), as do the program's.
func TestLibraryTLS(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	src := func(n string) string { p, _ := filepath.Abs(filepath.Join("..", "ttd", "testdata", n)); return p }
	lib, prog := filepath.Join(dir, "libttdtls.so"), filepath.Join(dir, "tlsmain")
	for _, args := range [][]string{
		{"-O0", "-g", "-shared", "-fPIC", "-o", lib, src("tlslib.c")},
		{"-O0", "-g", "-pthread", "-o", prog, src("tlsmain.c"), "-L" + dir, "-lttdtls", "-Wl,-rpath," + dir},
	} {
		if b, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", args, err, b)
		}
	}
	c := startServer(t, Config{})
	stop := launchFixture(t, c, prog, map[string]any{"stopOnEntry": true}, map[string][]int{src("tlsmain.c"): {markLine(t, src("tlsmain.c"), "done")}})
	for i := 0; i < 2; i++ {
		stop = stepAndWait(t, c, "continue", stop.Body.ThreadId, nil)
		tid := stop.Body.ThreadId
		eval := func(expr string) string { t.Helper(); return evalTop(t, c, expr, tid) }
		id := eval("id")
		want := map[string][3]string{"1": {"110", "8", `"lib1`}, "2": {"120", "9", `"lib2`}}[id]
		if want[0] == "" {
			t.Fatalf("stop %d: id = %s", i, id)
		}
		if got := eval("libcount"); got != want[0] {
			t.Errorf("thread %s: libcount (the library's __thread) = %s, want %s", id, got, want[0])
		}
		if got := eval("mine"); got != want[1] {
			t.Errorf("thread %s: mine (the program's __thread) = %s, want %s", id, got, want[1])
		}
		if got := eval("libname"); !strings.HasPrefix(got, want[2]) {
			t.Errorf("thread %s: libname = %s, want %s", id, got, want[2])
		}
	}
}

// evalTop evaluates expr in the top frame of thread tid (the debug
// console's watch context).
func evalTop(t *testing.T, c *client, expr string, tid int) string {
	t.Helper()
	fr := top(t, c, tid)
	c.request("evaluate", map[string]any{"expression": expr, "context": "watch", "frameId": fr[0].Id})
	r, ok := c.read().(*dap.EvaluateResponse)
	if !ok || !r.Success {
		t.Fatalf("evaluate %s in thread %d: %+v", expr, tid, r)
	}
	return r.Body.Result
}

// TestBreakpointAfterExec: a breakpoint in a program that a shell's
// child execs (sh -c 'forktree; true': fork, then exec) binds to that
// program's code and stops there, in the exec'd process, naming it,
// although the session's focus (the shell) never runs that code (the
// index's code summaries of every process are asked, Index.mayExec).
func TestBreakpointAfterExec(t *testing.T) {
	dir := buildFixtures(t)
	src, _ := filepath.Abs("../ttd/testdata/forktree.c")
	c := startServer(t, Config{})
	stop := launchFixture(t, c, "/bin/sh", map[string]any{"stopOnEntry": true, "args": []string{"-c", filepath.Join(dir, "forktree") + "; true"}},
		map[string][]int{src: {markLine(t, src, "mark-body")}})
	stop = stepAndWait(t, c, "continue", stop.Body.ThreadId, nil)
	if stop.Body.Reason != "breakpoint" {
		t.Fatalf("stopped for %q, want the breakpoint in the exec'd forktree", stop.Body.Reason)
	}
	if !strings.Contains(stop.Body.Description, "forktree[") {
		t.Errorf("stopped event %q does not name the exec'd process", stop.Body.Description)
	}
	// Frames and variables from forktree's own symbols: the shell's and
	// forktree's PIE images sit at the same address (one table of the
	// whole tree named them from the shell's).
	fr := top(t, c, stop.Body.ThreadId)
	wantFrame(t, fr[0], "mark", markLine(t, src, "mark-body"))
	if len(fr) < 2 || !strings.HasPrefix(fr[1].Name, "main") || fr[0].Source == nil || filepath.Base(fr[0].Source.Path) != "forktree.c" {
		t.Errorf("stack in the exec'd program: %+v", fr)
	}
	if v, ok := locals(t, c, fr[0].Id)["v"]; !ok || v.Value != "10" {
		t.Errorf("mark's v = %+v, want 10", v)
	}
	// A step by line there stays in forktree's lines.
	stop = stepAndWait(t, c, "next", stop.Body.ThreadId, nil)
	if fr := top(t, c, stop.Body.ThreadId); !strings.HasPrefix(fr[0].Name, "mark") && !strings.HasPrefix(fr[0].Name, "main") {
		t.Errorf("next from mark stopped in %q", fr[0].Name)
	}
}
