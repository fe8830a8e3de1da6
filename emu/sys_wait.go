package emu

import (
	"golang.org/x/sys/unix"
)

// wait options (include/uapi/linux/wait.h).
const (
	wNohang     = 1
	wUntraced   = 2 // WSTOPPED for waitid
	wExited     = 4
	wContinued  = 8
	wNowait     = 0x1000000
	wNothread   = 0x20000000
	wAll        = 0x40000000
	wClone      = 0x80000000
	pAll        = 0
	pPid        = 1
	pPgid       = 2
	pPidfd      = 3
	rusageBytes = 144
)

// waitSel says which children a wait is for and which state changes it
// reports.
type waitSel struct {
	kind int // pAll, pPid or pPgid
	id   int
	// exited, stopped, continued: the changes reported; nowait leaves
	// the child waitable.
	exited, stopped, continued, nowait bool
}

func (w *waitSel) matches(c *Process) bool {
	switch w.kind {
	case pPid:
		return c.PID == w.id
	case pPgid:
		return c.pgid == w.id
	}
	return true
}

// findWaitable returns the first child (in creation order) that w
// selects and has a state change to report, whether p has any child w
// selects at all.
func (p *Process) findWaitable(w *waitSel) (c *Process, any bool) {
	for _, ch := range p.children {
		if !w.matches(ch) {
			continue
		}
		any = true
		switch {
		case ch.zombie && w.exited,
			ch.waitStopped && w.stopped && !ch.exited,
			ch.waitContinue && w.continued && !ch.exited:
			return ch, true
		}
	}
	return nil, any
}

// consume reports c's state change to a wait: a zombie is reaped, a
// stop or continue reported once.
func (p *Process) consume(c *Process, w *waitSel) {
	if w.nowait {
		return
	}
	switch {
	case c.zombie:
		p.reap(c)
	case c.waitStopped:
		c.waitStopped = false
	default:
		c.waitContinue = false
	}
}

// waitStatus is the status word wait4 reports for c's state change.
func waitStatus(c *Process) uint32 {
	switch {
	case c.zombie && c.status.Signal != 0:
		st := uint32(c.status.Signal)
		if c.coreDumped() {
			st |= 0x80
		}
		return st
	case c.zombie:
		return uint32(c.status.Code&0xff) << 8
	case c.waitStopped:
		return uint32(c.stopSig)<<8 | 0x7f
	}
	return 0xffff
}

// waitFor finds a state change for w, or blocks until one comes: it
// returns nil with no error for WNOHANG, ECHILD when there is no child
// to wait for.
func (t *Thread) waitFor(w *waitSel, nohang bool) (*Process, error) {
	c, any := t.P.findWaitable(w)
	if c != nil {
		return c, nil
	}
	if len(t.P.tracees) > 0 {
		if _, anyT := t.P.traceeReport(w); anyT {
			any = true
		}
	}
	if !any {
		return nil, unix.ECHILD
	}
	if nohang {
		return nil, nil
	}
	if t.interrupted() {
		return nil, errRestartSys
	}
	return nil, t.sleep(wait{what: "a child (wait)", child: true})
}

// Wait4 implements Linux syscall wait4(2).
func Wait4(t *Thread, a *SyscallArgs) (uint64, error) {
	pid, opts := a.Int(0), a.Int(2)
	if uint32(opts)&^(wNohang|wUntraced|wContinued|wNothread|wAll|wClone) != 0 {
		return 0, unix.EINVAL
	}
	if pid == -0x80000000 {
		return 0, unix.ESRCH
	}
	w := waitSel{exited: true, stopped: opts&wUntraced != 0, continued: opts&wContinued != 0}
	switch {
	case pid > 0:
		w.kind, w.id = pPid, pid
	case pid == 0:
		w.kind, w.id = pPgid, t.P.pgid
	case pid < -1:
		w.kind, w.id = pPgid, -pid
	}
	if tt, _ := t.P.traceeReport(&w); tt != nil {
		// A tracee's stop or exit (ptrace.go).
		if a.A[1] != 0 {
			if err := t.writeU32(a.A[1], tt.pt.status); err != nil {
				return 0, err
			}
		}
		t.P.consumeTracee(tt, false)
		return uint64(tt.Tid), nil
	}
	c, err := t.waitFor(&w, opts&wNohang != 0)
	if c == nil || err != nil {
		return 0, err
	}
	if a.A[1] != 0 {
		if err := t.writeU32(a.A[1], waitStatus(c)); err != nil {
			return 0, err
		}
	}
	if a.A[3] != 0 {
		var ru [rusageBytes]byte
		if err := t.CopyOut(a.A[3], ru[:]); err != nil {
			return 0, err
		}
	}
	t.P.consume(c, &w)
	return uint64(c.PID), nil
}

// Waitid implements Linux syscall waitid(2). Like Linux, it fills the
// siginfo's fields whatever the outcome (zeros when no child is
// reported, an error included).
func Waitid(t *Thread, a *SyscallArgs) (uint64, error) {
	c, err := t.waitid(a)
	if err == errBlock || err == errRestartSys {
		return 0, err
	}
	var code int32
	var pid, status int
	if c != nil {
		code, status = c.waitCode()
		pid = c.PID
	}
	if a.A[2] != 0 {
		signo := 0
		if c != nil {
			signo = int(unix.SIGCHLD)
		}
		uid := 0
		if c != nil {
			uid = unix.Getuid()
		}
		for _, f := range [...]struct {
			off uint64
			v   uint32
		}{{0, uint32(signo)}, {4, 0}, {8, uint32(code)}, {16, uint32(pid)}, {20, uint32(uid)}, {24, uint32(status)}} {
			if werr := t.writeU32(a.A[2]+f.off, f.v); werr != nil {
				return 0, werr
			}
		}
	}
	if err != nil {
		return 0, err
	}
	if c != nil && a.A[4] != 0 {
		var ru [rusageBytes]byte
		if err := t.CopyOut(a.A[4], ru[:]); err != nil {
			return 0, err
		}
	}
	if c != nil {
		t.P.consume(c, &waitSel{nowait: a.Int(3)&wNowait != 0})
	}
	return 0, nil
}

// waitid finds the child a waitid reports, nil for WNOHANG.
func (t *Thread) waitid(a *SyscallArgs) (*Process, error) {
	kind, id, opts := a.Int(0), a.Int(1), a.Int(3)
	if uint32(opts)&^(wNohang|wUntraced|wExited|wContinued|wNowait|wNothread|wAll|wClone) != 0 ||
		opts&(wUntraced|wExited|wContinued) == 0 {
		return nil, unix.EINVAL
	}
	w := waitSel{kind: kind, id: id, exited: opts&wExited != 0, stopped: opts&wUntraced != 0,
		continued: opts&wContinued != 0, nowait: opts&wNowait != 0}
	switch kind {
	case pAll:
	case pPid, pPgid:
		if id < 0 || kind == pPid && id == 0 {
			return nil, unix.EINVAL
		}
		if kind == pPgid && id == 0 {
			w.id = t.P.pgid
		}
	case pPidfd:
		t.unsupported("waitid(P_PIDFD)")
		return nil, unix.EINVAL
	default:
		return nil, unix.EINVAL
	}
	return t.waitFor(&w, opts&wNohang != 0)
}
