// Package syscalls exports every syscall of a recording with its
// arguments decoded and every buffer it read or wrote in full, in the
// spirit of Re-Animator (seeds/re-animator.txt): the lines strace -f -x
// prints, JSON lines, CSV or Parquet (SCHEMA.md documents the columns).
//
// The calls come from one re-simulation of the trace (package reader)
// with memory tracking on: a syscall's input buffers (write's data,
// paths, structs) are read from the re-simulated memory at the syscall,
// its outputs from what the recording says the kernel wrote. Bytes the
// re-simulation never learned (a string literal the program passed
// without reading it) come from the file mapped there, when the file is
// still on disk; bytes still unknown are reported as missing, never
// invented.
//
// The export streams: one call is decoded, written and forgotten at a
// time, so memory stays flat whatever the trace's length.
//
// Linux facts (names, errno, flags) come from internal/linux. The package
// depends on reader and tracefile, never on emu, the recorder or ttd's
// session, and never touches the host but to read mapped files.
package syscalls
