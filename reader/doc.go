// Package reader re-simulates a trace written by package recorder with
// the same x86 core, from the trace alone: no binary, no files, no host
// syscalls. Replaying a trace that came from someone else is safe: guest
// syscalls are never executed, their recorded results are applied.
//
// Re-simulation starts at a checkpoint (every chunk of the trace begins
// with one): the checkpoint gives every thread's registers and resets the
// prediction caches; each memory read then takes its value from the
// thread's prediction cache, or from the trace when the recorder logged
// it. Code bytes, syscall results, signal frames and address-space
// changes come from their records.
//
// The reader depends on x86, predict and tracefile, never on emu or the
// host operating system.
package reader
