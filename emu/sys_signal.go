package emu

import (
	"encoding/binary"
	"time"

	"golang.org/x/sys/unix"

	"ttd/x86"
)

// RtSigaction implements Linux syscall rt_sigaction(2).
func RtSigaction(t *Thread, a *SyscallArgs) (uint64, error) {
	sig := a.Int(0)
	if sig < 1 || sig > numSignals || a.A[3] != 8 {
		return 0, unix.EINVAL
	}
	p := t.P
	old := p.sig[sig]
	if a.A[1] != 0 {
		if unix.Signal(sig) == unix.SIGKILL || unix.Signal(sig) == unix.SIGSTOP {
			return 0, unix.EINVAL
		}
		var b [32]byte
		if err := t.CopyIn(a.A[1], b[:]); err != nil {
			return 0, err
		}
		le := binary.LittleEndian
		act := sigAction{handler: le.Uint64(b[0:]), flags: le.Uint64(b[8:]), restorer: le.Uint64(b[16:]),
			mask: le.Uint64(b[24:]) &^ unblockable}
		p.sig[sig] = act
		// Setting a signal to be ignored discards it if pending.
		if act.handler == sigIgn || act.handler == sigDfl && defaultActionOf(sig) == actIgnore {
			for _, th := range p.Threads {
				th.pending.mask &^= sigBit(sig)
			}
		}
	}
	if a.A[2] != 0 {
		var b [32]byte
		le := binary.LittleEndian
		le.PutUint64(b[0:], old.handler)
		le.PutUint64(b[8:], old.flags)
		le.PutUint64(b[16:], old.restorer)
		le.PutUint64(b[24:], old.mask)
		if err := t.CopyOut(a.A[2], b[:]); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// RtSigprocmask implements Linux syscall rt_sigprocmask(2).
func RtSigprocmask(t *Thread, a *SyscallArgs) (uint64, error) {
	if a.A[3] != 8 {
		return 0, unix.EINVAL
	}
	old := t.sigMask
	if a.A[1] != 0 {
		set, err := t.readU64(a.A[1])
		if err != nil {
			return 0, err
		}
		switch a.Int(0) {
		case unix.SIG_BLOCK:
			t.sigMask |= set
		case unix.SIG_UNBLOCK:
			t.sigMask &^= set
		case unix.SIG_SETMASK:
			t.sigMask = set
		default:
			return 0, unix.EINVAL
		}
		t.sigMask &^= unblockable
	}
	if a.A[2] != 0 {
		if err := t.writeU64(a.A[2], old); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// RtSigreturn implements Linux syscall rt_sigreturn(2).
func RtSigreturn(t *Thread, a *SyscallArgs) (uint64, error) {
	if err := t.sigreturn(); err != nil {
		t.forceFault(SigInfo{Signo: int32(unix.SIGSEGV), Code: x86.SIKernel}, trapInfo{trapno: 13}, x86.Exit{})
	}
	return 0, errNoResult
}

// Sigaltstack implements Linux syscall sigaltstack(2).
func Sigaltstack(t *Thread, a *SyscallArgs) (uint64, error) {
	sp := t.CPU.R[x86.RSP]
	var old [24]byte
	le := binary.LittleEndian
	le.PutUint64(old[0:], t.altStack.sp)
	le.PutUint32(old[8:], uint32(t.altStackFlags(sp)))
	le.PutUint64(old[16:], t.altStack.size)
	if a.A[0] != 0 {
		var b [24]byte
		if err := t.CopyIn(a.A[0], b[:]); err != nil {
			return 0, err
		}
		ss := stackT{sp: le.Uint64(b[0:]), flags: int32(le.Uint32(b[8:])), size: le.Uint64(b[16:])}
		if err := t.setAltStack(ss); err != nil {
			return 0, err
		}
	}
	if a.A[1] != 0 {
		if err := t.CopyOut(a.A[1], old[:]); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// RtSigpending implements Linux syscall rt_sigpending(2).
func RtSigpending(t *Thread, a *SyscallArgs) (uint64, error) {
	if a.A[1] > 8 {
		return 0, unix.EINVAL
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], t.pending.mask&t.sigMask)
	return 0, t.CopyOut(a.A[0], b[:a.A[1]])
}

// RtSigsuspend implements Linux syscall rt_sigsuspend(2): it waits, with
// the given mask, for a signal to be delivered.
func RtSigsuspend(t *Thread, a *SyscallArgs) (uint64, error) {
	if a.A[1] != 8 {
		return 0, unix.EINVAL
	}
	mask, err := t.readU64(a.A[0])
	if err != nil {
		return 0, err
	}
	t.savedMask, t.hasSavedMask = t.sigMask, true
	t.sigMask = mask &^ unblockable
	if err := t.waitForSignal(-1); err != nil {
		return 0, err
	}
	return 0, unix.EINTR
}

// RtSigtimedwait implements Linux syscall rt_sigtimedwait(2) for signals
// already pending or forwarded from the host.
func RtSigtimedwait(t *Thread, a *SyscallArgs) (uint64, error) {
	set, err := t.readU64(a.A[0])
	if err != nil {
		return 0, err
	}
	timeout := time.Duration(-1)
	if a.A[2] != 0 {
		var ts unix.Timespec
		if err := copyInStruct(t, a.A[2], &ts); err != nil {
			return 0, err
		}
		timeout = time.Duration(ts.Nano())
	}
	deadline := time.Now().Add(timeout)
	for {
		t.P.pollHostSignals(t)
		if ready := t.pending.mask & set; ready != 0 {
			sig := 1
			for ready&sigBit(sig) == 0 {
				sig++
			}
			ps := t.pending.sigs[sig]
			t.pending.mask &^= sigBit(sig)
			if a.A[1] != 0 {
				var b [siginfoSize]byte
				ps.info.encode(b[:])
				if err := t.CopyOut(a.A[1], b[:]); err != nil {
					return 0, err
				}
			}
			return uint64(sig), nil
		}
		if timeout >= 0 && !time.Now().Before(deadline) {
			return 0, unix.EAGAIN
		}
		if t.P.hostSigs == nil {
			if timeout < 0 {
				return 0, t.deadlock("rt_sigtimedwait")
			}
			time.Sleep(time.Until(deadline))
			continue
		}
		wait := time.Hour
		if timeout >= 0 {
			wait = time.Until(deadline)
		}
		select {
		case s := <-t.P.hostSigs:
			t.queueHost(s)
		case <-time.After(wait):
		}
	}
}

// waitForSignal blocks until a signal that the current mask lets through
// is pending (timeout < 0: forever).
func (t *Thread) waitForSignal(timeout time.Duration) error {
	p := t.P
	for {
		p.pollHostSignals(t)
		if t.pending.mask&^(t.sigMask&^unblockable) != 0 {
			return nil
		}
		if p.hostSigs == nil {
			if timeout >= 0 {
				time.Sleep(timeout)
				return nil
			}
			return t.deadlock("a signal")
		}
		s := <-p.hostSigs
		t.queueHost(s)
	}
}

// deadlock stops the process: the only thread waits for something no
// thread can do.
func (t *Thread) deadlock(what string) error {
	t.P.exitProcess(ExitStatus{Signal: unix.SIGKILL}, &DeadlockError{What: what, PC: t.CPU.RIP})
	return errExited
}

// DeadlockError reports a guest that waits for an event nothing can
// cause (all threads blocked).
type DeadlockError struct {
	What string
	PC   uint64
}

func (e *DeadlockError) Error() string {
	return "guest deadlocked: the only thread waits for " + e.What + " at " + hex(e.PC)
}

func (e *DeadlockError) Unwrap() error { return ErrDeadlock }

func hex(v uint64) string {
	const digits = "0123456789abcdef"
	if v == 0 {
		return "0x0"
	}
	var b [18]byte
	i := len(b)
	for v > 0 {
		i--
		b[i] = digits[v&15]
		v >>= 4
	}
	return "0x" + string(b[i:])
}

// signalSelf sends sig to the process itself (kill, tgkill, tkill).
func (t *Thread) signalSelf(sig int, code int32) (uint64, error) {
	if sig < 0 || sig > numSignals {
		return 0, unix.EINVAL
	}
	if sig == 0 {
		return 0, nil
	}
	t.queue(pendingSignal{info: SigInfo{Signo: int32(sig), Code: code, Pid: int32(t.P.PID), Uid: int32(unix.Getuid())}})
	return 0, nil
}

// Kill implements Linux syscall kill(2). Signals to the process itself
// (or its group) are emulated; others go to the host process named.
func Kill(t *Thread, a *SyscallArgs) (uint64, error) {
	pid := a.Int(0)
	if pid == t.P.PID || pid == 0 || pid == -unix.Getpgrp() {
		// Only the guest receives a signal for its own process group:
		// the other members are not reached.
		return t.signalSelf(a.Int(1), siUser)
	}
	if pid == -1 {
		return 0, unix.EPERM
	}
	return 0, errno(unix.Kill(pid, unix.Signal(a.Int(1))))
}

// Tgkill implements Linux syscall tgkill(2).
func Tgkill(t *Thread, a *SyscallArgs) (uint64, error) {
	if a.Int(0) <= 0 || a.Int(1) <= 0 {
		return 0, unix.EINVAL
	}
	if a.Int(0) != t.P.PID {
		return 0, unix.ESRCH
	}
	th := t.P.thread(a.Int(1))
	if th == nil {
		return 0, unix.ESRCH
	}
	return th.signalSelf(a.Int(2), siTkill)
}

// Tkill implements Linux syscall tkill(2).
func Tkill(t *Thread, a *SyscallArgs) (uint64, error) {
	if a.Int(0) <= 0 {
		return 0, unix.EINVAL
	}
	th := t.P.thread(a.Int(0))
	if th == nil {
		return 0, unix.ESRCH
	}
	return th.signalSelf(a.Int(1), siTkill)
}

// thread returns the thread with the given id.
func (p *Process) thread(tid int) *Thread {
	for _, th := range p.Threads {
		if th.TID == tid {
			return th
		}
	}
	return nil
}
