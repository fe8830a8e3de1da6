// Package reader re-simulates a trace written by package recorder with
// the same x86 core, from the trace alone: no binary, no files, no host
// syscalls. Replaying a trace that came from someone else is safe: guest
// syscalls are never executed, their recorded results are applied.
//
// Re-simulation starts at a checkpoint (Trace.Checkpoints lists them; a
// chunk of the trace begins with one or holds several): the checkpoint
// gives every thread's registers and resets the prediction caches; each
// memory read then takes its value from the thread's prediction cache, or
// from the trace when the recorder logged it. Code bytes, syscall
// results, signal frames and address-space changes come from their
// records. RunTo(pos) stops with every event at pos applied.
//
// For the debugger above it (package ttd) a Replay also offers:
//   - Snapshot and Trace.Resume: the complete re-simulation state at a
//     position (registers, prediction caches, trace cursors, address
//     space and code), to go back to without re-simulating from a
//     checkpoint;
//   - Hook (every instruction), Access (memory accesses overlapping the
//     Watch ranges, with their positions) and OnEvent (syscalls, signals,
//     threads, module loads...);
//   - Track, Known and Cut: which bytes of memory re-simulation learned
//     (read, written, written by a syscall, fetched as code) and their
//     values. The x86.Memory image itself is not the program's memory:
//     reads are served from the prediction cache and the trace.
//
// A trace of a process tree (processes = tree) re-simulates every
// process on the one timeline, each in its own address space
// (process.go); the focus (Trace.SetFocus, the first process by default)
// is the process whose memory Memory, Known, Track and Access report.
//
// The read hook (MemRead) is the hot path: one call per read, no
// allocation, everything rare out of line.
//
// The reader depends on x86, predict and tracefile, never on emu, the
// recorder or the host operating system (tests use the recorder to make
// traces).
package reader
