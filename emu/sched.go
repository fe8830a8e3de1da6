package emu

import (
	"encoding/binary"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The scheduler. Guest threads run one at a time on the goroutine that
// called Process.Run, each for a time slice counted in guest
// instructions, in round-robin order of creation. A thread whose syscall
// must wait (a futex, a sleep, a read on an empty pipe…) is blocked: its
// handler arranged what it waits for in Thread.w and returned errBlock.
// When that may have happened (a futex wake, a deadline, a signal, a host
// descriptor becoming ready), the thread is marked ready and, when its
// turn comes, the handler runs again with the same arguments and
// decides: complete, fail, or wait again. Handlers never block the
// process goroutine on a host call that may take long: they poll the
// host descriptor first, and a helper goroutine polls it while the
// thread is blocked (it only waits: all reads and writes happen on the
// process goroutine, between instructions, in the order the scheduler
// reports). Every decision is reported through Observer.Switch, so a
// replay can follow a schedule that depended on host timing.

// DefaultTimeSlice is the number of instructions a thread runs before the
// next runnable thread gets its turn.
const DefaultTimeSlice = 100_000

// threadState is where a thread is in its life.
type threadState uint8

const (
	threadRunnable threadState = iota
	threadBlocked              // in a syscall that waits
	threadExited
)

// wait describes what a thread blocked in a syscall waits for, besides
// signals (a deliverable signal always ends a wait) and explicit wakes
// (futex).
type wait struct {
	what     string        // for deadlock reports: "futex 0x…", "read on fd 3"
	deadline time.Time     // zero: none
	fds      []unix.PollFd // host descriptors a helper goroutine polls
	// sigset are signals that end the wait even while blocked
	// (rt_sigtimedwait).
	sigset uint64
}

// hostWait is one helper goroutine polling host descriptors for a
// blocked thread; writing to efd (an eventfd) makes it return early.
type hostWait struct {
	t         *Thread
	efd       int
	cancelled bool
}

// scheduler is the Process's scheduling state.
type scheduler struct {
	slice uint64
	last  *Thread // the thread that ran last
	rr    int     // where the round-robin search for the next thread starts
	// icount is the global instruction count between CPU runs;
	// retiredByExited the part of it from threads that exited.
	icount          uint64
	retiredByExited uint64
	nextCheckpoint  uint64
	// earliest is a lower bound of the deadlines of blocked threads
	// (zero: none).
	earliest time.Time
	// events receives the helpers that finished polling.
	events  chan *hostWait
	helpers map[*hostWait]bool
}

func (p *Process) initScheduler() {
	s := &p.sched
	s.slice = p.cfg.TimeSlice
	if s.slice == 0 {
		s.slice = DefaultTimeSlice
	}
	s.nextCheckpoint = p.cfg.CheckpointEvery
	s.events = make(chan *hostWait, 64)
	s.helpers = make(map[*hostWait]bool)
}

// schedule runs threads until the process ends.
func (p *Process) schedule() {
	for !p.exited {
		p.pollEvents()
		t := p.pickNext()
		if t == nil {
			p.idle()
			continue
		}
		p.runSlice(t)
	}
}

// pickNext returns the next thread to run in round-robin order, or nil
// when every thread waits.
func (p *Process) pickNext() *Thread {
	s := &p.sched
	n := len(p.threads)
	for i := 0; i < n; i++ {
		k := (s.rr + i) % n
		t := p.threads[k]
		if t.state == threadRunnable || t.state == threadBlocked && t.ready {
			s.rr = k + 1
			return t
		}
	}
	return nil
}

// runSlice runs t for one time slice, or until it blocks or exits.
func (p *Process) runSlice(t *Thread) {
	s := &p.sched
	if t != s.last {
		s.last = t
		if p.obs != nil {
			p.obs.Switch(t)
		}
	}
	left := s.slice
	t.yield = false
	if t.state == threadRunnable {
		// Signals sent to it while it was not running.
		t.deliverSignals()
	}
	for !p.exited {
		switch {
		case t.state == threadExited:
			return
		case t.state == threadBlocked:
			if !t.ready {
				return
			}
			t.resume()
			p.between(t)
			continue
		case left == 0 || t.yield:
			return
		}
		budget := left
		if p.obs != nil && p.cfg.CheckpointEvery != 0 {
			budget = min(budget, s.nextCheckpoint-s.icount)
		}
		budget = p.cpuTimerBudget(t, budget)
		before := t.CPU.Icount
		ex := t.CPU.Run(budget)
		n := t.CPU.Icount - before
		s.icount += n
		left -= min(left, n)
		t.handleExit(ex)
		p.cpuTimersDue(t)
		p.between(t)
	}
}

// between does what is due between two instructions of the running
// thread t: asynchronous events, signal delivery, checkpoints.
func (p *Process) between(t *Thread) {
	if p.exited {
		return
	}
	p.pollEvents()
	if t.state == threadRunnable {
		t.deliverSignals()
	}
	s := &p.sched
	if p.obs != nil && p.cfg.CheckpointEvery != 0 && s.icount >= s.nextCheckpoint && !p.exited {
		if s.icount == s.nextCheckpoint {
			p.obs.Checkpoint(p)
		}
		// (Runs never pass a checkpoint; should one have, the next
		// multiple still comes exactly.)
		s.nextCheckpoint = (s.icount/p.cfg.CheckpointEvery + 1) * p.cfg.CheckpointEvery
	}
}

// pollEvents takes in, without waiting, what happened outside the
// running thread: finished helpers, host signals, deadlines and timers.
func (p *Process) pollEvents() {
	s := &p.sched
drain:
	for len(s.helpers) > 0 {
		select {
		case hw := <-s.events:
			p.helperDone(hw)
		default:
			break drain
		}
	}
	p.pollHostSignals()
	if !s.earliest.IsZero() || p.timers.real > 0 {
		p.expire(time.Now())
	}
}

// expire wakes the threads whose deadline passed and fires due timers.
func (p *Process) expire(now time.Time) {
	s := &p.sched
	if !s.earliest.IsZero() && !now.Before(s.earliest) {
		s.earliest = time.Time{}
		for _, t := range p.threads {
			if t.state != threadBlocked || t.w.deadline.IsZero() {
				continue
			}
			if !now.Before(t.w.deadline) {
				p.wake(t)
			} else if !t.ready && (s.earliest.IsZero() || t.w.deadline.Before(s.earliest)) {
				s.earliest = t.w.deadline
			}
		}
	}
	if p.timers.real > 0 {
		p.realTimersDue(now)
	}
}

// idle waits, without spinning, until a blocked thread may continue.
func (p *Process) idle() {
	s := &p.sched
	dl := s.earliest
	if r := p.nextRealTimer(); !r.IsZero() && (dl.IsZero() || r.Before(dl)) {
		dl = r
	}
	if len(s.helpers) == 0 && dl.IsZero() && p.hostSigs == nil {
		p.deadlock()
		return
	}
	var timeout <-chan time.Time
	if !dl.IsZero() {
		d := time.Until(dl)
		if d <= 0 {
			p.expire(time.Now())
			return
		}
		timer := time.NewTimer(d)
		defer timer.Stop()
		timeout = timer.C
	}
	select {
	case hw := <-s.events:
		p.helperDone(hw)
	case sig := <-p.hostSigs:
		p.queueHost(sig)
	case <-timeout:
	}
}

// block puts t to sleep on what its syscall handler set in t.w.
func (t *Thread) block() {
	p := t.P
	s := &p.sched
	t.state = threadBlocked
	t.ready = false
	if dl := t.w.deadline; !dl.IsZero() && (s.earliest.IsZero() || dl.Before(s.earliest)) {
		s.earliest = dl
	}
	if len(t.w.fds) > 0 {
		p.startHelper(t, t.w.fds)
	}
}

// sleep is what a handler returns to wait for w: the thread blocks and
// the handler runs again when w may be satisfied or a signal arrives.
func (t *Thread) sleep(w wait) error {
	t.w = w
	return errBlock
}

// wake marks a blocked thread ready to run its syscall again.
func (p *Process) wake(t *Thread) {
	if t.state != threadBlocked || t.ready {
		return
	}
	t.ready = true
	if hw := t.hw; hw != nil {
		p.cancelHelper(hw)
		t.hw = nil
	}
}

// deadline returns the absolute deadline of a syscall that waits at most
// d, the same each time the handler runs for one syscall.
func (t *Thread) deadline(d time.Duration) time.Time {
	if !t.retrying || t.dl.IsZero() {
		t.dl = time.Now().Add(d)
	}
	return t.dl
}

// setDeadline fixes the current syscall's deadline (absolute timeouts).
func (t *Thread) setDeadline(dl time.Time) time.Time {
	if !t.retrying || t.dl.IsZero() {
		t.dl = dl
	}
	return t.dl
}

// startHelper starts a goroutine polling fds (host descriptors) for t.
func (p *Process) startHelper(t *Thread, fds []unix.PollFd) {
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		// No helper: poll again at the next scheduling point (a short
		// deadline keeps the wait from being reported as a deadlock).
		t.w.deadline = time.Now().Add(time.Millisecond)
		if s := &p.sched; s.earliest.IsZero() || t.w.deadline.Before(s.earliest) {
			s.earliest = t.w.deadline
		}
		return
	}
	hw := &hostWait{t: t, efd: efd}
	t.hw = hw
	p.sched.helpers[hw] = true
	pfds := make([]unix.PollFd, len(fds)+1)
	copy(pfds, fds)
	pfds[len(fds)] = unix.PollFd{Fd: int32(efd), Events: unix.POLLIN}
	events := p.sched.events
	go func() {
		for {
			if _, err := unix.Poll(pfds, -1); err != unix.EINTR {
				break
			}
		}
		events <- hw
	}()
}

// cancelHelper makes a helper's poll return.
func (p *Process) cancelHelper(hw *hostWait) {
	if hw.cancelled {
		return
	}
	hw.cancelled = true
	var one [8]byte
	binary.LittleEndian.PutUint64(one[:], 1)
	unix.Write(hw.efd, one[:])
}

// helperDone takes in a helper that finished: its thread may go on.
func (p *Process) helperDone(hw *hostWait) {
	delete(p.sched.helpers, hw)
	unix.Close(hw.efd)
	if t := hw.t; t.hw == hw {
		t.hw = nil
		p.wake(t)
	}
}

// stopHelpers cancels every helper and waits for them to finish.
func (p *Process) stopHelpers() {
	s := &p.sched
	for hw := range s.helpers {
		p.cancelHelper(hw)
	}
	for len(s.helpers) > 0 {
		p.helperDone(<-s.events)
	}
}

// deadlock ends a process whose threads all wait for events no thread
// can cause.
func (p *Process) deadlock() {
	var what []string
	var pc uint64
	for i, t := range p.threads {
		w := t.w.what
		if w == "" && t.sysEnt != nil {
			w = t.sysEnt.Name
		}
		if w == "futex" {
			w += " " + hex(t.futexAddr)
		}
		if i == 0 {
			pc = t.CPU.RIP
		}
		what = append(what, "thread "+itoa(t.Tid)+" waits for "+w)
	}
	p.exitProcess(ExitStatus{Signal: unix.SIGKILL}, &DeadlockError{What: strings.Join(what, ", "), PC: pc})
}

// removeThread takes an exited thread out of the live list.
func (p *Process) removeThread(t *Thread) {
	s := &p.sched
	for i, th := range p.threads {
		if th == t {
			p.threads = append(p.threads[:i], p.threads[i+1:]...)
			if i < s.rr {
				s.rr--
			}
			break
		}
	}
	s.retiredByExited += t.CPU.Icount
	if t.hw != nil {
		p.cancelHelper(t.hw)
		t.hw = nil
	}
	p.futexDequeue(t)
	t.state = threadExited
}
