package emu

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"ttd/x86"
)

// runBudget is how many instructions a thread runs between checks for
// asynchronous signals.
const runBudget = 1 << 20

// Thread is one guest thread: its CPU and its per-thread kernel state.
type Thread struct {
	P   *Process
	CPU *x86.CPU
	TID int

	sigMask  uint64 // blocked signals, bit sig-1
	pending  sigQueue
	altStack stackT
	// savedMask is restored after the handler of a signal that
	// interrupted rt_sigsuspend (valid when hasSavedMask).
	savedMask    uint64
	hasSavedMask bool

	clearChildTID uint64
	robustList    uint64
	name          [16]byte

	// scratch is a reusable host buffer for syscalls.
	scratch []byte
	// writes are the guest ranges the current syscall wrote, collected
	// only when the process has an observer.
	writes []MemRange
}

// buf returns a scratch buffer of n bytes (valid until the next call).
func (t *Thread) buf(n int) []byte {
	if cap(t.scratch) < n {
		t.scratch = make([]byte, n)
	}
	return t.scratch[:n]
}

// run executes the thread until something needs the scheduler's
// attention: a budget expiry, a syscall or a signal.
func (t *Thread) run() {
	p := t.P
	c := t.CPU
	ex := c.Run(p.budget())
	switch ex.Reason {
	case x86.ExitBudget, x86.ExitYield, x86.ExitNone:
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
		return
	default:
		p.exitProcess(ExitStatus{Signal: unix.SIGKILL}, fmt.Errorf("unexpected CPU exit %v at %#x", ex.Reason, c.RIP))
		return
	}
	if p.exited {
		return
	}
	p.pollHostSignals(t)
	t.deliverSignals()
	p.checkpointDue()
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
