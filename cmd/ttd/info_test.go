package main

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestInfoProcesses records a shell that execs another program and
// checks the process tree ttd info shows, as text and as JSON: one
// process, whose argv is the exec'd program's, ended with its status at
// the end of the recording.
func TestInfoProcesses(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "e.ttd")
	if _, errOut, st := ttdCmd(t, "record", "-o", trace, "--", "/bin/sh", "-c", "exec /bin/echo hi there"); st != 0 {
		t.Fatalf("ttd record: status %d\n%s", st, errOut)
	}
	out, errOut, st := ttdCmd(t, "info", "--json", trace)
	if st != 0 {
		t.Fatalf("ttd info --json: status %d\n%s", st, errOut)
	}
	var rep struct {
		Instructions uint64 `json:"instructions"`
		Threads      int    `json:"threads"`
		Ended        struct {
			How  string `json:"how"`
			Code int    `json:"code"`
		} `json:"ended"`
		Processes []struct {
			Pid, Ppid  int
			Argv       []string
			Start, End uint64
			Exit       *struct {
				How  string
				Code int
			}
		} `json:"processes"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("ttd info --json: %v\n%s", err, out)
	}
	if rep.Instructions == 0 || rep.Threads != 1 || rep.Ended.How != "exited" {
		t.Errorf("summary fields: %+v", rep)
	}
	if len(rep.Processes) != 1 {
		t.Fatalf("%d processes, want 1:\n%s", len(rep.Processes), out)
	}
	p := rep.Processes[0]
	if p.Pid <= 0 || p.Ppid <= 0 || p.Start != 0 || p.End != rep.Instructions {
		t.Errorf("process %+v: want a pid, a parent, start 0 and end %d", p, rep.Instructions)
	}
	if want := []string{"/bin/echo", "hi", "there"}; !reflect.DeepEqual(p.Argv, want) {
		t.Errorf("argv %q, want the exec'd program's %q", p.Argv, want)
	}
	if p.Exit == nil || p.Exit.How != "exited" || p.Exit.Code != 0 {
		t.Errorf("exit %+v, want exited 0", p.Exit)
	}
	text, _, st := ttdCmd(t, "info", trace)
	if st != 0 || !strings.Contains(text, "processes:      1\n") || !strings.Contains(text, "exited with code 0  /bin/echo hi there") {
		t.Errorf("ttd info does not show the process tree:\n%s", text)
	}
}
