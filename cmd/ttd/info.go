package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"ttd/tracefile"
)

// infoCmd implements "ttd info".
func infoCmd(name string, args []string) int {
	const usageArgs = "[--records] TRACE"
	fs := newFlags(name, usageArgs)
	records := fs.Bool("records", false, "also count the records of each kind and their share of the uncompressed bytes")
	if err := fs.Parse(args); err != nil {
		return flagError(name, usageArgs, err)
	}
	if fs.NArg() != 1 {
		return flagError(name, usageArgs, errors.New("want exactly one trace"))
	}
	r, err := tracefile.Open(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd: %v\n", err)
		return 1
	}
	defer r.Close()
	s := r.Summary()
	h := r.Header()
	fmt.Printf("trace:          %s\n", fs.Arg(0))
	fmt.Printf("program:        %s %q\n", h.ProgramPath, h.Args)
	fmt.Printf("recorded:       %s\n", h.Created.Format("2006-01-02 15:04:05 MST"))
	if lv, ok := h.Params["cpu"]; ok {
		fmt.Printf("cpu:            x86-64-%s\n", lv)
	}
	fmt.Printf("instructions:   %d\n", s.Instructions)
	fmt.Printf("threads:        %d\n", s.Threads)
	fmt.Printf("checkpoints:    %d\n", s.Checkpoints)
	fmt.Printf("syscalls:       %d\n", s.Syscalls)
	fmt.Printf("key frames:     %d\n", s.KeyFrames)
	fmt.Printf("chunks:         %d\n", s.Chunks)
	fmt.Printf("size:           %s (%s uncompressed)\n", sizeString(s.FileSize), sizeString(s.Uncompressed))
	fmt.Printf("density:        %.3f bits/instruction\n", s.BitsPerInstruction)
	switch {
	case !s.HasExit && r.Truncated():
		fmt.Printf("ended:          the recording was cut short (ttd was killed); the trace replays up to position %d\n", s.Instructions)
	case !s.HasExit:
		fmt.Printf("ended:          unknown (no exit record)\n")
	default:
		e := s.Exit
		fmt.Printf("ended:          the program %s at position %d\n", describeExit(e.Kind.String(), e.Code, e.Signo, e.FaultAddr), e.Position)
	}
	if *records {
		type stat struct {
			kind  tracefile.Kind
			n     int
			bytes int64
		}
		stats := map[tracefile.Kind]*stat{}
		for i := range r.Chunks() {
			it := r.Records(i)
			var prev *stat
			var prevOff int64
			for {
				rec, err := it.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					fmt.Fprintf(os.Stderr, "ttd: %v\n", err)
					return 1
				}
				if prev != nil {
					prev.bytes += rec.Off - prevOff
				}
				st := stats[rec.Kind]
				if st == nil {
					st = &stat{kind: rec.Kind}
					stats[rec.Kind] = st
				}
				st.n++
				prev, prevOff = st, rec.Off
			}
			if prev != nil {
				prev.bytes += int64(r.Chunks()[i].Len) - prevOff
			}
		}
		var list []*stat
		var total int64
		for _, st := range stats {
			list = append(list, st)
			total += st.bytes
		}
		sort.Slice(list, func(i, j int) bool { return list[i].bytes > list[j].bytes })
		fmt.Printf("\n%-12s %12s %14s %7s\n", "record", "count", "bytes", "share")
		for _, st := range list {
			fmt.Printf("%-12s %12d %14d %6.1f%%\n", st.kind, st.n, st.bytes, 100*float64(st.bytes)/float64(max(total, 1)))
		}
	}
	return 0
}
