package dap

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-dap"
)

// TestGoProgramInTree: a shell runs the Go fixture. A stop in it is on
// one of its goroutines, whose frames and locals come from the Go
// program's own symbols, and the threads list its goroutines (labelled
// with the process) with the shell's OS thread. Before, the Go state
// was the whole tree's: the goroutines were read from the shell's
// memory and none was listed.
func TestGoProgramInTree(t *testing.T) {
	dir := buildFixtures(t)
	src, _ := filepath.Abs("testdata/gofix/main.go")
	sq, call := markLine(t, src, "square-body"), markLine(t, src, "loop-call")
	c := startServer(t, Config{})
	stop := launchFixture(t, c, "/bin/sh", map[string]any{"stopOnEntry": true, "args": []string{"-c", filepath.Join(dir, "gofix") + "; true"}},
		map[string][]int{src: {sq}})
	stop = stepAndWait(t, c, "continue", stop.Body.ThreadId, nil)
	if stop.Body.Reason != "breakpoint" {
		t.Fatalf("stopped for %q, want the breakpoint in gofix", stop.Body.Reason)
	}
	id := stop.Body.ThreadId
	fr := top(t, c, id)
	wantFrame(t, fr[0], "main.square", sq)
	wantFrame(t, fr[1], "main.main", call)
	if v := locals(t, c, fr[0].Id)["v"]; v.Value != "0" {
		t.Errorf("v = %q, want 0", v.Value)
	}
	c.request("threads", nil)
	ths := expect[*dap.ThreadsResponse](c).Body.Threads
	var names []string
	main, shell := false, false
	for _, th := range ths {
		names = append(names, th.Name)
		if th.Id == id && strings.HasPrefix(th.Name, "gofix[") && strings.Contains(th.Name, "[Go 1] main.square") {
			main = true
		}
		if strings.HasPrefix(th.Name, "sh[") {
			shell = true
		}
	}
	if !main || !shell {
		t.Errorf("threads %q: want gofix's goroutine 1 in main.square (the stopped thread %d) and the shell's thread", names, id)
	}
	c.request("disconnect", nil)
	expect[*dap.DisconnectResponse](c)
}
