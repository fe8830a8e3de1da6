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
		if p.ignored(sig) {
			p.shared.discard(sig)
			for _, th := range p.threads {
				th.pending.discard(sig)
			}
			p.syncSignalfds()
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
	binary.LittleEndian.PutUint64(b[:], (t.pending.mask|t.P.shared.mask)&t.sigMask)
	return 0, t.CopyOut(a.A[0], b[:a.A[1]])
}

// RtSigsuspend implements Linux syscall rt_sigsuspend(2): it waits, with
// the given mask, for a signal to be delivered.
func RtSigsuspend(t *Thread, a *SyscallArgs) (uint64, error) {
	if !t.retrying {
		if a.A[1] != 8 {
			return 0, unix.EINVAL
		}
		mask, err := t.readU64(a.A[0])
		if err != nil {
			return 0, err
		}
		t.savedMask, t.hasSavedMask = t.sigMask, true
		t.sigMask = mask &^ unblockable
	}
	if t.interrupted() {
		// The handler's frame saves the old mask, which sigreturn
		// restores.
		return 0, unix.EINTR
	}
	return 0, t.sleep(wait{what: "a signal (sigsuspend)"})
}

// RtSigtimedwait implements Linux syscall rt_sigtimedwait(2).
func RtSigtimedwait(t *Thread, a *SyscallArgs) (uint64, error) {
	if a.A[3] != 8 {
		return 0, unix.EINVAL
	}
	set, err := t.readU64(a.A[0])
	if err != nil {
		return 0, err
	}
	set &^= unblockable
	timed := a.A[2] != 0
	if timed && !t.retrying {
		ts, err := t.readTimespec(a.A[2])
		if err != nil {
			return 0, err
		}
		t.deadline(tsDuration(ts))
	}
	p := t.P
	q := &t.pending
	ready := q.mask & set
	if ready == 0 {
		q = &p.shared
		ready = q.mask & set
	}
	if ready != 0 {
		sig := trailingZeros(ready) + 1
		ps := q.take(sig)
		p.syncSignalfds()
		if a.A[1] != 0 {
			var b [siginfoSize]byte
			ps.info.encode(b[:])
			if err := t.CopyOut(a.A[1], b[:]); err != nil {
				return 0, err
			}
		}
		return uint64(sig), nil
	}
	if timed && !time.Now().Before(t.dl) {
		return 0, unix.EAGAIN
	}
	if t.interrupted() {
		return 0, unix.EINTR
	}
	var dl time.Time
	if timed {
		dl = t.dl
	}
	return 0, t.sleep(wait{what: "a signal (sigtimedwait)", deadline: dl, sigset: set})
}

// DeadlockError reports a guest whose threads all wait for events
// nothing can cause.
type DeadlockError struct {
	What string
	PC   uint64
}

func (e *DeadlockError) Error() string {
	return "guest deadlocked: " + e.What + " (main thread at " + hex(e.PC) + ")"
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

// sigInfoFrom is the siginfo of a signal t sends with kill or tgkill.
func (t *Thread) sigInfoFrom(sig int, code int32) pendingSignal {
	return pendingSignal{info: SigInfo{Signo: int32(sig), Code: code, Pid: int32(t.P.PID), Uid: int32(unix.Getuid())}}
}

// Kill implements Linux syscall kill(2). Signals to processes of the
// tree, by pid, by a thread id or by process group (0: the caller's,
// -1: every process of the tree but the caller) are emulated; other
// pids go to the host.
func Kill(t *Thread, a *SyscallArgs) (uint64, error) {
	p := t.P
	m := p.m
	pid, sig := a.Int(0), a.Int(1)
	if sig < 0 || sig > numSignals {
		return 0, unix.EINVAL
	}
	send := func(q *Process) {
		if sig != 0 && !q.exited {
			q.queueProcess(t.sigInfoFrom(sig, siUser))
		}
	}
	if pid > 0 {
		if q := t.guestProcess(pid); q != nil {
			send(q)
			return 0, nil
		}
		return 0, errno(unix.Kill(pid, unix.Signal(sig)))
	}
	group := -pid
	switch pid {
	case 0:
		group = p.pgid
	case -1:
		group = 0
	}
	var targets []*Process
	for _, q := range m.procs {
		if q.zombie || group == 0 && q == p || group != 0 && q.pgid != group {
			continue
		}
		targets = append(targets, q)
	}
	if len(targets) == 0 {
		// Only the guest receives a signal for a group of the tree: the
		// host's other members (the shell that started ttd) are not
		// reached.
		return 0, unix.ESRCH
	}
	for _, q := range targets {
		send(q)
	}
	return 0, nil
}

// signalThread sends sig to thread th (tgkill, tkill).
func (t *Thread) signalThread(th *Thread, sig int) (uint64, error) {
	if sig < 0 || sig > numSignals {
		return 0, unix.EINVAL
	}
	if sig != 0 {
		th.queue(t.sigInfoFrom(sig, siTkill))
	}
	return 0, nil
}

// Tgkill implements Linux syscall tgkill(2).
func Tgkill(t *Thread, a *SyscallArgs) (uint64, error) {
	if a.Int(0) <= 0 || a.Int(1) <= 0 {
		return 0, unix.EINVAL
	}
	th := t.P.m.threadByID(a.Int(1))
	if th == nil || th.P.PID != a.Int(0) {
		return 0, unix.ESRCH
	}
	return t.signalThread(th, a.Int(2))
}

// Tkill implements Linux syscall tkill(2).
func Tkill(t *Thread, a *SyscallArgs) (uint64, error) {
	if a.Int(0) <= 0 {
		return 0, unix.EINVAL
	}
	th := t.P.m.threadByID(a.Int(0))
	if th == nil {
		return 0, unix.ESRCH
	}
	return t.signalThread(th, a.Int(1))
}

// RtSigqueueinfo implements Linux syscall rt_sigqueueinfo(2) for the
// process itself.
func RtSigqueueinfo(t *Thread, a *SyscallArgs) (uint64, error) {
	q := t.guestProcess(a.Int(0))
	if q == nil || a.Int(0) == 0 {
		return 0, unix.ESRCH
	}
	ps, err := t.userSigInfo(a.Int(1), a.A[2])
	if err != nil {
		return 0, err
	}
	q.queueProcess(ps)
	return 0, nil
}

// RtTgsigqueueinfo implements Linux syscall rt_tgsigqueueinfo(2).
func RtTgsigqueueinfo(t *Thread, a *SyscallArgs) (uint64, error) {
	th := t.P.m.threadByID(a.Int(1))
	if th == nil || th.P.PID != a.Int(0) {
		return 0, unix.ESRCH
	}
	ps, err := t.userSigInfo(a.Int(2), a.A[3])
	if err != nil {
		return 0, err
	}
	th.queue(ps)
	return 0, nil
}

// userSigInfo reads the siginfo a program passes to rt_sigqueueinfo.
func (t *Thread) userSigInfo(sig int, addr uint64) (pendingSignal, error) {
	if sig < 1 || sig > numSignals {
		return pendingSignal{}, unix.EINVAL
	}
	var b [siginfoSize]byte
	if err := t.CopyIn(addr, b[:]); err != nil {
		return pendingSignal{}, err
	}
	le := binary.LittleEndian
	code := int32(le.Uint32(b[8:]))
	if code >= 0 || code == siTkill {
		// Only the kernel may send SI_USER, SI_KERNEL or SI_TKILL.
		return pendingSignal{}, unix.EPERM
	}
	return pendingSignal{info: SigInfo{Signo: int32(sig), Errno: int32(le.Uint32(b[4:])), Code: code,
		Pid: int32(le.Uint32(b[16:])), Uid: int32(le.Uint32(b[20:])), Value: le.Uint64(b[24:])}}, nil
}

// thread returns the live thread with the given id.
func (p *Process) thread(tid int) *Thread {
	for _, th := range p.threads {
		if th.Tid == tid {
			return th
		}
	}
	return nil
}
