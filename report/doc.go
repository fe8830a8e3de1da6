// Package report writes a recording as one self-contained HTML page that
// needs no network: its threads as lanes along the positions (when each
// ran), syscalls and signals as marks on them, the checkpoints, a flame
// graph of instructions by call path, the hottest functions and,
// optionally, the root-cause differences with another recording. Clicking
// an element shows its position and the `ttd query --at` command that
// opens it.
//
// report depends on calls (the call tree), reader (the events), and ttd
// (syscall names); it must never depend on emu, the recorder or cmd.
package report
