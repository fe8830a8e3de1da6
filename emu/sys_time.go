package emu

import (
	"time"

	"golang.org/x/sys/unix"
)

// ClockGettime implements Linux syscall clock_gettime(2). CPU-time
// clocks count guest instructions, one nanosecond each (see
// sys_timer.go).
func ClockGettime(t *Thread, a *SyscallArgs) (uint64, error) {
	var ts unix.Timespec
	owner, cpu, err := t.cpuClock(a.Int(0))
	if err != nil {
		return 0, err
	}
	if cpu {
		ts = unix.NsecToTimespec(int64(t.cpuTime(owner)))
	} else if err := unix.ClockGettime(int32(a.Int(0)), &ts); err != nil {
		return 0, errno(err)
	}
	return 0, copyOutStruct(t, a.A[1], &ts)
}

// ClockGetres implements Linux syscall clock_getres(2).
func ClockGetres(t *Thread, a *SyscallArgs) (uint64, error) {
	var ts unix.Timespec
	if _, cpu, err := t.cpuClock(a.Int(0)); err != nil {
		return 0, err
	} else if cpu {
		ts.Nsec = 1
		if a.A[1] == 0 {
			return 0, nil
		}
		return 0, copyOutStruct(t, a.A[1], &ts)
	}
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

// nanosleep sleeps until the deadline dl; when a signal interrupts it,
// the time left is written at rem (if not 0) and EINTR returned.
func (t *Thread) nanosleep(dl time.Time, rem uint64) (uint64, error) {
	left := time.Until(dl)
	if left <= 0 {
		return 0, nil
	}
	if t.interrupted() {
		if rem != 0 {
			ts := unix.NsecToTimespec(int64(left))
			if err := copyOutStruct(t, rem, &ts); err != nil {
				return 0, err
			}
		}
		return 0, unix.EINTR
	}
	return 0, t.sleep(wait{what: "the end of a sleep", deadline: dl})
}

// maxTimeout bounds the timeouts and timer values ttd handles; longer
// ones are as good as for ever: a century.
const maxTimeout = 100 * 365 * 24 * time.Hour

// tsDuration converts a valid timespec to a duration, saturating at
// maxTimeout.
func tsDuration(ts unix.Timespec) time.Duration {
	return secDuration(ts.Sec, ts.Nsec)
}

// secDuration is sec seconds and nsec nanoseconds, saturating at
// ±maxTimeout.
func secDuration(sec, nsec int64) time.Duration {
	const maxSec = int64(maxTimeout / time.Second)
	switch {
	case sec >= maxSec:
		return maxTimeout
	case sec <= -maxSec:
		return -maxTimeout
	}
	return time.Duration(sec)*time.Second + time.Duration(nsec)
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
	if !t.retrying {
		ts, err := t.readTimespec(a.A[0])
		if err != nil {
			return 0, err
		}
		t.deadline(tsDuration(ts))
	}
	return t.nanosleep(t.dl, a.A[1])
}

// ClockNanosleep implements Linux syscall clock_nanosleep(2) on the
// host's clocks.
func ClockNanosleep(t *Thread, a *SyscallArgs) (uint64, error) {
	clock := a.Int(0)
	if _, cpu, _ := t.cpuClock(clock); cpu || clock < 0 {
		return 0, unix.EINVAL
	}
	rem := a.A[3]
	if a.Int(1)&unix.TIMER_ABSTIME != 0 {
		rem = 0
	}
	if !t.retrying {
		ts, err := t.readTimespec(a.A[2])
		if err != nil {
			return 0, err
		}
		if a.Int(1)&unix.TIMER_ABSTIME != 0 {
			var now unix.Timespec
			if err := unix.ClockGettime(int32(clock), &now); err != nil {
				return 0, errno(err)
			}
			t.setDeadline(absDeadline(clock, ts))
		} else {
			t.deadline(tsDuration(ts))
		}
	}
	return t.nanosleep(t.dl, rem)
}

// Pause implements Linux syscall pause(2).
func Pause(t *Thread, a *SyscallArgs) (uint64, error) {
	if t.interrupted() {
		return 0, unix.EINTR
	}
	return 0, t.sleep(wait{what: "a signal (pause)"})
}
