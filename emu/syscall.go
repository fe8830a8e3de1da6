package emu

import (
	"errors"

	"golang.org/x/sys/unix"

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
	// errExited means the thread or process has ended.
	errExited = errors.New("exited")
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
	a := SyscallArgs{Nr: int(c.R[x86.RAX]),
		A: [6]uint64{c.R[x86.RDI], c.R[x86.RSI], c.R[x86.RDX], c.R[x86.R10], c.R[x86.R8], c.R[x86.R9]}}
	if p.obs != nil {
		t.writes = t.writes[:0]
	}
	var ent *Syscall
	if a.Nr >= 0 && a.Nr < len(syscallTable) {
		ent = &syscallTable[a.Nr]
	}
	var ret uint64
	var err error
	if ent == nil || ent.Fn == nil {
		err = unix.ENOSYS
		if p.cfg.Verbose && !p.reported[a.Nr] {
			p.reported[a.Nr] = true
			name := "unknown"
			if ent != nil && ent.Name != "" {
				name = ent.Name
			}
			note := ""
			if ent != nil && ent.Note != "" {
				note = " (" + ent.Note + ")"
			}
			p.logf("unimplemented syscall %s (%d) returns ENOSYS%s", name, a.Nr, note)
		}
	} else {
		ret, err = ent.Fn(t, &a)
	}
	switch {
	case err == nil:
		c.R[x86.RAX] = ret
	case err == errNoResult || err == errExited:
	default:
		var en unix.Errno
		if !errors.As(err, &en) {
			en = unix.EIO
		}
		c.R[x86.RAX] = uint64(-int64(en))
	}
	if p.obs != nil {
		ev := &SyscallEvent{Nr: a.Nr, Args: a.A, Ret: c.R[x86.RAX], Writes: t.writes}
		if ent != nil {
			ev.Name = ent.Name
		}
		p.obs.Syscall(t, ev)
	}
}

// errno turns a host error into the errno the guest sees.
func errno(err error) error {
	if err == nil {
		return nil
	}
	var en unix.Errno
	if errors.As(err, &en) {
		return en
	}
	return unix.EIO
}
