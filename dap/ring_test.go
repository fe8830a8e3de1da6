package dap

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-dap"

	"ttd/emu"
	"ttd/recorder"
	"ttd/ttd"
)

// TestRingWindowSession debugs a ring-buffer trace (ttd record --ring):
// the session starts at the window's first position, runs to the end,
// and a reverseContinue stops at the window's start, saying so.
func TestRingWindowSession(t *testing.T) {
	prog := filepath.Join(buildFixtures(t), "cfix")
	path := filepath.Join(t.TempDir(), "ring.ttd")
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	_, _, err = recorder.Record(emu.Config{Path: prog, Args: []string{prog}, Env: []string{"PATH=/usr/bin:/bin"}, Stdout: null, Stderr: null},
		recorder.Options{Path: path, CheckpointEvery: 5_000, Ring: 40 << 10, ChunkSize: 2 << 10})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ttd.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	start := s.Start()
	s.Close()
	if start == 0 {
		t.Fatal("the ring kept the whole recording: the test wants a window")
	}
	c := startServer(t, Config{})
	// >> initialize, launch {trace}, configurationDone; << stopped
	c.request("initialize", map[string]any{"adapterID": "ttd"})
	expect[*dap.InitializeResponse](c)
	c.request("launch", map[string]any{"trace": path})
	expect[*dap.LaunchResponse](c)
	expect[*dap.InitializedEvent](c)
	c.request("configurationDone", nil)
	expect[*dap.ConfigurationDoneResponse](c)
	tid := expect[*dap.StoppedEvent](c).Body.ThreadId
	if stop := stepAndWait(t, c, "continue", tid, nil); stop.Body.Reason == "start of recording" {
		t.Fatalf("continue from the window's start: %+v", stop.Body)
	}
	stop := stepAndWait(t, c, "reverseContinue", tid, nil)
	if stop.Body.Reason != "start of recording" || !strings.Contains(stop.Body.Description, fmt.Sprintf("position %d", start)) {
		t.Fatalf("reverseContinue in a window: %q %q, want the start of the window at %d", stop.Body.Reason, stop.Body.Description, start)
	}
}
