package emu

import (
	"time"

	"golang.org/x/sys/unix"
)

// Gettid implements Linux syscall gettid(2).
func Gettid(t *Thread, a *SyscallArgs) (uint64, error) { return uint64(t.TID), nil }

// SetTidAddress implements Linux syscall set_tid_address(2).
func SetTidAddress(t *Thread, a *SyscallArgs) (uint64, error) {
	t.clearChildTID = a.A[0]
	return uint64(t.TID), nil
}

// SetRobustList implements Linux syscall set_robust_list(2).
func SetRobustList(t *Thread, a *SyscallArgs) (uint64, error) {
	if a.A[1] != 24 {
		return 0, unix.EINVAL
	}
	t.robustList = a.A[0]
	return 0, nil
}

// GetRobustList implements Linux syscall get_robust_list(2).
func GetRobustList(t *Thread, a *SyscallArgs) (uint64, error) {
	if a.Int(0) != 0 && a.Int(0) != t.TID {
		return 0, unix.ESRCH
	}
	if err := t.writeU64(a.A[1], t.robustList); err != nil {
		return 0, err
	}
	return 0, t.writeU64(a.A[2], 24)
}

// futex operations.
const (
	futexWait          = 0
	futexWake          = 1
	futexRequeue       = 3
	futexCmpRequeue    = 4
	futexWakeOp        = 5
	futexWaitBitset    = 9
	futexWakeBitset    = 10
	futexPrivate       = 128
	futexClockRealtime = 256
)

// Futex implements Linux syscall futex(2) for a single thread: a wait on
// a changed word returns EAGAIN, a wait with a timeout sleeps and returns
// ETIMEDOUT, a wait that no thread could end stops the emulator as a
// deadlock; wakes wake nobody.
func Futex(t *Thread, a *SyscallArgs) (uint64, error) {
	op := a.Int(1) &^ (futexPrivate | futexClockRealtime)
	addr := a.A[0]
	switch op {
	case futexWait, futexWaitBitset:
		if addr%4 != 0 {
			return 0, unix.EINVAL
		}
		v, err := t.readU32(addr)
		if err != nil {
			return 0, err
		}
		if v != uint32(a.A[2]) {
			return 0, unix.EAGAIN
		}
		if a.A[3] == 0 {
			return 0, t.deadlock("futex " + hex(addr))
		}
		var ts unix.Timespec
		if err := copyInStruct(t, a.A[3], &ts); err != nil {
			return 0, err
		}
		d := time.Duration(ts.Nano())
		if op == futexWaitBitset {
			// An absolute time on the chosen clock.
			clock := unix.CLOCK_MONOTONIC
			if a.Int(1)&futexClockRealtime != 0 {
				clock = unix.CLOCK_REALTIME
			}
			var now unix.Timespec
			unix.ClockGettime(int32(clock), &now)
			d -= time.Duration(now.Nano())
		}
		if d > 0 {
			t.sleep(d)
		}
		return 0, unix.ETIMEDOUT
	case futexWake, futexWakeBitset, futexRequeue:
		return 0, nil
	case futexCmpRequeue:
		v, err := t.readU32(addr)
		if err != nil {
			return 0, err
		}
		if v != uint32(a.A[5]) {
			return 0, unix.EAGAIN
		}
		return 0, nil
	case futexWakeOp:
		return 0, t.futexWakeOp(a.A[4], uint32(a.A[5]))
	}
	return 0, unix.ENOSYS
}

// futexWakeOp applies FUTEX_WAKE_OP's operation to the word at addr2.
func (t *Thread) futexWakeOp(addr2 uint64, enc uint32) error {
	op := enc >> 28 & 7
	arg := enc >> 12 & 0xfff
	if enc>>31 != 0 { // FUTEX_OP_OPARG_SHIFT
		arg = 1 << (arg & 31)
	}
	old, err := t.readU32(addr2)
	if err != nil {
		return err
	}
	var nv uint32
	switch op {
	case 0:
		nv = arg
	case 1:
		nv = old + arg
	case 2:
		nv = old | arg
	case 3:
		nv = old &^ arg
	case 4:
		nv = old ^ arg
	default:
		return unix.ENOSYS
	}
	return t.writeU32(addr2, nv)
}

// sleep blocks the thread for d, or until a forwarded host signal
// arrives.
func (t *Thread) sleep(d time.Duration) bool {
	p := t.P
	if p.hostSigs == nil {
		time.Sleep(d)
		return false
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case s := <-p.hostSigs:
		t.queueHost(s)
		return true
	case <-timer.C:
		return false
	}
}
