package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"ttd/emu"
	"ttd/internal/progress"
	"ttd/predict"
	"ttd/reader"
	"ttd/recorder"
	"ttd/tracefile"
	"ttd/ttd"
	"ttd/x86"
)

// recordCmd implements "ttd record".
func recordCmd(name string, args []string) int {
	const usageArgs = "[-o TRACE] [--embed-binaries] [--checkpoint-every N] [--cache-bits N] [--ring SIZE] [--no-summaries] [--mode replayable|predicted] [--verbose] [--cpu v1|v2|v3|host] [--] PROG [ARGS...]"
	fs := newFlags(name, usageArgs)
	out := fs.String("o", "", "the trace file (default: PROG's base name with .ttd, never overwriting)")
	embed := fs.Bool("embed-binaries", false, "store the mapped ELF files in the trace")
	every := fs.Uint64("checkpoint-every", 0, "instructions between checkpoints (0: the default)")
	bits := fs.Uint("cache-bits", 0, "log2 of the prediction cache's words (0: the default)")
	verbose := fs.Bool("verbose", false, "name unimplemented syscalls the program uses")
	ring := fs.String("ring", "", "keep only the last SIZE of trace (e.g. 64M), starting at a checkpoint: a window of a long-running program")
	cpu := cpuFlag(fs)
	noSums := fs.Bool("no-summaries", false, "--mode predicted: do not write the access summaries (ttd query and the debugger then build them on every open)")
	mode := fs.String("mode", "", "replayable (the default): log no reads, record at about `ttd run`'s speed; segments, --jobs N, query and the debuggers need its checkpoint memory and access summaries (TRACE.pages and TRACE.sums, built by `ttd index` or their first use); predicted (also: reads; the default with --ring or --cache-bits): log the reads the prediction cache misses, about 2x slower, any replay from the trace alone")
	if err := fs.Parse(args); err != nil {
		return flagError(name, usageArgs, err)
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return flagError(name, usageArgs, errors.New("missing program"))
	}
	switch *mode {
	case "":
		// A ring or a prediction cache's size asks for the mode that
		// has them.
		*mode = "replayable"
		if *ring != "" || *bits != 0 {
			*mode = "predicted"
		}
	case "reads":
		*mode = "predicted"
	case "predicted", "replayable":
	default:
		return flagError(name, usageArgs, fmt.Errorf("--mode %q: want replayable or predicted (reads)", *mode))
	}
	if *mode == "replayable" && (*ring != "" || *bits != 0) {
		return flagError(name, usageArgs, errors.New("--mode replayable keeps no ring and has no prediction cache (--ring, --cache-bits)"))
	}
	if *bits != 0 && (*bits < predict.MinBits || *bits > predict.MaxBits) {
		return flagError(name, usageArgs, fmt.Errorf("--cache-bits %d: must be %d to %d", *bits, predict.MinBits, predict.MaxBits))
	}
	if _, err := emu.ResolveCPU(*cpu); err != nil {
		return flagError(name, usageArgs, err)
	}
	cfg, status := programConfig(rest, *verbose)
	if status != 0 {
		return status
	}
	cfg.CPU = *cpu
	path := *out
	if path == "" {
		path = recorder.DefaultPath(".", rest[0])
	} else if _, err := os.Lstat(path); err == nil {
		fmt.Fprintf(os.Stderr, "ttd: %s exists; not overwriting it\n", path)
		return 2
	}
	// The checkpoint memory and access summaries of a trace that was at
	// this path are not the new one's (they would be refused as stale).
	os.Remove(tracefile.PagesPath(path))
	os.Remove(tracefile.SumsPath(path))
	opts := recorder.Options{Path: path, EmbedBinaries: *embed, CheckpointEvery: *every, CacheBits: *bits, Replayable: *mode == "replayable"}
	if *ring != "" {
		n, err := parseSize(*ring)
		if err != nil || n < 64<<10 {
			return flagError(name, usageArgs, fmt.Errorf("--ring %q: want a size of at least 64K (e.g. 512K, 64M, 1G)", *ring))
		}
		opts.Ring = n
	}
	if !*noSums && !opts.Replayable {
		opts.Summaries = func(path string) ([]tracefile.AccessSummary, error) {
			return ttd.SummarizeTrace(path, 0, summaryProgress(path))
		}
	}
	reserveHugeHeapNow()
	if opts.Replayable && os.Getenv("TTD_WINDOW") != "0" {
		// A recording that logs no reads runs `ttd run`'s
		// translations, and with them its host window: guest memory
		// at window + address, no TLB lookup (and after 2^27
		// instructions no read check). The layout moves below 1 TiB
		// as in `ttd run`; the trace holds the addresses, so a replay
		// needs no window.
		emu.UseHostWindow()
	}
	st, stats, err := recorder.Record(cfg, opts)
	if err != nil {
		var ue *x86.UnimplementedError
		switch {
		case errors.As(err, &ue):
			fmt.Fprintf(os.Stderr, "ttd: %s stopped: %v\n", rest[0], err)
		case stats.Path == "":
			fmt.Fprintf(os.Stderr, "ttd: %v\n", err)
			if errors.Is(err, os.ErrNotExist) {
				return 127
			}
			return 126
		default:
			fmt.Fprintf(os.Stderr, "ttd: %s: %v\n", rest[0], err)
		}
	}
	if stats.SummaryError != "" {
		fmt.Fprintf(os.Stderr, "ttd: %s: no %s; ttd query and the debugger will build them on open\n", stats.Path, stats.SummaryError)
	}
	if st.Signal != 0 {
		fmt.Fprintf(os.Stderr, "ttd: %s %s\n", rest[0], st)
	}
	if x86.StatsOn { // TTD_STATS=1, as for ttd run
		x86.WriteStats(os.Stderr, stats.Instructions)
	}
	if stats.Path != "" && opts.Replayable {
		fmt.Fprintf(os.Stderr, "ttd: recorded %s: %d instructions, %s, %.3f bits/instruction, no reads logged, %s of memory images\n",
			stats.Path, stats.Instructions, sizeString(stats.TraceBytes), stats.BitsPerInstruction(), sizeString(int64(stats.ImageBytes)))
	} else if stats.Path != "" {
		fmt.Fprintf(os.Stderr, "ttd: recorded %s: %d instructions, %s, %.3f bits/instruction, %.2f%% of %d reads predicted\n",
			stats.Path, stats.Instructions, sizeString(stats.TraceBytes), stats.BitsPerInstruction(), 100*stats.HitRate(), stats.Reads)
	}
	return st.ExitCode()
}

func sizeString(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// replayCmd implements "ttd replay".
func replayCmd(name string, args []string) int {
	const usageArgs = "[--verify] [--segments] [--quiet] [--json] TRACE | --gdb TRACE [-- GDB-ARGS...]"
	fs := newFlags(name, usageArgs)
	verify := fs.Bool("verify", false, "compare the re-simulated registers with every checkpoint")
	segments := fs.Bool("segments", false, "also re-simulate each checkpoint interval on its own, from its checkpoint (as the debugger does), and compare its end with the next checkpoint")
	quiet := fs.Bool("quiet", false, "do not print the program's output")
	asJSON := fs.Bool("json", false, "print the summary as JSON on stdout (the program's output, unless --quiet, goes to stderr)")
	gdb := fs.Bool("gdb", false, "debug the recording in gdb, with reverse execution (TRACE [-- GDB-ARGS...]; see gdb.go)")
	if err := fs.Parse(args); err != nil {
		return flagError(name, usageArgs, err)
	}
	if *gdb && fs.NArg() >= 1 {
		rest := fs.Args()[1:]
		if len(rest) > 0 && rest[0] == "--" {
			rest = rest[1:]
		}
		return replayGDB(fs.Arg(0), rest, os.Getenv("TTD_GDB_LOG") != "")
	}
	if fs.NArg() != 1 {
		return flagError(name, usageArgs, errors.New("want exactly one trace"))
	}
	path := fs.Arg(0)
	tr, err := reader.Open(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd: %v\n", err)
		return 1
	}
	defer tr.Close()
	rp, err := tr.NewReplay(0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd: %s: %v\n", path, err)
		return 1
	}
	rp.Verify = *verify
	if !*quiet {
		rp.Output = func(fd int, b []byte) {
			var w io.Writer = os.Stdout
			if fd == 2 || *asJSON {
				w = os.Stderr
			}
			w.Write(b)
		}
	}
	// A progress bar on a terminal, unless the program's output goes to
	// the same terminal.
	var bar *progress.Bar
	if *quiet || !progress.IsTerminal(os.Stdout) {
		bar = progress.New("replay "+filepath.Base(path), "instructions", int64(tr.End()))
	}
	if bar != nil {
		step := max(tr.End()/200, 1)
		for err == nil && rp.Position() < tr.End() {
			err = rp.RunTo(min(rp.Position()+step, tr.End()))
			bar.Set64(int64(rp.Position()))
		}
		if err == nil {
			err = rp.RunTo(^uint64(0))
		}
		bar.Done()
	} else {
		err = rp.RunTo(^uint64(0))
	}
	if x86.StatsOn { // TTD_STATS=1, as for ttd run and ttd record
		x86.WriteStats(os.Stderr, rp.Position())
	}
	base := filepath.Base(path)
	sum := replaySummary{Trace: path, Instructions: rp.Position()}
	if *verify {
		sum.VerifiedCheckpoints = &rp.Checkpoints
	}
	if tr.Tree() {
		sum.Processes = replayProcesses(tr, rp, *verify)
	}
	status := 0
	switch {
	case errors.Is(err, reader.ErrEnd):
		e := rp.Exit()
		sum.Exit = &replayExit{Kind: e.Kind.String(), Code: e.Code, Signal: e.Signo, FaultAddr: e.FaultAddr}
		sum.Outcome = "the program " + describeExit(e.Kind.String(), e.Code, e.Signo, e.FaultAddr)
		if *segments {
			n, err := tr.VerifySegments(0)
			if err != nil {
				sum.Error = fmt.Sprintf("re-simulating %s from its checkpoints: %v", base, err)
				status = 1
			} else {
				sum.VerifiedSegments = &n
			}
		}
	case errors.Is(err, io.ErrUnexpectedEOF):
		sum.CutShort = true
		sum.Outcome = "the trace ends there (the recording was cut short)"
		status = 1
	default:
		sum.Error = fmt.Sprintf("replaying %s: %v", base, err)
		status = 1
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(sum)
		return status
	}
	switch {
	case sum.Exit != nil:
		fmt.Fprintf(os.Stderr, "ttd: replayed %s: %d instructions; %s\n", base, sum.Instructions, sum.Outcome)
		if *verify {
			fmt.Fprintf(os.Stderr, "ttd: verified %d checkpoints\n", rp.Checkpoints)
		}
		for _, p := range sum.Processes {
			cmd := strings.Join(p.Argv, " ")
			if len(p.Argv) == 0 {
				cmd = "(started before the trace's window)"
			}
			if len(cmd) > 60 {
				cmd = cmd[:57] + "..."
			}
			fmt.Fprintf(os.Stderr, "ttd:   process %d %s: %s", p.Pid, cmd, p.Outcome)
			if *verify {
				fmt.Fprintf(os.Stderr, ", %d thread states verified", p.VerifiedStates)
			}
			fmt.Fprintln(os.Stderr)
		}
		if sum.VerifiedSegments != nil {
			fmt.Fprintf(os.Stderr, "ttd: verified %d intervals, each re-simulated from its checkpoint\n", *sum.VerifiedSegments)
		}
	case sum.CutShort:
		fmt.Fprintf(os.Stderr, "ttd: replayed %s up to position %d, where the trace ends (the recording was cut short)\n", base, sum.Instructions)
	}
	if sum.Error != "" {
		fmt.Fprintf(os.Stderr, "ttd: %s\n", sum.Error)
	}
	return status
}

// replaySummary is what ttd replay reports (--json prints it as is).
type replaySummary struct {
	Trace        string `json:"trace"`
	Instructions uint64 `json:"instructions"`
	// Exit is how the program ended (absent when the trace was cut
	// short or the replay failed).
	Exit    *replayExit `json:"exit,omitempty"`
	Outcome string      `json:"outcome,omitempty"`
	// CutShort: the recording was interrupted; the replay went as far
	// as the trace does.
	CutShort            bool   `json:"cutShort"`
	VerifiedCheckpoints *int   `json:"verifiedCheckpoints,omitempty"`
	VerifiedSegments    *int   `json:"verifiedSegments,omitempty"`
	Error               string `json:"error,omitempty"`
	// Processes are the processes of a recorded tree, each re-simulated
	// (absent for a trace of one process recorded before ttd recorded
	// whole trees).
	Processes []replayProcess `json:"processes,omitempty"`
}

// replayProcess is one process of the tree as the replay saw it.
type replayProcess struct {
	Pid  int      `json:"pid"`
	Ppid int      `json:"ppid"`
	Argv []string `json:"argv"`
	// Exit is how it ended (absent when it still ran when the first
	// process ended, or when the replay stopped first).
	Exit    *replayExit `json:"exit,omitempty"`
	Outcome string      `json:"outcome"`
	// VerifiedStates counts its thread states --verify compared with
	// the recording's (at checkpoints and when it ended).
	VerifiedStates int `json:"verifiedStates"`
}

// replayProcesses reports every process of the tree the replay
// re-simulated.
func replayProcesses(tr *reader.Trace, rp *reader.Replay, verify bool) []replayProcess {
	argv := map[int][]string{}
	for _, p := range tr.Processes() {
		argv[p.Pid] = p.Argv
	}
	var out []replayProcess
	for _, p := range rp.Processes() {
		rpp := replayProcess{Pid: p.Pid, Ppid: p.Ppid, Argv: argv[p.Pid], VerifiedStates: p.Verified}
		switch {
		case p.Exit != nil:
			e := p.Exit
			rpp.Exit = &replayExit{Kind: e.Kind.String(), Code: e.Code, Signal: e.Signo, FaultAddr: e.FaultAddr}
			rpp.Outcome = describeExit(e.Kind.String(), e.Code, e.Signo, e.FaultAddr)
		case len(p.Tids) > 0 && rp.AtEnd():
			rpp.Outcome = "still ran when the first process ended"
		default:
			rpp.Outcome = "had not ended where the replay stopped"
		}
		out = append(out, rpp)
	}
	return out
}

type replayExit struct {
	Kind      string `json:"kind"`
	Code      int    `json:"code"`
	Signal    int    `json:"signal,omitempty"`
	FaultAddr uint64 `json:"faultAddr,omitempty"`
}

func describeExit(kind string, code, signo int, addr uint64) string {
	switch kind {
	case "exited":
		return fmt.Sprintf("exited with code %d", code)
	case "crashed":
		return fmt.Sprintf("was killed by signal %d (fault address %#x)", signo, addr)
	case "killed":
		return fmt.Sprintf("was killed by signal %d", signo)
	}
	return kind
}

// parseSize reads a byte count with an optional K, M or G suffix (powers
// of 1024).
func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"), strings.HasSuffix(s, "k"):
		mult, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "M"), strings.HasSuffix(s, "m"):
		mult, s = 1<<20, s[:len(s)-1]
	case strings.HasSuffix(s, "G"), strings.HasSuffix(s, "g"):
		mult, s = 1<<30, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}
