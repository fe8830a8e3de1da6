package main

import (
	"errors"
	"fmt"
	"os"

	"ttd/calls"
	"ttd/reader"
	"ttd/report"
)

const reportUsage = "-o REPORT.html [--diff OTHER.ttd] [--by-name] [--jobs N] TRACE"

func init() {
	register(command{"report", reportUsage, "write one self-contained HTML page of a recording: threads along the positions, syscalls, signals, checkpoints, a flame graph, the hottest functions (and the differences with another recording)", reportCmd, 85})
	examples["report"] = "ttd report -o report.html prog.ttd && xdg-open report.html"
}

// reportCmd implements "ttd report".
func reportCmd(name string, args []string) int {
	fs := newFlags(name, reportUsage)
	out := fs.String("o", "", "write the page to `REPORT.html` (required)")
	other := fs.String("diff", "", "add the root-cause differences with the normal recording `OTHER.ttd` (as 'ttd diff TRACE OTHER.ttd')")
	byName := fs.Bool("by-name", false, "with --diff: match call paths by function names only (different builds)")
	jobs := fs.Int("jobs", 0, "re-simulate `N` checkpoint intervals at a time (0: one per CPU)")
	if err := parseInterspersed(fs, args); err != nil {
		return flagError(name, reportUsage, err)
	}
	if fs.NArg() != 1 {
		return flagError(name, reportUsage, errors.New("want exactly one trace"))
	}
	if *out == "" {
		return flagError(name, reportUsage, errors.New("missing -o REPORT.html"))
	}
	path := fs.Arg(0)
	t, err := reader.Open(path)
	if err != nil {
		return fail("%v", err)
	}
	defer t.Close()
	p, st := callProfile(path, *jobs)
	if st != 0 {
		return st
	}
	opts := report.Options{Trace: path}
	if *other != "" {
		po, st := callProfile(*other, *jobs)
		if st != 0 {
			return st
		}
		opts.Diff = calls.Diff(treeOf(p), treeOf(po), calls.DiffOptions{ByName: *byName})
		opts.DiffTrace = *other
	}
	d, err := report.Build(t, p, opts)
	if err != nil {
		return fail("%v", err)
	}
	f, err := os.Create(*out)
	if err != nil {
		return fail("%v; pick another -o path", err)
	}
	if err := report.Write(f, d); err != nil {
		f.Close()
		return fail("writing %s: %v", *out, err)
	}
	if err := f.Close(); err != nil {
		return fail("writing %s: %v", *out, err)
	}
	fmt.Fprintf(os.Stderr, "ttd: wrote %s (%d processes, %d threads, %d events, %d checkpoints)\n", *out, max(len(d.Processes), 1), len(d.Lanes), d.MarksShown, len(d.Checkpoints))
	return 0
}
