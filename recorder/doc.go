// Package recorder writes iDNA-style traces (seeds/idna-nirvana.txt §3):
// it runs a program in emu exactly as `ttd run` does and, as the
// observer of the process and of every thread's CPU, logs what a replay
// cannot predict: memory reads the per-thread prediction cache misses,
// code bytes as they are decoded (each once per value between
// checkpoints), syscall results and the guest memory
// the kernel wrote, non-deterministic instruction results, signal
// deliveries, thread starts, exits and switches, address-space changes,
// and periodic checkpoints of every thread's registers.
//
// Process trees. Every process the program starts is recorded into the
// same trace, on the same timeline (header parameter processes = tree):
// each thread has its prediction cache, each address space its announced
// regions and logged code (a fork's child starts with copies of its
// parent's), and Process records mark where a process starts, execs and
// ends; each checkpoint lists every process (ProcessState) and its
// mappings.
//
// Positions. A position is the number of instructions retired by all
// threads before a point. Key frames carry the position at which their
// event takes effect: for a syscall, after the syscall instruction
// retired; for a locked instruction or a fence, before it executes; for
// a thread switch, a signal delivery and a checkpoint, between
// instructions.
//
// Access summaries. With Options.Summaries, a recording of one process
// also builds the access summaries of every checkpoint interval from its
// own run (summary.go); a process tree leaves them to that function.
//
// The recorder depends on x86, emu, predict and tracefile; nothing depends
// on it but the command line (and tests).
package recorder
