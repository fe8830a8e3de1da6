// Command ttd is the time-travel debugger's command line. It is wiring
// and flags only: the work is done by the packages it calls.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"sort"
	"strings"
	"sync"

	"ttd/emu"
	"ttd/internal/hugeheap"
	"ttd/x86"
)

// command is one subcommand.
type command struct {
	name    string
	args    string
	summary string
	run     func(name string, args []string) int
	// order places the command in 'ttd help' (lower first; ties by name).
	order int
}

var commands []command

// register adds a subcommand. Each command's file registers its own in an
// init function, so that adding a command touches no shared list.
func register(c command) {
	commands = append(commands, c)
	sort.SliceStable(commands, func(i, j int) bool {
		if commands[i].order != commands[j].order {
			return commands[i].order < commands[j].order
		}
		return commands[i].name < commands[j].name
	})
}

func init() {
	register(command{"run", "[--verbose] [--stats] [--cpu LEVEL] [--] PROG [ARGS...]", "run PROG in the emulator", runCmd, 10})
	register(command{"record", "[-o TRACE] [--embed-binaries] [--verbose] [--cpu LEVEL] [--] PROG [ARGS...]", "run PROG and record a trace of it", recordCmd, 20})
	register(command{"replay", "[--verify] [--quiet] TRACE", "re-simulate a trace and print the program's output", replayCmd, 30})
	register(command{"info", "[--records] [--json] TRACE", "describe a trace: threads, instructions, size, density, how the program ended, the process tree", infoCmd, 40})
	register(command{"query", queryUsage, "travel to a position of a trace (or search from it: the last write to a variable...) and show the state there", queryCmd, 50})
	register(command{"dap", "[--listen ADDR]", "serve the Debug Adapter Protocol (VS Code) on stdin/stdout or ADDR", dapCmd, 60})
}

func main() {
	os.Exit(mainExit(os.Args[1:]))
}

// mainExit runs the command line and returns the exit status.
func mainExit(args []string) (status int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "ttd: internal error: %v\n", r)
			status = 70
		}
	}()
	// No sampling of allocations for a heap profile nobody asked for:
	// it walked the stack every 512 KiB allocated, which is every 128
	// guest pages a program maps (1.5% of recording malloc_stress).
	runtime.MemProfileRate = 0
	tuneGC()
	reserveHugeHeap()
	// TTD_CPUPROFILE=FILE profiles ttd itself (for performance work).
	if p := os.Getenv("TTD_CPUPROFILE"); p != "" {
		if f, err := os.Create(p); err == nil {
			pprof.StartCPUProfile(f)
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
	}
	// TTD_GOTRACE=FILE writes a Go execution trace (runtime/trace) of
	// ttd itself: where its goroutines wait (go tool trace -pprof=sync).
	if p := os.Getenv("TTD_GOTRACE"); p != "" {
		if f, err := os.Create(p); err == nil {
			trace.Start(f)
			defer func() { trace.Stop(); f.Close() }()
		}
	}
	// TTD_MEMPROFILE=FILE writes a profile of every allocation ttd made.
	if p := os.Getenv("TTD_MEMPROFILE"); p != "" {
		runtime.MemProfileRate = 1
		defer func() {
			runtime.GC() // the profile shows allocations up to the last GC
			if f, err := os.Create(p); err == nil {
				pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	if len(args) == 0 {
		usage(os.Stderr)
		return 2
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[0] == "help" {
			// ttd help COMMAND is ttd COMMAND --help.
			for _, c := range commands {
				if c.name == args[1] {
					return c.run(c.name, []string{"--help"})
				}
			}
			fmt.Fprintf(os.Stderr, "ttd: unknown command %q; 'ttd help' lists the commands\n", args[1])
			return 2
		}
		usage(os.Stdout)
		return 0
	case "version", "-version", "--version":
		printVersion(os.Stdout)
		return 0
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(c.name, args[1:])
		}
	}
	fmt.Fprintf(os.Stderr, "ttd: unknown command %q; 'ttd help' lists the commands\n", args[0])
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: ttd COMMAND [ARGS...]")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-6s %s\n         %s\n", c.name, c.args, c.summary)
	}
	fmt.Fprintln(w, "\n'ttd help COMMAND' (or 'ttd COMMAND --help') describes a command's flags, with an example;")
	fmt.Fprintln(w, "'ttd --version' prints the version, the commit and the Go version.")
}

// examples holds a command line to paste for each command, shown at the
// end of its --help (set in the command's init).
var examples = map[string]string{
	"run":    "ttd run -- ls -l /",
	"record": "ttd record -o ls.ttd -- ls -l /",
	"replay": "ttd replay --verify ls.ttd",
	"info":   "ttd info --records ls.ttd",
	"query":  "ttd query ls.ttd --at 50% --regs --where",
	"dap":    "ttd dap --listen 127.0.0.1:4711",
	// The other commands' (their files may set their own in init).
	"syscalls":  "ttd syscalls ls.ttd -s 32",
	"reanimate": "ttd reanimate --root /tmp/re --verify ls.ttd   # after mkdir /tmp/re",
	"probe":     "ttd probe -n 'syscall::write:entry { @[probefunc] = count(); }' ls.ttd",
	"gdbserver": "ttd gdbserver --listen 127.0.0.1:2345 ls.ttd   # then: gdb -ex 'target remote :2345' ./ls",
}

// flagSets remembers each subcommand's flags for its --help.
var flagSets = map[string]*flag.FlagSet{}

// newFlags returns a flag set for a subcommand that reports errors in
// one line; --help describes every flag (flagError).
func newFlags(name, args string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	flagSets[name] = fs
	_ = args
	return fs
}

// flagError prints a flag-parsing error and the subcommand's usage line,
// or, for --help, the command's description, every flag and an example.
func flagError(c, args string, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		commandHelp(os.Stdout, c, args)
		return 0
	}
	fmt.Fprintf(os.Stderr, "ttd %s: %v; usage: ttd %s %s ('ttd help %s' describes the flags)\n", c, err, c, args, c)
	return 2
}

// commandHelp writes a command's --help.
func commandHelp(w io.Writer, c, args string) {
	fmt.Fprintf(w, "usage: ttd %s %s\n", c, args)
	for _, cmd := range commands {
		if cmd.name == c {
			fmt.Fprintf(w, "\n%s\n", cmd.summary)
		}
	}
	if fs := flagSets[c]; fs != nil {
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintln(w, "\nflags:")
			fs.SetOutput(w)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
		}
	}
	if ex := examples[c]; ex != "" {
		fmt.Fprintf(w, "\nexample:\n  %s\n", ex)
	}
}

// inheritedFDs are the descriptors above 2 ttd was started with, listed
// before it opens any of its own: the programs it runs inherit them.
var inheritedFDs = emu.InheritedFDs()

// programConfig resolves PROG (through PATH when it has no slash) and
// returns the emulator configuration to run it with the caller's
// environment; a non-zero status means PROG was not found.
func programConfig(rest []string, verbose bool) (emu.Config, int) {
	path := rest[0]
	if !strings.Contains(path, "/") {
		p, err := exec.LookPath(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ttd: %s: command not found\n", path)
			return emu.Config{}, 127
		}
		path = p
	}
	return emu.Config{
		Path:           path,
		Args:           rest,
		Env:            os.Environ(),
		Inherit:        inheritedFDs,
		Verbose:        verbose,
		Log:            os.Stderr,
		ForwardSignals: true,
		BeforeHostKill: func(st emu.ExitStatus) {
			fmt.Fprintf(os.Stderr, "ttd: %s %s\n", rest[0], st)
		},
	}, 0
}

// runCmd implements "ttd run".
func runCmd(name string, args []string) int {
	const usageArgs = "[--verbose] [--stats] [--cpu v1|v2|v3|host] [--] PROG [ARGS...]"
	fs := newFlags(name, usageArgs)
	verbose := fs.Bool("verbose", false, "name unimplemented syscalls the program uses")
	statsFlag := fs.Bool("stats", false, "print, on exit, how many instructions ran interpreted and why, by opcode (also TTD_STATS=1)")
	cpu := cpuFlag(fs)
	if err := fs.Parse(args); err != nil {
		return flagError(name, usageArgs, err)
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return flagError(name, usageArgs, errors.New("missing program"))
	}
	if _, err := emu.ResolveCPU(*cpu); err != nil {
		return flagError(name, usageArgs, err)
	}
	cfg, status := programConfig(rest, *verbose)
	if status != 0 {
		return status
	}
	cfg.CPU = *cpu
	reserveHugeHeapNow()
	if os.Getenv("TTD_WINDOW") != "0" {
		emu.UseHostWindow()
	}
	p, err := emu.NewProcess(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd: %v\n", err)
		if errors.Is(err, os.ErrNotExist) {
			return 127
		}
		return 126
	}
	if *statsFlag {
		x86.StatsOn = true
	}
	st, err := p.Run()
	if x86.StatsOn {
		x86.WriteStats(os.Stderr, p.Icount())
	}
	if err != nil {
		var ue *x86.UnimplementedError
		if errors.As(err, &ue) {
			fmt.Fprintf(os.Stderr, "ttd: %s stopped: %v\n", rest[0], err)
		} else {
			fmt.Fprintf(os.Stderr, "ttd: %s: %v\n", rest[0], err)
		}
		return st.ExitCode()
	}
	if st.Signal != 0 {
		fmt.Fprintf(os.Stderr, "ttd: %s %s\n", rest[0], st)
	}
	return st.ExitCode()
}

// parseInterspersed parses flags placed before, between or after the
// positional arguments ("ttd flows TRACE --json"), and leaves the
// positional ones in fs.Args(). "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) error {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(args) > 0 && len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	return fs.Parse(append([]string{"--"}, pos...))
}

// hugeHeapBytes is how much of the Go heap is backed by huge pages:
// `ttd run node -e 0` peaks at 138 MB of RSS, `ttd record python3 -c
// pass` at 169 MB (with 256 MiB rather than 128 its CPU went from 1.77
// to 1.56 s, least of 3; ls and python3 run no slower). Memory the
// process never touches costs nothing.
const hugeHeapBytes = 256 << 20

// reserveHugeHeap backs the heap with huge pages (hugeheap.Reserve) when
// guest code starts to run (x86.OnFirstDecode), unless TTD_HUGEPAGES=0:
// `ttd run python3 -c pass` took 13,400 page faults, at about 16 µs of
// CPU each. Reserving costs a few ms (an allocation and a collection):
// commands that run no guest code (info, --version) do not pay it, and
// it is cheapest before the heap has grown (reserving at the 1,000th
// decoded block made ls and sh -c true 20-30 ms slower than at the
// first).
func reserveHugeHeap() {
	if os.Getenv("TTD_HUGEPAGES") != "0" {
		x86.OnFirstDecode = reserveHugeHeapNow
	}
}

// reserveHugeHeapNow reserves the huge-page heap now, once, if
// reserveHugeHeap armed it: `ttd run` and `ttd record` call it before
// loading the program, so that the address space's 1 MiB of TLBs, the
// program's pages and the first decoded blocks are huge-page backed too.
var reserveHugeHeapNow = sync.OnceFunc(func() {
	if x86.OnFirstDecode != nil {
		hugeheap.Reserve(hugeHeapBytes)
		p := debug.SetGCPercent(-1) // (to read it)
		debug.SetGCPercent(p)
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		retuneGC(ms.NextGC, p)
	}
})
