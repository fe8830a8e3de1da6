package dap

import (
	"path/filepath"
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
	eval := func(expr string, tid int) string {
		t.Helper()
		fr := top(t, c, tid)
		c.request("evaluate", map[string]any{"expression": expr, "context": "watch", "frameId": fr[0].Id})
		r, ok := c.read().(*dap.EvaluateResponse)
		if !ok || !r.Success {
			t.Fatalf("evaluate %s: %+v", expr, r)
		}
		return r.Body.Result
	}
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
