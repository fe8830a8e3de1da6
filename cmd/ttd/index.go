package main

import (
	"fmt"
	"os"

	"ttd/internal/progress"
	"ttd/reader"
	"ttd/tracefile"
	"ttd/ttd"
)

func init() {
	register(command{"index", "TRACE", "replay a trace that logs no reads (ttd record's default mode) once and write next to it, in TRACE.pages, the memory of each process at each checkpoint (the pages written since the one before, compressed), which segments, --jobs N, query and the debuggers need, then its access summaries in TRACE.sums, which query and the debuggers' searches need; they build them themselves the first time", indexCmd, 45})
	examples["index"] = "ttd index x.ttd   # after: ttd record -o x.ttd -- xz -6 -c words.txt"
	// A command that needs a trace's checkpoint memory builds it with a
	// bar on a terminal.
	var bar *progress.Bar
	reader.IndexProgress = func(done, end int) {
		if bar == nil {
			bar = progress.New("indexing the trace's checkpoint memory", "instructions", int64(end))
		}
		bar.Set(done, end)
		if done >= end {
			bar.Done()
		}
	}
}

func indexCmd(name string, args []string) int {
	const usageArgs = "TRACE"
	fs := newFlags(name, usageArgs)
	if err := fs.Parse(args); err != nil {
		return flagError(name, usageArgs, err)
	}
	if fs.NArg() != 1 {
		return flagError(name, usageArgs, fmt.Errorf("want one trace"))
	}
	path := fs.Arg(0)
	t, err := reader.Open(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd: %v\n", err)
		return 1
	}
	defer t.Close()
	if !t.Sequential() {
		fmt.Fprintf(os.Stderr, "ttd: %s logs reads: its replays start at any checkpoint without an index\n", path)
		return 0
	}
	bar := progress.New("index "+path, "instructions", int64(t.End()))
	_, st, err := t.BuildPagesFile(tracefile.PagesPath(path), bar.Callback())
	bar.Done()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd: %s: %v\n", path, err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "ttd: indexed %s: %d checkpoints, %d page versions (%.1f MiB), %d pages zeroed or unmapped; %.1f MiB in %s\n",
		path, st.Checkpoints, st.Pages, float64(st.Pages)*4096/(1<<20), st.Zeroed, float64(st.Stored)/(1<<20), tracefile.PagesPath(path))
	bar = progress.New("access summaries "+path, "intervals", int64(st.Checkpoints))
	n, size, err := ttd.BuildSummaryFile(t, 0, bar.Callback())
	bar.Done()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd: %s: %v\n", path, err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "ttd: %d access summaries, %s in %s\n", n, sizeString(size), tracefile.SumsPath(path))
	return 0
}
