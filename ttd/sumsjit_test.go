package ttd

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"testing"

	"ttd/reader"
	"ttd/recorder"
	"ttd/tracefile"
	"ttd/x86"
)

// TestSummariesMatchInterpreter: the access summaries of a trace that
// logs no reads (TRACE.sums), built with translated code that marks the
// accesses in place (reader.Replay.AccessMarks) or logs them all, are
// byte for byte those the interpreted tracker builds, on programs that
// fork (a tree, whose summaries follow each process), vfork (two
// processes in one memory: both trackers take every access, none is
// marked in place), unmap and map again, run threads, and load and
// store across lines and pages by every amount. Every block is translated at once (threshold 0).
func TestSummariesMatchInterpreter(t *testing.T) {
	progs := []string{"forktree", "linecross", "../../testdata/corpus/proc_exec", "remap", "threads", "forkwrites"}
	if testing.Short() {
		progs = progs[:3]
	}
	on, th := x86.SetJIT(true, 0)
	defer x86.SetJIT(on, th)
	defer reader.SetAccessLog(reader.SetAccessLog(""))
	for _, name := range progs {
		t.Run(filepath.Base(name), func(t *testing.T) {
			prog := filepath.Join(t.TempDir(), "prog")
			if b, err := exec.Command("gcc", "-O0", "-g", "-o", prog, filepath.Join("testdata", name+".c")).CombinedOutput(); err != nil {
				t.Fatalf("gcc %s: %v\n%s", name, err, b)
			}
			path := recordWith(t, prog, recorder.Options{CheckpointEvery: 50_000, Replayable: true})
			tr, err := reader.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			id, err := tr.File().Identity()
			if err != nil {
				t.Fatal(err)
			}
			var want []byte
			for _, mode := range []string{"off", "log", ""} {
				reader.SetAccessLog(mode)
				sums, err := summarize(tr, 2, nil)
				if err != nil {
					t.Fatalf("TTD_ACCLOG=%q: %v", mode, err)
				}
				got := tracefile.EncodeSums(id, sums)
				if mode == "off" {
					want = got
					t.Logf("%d summaries, %d bytes", len(sums), len(got))
					continue
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("TTD_ACCLOG=%q: the summaries differ from the interpreter's (%d bytes, want %d)", mode, len(got), len(want))
				}
			}
		})
	}
}
