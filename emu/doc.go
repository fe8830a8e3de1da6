// Package emu is ttd's Linux process: it loads an ELF program (static,
// static-PIE, or dynamic through its PT_INTERP interpreter) into an x86
// address space, keeps the address-space policy (VMAs, mmap, brk, mprotect)
// on top of x86.Memory, runs threads on the x86 interpreter, and emulates
// the Linux system-call interface (one file per area, one table naming
// every x86-64 syscall), signals and the CPUID the guest sees.
//
// Guest threads are not host threads. They run one at a time on the
// goroutine that called Process.Run, under a deterministic round-robin
// scheduler with a time slice counted in guest instructions (sched.go);
// futexes, signals, timers and sleeps are emulated, and a thread that
// waits for a host descriptor (a pipe, a socket, a terminal) blocks in
// the scheduler while a helper goroutine polls the descriptor, so the
// other threads keep running. The schedule depends on host timing only
// through such waits, and every decision is reported (Observer.Switch).
//
// Everything the recorder must log about the operating system (syscall
// results and the guest memory they wrote, signal deliveries, file
// mappings, thread and process lifetimes) is reported through Observer; a
// nil Observer costs nothing.
//
// emu depends only on x86 and the host (golang.org/x/sys/unix). It must
// never depend on the recorder, the trace format or the reader: replaying
// a trace never runs this package.
package emu
