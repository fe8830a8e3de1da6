package dap

import (
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-dap"
)

// launchFixture records prog (a fixture) through a "program" launch and
// configures the session; it returns the first stopped event.
func launchFixture(t *testing.T, c *client, prog string, extra map[string]any, bps map[string][]int) *dap.StoppedEvent {
	t.Helper()
	// >> initialize, << initialize
	c.request("initialize", map[string]any{"adapterID": "ttd", "linesStartAt1": true, "columnsStartAt1": true})
	init := expect[*dap.InitializeResponse](c)
	if !init.Body.SupportsStepBack || !init.Body.SupportsDataBreakpoints || !init.Body.SupportsInstructionBreakpoints {
		t.Fatalf("capabilities miss reverse debugging: %+v", init.Body)
	}
	// >> launch, << launch, << initialized
	args := map[string]any{"program": prog}
	for k, v := range extra {
		args[k] = v
	}
	c.request("launch", args)
	expect[*dap.LaunchResponse](c)
	expect[*dap.InitializedEvent](c)
	// >> setBreakpoints, << setBreakpoints (one file at a time)
	for file, lines := range bps {
		setBreakpoints(t, c, file, lines...)
	}
	// >> configurationDone, << configurationDone, << stopped
	c.request("configurationDone", nil)
	expect[*dap.ConfigurationDoneResponse](c)
	return expect[*dap.StoppedEvent](c)
}

func setBreakpoints(t *testing.T, c *client, file string, lines ...int) []dap.Breakpoint {
	t.Helper()
	var bps []map[string]any
	for _, l := range lines {
		bps = append(bps, map[string]any{"line": l})
	}
	c.request("setBreakpoints", map[string]any{"source": map[string]any{"path": file}, "breakpoints": bps})
	r := expect[*dap.SetBreakpointsResponse](c)
	for _, b := range r.Body.Breakpoints {
		if !b.Verified {
			t.Fatalf("breakpoint at %s:%d not verified: %s", file, b.Line, b.Message)
		}
	}
	return r.Body.Breakpoints
}

// top returns the top frames of thread tid.
func top(t *testing.T, c *client, tid int) []dap.StackFrame {
	t.Helper()
	c.request("stackTrace", map[string]any{"threadId": tid, "levels": 20})
	return expect[*dap.StackTraceResponse](c).Body.StackFrames
}

// stepAndWait sends a stepping request and returns the stopped event.
func stepAndWait(t *testing.T, c *client, command string, tid int, extra map[string]any) *dap.StoppedEvent {
	t.Helper()
	args := map[string]any{"threadId": tid}
	for k, v := range extra {
		args[k] = v
	}
	c.request(command, args)
	// << response, << stopped
	if r, ok := c.read().(dap.ResponseMessage); !ok || !r.GetResponse().Success {
		t.Fatalf("%s: want a successful response, got %+v", command, r)
	}
	return expect[*dap.StoppedEvent](c)
}

// locals returns the Locals scope of frame id as name → value.
func locals(t *testing.T, c *client, frameID int) map[string]dap.Variable {
	t.Helper()
	c.request("scopes", map[string]any{"frameId": frameID})
	sc := expect[*dap.ScopesResponse](c)
	c.request("variables", map[string]any{"variablesReference": sc.Body.Scopes[0].VariablesReference})
	vs := expect[*dap.VariablesResponse](c)
	out := map[string]dap.Variable{}
	for _, v := range vs.Body.Variables {
		out[v.Name] = v
	}
	return out
}

func wantFrame(t *testing.T, f dap.StackFrame, name string, line int) {
	t.Helper()
	if !strings.HasPrefix(f.Name, name) || f.Line != line {
		t.Fatalf("frame %q line %d, want %s line %d", f.Name, f.Line, name, line)
	}
}

// TestCFixture drives the server through a C program with every request
// VS Code sends when debugging backwards.
func TestCFixture(t *testing.T) {
	dir := buildFixtures(t)
	src, _ := filepath.Abs("testdata/cfix.c")
	sq, call, bump, cw, after := markLine(t, src, "square-body"), markLine(t, src, "loop-call"), markLine(t, src, "loop-bump"), markLine(t, src, "counter-write"), markLine(t, src, "after-loop")
	c := startServer(t, Config{})

	// Start at the beginning, breakpoint in square.
	stop := launchFixture(t, c, filepath.Join(dir, "cfix"), map[string]any{"stopOnEntry": true}, map[string][]int{src: {sq}})
	if stop.Body.Reason != "entry" {
		t.Fatalf("first stop %q, want entry", stop.Body.Reason)
	}
	if !strings.Contains(c.output(), "total=30") {
		t.Errorf("the program's output did not reach the console: %q", c.output())
	}
	tid := stop.Body.ThreadId

	// >> continue, << continue, << stopped (breakpoint in square, v == 0)
	stop = stepAndWait(t, c, "continue", tid, nil)
	if stop.Body.Reason != "breakpoint" {
		t.Fatalf("stop %q, want breakpoint", stop.Body.Reason)
	}
	fr := top(t, c, tid)
	wantFrame(t, fr[0], "square", sq)
	wantFrame(t, fr[1], "main", call)
	if v := locals(t, c, fr[0].Id)["v"]; v.Value != "0" || v.Type != "int" {
		t.Fatalf("v = %q (%s), want 0 (int)", v.Value, v.Type)
	}
	// Second hit: v == 1.
	stepAndWait(t, c, "continue", tid, nil)
	fr = top(t, c, tid)
	if v := locals(t, c, fr[0].Id)["v"]; v.Value != "1" {
		t.Fatalf("second hit: v = %q, want 1", v.Value)
	}
	// >> next: the return line; stepOut: back in main on the call line.
	stepAndWait(t, c, "next", tid, nil)
	wantFrame(t, top(t, c, tid)[0], "square", sq+1)
	stepAndWait(t, c, "stepOut", tid, nil)
	wantFrame(t, top(t, c, tid)[0], "main", call)
	// >> next to the bump line, stepIn into bump.
	stepAndWait(t, c, "next", tid, nil)
	wantFrame(t, top(t, c, tid)[0], "main", bump)
	stepAndWait(t, c, "stepIn", tid, nil)
	fr = top(t, c, tid)
	if !strings.HasPrefix(fr[0].Name, "bump") {
		t.Fatalf("stepIn: in %s, want bump", fr[0].Name)
	}
	// >> stepBack: back in main, on the bump line's call.
	stop = stepAndWait(t, c, "stepBack", tid, nil)
	wantFrame(t, top(t, c, tid)[0], "main", bump)
	stepAndWait(t, c, "stepBack", tid, nil)
	wantFrame(t, top(t, c, tid)[0], "main", call)
	// >> reverseContinue: back to square's breakpoint (v == 1 again).
	stop = stepAndWait(t, c, "reverseContinue", tid, nil)
	if stop.Body.Reason != "breakpoint" {
		t.Fatalf("reverseContinue stopped for %q, want breakpoint", stop.Body.Reason)
	}
	fr = top(t, c, tid)
	wantFrame(t, fr[0], "square", sq)
	if v := locals(t, c, fr[0].Id)["v"]; v.Value != "1" {
		t.Fatalf("after reverseContinue v = %q, want 1", v.Value)
	}
	// Instruction step backward and forward.
	pc0 := fr[0].InstructionPointerReference
	stepAndWait(t, c, "stepBack", tid, map[string]any{"granularity": "instruction"})
	if pc := top(t, c, tid)[0].InstructionPointerReference; pc == pc0 {
		t.Fatalf("instruction stepBack did not move from %s", pc0)
	}
	stepAndWait(t, c, "next", tid, map[string]any{"granularity": "instruction"})
	if pc := top(t, c, tid)[0].InstructionPointerReference; pc != pc0 {
		t.Fatalf("instruction step forward: at %s, want %s", pc, pc0)
	}

	// Data breakpoint on the global counter, found in reverse from the
	// end of the loop: the last write is in bump.
	setBreakpoints(t, c, src)
	setBreakpoints(t, c, src, after)
	stepAndWait(t, c, "continue", tid, nil)
	wantFrame(t, top(t, c, tid)[0], "main", after)
	c.request("dataBreakpointInfo", map[string]any{"name": "counter"})
	info := expect[*dap.DataBreakpointInfoResponse](c)
	if info.Body.DataId == nil {
		t.Fatalf("dataBreakpointInfo(counter): %s", info.Body.Description)
	}
	c.request("setDataBreakpoints", map[string]any{"breakpoints": []map[string]any{{"dataId": info.Body.DataId, "accessType": "write"}}})
	if r := expect[*dap.SetDataBreakpointsResponse](c); !r.Body.Breakpoints[0].Verified {
		t.Fatalf("data breakpoint not verified: %s", r.Body.Breakpoints[0].Message)
	}
	stop = stepAndWait(t, c, "reverseContinue", tid, nil)
	if stop.Body.Reason != "data breakpoint" {
		t.Fatalf("reverseContinue with a data breakpoint stopped for %q", stop.Body.Reason)
	}
	fr = top(t, c, tid)
	wantFrame(t, fr[0], "bump", cw)
	if v := locals(t, c, fr[0].Id)["by"]; v.Value != "4" {
		t.Fatalf("the last write to counter is bump(…, 4); by = %q", v.Value)
	}
	c.request("setDataBreakpoints", map[string]any{"breakpoints": []any{}})
	expect[*dap.SetDataBreakpointsResponse](c)

	// The origin of counter's value here: the last write is bump's
	// "counter += by", which computes it.
	c.request("evaluate", map[string]any{"expression": "origin counter 4", "context": "repl", "frameId": fr[0].Id})
	if r := expect[*dap.EvaluateResponse](c); !strings.Contains(r.Body.Result, "#0 position ") || !strings.Contains(r.Body.Result, "computed") {
		t.Fatalf("origin counter: %q", r.Body.Result)
	}

	// readMemory of the stack pointer's region and disassemble at pc.
	c.request("evaluate", map[string]any{"expression": "counter", "context": "watch", "frameId": fr[0].Id})
	ev := expect[*dap.EvaluateResponse](c)
	c.request("readMemory", map[string]any{"memoryReference": ev.Body.MemoryReference, "count": 4})
	mem := expect[*dap.ReadMemoryResponse](c)
	b, _ := base64.StdEncoding.DecodeString(mem.Body.Data)
	if len(b) != 4 || b[0] != 6 {
		// Before the last write, counter is 0+1+2+3 = 6.
		t.Fatalf("readMemory(counter) = %v (unreadable %d), want 6", b, mem.Body.UnreadableBytes)
	}
	c.request("disassemble", map[string]any{"memoryReference": fr[0].InstructionPointerReference, "instructionCount": 5, "instructionOffset": -2})
	dis := expect[*dap.DisassembleResponse](c)
	if len(dis.Body.Instructions) != 5 || dis.Body.Instructions[2].Address != fr[0].InstructionPointerReference || dis.Body.Instructions[2].Instruction == "" {
		t.Fatalf("disassemble: %+v", dis.Body.Instructions)
	}

	// No breakpoints: reverseContinue reaches the start and says so.
	setBreakpoints(t, c, src)
	stop = stepAndWait(t, c, "reverseContinue", tid, nil)
	if stop.Body.Reason != "start of recording" {
		t.Fatalf("reverseContinue without breakpoints stopped for %q", stop.Body.Reason)
	}
	c.request("evaluate", map[string]any{"expression": "pos", "context": "repl"})
	if r := expect[*dap.EvaluateResponse](c); !strings.HasPrefix(r.Body.Result, "position 0 ") {
		t.Fatalf("pos at the start: %q", r.Body.Result)
	}
	// >> disconnect, << disconnect
	c.request("disconnect", nil)
	expect[*dap.DisconnectResponse](c)
}
