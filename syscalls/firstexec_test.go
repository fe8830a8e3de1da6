package syscalls

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ttd/emu"
	"ttd/reader"
	"ttd/recorder"
)

// TestFirstExec: the export's first line is the execve that started the
// recording's first program, as strace prints it: the program as the
// command line named it, argv, and how many variables envp has, from
// the header's envc; without envc (older traces), from the re-simulated
// initial stack when the trace logs no reads, else the pointer alone.
// --pid of another process leaves it out.
func TestFirstExec(t *testing.T) {
	prog := buildC(t, "testdata/brk.c")
	env := []string{"PATH=/usr/bin:/bin", "A=1", "B=2"}
	want := `execve("` + prog + `", ["` + prog + `", "x y"], PTR /* 3 vars */) = 0`
	for _, tc := range []struct {
		name       string
		replayable bool
		dropEnvc   bool
		pid        int
		want       string
	}{
		{"replayable", true, false, 0, want},
		{"predicted", false, false, 0, want},
		{"replayable-no-envc", true, true, 0, want},
		{"predicted-no-envc", false, true, 0, strings.Replace(want, " /* 3 vars */", "", 1)},
		{"other-pid", true, false, -1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.ttd")
			out, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			if _, _, err := recorder.Record(emu.Config{Path: prog, Args: []string{prog, "x y"}, Dir: t.TempDir(), Env: env, Stdout: out, Stderr: out},
				recorder.Options{Path: path, Replayable: tc.replayable}); err != nil {
				t.Fatal(err)
			}
			tr, err := reader.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			if tr.Header.Params["envc"] != "3" {
				t.Fatalf("header envc %q, want 3", tr.Header.Params["envc"])
			}
			if tc.dropEnvc {
				delete(tr.Header.Params, "envc")
			}
			var b strings.Builder
			sink, _ := NewSink("strace", &b)
			pid := tc.pid
			if pid < 0 {
				pid = tr.Processes()[0].Pid + 1
			}
			if _, err := Export(tr, Options{Pid: pid, StrSize: -1}, sink); err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(b.String(), "\n")
			if first = normalise([]byte(first), "", "", "", nil)[0]; tc.want == "" {
				if strings.HasPrefix(first, "execve(") {
					t.Fatalf("--pid %d printed the first program's execve: %s", pid, first)
				}
			} else if first != tc.want {
				t.Fatalf("first line\n%s\nwant\n%s", first, tc.want)
			}
		})
	}
}
