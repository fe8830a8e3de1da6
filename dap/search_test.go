package dap

import (
	"path/filepath"
	"testing"

	"github.com/google/go-dap"
)

// TestCFixtureSearches checks what the searches of the session do for the
// server: a conditional breakpoint in both directions, and a data
// breakpoint going forward, which stops before each write in turn.
func TestCFixtureSearches(t *testing.T) {
	dir := buildFixtures(t)
	src, _ := filepath.Abs("testdata/cfix.c")
	call, cw := markLine(t, src, "loop-call"), markLine(t, src, "counter-write")
	c := startServer(t, Config{})
	stop := launchFixture(t, c, filepath.Join(dir, "cfix"), map[string]any{"stopOnEntry": true}, nil)
	tid := stop.Body.ThreadId

	// A conditional breakpoint with a hit count: the third time i is
	// not 0, i == 3.
	setCond := func() {
		c.request("setBreakpoints", map[string]any{"source": map[string]any{"path": src},
			"breakpoints": []map[string]any{{"line": call, "condition": "i", "hitCondition": "3"}}})
		expect[*dap.SetBreakpointsResponse](c)
	}
	setCond()
	if stop = stepAndWait(t, c, "continue", tid, nil); stop.Body.Reason != "breakpoint" {
		t.Fatalf("continue to i == 3 stopped for %q", stop.Body.Reason)
	}
	fr := top(t, c, tid)
	wantFrame(t, fr[0], "main", call)
	if v := locals(t, c, fr[0].Id)["i"]; v.Value != "3" {
		t.Fatalf("at the conditional breakpoint i = %q, want 3; output %s", v.Value, c.output())
	}
	// Backward, the earlier hits are the 4th and 5th (i = 2, 1), then i
	// is 0: none stops.
	if stop = stepAndWait(t, c, "reverseContinue", tid, nil); stop.Body.Reason != "start of recording" {
		t.Fatalf("reverseContinue past false conditions stopped for %q", stop.Body.Reason)
	}
	setCond()
	stepAndWait(t, c, "continue", tid, nil)
	fr = top(t, c, tid)
	if v := locals(t, c, fr[0].Id)["i"]; v.Value != "3" {
		t.Fatalf("at the breakpoint again i = %q, want 3", v.Value)
	}
	setBreakpoints(t, c, src)

	// A data breakpoint on counter, forward: bump(…, 3), then bump(…, 4).
	c.request("dataBreakpointInfo", map[string]any{"name": "counter", "frameId": fr[0].Id})
	info := expect[*dap.DataBreakpointInfoResponse](c)
	if info.Body.DataId == nil {
		t.Fatalf("dataBreakpointInfo(counter): %s", info.Body.Description)
	}
	c.request("setDataBreakpoints", map[string]any{"breakpoints": []map[string]any{{"dataId": info.Body.DataId, "accessType": "write"}}})
	expect[*dap.SetDataBreakpointsResponse](c)
	for _, by := range []string{"3", "4"} {
		if stop = stepAndWait(t, c, "continue", tid, nil); stop.Body.Reason != "data breakpoint" {
			t.Fatalf("continue with a data breakpoint stopped for %q", stop.Body.Reason)
		}
		fr = top(t, c, tid)
		wantFrame(t, fr[0], "bump", cw)
		if v := locals(t, c, fr[0].Id)["by"]; v.Value != by {
			t.Fatalf("write to counter in bump(…, %q), want by = %s", v.Value, by)
		}
	}
	if stop = stepAndWait(t, c, "continue", tid, nil); stop.Body.Reason != "end of recording" {
		t.Fatalf("continue after the last write stopped for %q", stop.Body.Reason)
	}
	c.request("disconnect", nil)
	expect[*dap.DisconnectResponse](c)
}
