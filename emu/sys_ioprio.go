package emu

import (
	"errors"
	"runtime"

	"golang.org/x/sys/unix"
)

// I/O priorities are the guest's own: ioprio_set keeps one per guest
// thread (inherited by fork and clone), after the host's kernel has
// checked and normalised it on ttd's own thread, which then gets its old
// priority back. ioprio_get answers a thread's, or the best of a process
// group's as Linux computes it. IOPRIO_WHO_USER asks the host, whose
// processes of that user the guest would see as well, and so do pids and
// groups that are not the guest's (as kill does).

const (
	ioprioWhoProcess = 1
	ioprioWhoPgrp    = 2
	ioprioWhoUser    = 3
	// ioprioDefault is IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 4), which
	// ioprio_best takes for a thread that has none.
	ioprioDefault = 2<<13 | 4
)

// IoprioSet implements Linux syscall ioprio_set(2).
func IoprioSet(t *Thread, a *SyscallArgs) (uint64, error) {
	ths, err := t.ioprioTargets(a.Int(0), a.Int(1))
	if err == errHostIoprio {
		r, err := hostSyscall(unix.SYS_IOPRIO_SET, hInt(a.Int(0)), hInt(a.Int(1)), hInt(a.Int(2)))
		return uint64(r), errno(err)
	}
	if err != nil {
		return 0, err
	}
	prio, err := hostCheckIoprio(a.Int(2))
	if err != nil {
		return 0, err
	}
	for _, th := range ths {
		th.ioprio = prio
	}
	return 0, nil
}

// IoprioGet implements Linux syscall ioprio_get(2).
func IoprioGet(t *Thread, a *SyscallArgs) (uint64, error) {
	ths, err := t.ioprioTargets(a.Int(0), a.Int(1))
	if err == errHostIoprio {
		r, err := hostSyscall(unix.SYS_IOPRIO_GET, hInt(a.Int(0)), hInt(a.Int(1)))
		return uint64(r), errno(err)
	}
	if err != nil {
		return 0, err
	}
	best := ths[0].ioprio
	for _, th := range ths[1:] {
		best = ioprioBest(best, th.ioprio)
	}
	return uint64(best), nil
}

// ioprioBest is Linux's ioprio_best: the higher priority of two, a
// thread without one counting as the default.
func ioprioBest(a, b int) int {
	if a>>13 == 0 {
		a = ioprioDefault
	}
	if b>>13 == 0 {
		b = ioprioDefault
	}
	return min(a, b)
}

// ioprioTargets returns the guest threads which and who name.
func (t *Thread) ioprioTargets(which, who int) ([]*Thread, error) {
	m := t.P.m
	var ths []*Thread
	switch which {
	case ioprioWhoProcess:
		if who == 0 {
			return []*Thread{t}, nil
		}
		if th := m.threadByID(who); th != nil {
			ths = append(ths, th)
		}
	case ioprioWhoPgrp:
		pg := who
		if pg == 0 {
			pg = t.P.pgid
		}
		for _, p := range m.procs {
			if p.pgid == pg && !p.exited {
				ths = append(ths, p.threads...)
			}
		}
	case ioprioWhoUser:
		return nil, errHostIoprio
	default:
		return nil, unix.EINVAL
	}
	if len(ths) == 0 {
		return nil, errHostIoprio
	}
	return ths, nil
}

// errHostIoprio says the call concerns processes outside the guest.
var errHostIoprio = errors.New("not the guest's")

// hostCheckIoprio has the host's kernel check prio (EINVAL, EPERM) and
// returns it as the kernel keeps it, setting it for an instant on ttd's
// own thread.
func hostCheckIoprio(prio int) (int, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	old, err := hostSyscall(unix.SYS_IOPRIO_GET, hInt(ioprioWhoProcess), hInt(0))
	if err != nil {
		return 0, errno(err)
	}
	if _, err := hostSyscall(unix.SYS_IOPRIO_SET, hInt(ioprioWhoProcess), hInt(0), hInt(prio)); err != nil {
		return 0, errno(err)
	}
	got, err := hostSyscall(unix.SYS_IOPRIO_GET, hInt(ioprioWhoProcess), hInt(0))
	hostSyscall(unix.SYS_IOPRIO_SET, hInt(ioprioWhoProcess), hInt(0), hInt(int(old)))
	if err != nil {
		return 0, errno(err)
	}
	return int(got), nil
}
