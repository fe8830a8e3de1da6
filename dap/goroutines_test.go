package dap

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-dap"
)

// TestGoFixtureGoroutines: for a Go program the threads are goroutines,
// as delve shows them, each with its own stack.
func TestGoFixtureGoroutines(t *testing.T) {
	dir := buildFixtures(t)
	src, _ := filepath.Abs("testdata/gofix/main.go")
	sq, call, after := markLine(t, src, "square-body"), markLine(t, src, "loop-call"), markLine(t, src, "after-loop")
	c := startServer(t, Config{})

	stop := launchFixture(t, c, filepath.Join(dir, "gofix"), map[string]any{"stopOnEntry": true}, map[string][]int{src: {sq}})
	if stop.Body.Reason != "entry" {
		t.Fatalf("first stop %q, want entry", stop.Body.Reason)
	}
	// In square: the stop is on goroutine 1, whose stack is main's.
	stop = stepAndWait(t, c, "continue", stop.Body.ThreadId, nil)
	if stop.Body.Reason != "breakpoint" || stop.Body.ThreadId != 1 {
		t.Fatalf("stop %q on thread %d, want breakpoint on goroutine 1", stop.Body.Reason, stop.Body.ThreadId)
	}
	fr := top(t, c, 1)
	wantFrame(t, fr[0], "main.square", sq)
	wantFrame(t, fr[1], "main.main", call)
	if v := locals(t, c, fr[0].Id)["v"]; v.Value != "0" {
		t.Fatalf("v = %q, want 0", v.Value)
	}

	// Steps name the goroutine.
	if stop = stepAndWait(t, c, "next", 1, nil); stop.Body.ThreadId != 1 {
		t.Fatalf("next stopped on thread %d, want goroutine 1", stop.Body.ThreadId)
	}
	wantFrame(t, top(t, c, 1)[0], "main.square", sq+1)

	setBreakpoints(t, c, src, after)
	stop = stepAndWait(t, c, "continue", 1, nil)
	if stop.Body.ThreadId != 1 {
		t.Fatalf("stopped on thread %d, want goroutine 1", stop.Body.ThreadId)
	}
	c.request("threads", nil)
	ths := expect[*dap.ThreadsResponse](c).Body.Threads
	var names []string
	main, parked := false, 0
	for _, th := range ths {
		names = append(names, th.Name)
		if th.Id == 1 && strings.HasPrefix(th.Name, "[Go 1] main.main") {
			main = true
		} else if strings.HasPrefix(th.Name, "[Go ") && !strings.Contains(th.Name, "(Thread ") && parked == 0 {
			parked = th.Id
		}
	}
	if !main || parked == 0 {
		t.Fatalf("threads %q: want [Go 1] main.main and a parked goroutine", names)
	}
	wantFrame(t, top(t, c, 1)[0], "main.main", after)
	// A parked goroutine unwinds from its saved registers.
	fr = top(t, c, parked)
	var fns []string
	for _, f := range fr {
		fns = append(fns, f.Name)
		if f.Name == "" || strings.HasPrefix(f.Name, "??") {
			t.Fatalf("goroutine %d: frame without a name in %q", parked, fns)
		}
	}
	if len(fr) < 2 || !strings.HasPrefix(fr[0].Name, "runtime.") {
		t.Fatalf("goroutine %d: stack %q, want runtime frames", parked, fns)
	}
	t.Logf("threads %q; goroutine %d: %q", names, parked, fns)
	// Its frames have scopes.
	c.request("scopes", map[string]any{"frameId": fr[0].Id})
	expect[*dap.ScopesResponse](c)

	c.request("disconnect", nil)
	expect[*dap.DisconnectResponse](c)
}
