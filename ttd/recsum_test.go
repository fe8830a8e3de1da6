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
// amount (linecross.c, also with AVX's 32 bytes: CPU v3); with every block translated at once (threshold 0) and
// with the default threshold, so that both the interpreter and
// translated code make accesses. A process tree must fall back to the
// pass.
//
// The bytes fetched as code are the bytes of the blocks each side
// decoded, so they agree only if a run that stops inside a block (a time
// slice of the recording, a stop of the replay) resumes it rather than
// decoding a block from there, which may run on further (x86.CPU.Run):
// sort, xz -6 and a Go program, whose long blocks time slices cut, differed
// before it did, and do here also with time slices of a prime number of
// instructions, which cut blocks everywhere.
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
			t.Run(fmt.Sprintf("%s/threshold%d", name, th), func(t *testing.T) {
				checkInlineSummaries(t, emu.Config{Path: exe, Args: []string{exe}}, th, 50_000, name == "proc_fork.c", false)
			})
		}
		if name == "linecross.c" {
			t.Run(name+"/pass", func(t *testing.T) {
				checkInlineSummaries(t, emu.Config{Path: exe, Args: []string{exe}}, 50, 50_000, false, true)
			})
			// With AVX: 32-byte accesses, which translated code marks
			// in place too (x86/accmark.go).
			for _, th := range []uint32{0, 50} {
				t.Run(fmt.Sprintf("%s/v3/threshold%d", name, th), func(t *testing.T) {
					checkInlineSummaries(t, emu.Config{Path: exe, Args: []string{exe}, CPU: "v3"}, th, 50_000, false, false)
				})
			}
		}
	}
}

// TestInlineSummariesPrograms is TestInlineSummaries on real programs
// whose fetched bytes differed when a time slice ended inside a long
// block: sort, xz -6 and a Go program, with the default time slice and
// one of 997 instructions.
func TestInlineSummariesPrograms(t *testing.T) {
	if testing.Short() {
		t.Skip("records real programs")
	}
	dir := t.TempDir()
	var text bytes.Buffer
	x := uint32(7)
	for text.Len() < 96<<10 {
		for w := 0; w < 8; w++ {
			x = x*1103515245 + 12345
			fmt.Fprintf(&text, "%s%d ", []string{"alpha", "beta", "gamma", "delta", "omega"}[x>>28%5], x>>20%1000)
		}
		text.WriteString("\n")
	}
	input := filepath.Join(dir, "words.txt")
	if err := os.WriteFile(input, text.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	type prog struct {
		name  string
		argv  []string
		every uint64 // checkpoint interval
	}
	var progs []prog
	for _, p := range []prog{{"sort", []string{"sort", input}, 200_000}, {"xz", []string{"xz", "-6", "-c", input}, 2_000_000}} {
		if path, err := exec.LookPath(p.argv[0]); err == nil {
			p.argv[0] = path
			progs = append(progs, p)
		} else {
			t.Logf("%s not installed: left out", p.name)
		}
	}
	if _, err := exec.LookPath("go"); err == nil {
		exe := filepath.Join(dir, "gowork")
		cmd := exec.Command("go", "build", "-o", exe, "main.go")
		cmd.Dir = "../bench/workloads/gowork"
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, b)
		}
		progs = append(progs, prog{"go", []string{exe, "2"}, 2_000_000})
	}
	if len(progs) == 0 {
		t.Skip("none of sort, xz and go installed")
	}
	for _, p := range progs {
		for _, slice := range []uint64{0, 997} {
			t.Run(fmt.Sprintf("%s/slice%d", p.name, slice), func(t *testing.T) {
				checkInlineSummaries(t, emu.Config{Path: p.argv[0], Args: p.argv, TimeSlice: slice}, 50, p.every, false, false)
			})
		}
	}
}

// checkInlineSummaries records cfg with the summaries built while
// recording, translating blocks after threshold runs, and compares them
// with SummarizeTrace's; tree: the program is a process tree, whose
// summaries the pass builds, as it does when pass asks for it
// (Options.SummariesPass).
func checkInlineSummaries(t *testing.T, cfg emu.Config, threshold uint32, every uint64, tree, pass bool) {
	on, was := x86.SetJIT(true, threshold)
	defer x86.SetJIT(on, was)
	path := filepath.Join(t.TempDir(), "t.ttd")
	null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer null.Close()
	cfg.Stdout, cfg.Stderr = null, null
	_, stats, err := recorder.Record(cfg,
		recorder.Options{Path: path, CheckpointEvery: every, SummariesPass: pass, Summaries: func(path string) ([]tracefile.AccessSummary, error) {
			return SummarizeTrace(path, 0, nil)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if stats.SummaryError != "" {
		t.Fatal(stats.SummaryError)
	}
	if stats.SummaryInline == (tree || pass) {
		t.Fatalf("summaries built while recording: %v, want %v", stats.SummaryInline, !(tree || pass))
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
