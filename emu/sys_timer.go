package emu

import (
	"encoding/binary"
	"math"
	"time"

	"golang.org/x/sys/unix"
)

// Timers that deliver signals are emulated: interval timers (setitimer,
// alarm) and POSIX timers (timer_create). Timers on the host's clocks
// (real time, monotonic) expire by host time, checked between
// instructions and while every thread waits. CPU-time clocks are
// virtual: a thread's CPU time is its instruction count, at one
// nanosecond per instruction, and the process's is the global count, so
// CPU-time timers expire at an exact instruction (the scheduler stops the
// CPU there) and clock_gettime(CLOCK_*_CPUTIME_ID) agrees with them.

// Interval timers and sigevent notifications.
const (
	itimerReal    = 0
	itimerVirtual = 1
	itimerProf    = 2

	sigevSignal   = 0
	sigevNone     = 1
	sigevThreadID = 4

	siQueue  = -1 // SI_QUEUE: sigqueue
	siTimer  = -2
	siKernel = 0x80

	timerAbstime = 1
	maxTimers    = 1 << 12
)

// timer is an interval timer or a POSIX timer.
type timer struct {
	id    int  // POSIX timer id; -1 for interval timers
	cpu   bool // on a CPU-time clock
	clock int  // host clock id for timers on host time
	owner *Thread
	armed bool
	// Host-time timers.
	next     time.Time
	interval time.Duration
	// CPU-time timers, in instructions.
	nextI, intervalI uint64
	// What expiry does.
	notify  int
	signo   int
	value   uint64
	target  *Thread
	overrun int
}

// timerState is a process's timers.
type timerState struct {
	itimers [3]*timer
	posix   map[int]*timer
	// nextID is the id the next POSIX timer tries first: Linux gives
	// ids in increasing order (a deleted timer's id is not taken
	// again until they wrap at INT_MAX), and keeps the count across
	// execve (the process's signal_struct); a forked child starts at 0.
	nextID int
	list   []*timer // all timers
	// real and cpu count the armed timers of each kind.
	real, cpu int
}

// recount recomputes the armed-timer counts.
func (ts *timerState) recount() {
	ts.real, ts.cpu = 0, 0
	for _, tm := range ts.list {
		if !tm.armed {
			continue
		}
		if tm.cpu {
			ts.cpu++
		} else {
			ts.real++
		}
	}
}

// cpuNow is the current value of a CPU-time timer's clock.
func (p *Process) cpuNow(tm *timer) uint64 {
	if tm.owner != nil {
		return tm.owner.CPU.Retired()
	}
	return p.cpuTotal()
}

// cpuTotal is the instructions the process's threads retired.
func (p *Process) cpuTotal() uint64 {
	n := p.retiredByExited
	for _, t := range p.threads {
		n += t.CPU.Retired()
	}
	return n
}

// cpuTimerBudget shortens a run of t so that it stops when a CPU-time
// timer expires.
func (p *Process) cpuTimerBudget(t *Thread, budget uint64) uint64 {
	if p.timers.cpu == 0 {
		return budget
	}
	for _, tm := range p.timers.list {
		if !tm.armed || !tm.cpu || tm.owner != nil && tm.owner != t {
			continue
		}
		now := p.cpuNow(tm)
		rem := uint64(1)
		if tm.nextI > now {
			rem = tm.nextI - now
		}
		budget = min(budget, rem)
	}
	return budget
}

// cpuTimersDue fires the CPU-time timers that expired.
func (p *Process) cpuTimersDue(t *Thread) {
	if p.timers.cpu == 0 {
		return
	}
	for _, tm := range p.timers.list {
		if !tm.armed || !tm.cpu {
			continue
		}
		if tm.owner != nil && tm.owner.state == threadExited {
			tm.armed = false
			p.timers.recount()
			continue
		}
		now := p.cpuNow(tm)
		if now < tm.nextI {
			continue
		}
		over := 0
		if tm.intervalI > 0 {
			over = int((now - tm.nextI) / tm.intervalI)
			tm.nextI += uint64(over+1) * tm.intervalI
		} else {
			tm.armed = false
			p.timers.recount()
		}
		p.fire(tm, over)
	}
}

// realTimersDue fires the host-time timers that expired by now.
func (p *Process) realTimersDue(now time.Time) {
	for _, tm := range p.timers.list {
		if !tm.armed || tm.cpu || now.Before(tm.next) {
			continue
		}
		over := 0
		if tm.interval > 0 {
			over = int(now.Sub(tm.next) / tm.interval)
			tm.next = tm.next.Add(time.Duration(over+1) * tm.interval)
		} else {
			tm.armed = false
			p.timers.recount()
		}
		p.fire(tm, over)
	}
}

// nextRealTimer is the earliest expiry of a host-time timer (zero: none).
func (p *Process) nextRealTimer() time.Time {
	var next time.Time
	if p.timers.real == 0 {
		return next
	}
	for _, tm := range p.timers.list {
		if tm.armed && !tm.cpu && (next.IsZero() || tm.next.Before(next)) {
			next = tm.next
		}
	}
	return next
}

// fire sends a timer's signal.
func (p *Process) fire(tm *timer, over int) {
	if tm.notify == sigevNone {
		return
	}
	info := SigInfo{Signo: int32(tm.signo), Code: siKernel}
	if tm.id >= 0 {
		info = SigInfo{Signo: int32(tm.signo), Code: siTimer, Pid: int32(tm.id), Uid: int32(over), Value: tm.value}
	}
	bit := sigBit(tm.signo)
	if tm.notify == sigevThreadID {
		if tm.target == nil || tm.target.state == threadExited {
			return
		}
		if tm.target.pending.mask&bit != 0 {
			tm.overrun += over + 1
			return
		}
		tm.overrun = over
		tm.target.queue(pendingSignal{info: info})
		return
	}
	if p.shared.mask&bit != 0 {
		tm.overrun += over + 1
		return
	}
	tm.overrun = over
	p.queueProcess(pendingSignal{info: info})
}

// arm sets a timer's next expiry and interval (value zero disarms).
func (p *Process) arm(tm *timer, value, interval time.Duration, abs bool) {
	tm.armed = value != 0
	if tm.cpu {
		tm.intervalI = uint64(interval)
		if abs {
			tm.nextI = uint64(value)
			tm.armed = value > 0
		} else {
			tm.nextI = p.cpuNow(tm) + uint64(value)
		}
	} else {
		tm.interval = interval
		tm.next = time.Now().Add(value)
	}
	p.timers.recount()
}

// remaining returns how long until a timer expires, and its interval.
func (p *Process) remaining(tm *timer) (value, interval time.Duration) {
	if !tm.armed {
		return 0, 0
	}
	if tm.cpu {
		now := p.cpuNow(tm)
		if tm.nextI > now {
			value = time.Duration(tm.nextI - now)
		} else {
			value = 1
		}
		return value, time.Duration(tm.intervalI)
	}
	value = time.Until(tm.next)
	if value <= 0 {
		value = 1
	}
	return value, tm.interval
}

// itimer returns interval timer which, creating it.
func (p *Process) itimer(which int) *timer {
	ts := &p.timers
	if ts.itimers[which] == nil {
		tm := &timer{id: -1, notify: sigevSignal}
		switch which {
		case itimerReal:
			tm.clock, tm.signo = unix.CLOCK_MONOTONIC, int(unix.SIGALRM)
		case itimerVirtual:
			tm.cpu, tm.signo = true, int(unix.SIGVTALRM)
		case itimerProf:
			tm.cpu, tm.signo = true, int(unix.SIGPROF)
		}
		ts.itimers[which] = tm
		ts.list = append(ts.list, tm)
	}
	return ts.itimers[which]
}

// timeval helpers.
func tvDur(b []byte) (time.Duration, bool) {
	sec, usec := int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint64(b[8:]))
	if sec < 0 || usec < 0 || usec >= 1e6 {
		return 0, false
	}
	return secDuration(sec, usec*1000), true
}

func putTv(b []byte, d time.Duration) {
	us := (d + time.Microsecond - 1) / time.Microsecond
	binary.LittleEndian.PutUint64(b, uint64(us/1e6))
	binary.LittleEndian.PutUint64(b[8:], uint64(us%1e6))
}

func tsDur(b []byte) (time.Duration, bool) {
	sec, nsec := int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint64(b[8:]))
	if sec < 0 || nsec < 0 || nsec >= 1e9 {
		return 0, false
	}
	return secDuration(sec, nsec), true
}

func putTs(b []byte, d time.Duration) {
	binary.LittleEndian.PutUint64(b, uint64(d/time.Second))
	binary.LittleEndian.PutUint64(b[8:], uint64(d%time.Second))
}

// Setitimer implements Linux syscall setitimer(2).
func Setitimer(t *Thread, a *SyscallArgs) (uint64, error) {
	which := a.Int(0)
	if which < 0 || which > itimerProf {
		return 0, unix.EINVAL
	}
	var nv [32]byte
	if a.A[1] != 0 {
		if err := t.CopyIn(a.A[1], nv[:]); err != nil {
			return 0, err
		}
	}
	interval, ok1 := tvDur(nv[0:])
	value, ok2 := tvDur(nv[16:])
	if !ok1 || !ok2 {
		return 0, unix.EINVAL
	}
	p := t.P
	tm := p.itimer(which)
	if a.A[2] != 0 {
		var ov [32]byte
		v, i := p.remaining(tm)
		putTv(ov[0:], i)
		putTv(ov[16:], v)
		if err := t.CopyOut(a.A[2], ov[:]); err != nil {
			return 0, err
		}
	}
	p.arm(tm, value, interval, false)
	return 0, nil
}

// Getitimer implements Linux syscall getitimer(2).
func Getitimer(t *Thread, a *SyscallArgs) (uint64, error) {
	which := a.Int(0)
	if which < 0 || which > itimerProf {
		return 0, unix.EINVAL
	}
	var v [32]byte
	value, interval := t.P.remaining(t.P.itimer(which))
	putTv(v[0:], interval)
	putTv(v[16:], value)
	return 0, t.CopyOut(a.A[1], v[:])
}

// Alarm implements Linux syscall alarm(2).
func Alarm(t *Thread, a *SyscallArgs) (uint64, error) {
	p := t.P
	tm := p.itimer(itimerReal)
	old, _ := p.remaining(tm)
	secs := uint64(old / time.Second)
	if old%time.Second >= time.Second/2 || secs == 0 && old > 0 {
		secs++
	}
	p.arm(tm, time.Duration(uint32(a.A[0]))*time.Second, 0, false)
	return secs, nil
}

// cpuClock decodes a CPU-time clock id: the thread whose clock it is (nil
// for the process's), and whether it is one.
func (t *Thread) cpuClock(clock int) (owner *Thread, ok bool, err error) {
	switch clock {
	case unix.CLOCK_PROCESS_CPUTIME_ID:
		return nil, true, nil
	case unix.CLOCK_THREAD_CPUTIME_ID:
		return t, true, nil
	}
	if clock >= 0 {
		return nil, false, nil
	}
	// Clocks of a given thread or process: ~id << 3 | perthread<<2 | type.
	id := int(^(int32(clock) >> 3))
	if clock&3 == 3 {
		return nil, false, unix.EINVAL
	}
	if clock&4 != 0 {
		if id == 0 {
			return t, true, nil
		}
		if th := t.P.thread(id); th != nil {
			return th, true, nil
		}
		return nil, false, unix.EINVAL
	}
	if id == 0 || id == t.P.PID {
		return nil, true, nil
	}
	return nil, false, unix.EINVAL
}

// cpuTime is a CPU-time clock's value.
func (t *Thread) cpuTime(owner *Thread) time.Duration {
	if owner != nil {
		return time.Duration(owner.CPU.Retired())
	}
	return time.Duration(t.P.cpuTotal())
}

// TimerCreate implements Linux syscall timer_create(2).
func TimerCreate(t *Thread, a *SyscallArgs) (uint64, error) {
	p := t.P
	clock := a.Int(0)
	tm := &timer{notify: sigevSignal, signo: int(unix.SIGALRM)}
	owner, cpu, err := t.cpuClock(clock)
	if err != nil {
		return 0, err
	}
	switch {
	case cpu:
		tm.cpu, tm.owner = true, owner
	case clock == unix.CLOCK_REALTIME || clock == unix.CLOCK_MONOTONIC || clock == unix.CLOCK_BOOTTIME ||
		clock == unix.CLOCK_REALTIME_ALARM || clock == unix.CLOCK_BOOTTIME_ALARM || clock == unix.CLOCK_TAI:
		tm.clock = clock
	default:
		return 0, unix.EINVAL
	}
	if a.A[1] != 0 {
		var ev [64]byte
		if err := t.CopyIn(a.A[1], ev[:]); err != nil {
			return 0, err
		}
		le := binary.LittleEndian
		tm.value = le.Uint64(ev[0:])
		tm.signo = int(int32(le.Uint32(ev[8:])))
		tm.notify = int(int32(le.Uint32(ev[12:])))
		switch tm.notify {
		case sigevNone:
		case sigevSignal, sigevThreadID | sigevSignal:
			if tm.notify == sigevThreadID {
				tm.target = p.thread(int(int32(le.Uint32(ev[16:]))))
				if tm.target == nil {
					return 0, unix.EINVAL
				}
			}
			if tm.signo < 1 || tm.signo > numSignals {
				return 0, unix.EINVAL
			}
		default:
			return 0, unix.EINVAL
		}
	}
	ts := &p.timers
	if ts.posix == nil {
		ts.posix = make(map[int]*timer)
	}
	if len(ts.posix) >= maxTimers {
		return 0, unix.EAGAIN
	}
	id := ts.nextID
	for ts.posix[id] != nil {
		id = (id + 1) & math.MaxInt32
	}
	ts.nextID = (id + 1) & math.MaxInt32
	tm.id = id
	if a.A[1] == 0 {
		tm.value = uint64(id)
	}
	if err := t.writeU32(a.A[2], uint32(id)); err != nil {
		return 0, err
	}
	ts.posix[id] = tm
	ts.list = append(ts.list, tm)
	return 0, nil
}

// posixTimer returns the timer with the id in argument 0.
func (t *Thread) posixTimer(a *SyscallArgs) (*timer, error) {
	tm := t.P.timers.posix[a.Int(0)]
	if tm == nil {
		return nil, unix.EINVAL
	}
	return tm, nil
}

// TimerSettime implements Linux syscall timer_settime(2).
func TimerSettime(t *Thread, a *SyscallArgs) (uint64, error) {
	p := t.P
	tm, err := t.posixTimer(a)
	if err != nil {
		return 0, err
	}
	var nv [32]byte
	if err := t.CopyIn(a.A[2], nv[:]); err != nil {
		return 0, err
	}
	interval, ok1 := tsDur(nv[0:])
	value, ok2 := tsDur(nv[16:])
	if !ok1 || !ok2 {
		return 0, unix.EINVAL
	}
	if a.A[3] != 0 {
		var ov [32]byte
		v, i := p.remaining(tm)
		putTs(ov[0:], i)
		putTs(ov[16:], v)
		if err := t.CopyOut(a.A[3], ov[:]); err != nil {
			return 0, err
		}
	}
	abs := a.Int(1)&timerAbstime != 0
	if value == 0 {
		tm.armed = false
		p.timers.recount()
		return 0, nil
	}
	if abs && !tm.cpu {
		var ts unix.Timespec
		ts.Sec, ts.Nsec = int64(value/time.Second), int64(value%time.Second)
		value = time.Until(absDeadline(tm.clock, ts))
		if value <= 0 {
			value = 1
		}
		abs = false
	}
	p.arm(tm, value, interval, abs)
	return 0, nil
}

// TimerGettime implements Linux syscall timer_gettime(2).
func TimerGettime(t *Thread, a *SyscallArgs) (uint64, error) {
	tm, err := t.posixTimer(a)
	if err != nil {
		return 0, err
	}
	var v [32]byte
	value, interval := t.P.remaining(tm)
	putTs(v[0:], interval)
	putTs(v[16:], value)
	return 0, t.CopyOut(a.A[1], v[:])
}

// TimerGetoverrun implements Linux syscall timer_getoverrun(2).
func TimerGetoverrun(t *Thread, a *SyscallArgs) (uint64, error) {
	tm, err := t.posixTimer(a)
	if err != nil {
		return 0, err
	}
	return uint64(tm.overrun), nil
}

// TimerDelete implements Linux syscall timer_delete(2).
func TimerDelete(t *Thread, a *SyscallArgs) (uint64, error) {
	tm, err := t.posixTimer(a)
	if err != nil {
		return 0, err
	}
	ts := &t.P.timers
	delete(ts.posix, tm.id)
	for i, x := range ts.list {
		if x == tm {
			ts.list = append(ts.list[:i], ts.list[i+1:]...)
			break
		}
	}
	ts.recount()
	return 0, nil
}

// deletePosixTimers removes the POSIX timers (execve).
func (p *Process) deletePosixTimers() {
	ts := &p.timers
	keep := ts.list[:0]
	for _, tm := range ts.list {
		if tm.id < 0 {
			keep = append(keep, tm)
		}
	}
	ts.list = keep
	ts.posix = nil
	ts.recount()
}
