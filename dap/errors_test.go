package dap

import (
	"context"
	"testing"
	"ttd/ttd"

	"github.com/google/go-dap"
)

// panicTarget is a Target whose every method panics: the server must turn
// each panic into an ErrorResponse and keep serving.
type panicTarget struct{ Target }

func (panicTarget) Bounds() (uint64, uint64)                 { return 0, 10 }
func (panicTarget) Seek(uint64) error                        { return nil }
func (panicTarget) Position() uint64                         { return 10 }
func (panicTarget) CurrentThread() int                       { return 1 }
func (panicTarget) OSThread(id int) int                      { return id }
func (panicTarget) ThreadLabel(int) string                   { return "" }
func (panicTarget) Close() error                             { return nil }
func (panicTarget) Exit() ttd.ExitInfo                       { return ttd.ExitInfo{Kind: "exited"} }
func (panicTarget) Stack(int, int) ([]ttd.StackFrame, error) { panic("stack exploded") }
func (panicTarget) Search(context.Context, ttd.Direction, ttd.Query) (ttd.SearchStop, error) {
	panic("search exploded")
}

func wantError(t *testing.T, c *client, code int) *dap.ErrorResponse {
	t.Helper()
	m := c.read()
	e, ok := m.(*dap.ErrorResponse)
	if !ok {
		t.Fatalf("want an ErrorResponse, got %T %+v", m, m)
	}
	if e.Body.Error == nil || e.Body.Error.Id != code {
		t.Fatalf("error %+v, want code %d", e.Body.Error, code)
	}
	return e
}

// TestErrors checks that bad requests and panics become ErrorResponses.
func TestServerErrors(t *testing.T) {
	c := startServer(t, Config{Open: func(path string, _ OpenOptions) (Target, error) { return panicTarget{}, nil }})
	// >> initialize, << initialize
	c.request("initialize", map[string]any{"adapterID": "ttd"})
	expect[*dap.InitializeResponse](c)
	// >> stackTrace before launch, << error (not launched)
	c.request("stackTrace", map[string]any{"threadId": 1})
	wantError(t, c, ErrCodeNotLaunched)
	// >> launch without trace or program, << error
	c.request("launch", map[string]any{})
	wantError(t, c, ErrCodeBadArguments)
	// >> launch, << launch, << initialized
	c.request("launch", map[string]any{"trace": "x.ttd"})
	expect[*dap.LaunchResponse](c)
	expect[*dap.InitializedEvent](c)
	// >> stackTrace, << error: the target's panic, reported
	c.request("stackTrace", map[string]any{"threadId": 1})
	if e := wantError(t, c, ErrCodeInternal); e.Message == "" {
		t.Fatal("empty error message")
	}
	// >> continue, << continue, << stopped (pause: the search panicked)
	c.request("continue", map[string]any{"threadId": 1})
	expect[*dap.ContinueResponse](c)
	if st := expect[*dap.StoppedEvent](c); st.Body.Reason != "pause" {
		t.Fatalf("stopped for %q after a panic in a search", st.Body.Reason)
	}
	if out := c.output(); out == "" {
		t.Error("the search's panic was not reported on the console")
	}
	// >> an unknown command, << error, and the server keeps serving
	c.request("stepInTargets", map[string]any{"frameId": 1})
	wantError(t, c, ErrCodeUnsupported)
	c.request("disconnect", nil)
	expect[*dap.DisconnectResponse](c)
}

// TestServerBadTrace checks that a trace that cannot be opened is a
// launch error with the file's name.
func TestServerBadTrace(t *testing.T) {
	c := startServer(t, Config{})
	c.request("initialize", map[string]any{"adapterID": "ttd"})
	expect[*dap.InitializeResponse](c)
	c.request("launch", map[string]any{"trace": "/nonexistent/app.ttd"})
	wantError(t, c, ErrCodeLaunch)
}

func TestHitCondition(t *testing.T) {
	for _, tc := range []struct {
		cond string
		hits int
		want bool
	}{{"", 1, true}, {"3", 2, false}, {"3", 3, true}, {">= 2", 1, false}, {">= 2", 5, true}, {"% 2", 4, true}, {"% 2", 3, false}, {"< 2", 1, true}} {
		if got := hitConditionMet(tc.cond, tc.hits); got != tc.want {
			t.Errorf("hitConditionMet(%q, %d) = %v", tc.cond, tc.hits, got)
		}
	}
}
