package emu

import (
	"time"

	"golang.org/x/sys/unix"
)

// ClockGettime implements Linux syscall clock_gettime(2).
func ClockGettime(t *Thread, a *SyscallArgs) (uint64, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(int32(a.Int(0)), &ts); err != nil {
		return 0, errno(err)
	}
	return 0, copyOutStruct(t, a.A[1], &ts)
}

// ClockGetres implements Linux syscall clock_getres(2).
func ClockGetres(t *Thread, a *SyscallArgs) (uint64, error) {
	var ts unix.Timespec
	if _, err := hostSyscall(unix.SYS_CLOCK_GETRES, hInt(a.Int(0)), hBuf(structBytes(&ts))); err != nil {
		return 0, errno(err)
	}
	if a.A[1] == 0 {
		return 0, nil
	}
	return 0, copyOutStruct(t, a.A[1], &ts)
}

// Gettimeofday implements Linux syscall gettimeofday(2).
func Gettimeofday(t *Thread, a *SyscallArgs) (uint64, error) {
	var tv unix.Timeval
	if err := unix.Gettimeofday(&tv); err != nil {
		return 0, errno(err)
	}
	if a.A[0] != 0 {
		if err := copyOutStruct(t, a.A[0], &tv); err != nil {
			return 0, err
		}
	}
	if a.A[1] != 0 {
		var tz [8]byte
		if err := t.CopyOut(a.A[1], tz[:]); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// Time implements Linux syscall time(2).
func Time(t *Thread, a *SyscallArgs) (uint64, error) {
	now := uint64(time.Now().Unix())
	if a.A[0] != 0 {
		if err := t.writeU64(a.A[0], now); err != nil {
			return 0, err
		}
	}
	return now, nil
}

// nanosleep sleeps for d; when a signal interrupts it, the time left is
// written at rem and EINTR returned.
func (t *Thread) nanosleep(d time.Duration, rem uint64) (uint64, error) {
	start := time.Now()
	if d <= 0 {
		return 0, nil
	}
	if t.sleep(d) {
		t.P.pollHostSignals(t)
		if t.pending.mask&^t.sigMask != 0 {
			if rem != 0 {
				left := unix.NsecToTimespec(int64(d - time.Since(start)))
				if err := copyOutStruct(t, rem, &left); err != nil {
					return 0, err
				}
			}
			return 0, unix.EINTR
		}
		// An ignored or blocked signal: keep sleeping.
		return t.nanosleep(d-time.Since(start), rem)
	}
	return 0, nil
}

// readTimespec reads and validates a struct timespec.
func (t *Thread) readTimespec(addr uint64) (unix.Timespec, error) {
	var ts unix.Timespec
	if err := copyInStruct(t, addr, &ts); err != nil {
		return ts, err
	}
	if ts.Sec < 0 || ts.Nsec < 0 || ts.Nsec >= 1e9 {
		return ts, unix.EINVAL
	}
	return ts, nil
}

// Nanosleep implements Linux syscall nanosleep(2).
func Nanosleep(t *Thread, a *SyscallArgs) (uint64, error) {
	ts, err := t.readTimespec(a.A[0])
	if err != nil {
		return 0, err
	}
	return t.nanosleep(time.Duration(ts.Nano()), a.A[1])
}

// ClockNanosleep implements Linux syscall clock_nanosleep(2).
func ClockNanosleep(t *Thread, a *SyscallArgs) (uint64, error) {
	ts, err := t.readTimespec(a.A[2])
	if err != nil {
		return 0, err
	}
	d := time.Duration(ts.Nano())
	rem := a.A[3]
	if a.Int(1)&unix.TIMER_ABSTIME != 0 {
		var now unix.Timespec
		if err := unix.ClockGettime(int32(a.Int(0)), &now); err != nil {
			return 0, errno(err)
		}
		d -= time.Duration(now.Nano())
		rem = 0
	}
	return t.nanosleep(d, rem)
}

// Alarm implements Linux syscall alarm(2) with the host's timer; the
// SIGALRM reaches the guest when signals are forwarded.
func Alarm(t *Thread, a *SyscallArgs) (uint64, error) {
	r, err := hostSyscall(unix.SYS_ALARM, hInt(uint32(a.A[0])))
	return uint64(r), errno(err)
}

// Setitimer implements Linux syscall setitimer(2) with the host's timers.
func Setitimer(t *Thread, a *SyscallArgs) (uint64, error) {
	var nv, ov [32]byte
	if err := t.CopyIn(a.A[1], nv[:]); err != nil {
		return 0, err
	}
	if _, err := hostSyscall(unix.SYS_SETITIMER, hInt(a.Int(0)), hBuf(nv[:]), hBuf(ov[:])); err != nil {
		return 0, errno(err)
	}
	if a.A[2] != 0 {
		return 0, t.CopyOut(a.A[2], ov[:])
	}
	return 0, nil
}

// Getitimer implements Linux syscall getitimer(2).
func Getitimer(t *Thread, a *SyscallArgs) (uint64, error) {
	var v [32]byte
	if _, err := hostSyscall(unix.SYS_GETITIMER, hInt(a.Int(0)), hBuf(v[:])); err != nil {
		return 0, errno(err)
	}
	return 0, t.CopyOut(a.A[1], v[:])
}
