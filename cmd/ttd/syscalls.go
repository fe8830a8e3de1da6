package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"ttd/reader"
	"ttd/syscalls"
)

const syscallsUsage = "[--pid P] [--format strace|jsonl|csv|parquet] [-s SIZE] [-o FILE] TRACE"

func init() {
	register(command{"syscalls", syscallsUsage, "export every syscall with decoded arguments and full buffers (strace, JSON lines, CSV, Parquet)", syscallsCmd, 45})
}

// syscallsCmd implements "ttd syscalls".
func syscallsCmd(name string, args []string) int {
	fs := newFlags(name, syscallsUsage)
	pid := fs.Int("pid", 0, "only the calls of process `P`")
	format := fs.String("format", "strace", "strace, jsonl, csv or parquet")
	size := fs.Int("s", -1, "print at most `SIZE` bytes of each buffer (strace -s; default: all); other formats cut their buffers too")
	out := fs.String("o", "", "write to `FILE` instead of stdout")
	if err := parseInterspersed(fs, args); err != nil {
		return flagError(name, syscallsUsage, err)
	}
	if fs.NArg() != 1 {
		return flagError(name, syscallsUsage, errors.New("want exactly one trace"))
	}
	var w io.Writer = os.Stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ttd: %v\n", err)
			return 1
		}
		defer f.Close()
		w = f
	} else if *format == "parquet" {
		return flagError(name, syscallsUsage, errors.New("parquet needs -o FILE"))
	}
	sink, err := syscalls.NewSink(*format, w)
	if err != nil {
		return flagError(name, syscallsUsage, err)
	}
	tr, err := reader.Open(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd: %s: %v\n", fs.Arg(0), err)
		return 1
	}
	defer tr.Close()
	st, err := syscalls.Export(tr, syscalls.Options{Pid: *pid, StrSize: *size, Cut: *size >= 0}, sink)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd: %s: %v\n", fs.Arg(0), err)
		return 1
	}
	if st.Unrecorded > 0 {
		fmt.Fprintf(os.Stderr, "ttd: %d more processes of the tree ran unrecorded: the trace holds the calls of the first process only (their starts and ends are exported)\n", st.Unrecorded)
	}
	if st.WholeRegions {
		fmt.Fprintf(os.Stderr, "ttd: %s was recorded before ttd logged a heap's growth as new pages: what a program kept in a heap that grew later is unknown (printed as addresses), not zeros\n", fs.Arg(0))
	}
	if st.Missing > 0 {
		fmt.Fprintf(os.Stderr, "ttd: %d of %d calls have buffer bytes the recording does not hold (printed as addresses; \"missing\" in jsonl)\n", st.Missing, st.Calls)
	}
	return 0
}
