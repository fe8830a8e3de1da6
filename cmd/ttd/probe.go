package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"ttd/internal/progress"
	"ttd/probe"
	"ttd/probe/live"
	"ttd/recorder"
)

func init() {
	examples["probe"] = `ttd probe -n 'syscall::write:entry { @[probefunc] = count(); }' ls.ttd
  ttd probe -q -n 'syscall::write:entry { printf("%d\n", arg2); }' -- ls /   # live, as dtrace -c
  ttd probe --jobs 1 -n 'profile:::100000 { @[tid] = count(); }' ls.ttd`
	register(command{"probe", probeUsage, "run a D script (probes, predicates, aggregations) over recordings, or over a program recorded for it", probeCmd, 55})
}

const probeUsage = "[--runner local|beam|prism|flink|spark] [-q] [--jobs N] [--arg VALUE]... (-n SCRIPT | -s FILE.d) (TRACE... | [-o TRACE] -- PROG [ARGS...])"

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

// probeCmd implements "ttd probe".
func probeCmd(name string, args []string) int {
	if runner, rest := takeRunner(args); runner != "" && runner != "local" {
		return runFleet(name, "probe", runner, rest)
	}
	fs := newFlags(name, probeUsage)
	fs.String("runner", "local", "where segments are evaluated: local, or an Apache Beam runner for many traces (--runner prism)")
	quiet := fs.Bool("q", false, "print only what the script prints, as #pragma D option quiet (-q -n 'fn::malloc:entry { printf(\"%d\\n\", arg0); }')")
	jobs := fs.Int("jobs", runtime.NumCPU(), "segments of a recording evaluated at a time; the output is the same for every N (--jobs 1)")
	script := fs.String("n", "", "the script, on the command line (-n 'syscall::openat:entry { @[copyinstr(arg1)] = count(); }')")
	file := fs.String("s", "", "the script, in a file (-s write.d)")
	out := fs.String("o", "", "with -- PROG: keep the recording of the probed run in TRACE, to probe again (-o ls.ttd -- ls)")
	var margs stringList
	fs.Var(&margs, "arg", "a macro argument: $1, $2... in order; repeatable (--arg 10 -n 'fn::mid:entry /arg0 < $1/ { trace(arg0); }')")
	// "-- PROG ARGS" probes a program: split it off before parsing.
	var prog []string
	for i, a := range args {
		if a == "--" && (i == 0 || !strings.Contains(" -n -s -o --jobs -jobs --arg -arg ", " "+args[i-1]+" ")) {
			prog, args = args[i+1:], args[:i]
			break
		}
	}
	if err := fs.Parse(args); err != nil {
		return flagError(name, probeUsage, err)
	}
	if (*script == "") == (*file == "") {
		return flagError(name, probeUsage, errors.New("give the script with -n SCRIPT or -s FILE"))
	}
	src, srcName := *script, "-n"
	if *file != "" {
		b, err := os.ReadFile(*file)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ttd probe: %v\n", err)
			return 2
		}
		src, srcName = string(b), *file
	}
	traces := fs.Args()
	if prog != nil && len(traces) > 0 {
		return flagError(name, probeUsage, errors.New("give traces or -- PROG, not both"))
	}
	if prog == nil && len(traces) == 0 {
		return flagError(name, probeUsage, errors.New("missing trace (or -- PROG)"))
	}
	if *out != "" && prog == nil {
		return flagError(name, probeUsage, errors.New("-o records a program: give -- PROG"))
	}
	p, err := probe.Compile(src, margs)
	if err != nil {
		// A bad script fails before anything runs, with line:column.
		fmt.Fprintf(os.Stderr, "ttd probe: %s:%v\n", srcName, err)
		return 2
	}
	if *quiet {
		p.SetQuiet()
	}
	if prog != nil {
		return probeLive(p, prog, *out, srcName)
	}
	var bs []*probe.Bound
	for _, tr := range traces {
		t, closeT, symErr, err := probe.OpenTargetJobs(tr, p, *jobs, indexProgress(tr))
		if err != nil {
			fmt.Fprintf(os.Stderr, "ttd probe: %s: %v\n", tr, err)
			return 1
		}
		defer closeT()
		if symErr != nil {
			fmt.Fprintf(os.Stderr, "ttd probe: %s: symbols: %s\n", tr, firstLine(symErr))
		}
		b, err := p.Bind(t)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ttd probe: %s:%v\n", srcName, err)
			return 2
		}
		for _, w := range b.SemaphoreWarnings() {
			fmt.Fprintf(os.Stderr, "ttd probe: %s: %s\n", tr, w)
		}
		bs = append(bs, b)
	}
	bar := progress.New("probe", "segments", 1)
	o, err := p.Run(bs, probe.RunOptions{Jobs: *jobs, Progress: bar.Callback()})
	bar.Done()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd probe: %v\n", err)
		return 1
	}
	o.Print(os.Stdout, os.Stderr)
	return o.ExitCode()
}

// probeLive evaluates the script while PROG runs (like dtrace -c),
// recording it into out or a temporary trace.
func probeLive(p *probe.Program, prog []string, out, srcName string) int {
	if len(prog) == 0 {
		fmt.Fprintln(os.Stderr, "ttd probe: missing program after --")
		return 2
	}
	cfg, status := programConfig(prog, false)
	if status != 0 {
		return status
	}
	// Without -o nothing is recorded (live.Run).
	path := out
	if path != "" {
		if _, err := os.Lstat(path); err == nil {
			fmt.Fprintf(os.Stderr, "ttd probe: %s exists; not overwriting it\n", path)
			return 2
		}
	}
	res, err := live.Run(cfg, p, recorder.Options{Path: path}, live.Output{Stdout: os.Stdout, Stderr: os.Stderr})
	if res == nil {
		var pe *probe.Error
		if errors.As(err, &pe) {
			fmt.Fprintf(os.Stderr, "ttd probe: %s:%v\n", srcName, err)
			return 2
		}
		fmt.Fprintf(os.Stderr, "ttd probe: %s: %v\n", prog[0], err)
		return 1
	}
	if err != nil && res.Stats.Path == "" {
		fmt.Fprintf(os.Stderr, "ttd probe: %s: %v\n", prog[0], err)
	}
	if res.SymbolError != nil {
		fmt.Fprintf(os.Stderr, "ttd probe: %s: symbols: %s\n", prog[0], firstLine(res.SymbolError))
	}
	if res.Unmatched != nil {
		fmt.Fprintf(os.Stderr, "ttd probe: %s:%v\n", srcName, res.Unmatched)
		return 2
	}
	res.Outcome.Print(os.Stdout, os.Stderr)
	return res.Outcome.ExitCode()
}
