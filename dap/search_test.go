package dap

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-dap"
)

// TestCFixtureSearches checks what the searches of the session do for the
// server: a conditional breakpoint in both directions, and a data
// breakpoint going forward, which stops after each write in turn, and
// back, which stops before it.
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
	// As gdb on rr: forward, the stop is just after the write (the pc
	// past the store, the new value in memory, old and new values in the
	// description); reverseContinue right after finds the same write and
	// stops before it (the old value in memory); continue executes it
	// again.
	evalCounter := func(frameID int) string {
		c.request("evaluate", map[string]any{"expression": "counter", "context": "watch", "frameId": frameID})
		return expect[*dap.EvaluateResponse](c).Body.Result
	}
	for _, w := range []struct{ by, old, new string }{{"3", "3", "6"}, {"4", "6", "10"}} {
		if stop = stepAndWait(t, c, "continue", tid, nil); stop.Body.Reason != "data breakpoint" {
			t.Fatalf("continue with a data breakpoint stopped for %q", stop.Body.Reason)
		}
		// The old and new values (the position differs: after, then
		// before the write).
		values := func(d string) string { _, v, _ := strings.Cut(d, "\n"); return v }
		desc := values(stop.Body.Description)
		if !strings.Contains(desc, "Old value = "+w.old+" ") || !strings.Contains(desc, "New value = "+w.new+" ") {
			t.Fatalf("stop description %q: want old value %s, new value %s", desc, w.old, w.new)
		}
		fr = top(t, c, tid)
		wantFrame(t, fr[0], "bump", cw+1)
		if v := locals(t, c, fr[0].Id)["by"]; v.Value != w.by {
			t.Fatalf("write to counter in bump(…, %q), want by = %s", v.Value, w.by)
		}
		if v := evalCounter(fr[0].Id); v != w.new {
			t.Fatalf("after the write counter = %s, want the new value %s", v, w.new)
		}
		if stop = stepAndWait(t, c, "reverseContinue", tid, nil); stop.Body.Reason != "data breakpoint" || values(stop.Body.Description) != desc {
			t.Fatalf("reverseContinue after the stop: %q %q, want the same write (%q)", stop.Body.Reason, stop.Body.Description, desc)
		}
		fr = top(t, c, tid)
		wantFrame(t, fr[0], "bump", cw)
		if v := evalCounter(fr[0].Id); v != w.old {
			t.Fatalf("before the write counter = %s, want the old value %s", v, w.old)
		}
		if stop = stepAndWait(t, c, "continue", tid, nil); stop.Body.Reason != "data breakpoint" || values(stop.Body.Description) != desc {
			t.Fatalf("continue after the reverse stop: %q %q, want the same write", stop.Body.Reason, stop.Body.Description)
		}
	}
	if stop = stepAndWait(t, c, "continue", tid, nil); stop.Body.Reason != "end of recording" {
		t.Fatalf("continue after the last write stopped for %q", stop.Body.Reason)
	}
	c.request("disconnect", nil)
	expect[*dap.DisconnectResponse](c)
}
