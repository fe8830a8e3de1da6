// Package live evaluates a probe script while a program runs under ttd
// ("ttd probe ... -- PROG", as dtrace -c): with a trace to write (-o)
// it runs the program under the recorder and taps the recording
// (recorder.Tap); without one it runs the program as ttd run does, with
// no prediction caches (x86.MemoryBlind), and counts positions as the
// recorder does (bare.go). Either way probe.Live sees each event at the
// position a recording gives it, so live and recorded runs agree. The
// probes' InstFilter hooks only the probed instructions; the rest runs
// translated. Without -o, translated code logs the fn probes'
// instructions instead of leaving for them (x86.HookLogger), in narrow
// records when the script only counts at them (x86.HookStepLogger,
// probe.Program.CountsOnly: probe/livesteps.go tallies them by PC).
//
// Watch probes without -o run as ttd run does too: the pages holding a
// watched range stay out of the first process's TLBs
// (x86.Memory.WatchPages), so only the accesses to those pages leave
// translated code, and bare's MemRead and MemWrite fire the probes of
// those that overlap a range; what a syscall or a signal delivery wrote
// comes from the event's ranges (emu.SyscallEvent.Writes). With -o they
// see every access through the recorder (recorder.AccessTap), with the
// program in the interpreter. Either way the kernel's writes are
// reported in the pieces and order of a replay (reader.KernelPieces,
// which does not depend on the prediction cache), and an exec of the
// first process gives the watched bytes of the image it replaced one
// read and one write, as a replay does (reader.ExecPieces; the regions
// are taken at the execve's entry). A forked child's accesses are never
// reported: a replay follows the first process.
// Profile probes stop each thread at the multiples of their periods
// (emu.BudgetObserver).
//
// Output streams: after each event the tap calls probe.Live.Flush,
// which prints the records that event made (Output), so they interleave
// with the program's own output as the events happen; END and the
// aggregations print when the program ends (also when exit() or a
// forwarded ^C ended it). A syscall's entry probes fire as it begins
// (emu.SyscallEntryObserver), before a blocking read waits, as DTrace's
// do; its return probes when it completes. The entry's position is the
// one the recording gives the syscall: the same, unless the thread
// blocked and another thread ran before it completed (the recording
// then fires the entry at the completion).
//
// What a live run changes, and a recording never does:
//
//   - exit() in a script kills the program (SIGKILL to its process
//     group), as dtrace kills the command it started;
//   - usdt probes guarded by a semaphore (python's function__entry) run
//     only while a tracer holds the semaphore: the live run adds one to
//     each semaphore of a bound probe when its module's writable segment
//     is mapped, as systemtap does. The program then takes the path with
//     the probes (python computes their arguments), which is what the -o
//     recording holds; a recording made without a tracer never reaches
//     those sites, and probing it says so.
//
// Package live depends on emu, recorder and probe; never on reader (it
// does not re-simulate) nor on the command line.
package live
