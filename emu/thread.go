package emu

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"ttd/x86"
)

// Thread is one guest thread: its CPU and its per-thread kernel state.
type Thread struct {
	P   *Process
	CPU *x86.CPU
	// Tid is the thread id the guest sees: the process id for the main
	// thread, then PID+1, PID+2… in creation order.
	Tid int

	state threadState
	// For a thread blocked in a syscall: the syscall, what it waits for,
	// and whether something happened that may end the wait (the
	// handler then runs again with the same arguments).
	sys    SyscallArgs
	sysEnt *Syscall
	// args and ev are the running syscall's arguments and its event for
	// the observer, kept here so that a syscall allocates nothing.
	args     SyscallArgs
	ev       SyscallEvent
	w        wait
	ready    bool
	retrying bool
	hw       *hostWait
	// dl is the deadline of the current syscall, kept across its retries.
	dl time.Time
	// ioDone counts the bytes a blocking write has moved so far.
	ioDone int
	// fifo is the blocking FIFO open the thread waits for, if any.
	fifo *fifoOpen
	// ioprio is the I/O priority ioprio_set gave (sys_ioprio.go).
	ioprio int
	// futex wait state.
	futexAddr   uint64
	futexKey    futexKey
	futexBitset uint32
	futexQueued bool
	futexWoken  bool
	// yield ends the thread's time slice (sched_yield).
	yield bool
	// prctl is what PR_SET_* gave the thread.
	prctl threadPrctl
	// missing is the extension the last #UD's instruction needed, when
	// the guest CPU's level lacked it (for the fatal SIGILL's message).
	missing  *x86.MissingFeatureError
	exitCode int

	sigMask  uint64 // blocked signals, bit sig-1
	pending  sigQueue
	altStack stackT
	// savedMask is restored after the handler of a signal that
	// interrupted rt_sigsuspend (valid when hasSavedMask).
	savedMask    uint64
	hasSavedMask bool

	// execed is set by a successful execve (SyscallEvent.Exec).
	execed bool
	// vforkChild is the child a vfork parent waits for.
	vforkChild *Process

	clearChildTID uint64
	// pt is the thread's ptrace state while it is traced (ptrace.go);
	// ptHeld: a tracer stopped it at a syscall's entry (t.sys), which
	// runs when it is resumed.
	pt         *tracee
	ptHeld     bool
	robustList uint64
	name       [16]byte

	// scratch is a reusable host buffer for syscalls.
	scratch []byte
	// moved are the bytes the current syscall moved for Config.KeepMoved
	// (SyscallEvent.Moved).
	moved []byte
	// writes are the guest ranges the current syscall wrote, collected
	// only when the process has an observer.
	writes []MemRange
}

// InSyscall reports whether the thread is blocked in a syscall that has
// not completed (its Observer.Syscall event comes when it does).
func (t *Thread) InSyscall() bool { return t.state == threadBlocked }

// buf returns a scratch buffer of n bytes (valid until the next call).
func (t *Thread) buf(n int) []byte {
	if cap(t.scratch) < n {
		t.scratch = make([]byte, n)
	}
	return t.scratch[:n]
}

// handleExit acts on the reason the thread's CPU stopped: a syscall, a
// fault (which becomes a pending signal) or the end of its budget.
func (t *Thread) handleExit(ex x86.Exit) {
	p := t.P
	c := t.CPU
	switch ex.Reason {
	case x86.ExitBudget, x86.ExitNone:
	case x86.ExitYield:
		t.yield = true
	case x86.ExitSyscall:
		t.syscall()
	case x86.ExitFault:
		si := SigInfo{Signo: int32(unix.SIGSEGV), Code: ex.Code, Addr: ex.Addr}
		trap := trapInfo{trapno: 14, cr2: ex.Addr, err: 4}
		if f := ex.Fault; f != nil {
			if f.Mapped {
				trap.err |= 1
			}
			if f.Write {
				trap.err |= 2
			}
			if f.Exec {
				trap.err |= 16
			}
		}
		t.forceFault(si, trap, ex)
	case x86.ExitDivide:
		t.forceFault(SigInfo{Signo: int32(unix.SIGFPE), Code: x86.FPEIntDiv, Addr: c.RIP}, trapInfo{trapno: 0}, ex)
	case x86.ExitFPE:
		t.forceFault(SigInfo{Signo: int32(unix.SIGFPE), Code: ex.Code, Addr: c.RIP}, trapInfo{trapno: 19}, ex)
	case x86.ExitIllegal:
		var mf *x86.MissingFeatureError
		t.missing = nil
		if errors.As(ex.Err, &mf) {
			t.missing = mf
		}
		if p.cfg.Verbose {
			if mf != nil {
				p.logf("SIGILL: %v (--cpu %s)", mf, c.Features().Level())
			} else {
				p.logf("SIGILL: illegal instruction %s at %#x", t.disasm(c.RIP), c.RIP)
			}
		}
		t.forceFault(SigInfo{Signo: int32(unix.SIGILL), Code: x86.ILLIllOpn, Addr: c.RIP}, trapInfo{trapno: 6}, ex)
	case x86.ExitGP:
		t.forceFault(SigInfo{Signo: int32(unix.SIGSEGV), Code: x86.SIKernel}, trapInfo{trapno: 13}, ex)
	case x86.ExitBreakpoint:
		t.forceFault(SigInfo{Signo: int32(unix.SIGTRAP), Code: x86.SIKernel}, trapInfo{trapno: 3}, ex)
	case x86.ExitUnimplemented:
		err := ex.Err
		if err == nil {
			err = fmt.Errorf("%w at %#x", x86.ErrUnimplemented, c.RIP)
		}
		st := ExitStatus{Signal: unix.SIGILL, Fault: true, Addr: c.RIP, PC: c.RIP, Inst: t.disasm(c.RIP)}
		var ue *x86.UnimplementedError
		if errors.As(err, &ue) {
			st.PC, st.Addr = ue.PC, ue.PC
		}
		p.exitProcess(st, err)
	default:
		p.exitProcess(ExitStatus{Signal: unix.SIGKILL}, fmt.Errorf("unexpected CPU exit %v at %#x", ex.Reason, c.RIP))
	}
}

// disasm disassembles the guest instruction at pc for messages.
func (t *Thread) disasm(pc uint64) string {
	var code [15]byte
	n := 0
	for n < len(code) {
		if t.P.MM.Mem.Peek(pc+uint64(n), code[n:n+1]) != nil {
			break
		}
		n++
	}
	if n == 0 {
		return "(unreadable)"
	}
	return x86.Disasm(pc, code[:n])
}

// threadPrctl is a thread's prctl(2) state (Linux keeps it per task).
type threadPrctl struct {
	pdeathsig  int    // PR_SET_PDEATHSIG: sent when the parent exits
	timerslack uint64 // PR_SET_TIMERSLACK in ns; 0: the default, 50 us
	keepcaps   bool
	noNewPrivs bool // set once, never cleared; inherited
	caps       capState
}

// inherited is what a new thread or process takes from its creator's:
// not the death signal (Linux's copy_process clears it).
func (c threadPrctl) inherited() threadPrctl {
	c.pdeathsig = 0
	return c
}
