package emu

// Observer receives the operating-system events of a process: everything
// a recorder must log besides what the CPU does (see x86.Observer). All
// calls happen on the goroutine running the process. A nil Config.Observer
// costs nothing: the syscall layer then does not even collect the ranges
// it writes.
type Observer interface {
	// Syscall is called when a syscall completes (or, for exit and
	// rt_sigreturn, is about to take effect). The event's Writes are the
	// guest memory ranges the kernel side wrote, in order; their
	// contents are in guest memory when Syscall is called. The event is
	// the thread's own, reused: it is valid only during the call.
	Syscall(t *Thread, ev *SyscallEvent)
	// Signal is called when a signal is delivered to a handler or acts
	// by default; for handlers, the frame has already been written and
	// the registers point at the handler.
	Signal(t *Thread, ev *SignalEvent)
	// Mmap is called for every new mapping (the ELF loader's too).
	Mmap(t *Thread, ev MmapEvent)
	// ThreadStart and ThreadExit bracket a thread's life.
	ThreadStart(t *Thread)
	ThreadExit(t *Thread, code int)
	// ProcessStart is called when thread parent creates process child
	// (fork, vfork, clone), before the child's ThreadStart.
	ProcessStart(child *Process, parent *Thread)
	// ProcessExec is called when a process started a new program
	// (execve succeeded), before the Syscall event of its execve.
	ProcessExec(p *Process)
	// ProcessEnd is called when a process other than the first ends;
	// ProcessExit reports the first.
	ProcessEnd(p *Process, st ExitStatus)
	// ProcessExit is called once when the first process ends.
	ProcessExit(p *Process, st ExitStatus)
	// Switch is called when the scheduler starts running a different
	// thread than the one that ran last (the first thread included),
	// before anything happens on it: before the completion of a syscall
	// it was blocked in (its Syscall event), signal deliveries to it and
	// its first instruction. Threads run one at a time, so the events
	// between two Switch calls all belong to one thread, except
	// ThreadStart of a new thread (reported by its parent's clone) and
	// the ThreadExit events of exit_group and execve.
	Switch(t *Thread)
	// Checkpoint is called each time the global instruction count
	// (Process.Icount) has grown by Config.CheckpointEvery since the
	// last one (or since the start), or earlier when a CheckpointCoster
	// says its cost has, between instructions, after the events of the instruction that
	// reached it (its syscall, a signal delivery) were handled. Other
	// threads may then be blocked in a syscall (Thread.InSyscall): rip
	// is past their syscall instruction and rax still holds the syscall
	// number; their Syscall event comes when the syscall completes.
	Checkpoint(p *Process)
}

// SyscallEntryObserver, when an Observer implements it, is told of each
// syscall as it begins, before its handler runs (and so before a
// blocking read waits): a live probe's syscall::NAME:entry fires here.
// A syscall a signal interrupted and SA_RESTART runs again begins again.
// args holds rdi, rsi, rdx, r10, r8, r9; it is valid during the call.
type SyscallEntryObserver interface {
	SyscallEntry(t *Thread, nr int, args *[6]uint64)
}

// CheckpointCoster, when an Observer implements it, brings checkpoints
// forward: CheckpointCost is the replay cost, in instructions, of what
// ran since the last checkpoint beyond its instructions (a program's
// start-up: code to decode, pages to fault in), and the scheduler calls
// Checkpoint as soon as instructions plus that cost reach
// Config.CheckpointEvery. The cost may grow only in an event that ends
// a run (a syscall such as execve), and the observer sets it back to 0
// in Checkpoint.
type CheckpointCoster interface {
	CheckpointCost() uint64
}

// BudgetObserver, when an Observer implements it, may shorten a
// thread's runs: before each CPU.Run of thread t, Budget returns how
// many of the budget instructions t may run (at least 1) before the
// observer must see it again (a live profile probe stops each thread at
// the multiples of its period and fires there).
type BudgetObserver interface {
	Budget(t *Thread, budget uint64) uint64
}

// SyscallEvent describes one completed syscall.
type SyscallEvent struct {
	Nr     int
	Name   string
	Args   [6]uint64
	Ret    uint64 // the value left in rax (negative errno on failure)
	Writes []MemRange
	// Restart is set when a signal interrupted the syscall and it will
	// run again after the handler (SA_RESTART): rax holds the syscall
	// number again (Ret) and rip was moved back to the syscall
	// instruction.
	Restart bool
	// Exec is set for an execve or execveat that succeeded: the thread
	// runs a new program in a new address space (Thread.CPU is new).
	Exec bool
	// Moved are the bytes a sendfile, splice, tee or copy_file_range
	// moved to a descriptor Config.KeepMoved chose (they never were in
	// guest memory); nil otherwise. Valid until the observer returns.
	Moved []byte
}

// SignalEvent describes a signal acting on a thread.
type SignalEvent struct {
	Info    SigInfo
	Handler uint64 // 0 for a default action
	// For handlers, what delivery wrote: the rt_sigframe (return
	// address, ucontext, siginfo: SigFrameBytes) at Frame and the fxsave
	// area (SigFPStateBytes) at FPState. Nothing else on the stack
	// changes.
	Frame, FPState uint64
	// Fatal is set when the signal terminates the process.
	Fatal bool
	// Ptrace marks an event that delivers nothing (ptrace.go): the
	// thread stopped for its tracer before delivering Info (a fault's
	// signal included, which the tracer may suppress), or the tracer
	// changed its registers; the thread's registers are the event's.
	Ptrace bool
}

// ForeignWriteObserver is an Observer that learns of the bytes a process
// wrote in another's memory (ptrace's pokes, process_vm_writev): n
// bytes at addr in t's address space.
type ForeignWriteObserver interface {
	ForeignWrite(t *Thread, addr, n uint64)
}

// MmapEvent describes a new mapping. Path is empty for anonymous memory;
// for a file, the first FileLen bytes of the mapping come from Path at
// Offset (the rest, if any, is zero).
type MmapEvent struct {
	Addr, Len uint64
	Prot      int
	Flags     int
	Path      string
	Offset    uint64
	FileLen   uint64
}
