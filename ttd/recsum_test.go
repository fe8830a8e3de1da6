package ttd

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"ttd/emu"
	"ttd/reader"
	"ttd/recorder"
	"ttd/tracefile"
	"ttd/x86"
)

// TestInlineSummaries checks that the access summaries the recorder
// builds while recording (recorder/summary.go) are byte for byte those
// the summaries pass computes by re-simulating every checkpoint interval
// of the same trace (SummarizeTrace), on programs that cross pages, use
// string instructions, SSE and AVX, modify their own code, handle
// signals (with a handler that writes, and a fault), run threads and
// unmap memory, and that load and store across lines and pages by every
// amount (linecross.c); with every block translated at once (threshold 0) and
// with the default threshold, so that both the interpreter and
// translated code make accesses. A process tree must fall back to the
// pass.
//
// The bytes fetched as code agree here, but not on every program: they
// are the bytes of the blocks each side decoded, and a run that stops
// inside a block of 64 instructions (a time slice of the recording, a
// stop of the replay) decodes a new block from there, which runs on
// further (recorder/summary.go; sort and xz -6 differ by a few lines an
// interval). That is why Options.InlineSummaries is not the default.
func TestInlineSummaries(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	progs := []string{"testdata/linecross.c", "../reader/testdata/acclog.c", "../testdata/corpus/sse2.c", "../testdata/corpus/signals.c",
		"../testdata/corpus/segv_handler.c", "../testdata/corpus/threads_sync.c", "../testdata/corpus/malloc_stress.c",
		"../testdata/corpus/string_mem.c", "../testdata/corpus/proc_fork.c"}
	if testing.Short() {
		progs = progs[:2]
	}
	dir := t.TempDir()
	for _, src := range progs {
		name := filepath.Base(src)
		exe := filepath.Join(dir, name+".exe")
		if b, err := exec.Command("gcc", "-O1", "-pthread", "-o", exe, src).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, b)
		}
		for _, th := range []uint32{0, 50} {
			th := th
			t.Run(fmt.Sprintf("%s/threshold%d", name, th), func(t *testing.T) {
				on, was := x86.SetJIT(true, th)
				defer x86.SetJIT(on, was)
				path := filepath.Join(dir, name+".ttd")
				null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
				defer null.Close()
				_, stats, err := recorder.Record(emu.Config{Path: exe, Args: []string{exe}, Stdout: null, Stderr: null},
					recorder.Options{Path: path, CheckpointEvery: 50_000, InlineSummaries: true, Summaries: func(path string) ([]tracefile.AccessSummary, error) {
						return SummarizeTrace(path, 0, nil)
					}})
				if err != nil {
					t.Fatal(err)
				}
				if stats.SummaryError != "" {
					t.Fatal(stats.SummaryError)
				}
				tree := name == "proc_fork.c"
				if stats.SummaryInline == tree {
					t.Fatalf("summaries built while recording: %v, want %v", stats.SummaryInline, !tree)
				}
				tr, err := reader.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer tr.Close()
				got, err := tr.File().AccessSummaries()
				if err != nil {
					t.Fatal(err)
				}
				want, err := SummarizeTrace(path, 0, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) || len(got) < 3 {
					t.Fatalf("%d summaries, want %d (at least 3)", len(got), len(want))
				}
				pages := 0
				for i := range got {
					g := tracefile.AppendAccessSummary(nil, &got[i])
					w := tracefile.AppendAccessSummary(nil, &want[i])
					if got[i].Pid != want[i].Pid || !bytes.Equal(g, w) {
						t.Fatalf("summary %d (pid %d, %d..%d): %s", i, want[i].Pid, want[i].Start, want[i].End, summaryDiff(&got[i], &want[i]))
					}
					pages += len(got[i].Pages)
				}
				t.Logf("%d summaries, %d pages, %d checkpoints", len(got), pages, stats.Checkpoints)
			})
		}
	}
}

// summaryDiff describes the first difference between two summaries.
func summaryDiff(got, want *tracefile.AccessSummary) string {
	switch {
	case got.Start != want.Start || got.End != want.End:
		return fmt.Sprintf("interval %d..%d", got.Start, got.End)
	case fmt.Sprint(got.Unmapped) != fmt.Sprint(want.Unmapped):
		return fmt.Sprintf("unmapped %v, want %v", got.Unmapped, want.Unmapped)
	}
	for i := 0; i < len(got.Pages) || i < len(want.Pages); i++ {
		if i >= len(got.Pages) || i >= len(want.Pages) {
			return fmt.Sprintf("%d pages, want %d", len(got.Pages), len(want.Pages))
		}
		g, w := &got.Pages[i], &want.Pages[i]
		if g.PN != w.PN {
			return fmt.Sprintf("page %#x, want %#x", g.PN, w.PN)
		}
		for k, sets := range [][2]*tracefile.ByteSet{{&g.Read, &w.Read}, {&g.Written, &w.Written}, {&g.Exec, &w.Exec}} {
			for l := 0; l < 64; l++ {
				if a, b := sets[0].Line(l), sets[1].Line(l); a != b {
					return fmt.Sprintf("page %#x, %s, line %d: %#x, want %#x", g.PN, []string{"read", "written", "fetched"}[k], l, a, b)
				}
			}
		}
	}
	return "encodings differ"
}
