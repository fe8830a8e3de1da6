package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"ttd/tracefile"
)

// infoReport is everything "ttd info" prints; --json writes it as is.
type infoReport struct {
	Trace   string   `json:"trace"`
	Program string   `json:"program"`
	Args    []string `json:"args"`
	// CPU is the x86-64 level CPUID reported to the program (v1, v2, v3, host).
	CPU string `json:"cpu,omitempty"`
	// Mode is "replayable" for a trace that logs no reads (ttd record
	// --mode replayable), "predicted" otherwise.
	Mode         string    `json:"mode"`
	Recorded     time.Time `json:"recorded"`
	Instructions uint64    `json:"instructions"`
	// WindowStart is the first position of a ring-buffer trace (ttd
	// record --ring; 0 otherwise).
	WindowStart uint64 `json:"window_start"`
	// SummaryBytes is the size of the access summaries in the trace.
	SummaryBytes int64         `json:"summary_bytes"`
	Threads      int           `json:"threads"`
	Checkpoints  int           `json:"checkpoints"`
	Syscalls     int           `json:"syscalls"`
	KeyFrames    int           `json:"key_frames"`
	Chunks       int           `json:"chunks"`
	Size         int64         `json:"size"`
	Uncompressed int64         `json:"uncompressed"`
	Density      float64       `json:"bits_per_instruction"`
	Ended        infoEnd       `json:"ended"`
	Processes    []infoProcess `json:"processes"`
	Records      []infoRecords `json:"records,omitempty"`
}

// infoEnd says how the recording ended.
type infoEnd struct {
	// How: "exited", "crashed", "killed", "cut short" or "unknown".
	How       string `json:"how"`
	Code      int    `json:"code"`
	Signal    int    `json:"signal,omitempty"`
	FaultAddr uint64 `json:"fault_addr,omitempty"`
	Position  uint64 `json:"position"`
}

// infoProcess is one process of the recorded tree.
type infoProcess struct {
	Pid   int       `json:"pid"`
	Ppid  int       `json:"ppid"`
	Argv  []string  `json:"argv"`
	Start uint64    `json:"start"`
	End   uint64    `json:"end"`
	Exit  *infoExit `json:"exit"` // null: still running when the recording ended
}

// infoExit is how one process ended.
type infoExit struct {
	How    string `json:"how"` // "exited", "crashed" or "killed"
	Code   int    `json:"code"`
	Signal int    `json:"signal,omitempty"`
}

// infoRecords is one line of --records.
type infoRecords struct {
	Kind  string  `json:"kind"`
	Count int     `json:"count"`
	Bytes int64   `json:"bytes"`
	Share float64 `json:"share"`
}

// infoCmd implements "ttd info".
func infoCmd(name string, args []string) int {
	const usageArgs = "[--records] [--json] TRACE"
	fs := newFlags(name, usageArgs)
	records := fs.Bool("records", false, "also count the records of each kind and their share of the uncompressed bytes")
	asJSON := fs.Bool("json", false, "print everything as one JSON object, the process tree as \"processes\"")
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
	rep, err := buildInfo(r, fs.Arg(0), *records)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd: %v\n", err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(os.Stderr, "ttd: %v\n", err)
			return 1
		}
		return 0
	}
	printInfo(rep)
	return 0
}

// buildInfo gathers what ttd info reports about r.
func buildInfo(r *tracefile.Reader, path string, records bool) (*infoReport, error) {
	s := r.Summary()
	h := r.Header()
	rep := &infoReport{Trace: path, Program: h.ProgramPath, Args: h.Args, Recorded: h.Created,
		Instructions: s.Instructions, Threads: s.Threads, Checkpoints: s.Checkpoints, Syscalls: s.Syscalls,
		KeyFrames: s.KeyFrames, Chunks: s.Chunks, Size: s.FileSize, Uncompressed: s.Uncompressed,
		Density: s.BitsPerInstruction, Processes: []infoProcess{}}
	if lv, ok := h.Params["cpu"]; ok {
		rep.CPU = lv
	}
	rep.Mode = "predicted"
	if h.Params["reads"] == "none" {
		rep.Mode = "replayable"
	}
	for i, c := range r.Chunks() {
		if i == 0 {
			rep.WindowStart = c.FirstPosition
		}
		if c.HoldsSummaries() {
			rep.SummaryBytes += c.Size
		}
	}
	switch {
	case !s.HasExit && (r.Truncated() || rep.WindowStart > 0):
		// A ring-buffer trace is complete without its exit when the
		// recording was killed: the window its last write kept.
		rep.Ended = infoEnd{How: "cut short", Position: s.Instructions}
	case !s.HasExit:
		rep.Ended = infoEnd{How: "unknown"}
	default:
		e := s.Exit
		rep.Ended = infoEnd{How: e.Kind.String(), Code: e.Code, Signal: e.Signo, FaultAddr: e.FaultAddr, Position: e.Position}
	}
	procs, err := r.Processes()
	if err != nil {
		return nil, err
	}
	for _, p := range tracefile.ProcessTree(procs) {
		ip := infoProcess{Pid: p.Pid, Ppid: p.Ppid, Argv: p.Argv, Start: p.Start, End: p.End}
		if ip.Argv == nil {
			ip.Argv = []string{}
		}
		if p.Exited {
			ip.Exit = &infoExit{How: p.Exit.Kind.String(), Code: p.Exit.Code, Signal: p.Exit.Signo}
		} else {
			ip.End = s.Instructions
		}
		rep.Processes = append(rep.Processes, ip)
	}
	if records {
		list, err := countRecords(r)
		if err != nil {
			return nil, err
		}
		rep.Records = list
	}
	return rep, nil
}

// countRecords counts the records of each kind and their bytes.
func countRecords(r *tracefile.Reader) ([]infoRecords, error) {
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
				return nil, err
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
	var out []infoRecords
	for _, st := range list {
		out = append(out, infoRecords{Kind: st.kind.String(), Count: st.n, Bytes: st.bytes,
			Share: 100 * float64(st.bytes) / float64(max(total, 1))})
	}
	return out, nil
}

// printInfo prints the report as text.
func printInfo(rep *infoReport) {
	fmt.Printf("trace:          %s\n", rep.Trace)
	fmt.Printf("program:        %s %q\n", rep.Program, rep.Args)
	fmt.Printf("recorded:       %s\n", rep.Recorded.Format("2006-01-02 15:04:05 MST"))
	if rep.CPU != "" {
		fmt.Printf("cpu:            x86-64-%s\n", rep.CPU)
	}
	fmt.Printf("instructions:   %d\n", rep.Instructions)
	if rep.WindowStart > 0 {
		fmt.Printf("window:         from position %d (a ring-buffer trace: the execution before it was not kept)\n", rep.WindowStart)
	}
	if rep.Mode == "replayable" {
		fmt.Printf("mode:           replayable (no reads logged: segments, --jobs N, query and the debuggers start from its checkpoint memory, TRACE.pages, which `ttd index` or their first use builds)\n")
	} else if rep.SummaryBytes > 0 {
		fmt.Printf("summaries:      %s (%.1f%% of the trace)\n", sizeString(rep.SummaryBytes), 100*float64(rep.SummaryBytes)/float64(max(rep.Size, 1)))
	} else {
		fmt.Printf("summaries:      none (ttd query and the debugger build them on open)\n")
	}
	fmt.Printf("threads:        %d\n", rep.Threads)
	fmt.Printf("checkpoints:    %d\n", rep.Checkpoints)
	fmt.Printf("syscalls:       %d\n", rep.Syscalls)
	fmt.Printf("key frames:     %d\n", rep.KeyFrames)
	fmt.Printf("chunks:         %d\n", rep.Chunks)
	fmt.Printf("size:           %s (%s uncompressed)\n", sizeString(rep.Size), sizeString(rep.Uncompressed))
	fmt.Printf("density:        %.3f bits/instruction\n", rep.Density)
	switch e := rep.Ended; e.How {
	case "cut short":
		fmt.Printf("ended:          the recording was cut short (ttd was killed); the trace replays up to position %d\n", e.Position)
	case "unknown":
		fmt.Printf("ended:          unknown (no exit record)\n")
	default:
		fmt.Printf("ended:          the program %s at position %d\n", describeExit(e.How, e.Code, e.Signal, e.FaultAddr), e.Position)
	}
	if len(rep.Processes) > 0 {
		fmt.Printf("processes:      %d\n", len(rep.Processes))
		printTree(rep.Processes)
	}
	if len(rep.Records) > 0 {
		fmt.Printf("\n%-12s %12s %14s %7s\n", "record", "count", "bytes", "share")
		for _, st := range rep.Records {
			fmt.Printf("%-12s %12d %14d %6.1f%%\n", st.Kind, st.Count, st.Bytes, st.Share)
		}
	}
}

// printTree prints the processes indented under their parents: pid,
// positions, how it ended, argv.
func printTree(procs []infoProcess) {
	known := map[int]bool{}
	for _, p := range procs {
		known[p.Pid] = true
	}
	var walk func(ppid int, depth int, roots bool)
	walk = func(ppid, depth int, roots bool) {
		for _, p := range procs {
			if roots && known[p.Ppid] || !roots && p.Ppid != ppid {
				continue
			}
			how := "running at the end"
			if e := p.Exit; e != nil {
				how = describeExit(e.How, e.Code, e.Signal, 0)
				if e.How == "crashed" {
					how = fmt.Sprintf("was killed by signal %d", e.Signal)
				}
			}
			fmt.Printf("  %s%d  [%d, %d]  %s  %s\n", strings.Repeat("  ", depth), p.Pid, p.Start, p.End, how,
				strings.Join(p.Argv, " "))
			walk(p.Pid, depth+1, false)
		}
	}
	walk(0, 0, true)
}
