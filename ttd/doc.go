// Package ttd is the debugging session on top of the reader: a timeline
// of positions over a recorded trace, the state of every thread and of
// memory at any position, travel in both directions (steps, continue to
// breakpoints), and the queries of iDNA's Table 2 (FindPrevWrite and
// friends), following seeds/idna-nirvana.txt §3-4.
//
// A position is the number of guest instructions retired by all threads
// before it. The state at a position includes every event that takes
// effect there (a syscall's results, a signal frame) and no instruction
// at or after it.
//
// Going backwards re-simulates from a point before the target: the
// trace's checkpoints, and the session's own snapshots (registers,
// prediction caches, reader cursors, address space and code), taken
// every Options.FineEvery instructions in the segments the user visits,
// and a few finer ones near the positions it travels to. Going forward,
// travel runs the session's own re-simulation on from the current
// position (onward.go).
// The trace's access summaries (written by ttd record, or built on open;
// see index.go) say exactly which bytes every checkpoint interval read,
// wrote and executed, so searches skip the intervals that did not touch
// what they look for, and memory reads re-simulate only the last
// interval that touched each byte. Watchpoints follow gdb on rr
// (watch.go); Origin follows a value's dataflow back (origin.go); a
// ring-buffer trace is a window of the run (window.go).
//
// Memory is reported with a known mask: a byte is known when the program
// read or wrote it, a syscall or a signal delivery wrote it, or it was
// fetched as code, before the position. Other bytes are unknown; the
// session never invents them.
//
// Breakpoints belong to the session's timeline, never to a CPU (as in
// rr), so a DAP or gdb server drives a Session and nothing else.
//
// Target (target.go) is the debugger backend over a Session that both
// protocol servers use: threads (a Go program's goroutines,
// goroutines.go), frames, variables and expressions through package
// symbols, and searches for code, data and per-instruction predicates.
//
// Package ttd depends on reader, tracefile, x86, symbols and internal/linux, never on emu
// or the recorder (its tests use them to make traces), and reads no host
// state but the trace and, for symbols, the recorded binaries
// (or their copies embedded in the trace) and their debug information.
package ttd
