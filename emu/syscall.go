package emu

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"

	"ttd/internal/linux"
	"ttd/x86"
)

// SyscallArgs are a syscall's number and its six arguments (rdi, rsi,
// rdx, r10, r8, r9).
type SyscallArgs struct {
	Nr int
	A  [6]uint64
}

// Int returns argument i as a signed 32-bit value (an fd, a flag word).
func (a *SyscallArgs) Int(i int) int { return int(int32(a.A[i])) }

// SyscallFn is the signature of every syscall handler. It returns the
// result, or an error: a unix.Errno becomes -errno in rax; the control
// errors below change what happens to the thread.
type SyscallFn func(t *Thread, a *SyscallArgs) (uint64, error)

// Control errors returned by handlers.
var (
	// errNoResult leaves rax alone (rt_sigreturn restored it).
	errNoResult = errors.New("no syscall result")
	// errExited means the process has ended.
	errExited = errors.New("exited")
	// errExitThread ends the calling thread (exit) after the syscall
	// event; errExitGroup ends the process (exit_group).
	errExitThread = errors.New("thread exit")
	errExitGroup  = errors.New("process exit")
	// errBlock puts the thread to sleep until what it set in t.w may
	// have happened; the handler then runs again with the same
	// arguments (t.retrying set), and decides.
	errBlock = errors.New("blocked")
	// errRestartSys is Linux's ERESTARTSYS: a signal interrupted the
	// syscall before it did anything; it restarts after the handler if
	// the handler has SA_RESTART, and fails with EINTR otherwise.
	errRestartSys = errors.New("interrupted (restartable)")
)

// Support says how completely ttd implements a syscall.
type Support uint8

// Support levels.
const (
	// SupportNone: the syscall returns ENOSYS.
	SupportNone Support = iota
	// SupportPartial: implemented with limitations named in the note.
	SupportPartial
	// SupportFull: implemented as on Linux (usually by passing through
	// to the host).
	SupportFull
)

func (s Support) String() string {
	return [...]string{"unsupported", "partial", "full"}[s]
}

// Syscall is one row of the syscall table.
type Syscall struct {
	Name    string
	Fn      SyscallFn
	Support Support
	Note    string
}

func full(name string, fn SyscallFn) Syscall { return Syscall{name, fn, SupportFull, ""} }
func partial(name string, fn SyscallFn, note string) Syscall {
	return Syscall{name, fn, SupportPartial, note}
}
func none(name, note string) Syscall { return Syscall{name, nil, SupportNone, note} }

// Syscalls returns the syscall table, indexed by x86-64 syscall number
// (entries with an empty Name are numbers Linux does not use).
func Syscalls() []Syscall { return syscallTable[:] }

// syscall performs the syscall the thread stopped at.
func (t *Thread) syscall() {
	c := t.CPU
	p := t.P
	a := &t.args
	*a = SyscallArgs{Nr: int(c.R[x86.RAX]),
		A: [6]uint64{c.R[x86.RDI], c.R[x86.RSI], c.R[x86.RDX], c.R[x86.R10], c.R[x86.R8], c.R[x86.R9]}}
	var ent *Syscall
	if a.Nr >= 0 && a.Nr < len(syscallTable) {
		ent = &syscallTable[a.Nr]
	}
	if (ent == nil || ent.Fn == nil) && p.cfg.Verbose && !p.m.reported[a.Nr] {
		p.m.reported[a.Nr] = true
		name := linux.SyscallName(a.Nr)
		note := ""
		if ent != nil && ent.Note != "" {
			note = " (" + ent.Note + ")"
		}
		p.logf("unimplemented syscall %s (%d) returns ENOSYS%s", name, a.Nr, note)
	}
	t.retrying = false
	if e, ok := p.obs.(SyscallEntryObserver); ok {
		e.SyscallEntry(t, a.Nr, &a.A)
	}
	if t.pt != nil && t.ptSyscallEntry(ent, a) {
		return
	}
	t.dispatch(ent, a)
}

// resume runs the syscall a blocked thread waits in again, now that
// something it waited for may have happened.
func (t *Thread) resume() {
	if t.ptHeld {
		t.ptRunHeld()
		return
	}
	t.state = threadRunnable
	t.ready = false
	t.retrying = true
	t.w = wait{}
	t.args = t.sys
	t.dispatch(t.sysEnt, &t.args)
}

// dispatch runs a syscall's handler and completes the syscall: the
// result in rax, the observer's event; or puts the thread to sleep when
// the handler must wait.
func (t *Thread) dispatch(ent *Syscall, a *SyscallArgs) {
	c := t.CPU
	p := t.P
	if p.obs != nil {
		t.writes = t.writes[:0]
		t.moved = nil
	}
	t.execed = false
	var ret uint64
	var err error
	if ent == nil || ent.Fn == nil {
		err = unix.ENOSYS
	} else {
		ret, err = ent.Fn(t, a)
	}
	if err == errBlock {
		t.sys = *a
		t.sysEnt = ent
		t.block()
		if t.pt != nil {
			t.ptBlockedEvent()
		}
		return
	}
	t.retrying = false
	t.dl = time.Time{}
	t.ioDone = 0
	restart := false
	switch {
	case err == nil:
		c.R[x86.RAX] = ret
	case err == errNoResult || err == errExited || err == errExitThread || err == errExitGroup:
	case err == errRestartSys:
		if t.restartAllowed() {
			// Like Linux: rax holds the syscall number again and rip
			// points at the syscall instruction, which runs again
			// when the signal handler returns.
			c.R[x86.RAX] = uint64(a.Nr)
			c.RIP -= 2
			restart = true
		} else {
			c.R[x86.RAX] = errnoRet(unix.EINTR)
		}
	default:
		c.R[x86.RAX] = errnoRet(guestErrno(err))
	}
	if p.obs != nil {
		ev := &t.ev
		*ev = SyscallEvent{Nr: a.Nr, Name: linux.SyscallName(a.Nr), Args: a.A, Ret: c.R[x86.RAX], Writes: t.writes, Restart: restart, Exec: t.execed, Moved: t.moved}
		p.obs.Syscall(t, ev)
	}
	if t.pt != nil && err != errExitThread && err != errExitGroup && err != errExited && !p.exited {
		t.ptSyscallDone(a.Nr)
	}
	if t.pt != nil && (err == errExitThread || err == errExitGroup) && t.ptExitEvent(err) {
		return
	}
	switch err {
	case errExitThread:
		t.exit(t.exitCode)
	case errExitGroup:
		p.exitGroup(t.exitCode)
	}
}

// errno turns a host error into the errno the guest sees.
func errno(err error) error {
	if err == nil || err == errBlock || err == errRestartSys {
		return err
	}
	return guestErrno(err)
}

// guestErrno is the errno of a failed syscall's error: an Errno itself
// (the common case, which allocates nothing), one wrapped in it, or EIO.
func guestErrno(err error) unix.Errno {
	if en, ok := err.(unix.Errno); ok {
		return en
	}
	var en unix.Errno
	if errors.As(err, &en) {
		return en
	}
	return unix.EIO
}

// errnoRet is the rax value of a syscall failing with en.
func errnoRet(en unix.Errno) uint64 { return uint64(-int64(en)) }
