package emu

import (
	"time"

	"golang.org/x/sys/unix"

	"ttd/x86"
)

// Futexes are emulated: guest threads are not host threads, so a futex
// wait blocks the guest thread in the scheduler and a wake makes waiters
// on the same futex ready again, in the order they started waiting.
// As on Linux, a futex is a word of an address space (a private futex,
// or any futex in a private mapping), or, for a futex operation without
// FUTEX_PRIVATE_FLAG on a shared mapping, a word of the shared page
// itself, whichever process's address it is reached at: a
// PTHREAD_PROCESS_SHARED mutex or a sem_t in memory shared across fork
// works between processes. The wait queues are the machine's.

// futexKey names a futex: the address space and address of a private
// one, the shared page and offset of a shared one.
type futexKey struct {
	space any // *MM or *x86.Page
	off   uint64
}

// futexKeyOf returns the key of the futex word at addr for t's process
// (private: FUTEX_PRIVATE_FLAG was given).
func (t *Thread) futexKeyOf(addr uint64, private bool) futexKey {
	mm := t.P.MM
	if !private {
		if v := mm.find(addr); v != nil && v.shared {
			if pg := mm.Mem.PageAt(addr >> x86.PageShift); pg != nil {
				return futexKey{pg, addr & (x86.PageSize - 1)}
			}
		}
	}
	return futexKey{mm, addr}
}

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
	m := t.P.m
	op := a.Int(1) &^ (futexPrivate | futexClockRealtime)
	private := a.Int(1)&futexPrivate != 0
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
		return t.futexWait(addr, private, val, bitset, t.dl, timed)
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
		return uint64(m.futexWake(t.futexKeyOf(addr, private), int(int32(val)), bitset)), nil
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
		return uint64(m.futexRequeue(t.futexKeyOf(addr, private), t.futexKeyOf(a.A[4], private), nwake, nreq)), nil
	case futexWakeOp:
		if addr%4 != 0 || a.A[4]%4 != 0 {
			return 0, unix.EINVAL
		}
		return t.futexWakeOp(addr, a.A[4], private, int(int32(val)), int(int32(a.A[3])), uint32(a.A[5]))
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
func (t *Thread) futexWait(addr uint64, private bool, val, bitset uint32, dl time.Time, timed bool) (uint64, error) {
	m := t.P.m
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
		t.futexKey = t.futexKeyOf(addr, private)
		t.futexQueued = true
		m.futexes[t.futexKey] = append(m.futexes[t.futexKey], t)
	}
	if t.futexWoken {
		t.futexWoken = false
		return 0, nil
	}
	if timed && !time.Now().Before(dl) {
		m.futexDequeue(t)
		return 0, unix.ETIMEDOUT
	}
	if t.interrupted() {
		m.futexDequeue(t)
		if timed {
			return 0, unix.EINTR
		}
		return 0, errRestartSys
	}
	return 0, t.sleep(wait{what: "futex", deadline: dl}) // deadlock names the address
}

// futexDequeue removes t from the futex queue it waits in.
func (m *Machine) futexDequeue(t *Thread) {
	if !t.futexQueued {
		return
	}
	t.futexQueued = false
	q := m.futexes[t.futexKey]
	for i, w := range q {
		if w == t {
			q = append(q[:i], q[i+1:]...)
			break
		}
	}
	if len(q) == 0 {
		delete(m.futexes, t.futexKey)
	} else {
		m.futexes[t.futexKey] = q
	}
}

// futexWake wakes up to n waiters on futex k whose bitset meets bitset
// and returns how many it woke.
func (m *Machine) futexWake(k futexKey, n int, bitset uint32) int {
	q := m.futexes[k]
	woken := 0
	keep := q[:0]
	for _, w := range q {
		if woken < n && w.futexBitset&bitset != 0 {
			w.futexQueued = false
			w.futexWoken = true
			m.wake(w)
			woken++
			continue
		}
		keep = append(keep, w)
	}
	if len(keep) == 0 {
		delete(m.futexes, k)
	} else {
		m.futexes[k] = keep
	}
	return woken
}

// futexRequeue wakes up to nwake waiters on k and moves up to nreq of
// the others to k2; it returns the number woken plus requeued.
func (m *Machine) futexRequeue(k, k2 futexKey, nwake, nreq int) int {
	woken := m.futexWake(k, nwake, futexBitsetAll)
	if k == k2 {
		return woken
	}
	q := m.futexes[k]
	moved := min(nreq, len(q))
	for _, w := range q[:moved] {
		w.futexKey = k2
		w.futexAddr = k2.off
		if mm, ok := k2.space.(*MM); !ok || mm != w.P.MM {
			w.futexAddr = 0 // a shared page's: the address is the waker's
		}
		m.futexes[k2] = append(m.futexes[k2], w)
	}
	if rest := q[moved:]; len(rest) == 0 {
		delete(m.futexes, k)
	} else {
		m.futexes[k] = append([]*Thread(nil), rest...)
	}
	return woken + moved
}

// futexWakeOp implements FUTEX_WAKE_OP: it applies the encoded operation
// to the word at addr2, wakes up to n waiters on addr, and up to n2 on
// addr2 if the word's old value passes the encoded comparison.
func (t *Thread) futexWakeOp(addr, addr2 uint64, private bool, n, n2 int, enc uint32) (uint64, error) {
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
	m := t.P.m
	woken := m.futexWake(t.futexKeyOf(addr, private), n, futexBitsetAll)
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
		woken += m.futexWake(t.futexKeyOf(addr2, private), n2, futexBitsetAll)
	}
	return uint64(woken), nil
}
