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
	// child: a child's state change ends the wait (wait4, waitid).
	child bool
}

// hostWait is one helper goroutine polling host descriptors for a
// blocked thread; writing to efd (an eventfd) makes it return early.
type hostWait struct {
	t         *Thread
	efd       int
	cancelled bool
}

// scheduler is the Machine's scheduling state: one over the threads of
// every process.
type scheduler struct {
	slice uint64
	last  *Thread // the thread that ran last
	rr    int     // where the round-robin search for the next thread starts
	// icount is the global instruction count between CPU runs;
	// retiredByExited the part of it from threads that exited.
	icount          uint64
	retiredByExited uint64
	nextCheckpoint  uint64
	// coster is the observer's CheckpointCoster, if it is one.
	coster CheckpointCoster
	// earliest is a lower bound of the deadlines of blocked threads
	// (zero: none).
	earliest time.Time
	// events receives the helpers that finished polling.
	events  chan *hostWait
	helpers map[*hostWait]bool
}

func (m *Machine) initScheduler() {
	s := &m.sched
	s.slice = m.cfg.TimeSlice
	if s.slice == 0 {
		s.slice = DefaultTimeSlice
	}
	s.nextCheckpoint = m.cfg.CheckpointEvery
	s.coster, _ = m.obs.(CheckpointCoster)
	s.events = make(chan *hostWait, 64)
	s.helpers = make(map[*hostWait]bool)
}

// schedule runs threads until the first process ends.
func (m *Machine) schedule() {
	for !m.done {
		m.pollEvents()
		t := m.pickNext()
		if t == nil {
			m.idle()
			continue
		}
		m.runSlice(t)
	}
}

// pickNext returns the next thread to run in round-robin order, or nil
// when every thread waits.
func (m *Machine) pickNext() *Thread {
	s := &m.sched
	n := len(m.threads)
	for i := 0; i < n; i++ {
		k := (s.rr + i) % n
		t := m.threads[k]
		if t.P.stopped || t.ptStopped() {
			continue
		}
		if t.state == threadRunnable || t.state == threadBlocked && t.ready {
			s.rr = k + 1
			return t
		}
	}
	return nil
}

// runSlice runs t for one time slice, or until it blocks or exits.
func (m *Machine) runSlice(t *Thread) {
	s := &m.sched
	p := t.P
	if t != s.last {
		s.last = t
		if p.obs != nil {
			p.obs.Switch(t)
		}
	}
	if t.pt != nil && t.pt.exitErr != nil {
		t.ptExitNow()
		return
	}
	left := s.slice
	t.yield = false
	if t.state == threadRunnable {
		// Signals sent to it while it was not running.
		t.deliverSignals()
	}
	for !p.exited && !p.stopped && !t.ptStopped() {
		switch {
		case t.state == threadExited:
			return
		case t.state == threadBlocked:
			if !t.ready {
				return
			}
			t.resume()
			m.between(t)
			continue
		case left == 0 || t.yield:
			return
		}
		budget := left
		if p.obs != nil && m.cfg.CheckpointEvery != 0 {
			budget = min(budget, s.checkpointBudget())
		}
		budget = p.cpuTimerBudget(t, budget)
		if t.pt != nil && t.pt.resume == resumeStep {
			budget = 1
		}
		if bo, ok := p.obs.(BudgetObserver); ok {
			budget = max(1, bo.Budget(t, budget))
		}
		before := t.CPU.Icount
		ex := t.CPU.Run(budget)
		n := t.CPU.Icount - before
		if p.obs != nil {
			// (Checkpoints count what the observer sees.)
			s.icount += n
		}
		left -= min(left, n)
		t.handleExit(ex)
		if t.pt != nil && t.pt.resume == resumeStep {
			t.ptStepped(ex)
		}
		p.cpuTimersDue(t)
		m.between(t)
	}
}

// between does what is due between two instructions of the running
// thread t: asynchronous events, signal delivery, checkpoints.
func (m *Machine) between(t *Thread) {
	if m.done {
		return
	}
	m.pollEvents()
	if t.state == threadRunnable && !t.P.exited {
		t.deliverSignals()
	}
	s := &m.sched
	if m.obs == nil || m.cfg.CheckpointEvery == 0 || m.done {
		return
	}
	every := m.cfg.CheckpointEvery
	switch {
	case s.icount == s.nextCheckpoint || s.icount < s.nextCheckpoint && s.icount+s.extraCost() >= s.nextCheckpoint:
		m.obs.Checkpoint(m.init)
		s.nextCheckpoint = s.icount + every
	case s.icount > s.nextCheckpoint:
		// (Runs never pass a checkpoint; should one have, the next
		// one still comes a whole number of intervals after it.)
		s.nextCheckpoint += ((s.icount-s.nextCheckpoint)/every + 1) * every
	}
}

// checkpointBudget is how many instructions may run before the next
// checkpoint is due (at least 1).
func (s *scheduler) checkpointBudget() uint64 {
	if s.nextCheckpoint <= s.icount {
		return 1
	}
	left := s.nextCheckpoint - s.icount
	if extra := s.extraCost(); extra < left {
		return left - extra
	}
	return 1
}

// extraCost is the replay cost since the last checkpoint that its
// instructions do not show, as the observer counts it (CheckpointCoster).
func (s *scheduler) extraCost() uint64 {
	if s.coster == nil {
		return 0
	}
	return s.coster.CheckpointCost()
}

// pollEvents takes in, without waiting, what happened outside the
// running thread: finished helpers, host signals, deadlines and timers.
func (m *Machine) pollEvents() {
	s := &m.sched
drain:
	for len(s.helpers) > 0 {
		select {
		case hw := <-s.events:
			m.helperDone(hw)
		default:
			break drain
		}
	}
	m.pollHostSignals()
	if !s.earliest.IsZero() || m.realTimers() {
		m.expire(time.Now())
	}
}

// realTimers reports whether a process has an armed host-time timer.
func (m *Machine) realTimers() bool {
	for _, p := range m.procs {
		if p.timers.real > 0 {
			return true
		}
	}
	return false
}

// expire wakes the threads whose deadline passed and fires due timers.
func (m *Machine) expire(now time.Time) {
	s := &m.sched
	if !s.earliest.IsZero() && !now.Before(s.earliest) {
		s.earliest = time.Time{}
		for _, t := range m.threads {
			if t.state != threadBlocked || t.w.deadline.IsZero() {
				continue
			}
			if !now.Before(t.w.deadline) {
				m.wake(t)
			} else if !t.ready && (s.earliest.IsZero() || t.w.deadline.Before(s.earliest)) {
				s.earliest = t.w.deadline
			}
		}
	}
	for _, p := range m.procs {
		if p.timers.real > 0 && !p.exited {
			p.realTimersDue(now)
		}
	}
}

// idle waits, without spinning, until a blocked thread may continue.
func (m *Machine) idle() {
	s := &m.sched
	dl := s.earliest
	for _, p := range m.procs {
		if r := p.nextRealTimer(); !r.IsZero() && (dl.IsZero() || r.Before(dl)) {
			dl = r
		}
	}
	if len(s.helpers) == 0 && dl.IsZero() && m.hostSigs == nil {
		m.deadlock()
		return
	}
	var timeout <-chan time.Time
	if !dl.IsZero() {
		d := time.Until(dl)
		if d <= 0 {
			m.expire(time.Now())
			return
		}
		timer := time.NewTimer(d)
		defer timer.Stop()
		timeout = timer.C
	}
	select {
	case hw := <-s.events:
		m.helperDone(hw)
	case sig := <-m.hostSigs:
		m.queueHost(sig)
	case <-timeout:
	}
}

// block puts t to sleep on what its syscall handler set in t.w.
func (t *Thread) block() {
	m := t.P.m
	s := &m.sched
	t.state = threadBlocked
	t.ready = false
	if dl := t.w.deadline; !dl.IsZero() && (s.earliest.IsZero() || dl.Before(s.earliest)) {
		s.earliest = dl
	}
	if len(t.w.fds) > 0 {
		m.startHelper(t, t.w.fds)
	}
}

// sleep is what a handler returns to wait for w: the thread blocks and
// the handler runs again when w may be satisfied or a signal arrives.
func (t *Thread) sleep(w wait) error {
	t.w = w
	return errBlock
}

// wake marks a blocked thread ready to run its syscall again.
func (p *Process) wake(t *Thread) { p.m.wake(t) }

// wake marks a blocked thread ready to run its syscall again.
func (m *Machine) wake(t *Thread) {
	if t.state != threadBlocked || t.ready {
		return
	}
	t.ready = true
	if hw := t.hw; hw != nil {
		m.cancelHelper(hw)
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
func (m *Machine) startHelper(t *Thread, fds []unix.PollFd) {
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		// No helper: poll again at the next scheduling point (a short
		// deadline keeps the wait from being reported as a deadlock).
		t.w.deadline = time.Now().Add(time.Millisecond)
		if s := &m.sched; s.earliest.IsZero() || t.w.deadline.Before(s.earliest) {
			s.earliest = t.w.deadline
		}
		return
	}
	hw := &hostWait{t: t, efd: efd}
	t.hw = hw
	m.sched.helpers[hw] = true
	pfds := make([]unix.PollFd, len(fds)+1)
	copy(pfds, fds)
	pfds[len(fds)] = unix.PollFd{Fd: int32(efd), Events: unix.POLLIN}
	events := m.sched.events
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
func (m *Machine) cancelHelper(hw *hostWait) {
	if hw.cancelled {
		return
	}
	hw.cancelled = true
	var one [8]byte
	binary.LittleEndian.PutUint64(one[:], 1)
	unix.Write(hw.efd, one[:])
}

// helperDone takes in a helper that finished: its thread may go on.
func (m *Machine) helperDone(hw *hostWait) {
	delete(m.sched.helpers, hw)
	unix.Close(hw.efd)
	if t := hw.t; t.hw == hw {
		t.hw = nil
		m.wake(t)
	}
}

// stopHelpers cancels every helper and waits for them to finish.
func (m *Machine) stopHelpers() {
	s := &m.sched
	for hw := range s.helpers {
		m.cancelHelper(hw)
	}
	for len(s.helpers) > 0 {
		m.helperDone(<-s.events)
	}
}

// deadlock ends a tree whose threads all wait for events no thread
// can cause.
func (m *Machine) deadlock() {
	var what []string
	var pc uint64
	for i, t := range m.threads {
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
		if t.P.stopped {
			w = "SIGCONT (stopped)"
		}
		who := "thread " + itoa(t.Tid)
		if t.P != m.init {
			who = "process " + itoa(t.P.PID) + " " + who
		}
		what = append(what, who+" waits for "+w)
	}
	m.init.exitProcess(ExitStatus{Signal: unix.SIGKILL}, &DeadlockError{What: strings.Join(what, ", "), PC: pc})
}

// removeThread takes an exited thread out of the live lists.
func (p *Process) removeThread(t *Thread) {
	m := p.m
	s := &m.sched
	for i, th := range p.threads {
		if th == t {
			p.threads = append(p.threads[:i], p.threads[i+1:]...)
			break
		}
	}
	for i, th := range m.threads {
		if th == t {
			m.threads = append(m.threads[:i], m.threads[i+1:]...)
			if i < s.rr {
				s.rr--
			}
			break
		}
	}
	s.retiredByExited += t.CPU.Icount
	p.retiredByExited += t.CPU.Icount
	if t.hw != nil {
		m.cancelHelper(t.hw)
		t.hw = nil
	}
	m.futexDequeue(t)
	t.state = threadExited
	if t.pt != nil {
		st := ExitStatus{Code: t.exitCode}
		if p.exited {
			st = p.status
		}
		t.ptExited(st)
	}
}
