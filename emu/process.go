package emu

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"golang.org/x/sys/unix"

	"ttd/x86"
)

// Config describes the program to run and its environment.
type Config struct {
	// Path is the program file; Args its argv (Args[0] is the name the
	// program sees; empty means Path); Env its environment; Dir its
	// initial working directory ("" means the host's).
	Path string
	Args []string
	Env  []string
	Dir  string

	// Stdin, Stdout and Stderr are the host files behind guest file
	// descriptors 0, 1 and 2 (nil means the host's own).
	Stdin, Stdout, Stderr *os.File
	// Inherit lists host descriptors above 2 that the guest inherits
	// under the same numbers, as a program the shell starts inherits
	// them (`ttd run prog 3<file`): ttd run and record pass those ttd
	// itself was started with (InheritedFDs).
	Inherit []int

	// CPU is the guest processor's level: "v1", "v2", "v3", "host" or ""
	// (DefaultCPU); see ResolveCPU.
	CPU string

	// Verbose makes ttd name each unimplemented syscall the program uses
	// (once each) on Log.
	Verbose bool
	// Log receives ttd's own diagnostics (nil means os.Stderr).
	Log io.Writer

	// ForwardSignals forwards the host signals a user sends to ttd
	// (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1/2, SIGWINCH, SIGALRM) to
	// the guest. The command line sets it; tests leave it off.
	ForwardSignals bool
	// BeforeHostKill, if set, is called (on another goroutine) just
	// before ttd kills itself with a forwarded signal that terminates
	// the guest while the guest waits in a blocking host call; st is
	// the status the guest dies with.
	BeforeHostKill func(st ExitStatus)

	// CheckpointEvery makes the process call Observer.Checkpoint every
	// that many instructions (global count); 0 means never.
	CheckpointEvery uint64
	// TimeSlice is how many instructions a thread runs before the
	// scheduler moves on to the next runnable thread (0 means
	// DefaultTimeSlice).
	TimeSlice uint64

	// NoChildren makes fork, vfork and clone of a process fail with
	// ENOSYS (--verbose says why): for observers that follow one
	// process only.
	NoChildren bool
	// FollowFirst makes Observer and CPUObserver see the first process
	// only (ProcessStart, ProcessExec and ProcessEnd still report the
	// whole tree): the processes it starts run unobserved, and their
	// effects on it arrive through its syscalls (pipe reads, wait
	// statuses) and, for a vfork child sharing its memory, through
	// reads its prediction cache did not predict.
	FollowFirst bool

	// Observer receives OS-level events; CPUObserver is installed on
	// every thread's CPU. Both may be nil.
	Observer    Observer
	CPUObserver x86.Observer

	// KeepMoved, if set, says whether the bytes a sendfile, splice, tee
	// or copy_file_range moves to guest descriptor fd of p must reach
	// the observer (SyscallEvent.Moved). Those calls then move the
	// bytes through a buffer of ttd's instead of inside the host
	// kernel. The recorder keeps what goes to the recording's output.
	KeepMoved func(p *Process, fd int) bool
}

// ExitStatus says how the guest process ended.
type ExitStatus struct {
	// Code is the exit code when Signal is zero.
	Code int
	// Signal is the signal that killed the process, or zero.
	Signal unix.Signal
	// Fault is set when the signal came from a faulting instruction
	// (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP): Addr is the faulting
	// address (si_addr), PC the instruction's address and Inst its
	// disassembly.
	Fault bool
	Addr  uint64
	PC    uint64
	Inst  string
	// Lacks names the extension a SIGILL's instruction needs and the
	// guest CPU's level does not have (--cpu), if that was the cause.
	Lacks     string
	SigCode   int32
	CoreDumps bool
}

// ExitCode is the status a shell would see: the exit code, or 128+N for a
// process killed by signal N.
func (s ExitStatus) ExitCode() int {
	if s.Signal != 0 {
		return 128 + int(s.Signal)
	}
	return s.Code & 0xff
}

// String describes the status in one line, e.g. "killed by SIGSEGV
// (segmentation fault): address 0x0, instruction movl $0x1,(%rax) at
// 0x401136".
func (s ExitStatus) String() string {
	if s.Signal == 0 {
		return fmt.Sprintf("exited with code %d", s.Code)
	}
	msg := fmt.Sprintf("killed by %s (%s)", SignalName(s.Signal), unix.SignalName(s.Signal))
	if desc := unix.Signal(s.Signal).String(); desc != "" {
		msg = fmt.Sprintf("killed by %s (%s)", SignalName(s.Signal), desc)
	}
	if s.Fault {
		if why := faultCodeName(s.Signal, s.SigCode); why != "" {
			msg += ", " + why
		}
		msg += fmt.Sprintf(": address %#x, instruction %s at %#x", s.Addr, s.Inst, s.PC)
	}
	if s.Lacks != "" {
		msg += fmt.Sprintf(" (the guest CPU lacks %s: run ttd with --cpu host to give it the host's extensions)", s.Lacks)
	}
	return msg
}

// LoadError reports a program that cannot be started.
type LoadError struct {
	Path string
	Err  error
}

func (e *LoadError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *LoadError) Unwrap() error { return e.Err }

// ErrDeadlock is returned by Run when every thread waits for an event
// that no thread can cause.
var ErrDeadlock = errors.New("guest deadlocked")

// Process is one emulated Linux process: an address space, a file
// descriptor table, signal dispositions and its threads. The address
// space, file table and signal handlers are shared by the threads; each
// Thread has its own CPU, signal mask and pending signals. Processes
// belong to a Machine, whose scheduler runs the threads of all of them
// one at a time, all on the goroutine that called Run.
type Process struct {
	m   *Machine
	cfg Config
	log io.Writer
	obs Observer

	MM      *MM
	fds     *fdTable
	fs      *fsState
	sig     sigHandlers
	threads []*Thread // live threads, in creation order

	// PID is the process id the guest sees: the host's for the first
	// process, then the next free id of the tree (thread and process ids
	// are given in creation order, as Linux does on a quiet system).
	PID     int
	exe     string // absolute path of the executable, symlinks resolved
	argv    []string
	envc    int
	auxv    []uint64
	env     cpuEnv
	execed  bool // the process called execve (setpgid then fails)
	exitSig int  // the signal the parent gets when it ends (SIGCHLD)

	// The tree: the parent (nil for the first process), the children
	// not yet reaped, the process group and session.
	parent   *Process
	children []*Process
	pgid     int
	sid      int
	// vforkParent is the thread waiting in vfork for this child to
	// exec or exit; vforkDone is set when it did.
	vforkParent *Thread
	vforkDone   bool
	// sharedMM is the parent's address space a CLONE_VM child uses
	// until it execs or exits.
	sharedMM *MM
	// cloneFlags created the process (with the exit signal).
	cloneFlags uint64
	// stopped is set while a stop signal holds the process; the
	// state changes a parent's wait has not reported yet.
	stopped      bool
	stopSig      int
	waitStopped  bool
	waitContinue bool

	rlimits [rlimNLimits]unix.Rlimit
	// nice is the process's nice value (getpriority, setpriority).
	nice int
	// prctl(2) state Linux keeps per process: PR_SET_DUMPABLE 0 (reset
	// by execve), PR_SET_CHILD_SUBREAPER (orphans below go here, not to
	// the first process), PR_SET_THP_DISABLE (inherited).
	undumpable, childSubreaper, thpDisable bool
	// persona is the execution domain and flags personality(2) set
	// (inherited by fork and kept by execve; Linux keeps it per thread).
	persona uint32

	// shared are the process-directed pending signals.
	shared sigQueue
	// sigfds are the signalfds the process made (signalfd.go).
	sigfds []*signalFD
	// tracees are the threads this process traces (ptrace.go).
	tracees []*Thread
	timers  timerState

	retiredByExited uint64

	exited   bool // no thread runs any more
	zombie   bool // exited, not reaped yet
	released bool
	status   ExitStatus
	err      error
}

// Threads returns the live threads in creation order (the slice must
// not be modified).
func (p *Process) Threads() []*Thread { return p.threads }

// Machine returns the tree the process belongs to.
func (p *Process) Machine() *Machine { return p.m }

// Parent returns the parent process (nil for the first).
func (p *Process) Parent() *Process { return p.parent }

// Argv returns the arguments of the program the process runs.
func (p *Process) Argv() []string { return p.argv }

// Envc returns the number of environment variables the program the
// process runs was started with.
func (p *Process) Envc() int { return p.envc }

// CloneFlags returns the clone flags that created the process (0 for
// the first).
func (p *Process) CloneFlags() uint64 { return p.cloneFlags }

// Exe returns the absolute path of the program the process runs.
func (p *Process) Exe() string { return p.exe }

// Ppid returns the parent's pid (the host's parent of ttd for the
// first process).
func (p *Process) Ppid() int { return p.ppid() }

// Status returns how the process ended (valid once it exited).
func (p *Process) Status() ExitStatus { return p.status }

// Icount is the number of instructions retired by all threads of all
// processes, those that exited included: the global position of the
// execution.
func (p *Process) Icount() uint64 { return p.m.Icount() }

// NewProcess loads cfg.Path and prepares its main thread, ready to Run:
// the first process of a new Machine.
func NewProcess(cfg Config) (*Process, error) {
	m := newMachine(cfg)
	p := &Process{m: m, cfg: cfg, log: m.log, obs: cfg.Observer, exitSig: int(unix.SIGCHLD)}
	p.PID = unix.Getpid()
	m.nextID = p.PID + 1
	p.pgid = unix.Getpgrp()
	p.sid, _ = unix.Getsid(0)
	if raw, err := unix.Getpriority(unix.PRIO_PROCESS, 0); err == nil {
		p.nice = 20 - raw // the raw syscall's encoding
	}
	feat, err := ResolveCPU(cfg.CPU)
	if err != nil {
		return nil, err
	}
	p.env = newCPUEnv(feat)
	for i := range p.rlimits {
		unix.Getrlimit(i, &p.rlimits[i])
	}
	fs, err := newFSState(cfg.Dir)
	if err != nil {
		return nil, &LoadError{Path: cfg.Dir, Err: err}
	}
	p.fs = fs
	fds, err := newFDTable(cfg.Inherit, cfg.Stdin, cfg.Stdout, cfg.Stderr)
	if err != nil {
		fs.close()
		return nil, err
	}
	p.fds = fds
	p.MM = NewMM()
	cpu := x86.NewCPU(p.MM.Mem, p.MM.Code)
	p.env.install(cpu)
	cpu.Obs = cfg.CPUObserver
	t := &Thread{P: p, CPU: cpu, Tid: p.PID, prctl: threadPrctl{caps: hostCaps()}}
	p.threads = []*Thread{t}
	m.init = p
	m.procs = []*Process{p}
	m.threads = []*Thread{t}
	args := cfg.Args
	if len(args) == 0 {
		args = []string{cfg.Path}
	}
	if err := p.exec(t, cfg.Path, "", args, cfg.Env); err != nil {
		p.release()
		return nil, err
	}
	return p, nil
}

// Run executes the process tree until the first process exits or is
// killed (the processes left are then killed). The error is non-nil
// when the emulator itself cannot continue (an unimplemented
// instruction, a deadlock); the status then reports the program as
// killed by SIGILL or SIGKILL.
func (p *Process) Run() (st ExitStatus, err error) {
	m := p.m
	if m.done || p.exited {
		return p.status, p.err
	}
	defer func() {
		if r := recover(); r != nil {
			var pc uint64
			if t := m.sched.last; t != nil {
				pc = t.CPU.RIP
			}
			if m.cfg.Verbose {
				p.logf("internal error: %v\n%s", r, debug.Stack())
			}
			st, err = ExitStatus{Signal: unix.SIGKILL}, fmt.Errorf("internal error at guest rip %#x: %v", pc, r)
			p.exited = true
			m.done = true
			m.releaseAll()
		}
	}()
	if m.cfg.ForwardSignals {
		stop := m.startForwarding()
		defer stop()
	}
	if p.obs != nil {
		p.obs.ThreadStart(p.threads[0])
	}
	m.schedule()
	if p.obs != nil {
		p.obs.ProcessExit(p, p.status)
	}
	m.releaseAll()
	return p.status, p.err
}

// release frees the process's host resources (files, mappings, helper
// goroutines) once.
func (p *Process) release() {
	if p.released {
		return
	}
	p.released = true
	for _, t := range p.threads {
		if t.hw != nil {
			p.m.cancelHelper(t.hw)
			t.hw = nil
		}
	}
	if p.fds != nil {
		p.fds.release()
	}
	if p.fs != nil {
		p.fs.release()
	}
	if p.MM != nil {
		p.MM.release()
	}
	for _, tm := range p.timers.list {
		tm.armed = false
	}
	p.timers.recount()
}

// logf writes one diagnostic line.
func (p *Process) logf(format string, args ...any) {
	fmt.Fprintf(p.log, "ttd: "+format+"\n", args...)
}

// rlimNLimits is RLIM_NLIMITS.
const rlimNLimits = 16
