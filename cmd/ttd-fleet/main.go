// Command ttd-fleet runs ttd's queries over many recordings as Apache
// Beam pipelines (package fleet): on Beam's prism runner inside this
// process by default, or on Flink, Spark or any portable runner with
// Beam's own flags (--runner, --endpoint, --environment_type...).
//
// It is a command of its own, not part of ttd, because Beam's Go SDK
// (gRPC, protobuf, the runners) adds tens of MiB to a binary and work
// to every start-up; ttd stays as it is, and `ttd query --runner beam`
// runs this command.
//
// Wiring and flags only: the pipelines are package fleet's.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/flink"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/spark"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal"

	"ttd/fleet"
	"ttd/internal/progress"
	"ttd/probe"
	"ttd/tables"
	_ "ttd/third_party/prism" // Beam's prism runner, listening on loopback only
)

const usage = `usage: ttd-fleet probe [-q] [--arg VALUE]... (-n SCRIPT | -s FILE.d) [--tmp DIR] [BEAM FLAGS] TRACE...
       ttd-fleet query (--calls FUNC[,FUNC...] | --memory ADDR:LEN[,...] [--access r|w|rw] | --syscalls NAME[,NAME...]|all)
                      [--format json|parquet] [-o PATH] [--whole] [BEAM FLAGS] TRACE...

probe prints what ttd probe prints (the local runner), byte for byte.
TRACE is a path, a glob ('traces/*.ttd') or a URL of a Beam filesystem
(gs://bucket/traces/*.ttd). Beam flags as the Go SDK spells them:
  --runner prism (default: in this process) | flink | spark | universal
  --endpoint HOST:PORT          the job server of a portable runner
  --environment_type LOOPBACK | DOCKER | PROCESS
  --environment_config IMAGE    (DOCKER: the Go SDK harness image)
`

func main() {
	args := os.Args[1:]
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	if strings.HasPrefix(args[0], "-") {
		// A Beam worker (a runner started this binary with --worker):
		// beam.Init runs the harness and does not return.
		flag.Parse()
		beam.Init()
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	switch args[0] {
	case "query":
		os.Exit(inPrivateTemp(queryCmd, args[1:]))
	case "probe":
		os.Exit(inPrivateTemp(probeCmd, args[1:]))
	}
	fmt.Fprintf(os.Stderr, "ttd-fleet: unknown command %q\n%s", args[0], usage)
	os.Exit(2)
}

// inPrivateTemp runs cmd with TMPDIR pointing at a directory of its
// own, removed when cmd returns: Beam's loopback mode creates a
// "beamloopbackworker-*" file in the temporary directory for every
// pipeline and never removes it (runnerlib/execute.go, Beam issue 27569).
func inPrivateTemp(cmd func([]string) int, args []string) int {
	d, err := os.MkdirTemp("", "ttd-fleet-run-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd-fleet: %v\n", err)
		return 1
	}
	defer os.RemoveAll(d)
	prev, had := os.LookupEnv("TMPDIR")
	os.Setenv("TMPDIR", d)
	defer func() {
		if had {
			os.Setenv("TMPDIR", prev)
		} else {
			os.Unsetenv("TMPDIR")
		}
	}()
	return cmd(args)
}

// parseFlags parses args with the command's flags and Beam's (both in
// flag.CommandLine), flags and traces in any order.
func parseFlags(args []string) ([]string, error) {
	var flags, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			rest = append(rest, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		f := flag.CommandLine.Lookup(name)
		if f == nil {
			return nil, fmt.Errorf("unknown flag %s", a)
		}
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	flag.CommandLine.SetOutput(os.Stderr)
	flag.CommandLine.Usage = func() { fmt.Fprint(os.Stderr, usage) }
	if err := flag.CommandLine.Parse(flags); err != nil {
		return nil, err
	}
	return rest, nil
}

func split(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func queryCmd(args []string) int {
	calls := flag.String("calls", "", "one row per call of these functions")
	memory := flag.String("memory", "", "one row per access to these ranges (ADDR:LEN, SYMBOL or SYMBOL:LEN)")
	access := flag.String("access", "rw", "with --memory: r, w or rw")
	syscalls := flag.String("syscalls", "", "one row per syscall of these names (all: every syscall)")
	format := flag.String("format", "json", "json (an array of rows, sorted by trace and position) or parquet (a dataset: DIR/part-*.parquet)")
	out := flag.String("o", "", "json: the output file (default stdout); parquet: the dataset's directory (required)")
	tmp := flag.String("tmp", "", "json: where the workers leave their rows for this program (a directory or URL both see; default: a local temporary directory, enough for prism)")
	whole := flag.Bool("whole", false, "re-simulate each recording as one segment instead of one per checkpoint interval")
	traces, err := parseFlags(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd-fleet query: %v\n", err)
		return 2
	}
	beam.Init()
	kinds := 0
	for _, s := range []string{*calls, *memory, *syscalls} {
		if s != "" {
			kinds++
		}
	}
	switch {
	case kinds != 1:
		fmt.Fprintf(os.Stderr, "ttd-fleet query: give one of --calls, --memory, --syscalls\n%s", usage)
		return 2
	case len(traces) == 0:
		fmt.Fprintf(os.Stderr, "ttd-fleet query: no trace\n%s", usage)
		return 2
	case *format != "json" && *format != "parquet":
		fmt.Fprintf(os.Stderr, "ttd-fleet query: --format %s: want json or parquet\n", *format)
		return 2
	case *format == "parquet" && *out == "":
		fmt.Fprintf(os.Stderr, "ttd-fleet query: --format parquet needs -o DIR\n")
		return 2
	case *access != "r" && *access != "w" && *access != "rw":
		fmt.Fprintf(os.Stderr, "ttd-fleet query: --access %s: want r, w or rw\n", *access)
		return 2
	}
	if os.Getenv("TTD_FLEET_VERBOSE") == "" {
		fleet.Quiet()
	}

	p, s := beam.NewPipelineWithRoot()
	recs := fleet.Open(s, fleet.Options{Whole: *whole}, traces...)
	var rows beam.PCollection
	switch {
	case *calls != "":
		rows, err = recs.Calls(s, split(*calls)...)
	case *memory != "":
		rows, err = recs.Memory(s, fleet.Watch{Ranges: split(*memory), Read: strings.Contains(*access, "r"), Write: strings.Contains(*access, "w")})
	default:
		names := split(*syscalls)
		if len(names) == 1 && names[0] == "all" {
			names = nil
		}
		rows, err = recs.Syscalls(s, names...)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd-fleet query: %v\n", err)
		return 2
	}

	ctx := context.Background()
	jsonPath := ""
	if *format == "parquet" {
		if err := fleet.WriteParquet(s, *out, rows); err != nil {
			fmt.Fprintf(os.Stderr, "ttd-fleet query: %v\n", err)
			return 2
		}
	} else {
		dir := *tmp
		if dir == "" {
			d, err := os.MkdirTemp("", "ttd-fleet-")
			if err != nil {
				fmt.Fprintf(os.Stderr, "ttd-fleet: %v\n", err)
				return 1
			}
			defer os.RemoveAll(d)
			dir = d
		}
		jsonPath = strings.TrimSuffix(dir, "/") + "/rows.jsonl"
		if !strings.Contains(dir, "://") {
			jsonPath = filepath.Join(dir, "rows.jsonl")
		}
		fleet.WriteJSON(s, jsonPath, rows)
	}
	runner := *runners.Runner
	if runner == "" || runner == "beam" {
		runner = "prism"
	}
	if _, err := beam.Run(ctx, runner, p); err != nil {
		fmt.Fprintf(os.Stderr, "ttd-fleet: %s\n", fleet.Cause(err))
		return 1
	}
	if jsonPath == "" {
		return 0
	}
	w := os.Stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ttd-fleet: %v\n", err)
			return 1
		}
		defer f.Close()
		w = f
	}
	switch {
	case *calls != "":
		err = writeSorted(ctx, jsonPath, w, func(c fleet.Call) fleet.CallRow { return c.Row() },
			func(a, b fleet.CallRow) bool {
				return a.Trace < b.Trace || a.Trace == b.Trace && a.EntryPos < b.EntryPos
			})
	case *memory != "":
		err = writeSorted(ctx, jsonPath, w, func(a fleet.Access) fleet.MemoryRow { return a.Row() },
			func(a, b fleet.MemoryRow) bool {
				return a.Trace < b.Trace || a.Trace == b.Trace && (a.Position < b.Position || a.Position == b.Position && a.Address < b.Address)
			})
	default:
		err = writeSorted(ctx, jsonPath, w, func(sc fleet.Syscall) fleet.SyscallRow { return sc.Row() },
			func(a, b fleet.SyscallRow) bool {
				return a.Trace < b.Trace || a.Trace == b.Trace && a.Position < b.Position
			})
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd-fleet: %v\n", err)
		return 1
	}
	return 0
}

// writeSorted reads the workers' rows, sorts them by (trace, position)
// and writes them as a JSON array with the tables' column names.
func writeSorted[T, R any](ctx context.Context, path string, w *os.File, row func(T) R, less func(a, b R) bool) error {
	in, err := fleet.ReadJSON[T](ctx, path)
	if err != nil {
		return err
	}
	rows := make([]R, len(in))
	for i, x := range in {
		rows[i] = row(x)
	}
	sort.SliceStable(rows, func(i, j int) bool { return less(rows[i], rows[j]) })
	return tables.WriteJSON(w, rows)
}

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

// probeCmd runs a probe script's parallel pass as a Beam pipeline; the
// script is compiled and bound to every recording here first, so that a
// bad script or an unreadable recording fails before the pipeline.
func probeCmd(args []string) int {
	quiet := flag.Bool("q", false, "print only what the script prints (#pragma D option quiet)")
	script := flag.String("n", "", "the script, on the command line")
	file := flag.String("s", "", "the script, in a file")
	tmp := flag.String("tmp", "", "where the workers leave their partial results for this program (a directory or URL both see; default: a local temporary directory, enough for prism)")
	var margs stringList
	flag.Var(&margs, "arg", "a macro argument ($1, $2... in order; repeatable)")
	pats, err := parseFlags(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd-fleet probe: %v\n", err)
		return 2
	}
	beam.Init()
	if (*script == "") == (*file == "") {
		fmt.Fprintf(os.Stderr, "ttd-fleet probe: give the script with -n SCRIPT or -s FILE\n%s", usage)
		return 2
	}
	if len(pats) == 0 {
		fmt.Fprintf(os.Stderr, "ttd-fleet probe: no trace\n%s", usage)
		return 2
	}
	src, srcName := *script, "-n"
	if *file != "" {
		b, err := os.ReadFile(*file)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ttd-fleet probe: %v\n", err)
			return 2
		}
		src, srcName = string(b), *file
	}
	if os.Getenv("TTD_FLEET_VERBOSE") == "" {
		fleet.Quiet()
	}
	sc := fleet.Script{Src: src, Args: margs, Quiet: *quiet}
	p, err := sc.Compile()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd probe: %s:%v\n", srcName, err)
		return 2
	}
	ctx := context.Background()
	defer fleet.Cleanup()
	var bs []*probe.Bound
	var names []string
	for _, pat := range pats {
		ns, err := fleet.List(ctx, pat)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ttd probe: %v\n", err)
			return 1
		}
		names = append(names, ns...)
	}
	// Opening copies URLs' recordings here and, for scripts that read
	// memory, builds indexes: a bar on a terminal.
	bar := progress.New("ttd-fleet: opening", "recordings", int64(len(names)))
	for i, tr := range names {
		t, closeT, symErr, err := fleet.OpenTarget(ctx, tr, p.NeedsMemory(), nil)
		if err != nil {
			bar.Done()
			fmt.Fprintf(os.Stderr, "ttd probe: %v\n", err)
			return 1
		}
		defer closeT()
		if symErr != nil {
			fmt.Fprintf(os.Stderr, "ttd probe: %s: symbols: %s\n", tr, strings.SplitN(symErr.Error(), "\n", 2)[0])
		}
		b, err := p.Bind(t)
		if err != nil {
			bar.Done()
			fmt.Fprintf(os.Stderr, "ttd probe: %s:%v\n", srcName, err)
			return 2
		}
		bs = append(bs, b)
		bar.Set(i+1, len(names))
	}
	bar.Done()
	dir := *tmp
	if dir == "" {
		d, err := os.MkdirTemp("", "ttd-fleet-")
		if err != nil {
			fmt.Fprintf(os.Stderr, "ttd-fleet: %v\n", err)
			return 1
		}
		defer os.RemoveAll(d)
		dir = d
	}
	runner := *runners.Runner
	if runner == "" || runner == "beam" {
		runner = "prism"
	}
	o, _, err := fleet.RunProbe(ctx, fleet.ProbeRun{Script: sc, Program: p, Bound: bs, Tmp: dir,
		Run: func(pl *beam.Pipeline) error {
			_, err := beam.Run(ctx, runner, pl)
			return err
		}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd probe: %v\n", err)
		return 1
	}
	o.Print(os.Stdout, os.Stderr)
	return o.ExitCode()
}
