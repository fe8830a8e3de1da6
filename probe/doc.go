// Package probe is a D-like language (DTrace's probes, predicates,
// actions and aggregations) evaluated over recordings: every probe
// firing is an event of the re-simulation (package reader), so a script
// sees every call, syscall and memory access of the recorded execution
// without ever changing the program or the recording.
//
// # Language
//
// A script is clauses "probe[, probe...] [/predicate/] { statements }"
// and "#pragma D option quiet|flowindent|strsize=N". Probes are
// provider:module:function:name with * and ? wildcards; a double-quoted
// part is literal (fn::"mix<int, long>":entry):
//
//	fn:MODULE:FUNC:entry|return|OFFSET  (pid* is an alias of fn; C++
//	                                     names mangled or demangled)
//	usdt:MODULE:PROVIDER:NAME           (.note.stapsdt static probes)
//	syscall::NAME:entry|return
//	line:FILE:LINE
//	watch:ADDR_OR_SYMBOL:LEN:read|write|rw
//	proc:::exec|fork|exit   thread:::start|exit   signal:::deliver
//	profile:::N        (every N instructions of a thread: profile.go)
//	BEGIN   END
//
// Variables: globals, self->x (thread-local), this->x (clause-local),
// associative arrays a[k1, k2]; built-ins arg0..arg9, args[N], retval,
// errno, pid, tid, execname, probeprov/mod/func/name, timestamp and pos
// (the event's position), walltimestamp (the recording's start time plus
// one nanosecond per instruction); `sym reads a global of the program;
// ((struct T *)x)->member and s.member read the program's DWARF types
// (ctypes.go).
// Actions and functions: trace, printf (DTrace's conversions, %a for
// symbols), printa, stack/ustack(N) (CFI unwinding), copyin, copyinstr,
// stringof, exit, trunc, clear, speculation/speculate/commit/discard,
// strlen, strjoin, substr, basename, dirname... Aggregations: count,
// sum, min, max, avg, stddev, quantize, lquantize, keyed or not,
// printed at the end in DTrace's layout.
//
// # Safety
//
// Compile finds every script error before anything runs and reports it
// as an *Error with line:column naming the bad identifier. Bind reports
// a probe description matching nothing, with its line:column. A fault at
// run time (an unknown or unmapped address in copyinstr, a division by
// zero) ends the clause, is counted and reported as DTrace reports an
// error on an enabled probe, and the run goes on.
//
// # Compiling probes down
//
// Bind resolves probes to code addresses (fn, line), syscall numbers and
// event kinds. Re-simulation calls back only before the instructions at
// a probed address and the rets and leaving jumps of a function with a
// return probe (return probes fire there, as DTrace's pid provider does)
// — reader.Replay.HookInsts: the blocks holding them run translated and
// leave for Go just before each (x86's hook exits); syscalls, signals
// and threads come from the event stream. Memory is tracked only when
// the script reads it, and a script that needs no DWARF (NeedsDWARF)
// binds to the modules' ELF symbols alone (OpenTargetFor).
//
// # API for runners (the local runner here, Beam for many traces)
//
//	p, err := probe.Compile(src, args)       // parse and check once
//	b, err := p.Bind(target)                 // per trace: resolve probes
//	part, err := b.EvalSegment(k, init)      // one checkpoint segment -> *Partial
//	all := probe.Merge(part1, part2)         // associative, commutative
//	out := p.Finish(b, parts...)             // BEGIN, the merged partials, END
//	out, err := p.Run(bounds, opts)          // the local runner: all of the above
//	out.Print(stdout, stderr)                // DTrace's output
//
// A Partial is plain data (JSON): aggregation series, records keyed by
// (trace, position), fault count, exit, and the carried state described
// below. Merge folds aggregations by their merge law and orders records
// by (trace, segment, sequence), whatever the order and grouping of its
// arguments: an aggregation part remembers its trace and segment, and a
// segment's last part joins the next segment's first only once both are
// there (clear, trunc and printa in between stay in order).
//
// # Live programs
//
// "ttd probe ... -- PROG" evaluates the script while the program runs
// (live.go; package probe/live drives it from the emulator through the
// recorder's Tap): one segment from position 0, fed the events the
// re-simulation would give, at the recorder's positions, so live and
// recorded runs print the same output (probe/live's tests compare them).
// Modules bind as the program maps them; exit() stops the program.
// With LiveInfo.Stdout set, each record prints as its event happens
// (Live.Flush folds the new records, and the aggregation parts printa
// needs, into the outcome); Outcome.Print then prints the rest.
//
// # Parallel segments and the merge law
//
// A trace is split at its checkpoints; Run evaluates the segments
// --jobs at a time. Every aggregation's partial state is a commutative
// monoid (count adds, min takes the smaller, quantize adds buckets...).
// The operations that need what came before — clear, trunc and printa —
// cut an aggregation's partial into parts (AggPart) that are folded in
// position order at the end, so they too give the same result for every
// split. printf and trace output are records in position order.
//
// # Carried state: thread-locals and globals across segments
//
// A clause may read a variable that an earlier event wrote: self->ts set
// at a function's entry in one segment and read at its return in the
// next. Each segment is first evaluated assuming every variable it reads
// before writing is unset (as it is at the start of the recording); the
// Partial records those reads (Assumed), the segment's last writes
// (Writes) and the threads that ended (Ended). A sequential fix-up pass
// then walks the segments in order with the true state (BEGIN's writes,
// then each segment's composed in): a segment whose assumptions hold is
// exact as it is; one whose assumptions fail is evaluated again from the
// true state. This is exact for every script; it costs a second
// evaluation only for the segments that read state set before them
// (usually few: the fix-up count is Outcome.Reruns). Flowindent's
// indentation is computed when records are printed, so it needs none of
// this. A runner that cannot do the fix-up pass (Beam) must run it
// itself or restrict itself to programs where !CarriesState().
// Speculations do not cross segment boundaries (a commit of a
// speculation made in an earlier segment is reported as a fault).
//
// # Known limits
//
// usdt probes guarded by a semaphore (python's) run only while a tracer
// holds the semaphore: a live run raises it; over a recording made
// without one they cannot fire, and Bound.SemaphoreWarnings says so.
// DWARF casts name pointers to struct, union or class types or to
// typedefs of them; variables (this->p, self->p) hold plain integers,
// so a member access casts again; float and double members are values
// printf prints, and integers elsewhere (D does not compute with
// floating point). Live, watch probes make the driver report every
// memory access (the program then runs in the interpreter, as a replay
// with watch probes does), profile probes stop each thread at the
// multiples of their periods (profile.go), and syscall entry probes
// fire as the syscall begins (live.go); END reads the memory the
// program left. Over a process tree, fn, line and usdt probes bind
// once per program the processes ran, and an event's process picks its
// program's probes, symbols and memory (spaces.go); proc:::fork, exec
// and exit come from the trace's Process records.
// A return probe fires at each ret of the function
// and at jumps out of it (tail calls), as DTrace's pid provider does.
//
// Package probe depends on reader, symbols and ttd (index, syscall
// names); never on emu or the recorder (tests use them to make traces),
// nor on the command line.
package probe
