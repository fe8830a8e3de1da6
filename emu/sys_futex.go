package emu

import (
	"time"

	"golang.org/x/sys/unix"
)

// Futexes are emulated: guest threads are not host threads, so a futex
// wait blocks the guest thread in the scheduler and a wake makes waiters
// on the same guest address ready again, in the order they started
// waiting. ttd runs one process, so private and shared futexes are the
// same.

// futex operations and flags.
const (
	futexWait          = 0
	futexWake          = 1
	futexFD            = 2
	futexRequeue       = 3
	futexCmpRequeue    = 4
	futexWakeOp        = 5
	futexLockPI        = 6
	futexUnlockPI      = 7
	futexTrylockPI     = 8
	futexWaitBitset    = 9
	futexWakeBitset    = 10
	futexWaitRequeuePI = 11
	futexPrivate       = 128
	futexClockRealtime = 256
	futexBitsetAll     = ^uint32(0)
)

// Futex implements Linux syscall futex(2): WAIT, WAKE, REQUEUE,
// CMP_REQUEUE, WAKE_OP, WAIT_BITSET and WAKE_BITSET (not the PI
// operations).
func Futex(t *Thread, a *SyscallArgs) (uint64, error) {
	p := t.P
	op := a.Int(1) &^ (futexPrivate | futexClockRealtime)
	addr := a.A[0]
	val := uint32(a.A[2])
	switch op {
	case futexWait, futexWaitBitset:
		bitset := futexBitsetAll
		if op == futexWaitBitset {
			bitset = uint32(a.A[5])
			if bitset == 0 {
				return 0, unix.EINVAL
			}
		}
		timed := a.A[3] != 0
		if timed && !t.retrying {
			// The deadline is fixed on the first run of the handler:
			// FUTEX_WAIT's timeout is relative, FUTEX_WAIT_BITSET's
			// absolute on CLOCK_MONOTONIC or CLOCK_REALTIME.
			ts, err := t.readTimespec(a.A[3])
			if err != nil {
				return 0, err
			}
			if op == futexWait {
				t.dl = time.Now().Add(tsDuration(ts))
			} else {
				clock := unix.CLOCK_MONOTONIC
				if a.Int(1)&futexClockRealtime != 0 {
					clock = unix.CLOCK_REALTIME
				}
				t.dl = absDeadline(clock, ts)
			}
		}
		return t.futexWait(addr, val, bitset, t.dl, timed)
	case futexWake, futexWakeBitset:
		bitset := futexBitsetAll
		if op == futexWakeBitset {
			bitset = uint32(a.A[5])
			if bitset == 0 {
				return 0, unix.EINVAL
			}
		}
		if addr%4 != 0 {
			return 0, unix.EINVAL
		}
		return uint64(p.futexWake(addr, int(int32(val)), bitset)), nil
	case futexRequeue, futexCmpRequeue:
		if addr%4 != 0 || a.A[4]%4 != 0 {
			return 0, unix.EINVAL
		}
		if op == futexCmpRequeue {
			v, err := t.readU32(addr)
			if err != nil {
				return 0, err
			}
			if v != uint32(a.A[5]) {
				return 0, unix.EAGAIN
			}
		}
		nwake, nreq := int(int32(val)), int(int32(a.A[3]))
		if nwake < 0 || nreq < 0 {
			return 0, unix.EINVAL
		}
		return uint64(p.futexRequeue(addr, a.A[4], nwake, nreq)), nil
	case futexWakeOp:
		if addr%4 != 0 || a.A[4]%4 != 0 {
			return 0, unix.EINVAL
		}
		return t.futexWakeOp(addr, a.A[4], int(int32(val)), int(int32(a.A[3])), uint32(a.A[5]))
	case futexLockPI, futexUnlockPI, futexTrylockPI, futexWaitRequeuePI, futexFD:
		return 0, unix.ENOSYS
	}
	return 0, unix.ENOSYS
}

// absDeadline converts an absolute time on clock to a host deadline.
func absDeadline(clock int, ts unix.Timespec) time.Time {
	var now unix.Timespec
	unix.ClockGettime(int32(clock), &now)
	return time.Now().Add(secDuration(ts.Sec-now.Sec, ts.Nsec-now.Nsec))
}

// futexWait waits on the word at addr while it holds val, until a wake
// whose bitset meets bitset, the deadline dl (if timed) or a signal.
func (t *Thread) futexWait(addr uint64, val, bitset uint32, dl time.Time, timed bool) (uint64, error) {
	p := t.P
	if !t.retrying {
		if addr%4 != 0 {
			return 0, unix.EINVAL
		}
		v, err := t.readU32(addr)
		if err != nil {
			return 0, err
		}
		if v != val {
			return 0, unix.EAGAIN
		}
		t.futexWoken = false
		t.futexAddr, t.futexBitset = addr, bitset
		t.futexQueued = true
		p.futexes[addr] = append(p.futexes[addr], t)
	}
	if t.futexWoken {
		t.futexWoken = false
		return 0, nil
	}
	if timed && !time.Now().Before(dl) {
		p.futexDequeue(t)
		return 0, unix.ETIMEDOUT
	}
	if t.interrupted() {
		p.futexDequeue(t)
		if timed {
			return 0, unix.EINTR
		}
		return 0, errRestartSys
	}
	return 0, t.sleep(wait{what: "futex", deadline: dl}) // deadlock names the address
}

// futexDequeue removes t from the futex queue it waits in.
func (p *Process) futexDequeue(t *Thread) {
	if !t.futexQueued {
		return
	}
	t.futexQueued = false
	q := p.futexes[t.futexAddr]
	for i, w := range q {
		if w == t {
			q = append(q[:i], q[i+1:]...)
			break
		}
	}
	if len(q) == 0 {
		delete(p.futexes, t.futexAddr)
	} else {
		p.futexes[t.futexAddr] = q
	}
}

// futexWake wakes up to n waiters on addr whose bitset meets bitset and
// returns how many it woke.
func (p *Process) futexWake(addr uint64, n int, bitset uint32) int {
	q := p.futexes[addr]
	woken := 0
	keep := q[:0]
	for _, w := range q {
		if woken < n && w.futexBitset&bitset != 0 {
			w.futexQueued = false
			w.futexWoken = true
			p.wake(w)
			woken++
			continue
		}
		keep = append(keep, w)
	}
	if len(keep) == 0 {
		delete(p.futexes, addr)
	} else {
		p.futexes[addr] = keep
	}
	return woken
}

// futexRequeue wakes up to nwake waiters on addr and moves up to nreq of
// the others to addr2; it returns the number woken plus requeued.
func (p *Process) futexRequeue(addr, addr2 uint64, nwake, nreq int) int {
	woken := p.futexWake(addr, nwake, futexBitsetAll)
	if addr == addr2 {
		return woken
	}
	q := p.futexes[addr]
	moved := min(nreq, len(q))
	for _, w := range q[:moved] {
		w.futexAddr = addr2
		p.futexes[addr2] = append(p.futexes[addr2], w)
	}
	if rest := q[moved:]; len(rest) == 0 {
		delete(p.futexes, addr)
	} else {
		p.futexes[addr] = append([]*Thread(nil), rest...)
	}
	return woken + moved
}

// futexWakeOp implements FUTEX_WAKE_OP: it applies the encoded operation
// to the word at addr2, wakes up to n waiters on addr, and up to n2 on
// addr2 if the word's old value passes the encoded comparison.
func (t *Thread) futexWakeOp(addr, addr2 uint64, n, n2 int, enc uint32) (uint64, error) {
	op := enc >> 28 & 7
	cmp := enc >> 24 & 15
	oparg := int32(enc<<8) >> 20 // bits 12-23, sign-extended
	cmparg := int32(enc<<20) >> 20
	if enc>>31 != 0 { // FUTEX_OP_OPARG_SHIFT
		oparg = 1 << (uint32(oparg) & 31)
	}
	old, err := t.readU32(addr2)
	if err != nil {
		return 0, err
	}
	arg := uint32(oparg)
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
		return 0, unix.ENOSYS
	}
	if err := t.writeU32(addr2, nv); err != nil {
		return 0, err
	}
	p := t.P
	woken := p.futexWake(addr, n, futexBitsetAll)
	o, c := int32(old), cmparg
	var ok bool
	switch cmp {
	case 0:
		ok = o == c
	case 1:
		ok = o != c
	case 2:
		ok = o < c
	case 3:
		ok = o <= c
	case 4:
		ok = o > c
	case 5:
		ok = o >= c
	default:
		return 0, unix.ENOSYS
	}
	if ok {
		woken += p.futexWake(addr2, n2, futexBitsetAll)
	}
	return uint64(woken), nil
}
