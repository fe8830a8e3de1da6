package emu

import (
	"io"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Machine is a tree of guest processes: the first process, started by
// NewProcess, and every process it and its descendants create with fork,
// vfork or clone. One deterministic scheduler runs the threads of all of
// them, one at a time, so the whole tree has one instruction count (the
// global position) and one order of events. Process and thread ids come
// from one counter, in creation order, so they are the same on every run
// of the same program.
type Machine struct {
	cfg Config
	log io.Writer
	obs Observer

	init    *Process   // the first process: parent of orphans
	procs   []*Process // every process not reaped yet, in creation order
	threads []*Thread  // every live thread, in creation order
	nextID  int

	sched    scheduler
	reported map[int]bool // unimplemented syscalls already named
	// unsupportedSeen are the refused features already named.
	unsupportedSeen map[string]bool

	hostSigs chan os.Signal
	// blocking is set while a thread waits in a host syscall.
	blocking atomic.Bool
	// fatalMask are the signals that would kill the guest now.
	fatalMask atomic.Uint64

	// done is set when the first process ended: the tree's run is over.
	done bool
	// hostUmask is the host process's umask, curUmask the one set for
	// the last guest call that creates files (applyUmask).
	hostUmask, curUmask int
	umaskSet            bool
	// futexes are the threads waiting on each futex, in order
	// (sys_futex.go).
	futexes map[futexKey][]*Thread
	// shm are the System V shared memory segments by id (sys_shm.go).
	shm     map[int]*shmSegment
	shmNext int
	// files are the pages of files mapped MAP_SHARED (mm_shared.go).
	files map[fileKey]*filePages
	// objNext numbers the shared memory objects (Region.Obj).
	objNext uint64
	// procDirs are the host directories made for guest /proc listings,
	// and the guest directory each stands for (/proc/PID/fd).
	procDirs map[string]string
}

func newMachine(cfg Config) *Machine {
	m := &Machine{cfg: cfg, log: cfg.Log, obs: cfg.Observer, reported: make(map[int]bool), futexes: map[futexKey][]*Thread{}}
	if m.log == nil {
		m.log = os.Stderr
	}
	m.initScheduler()
	return m
}

// Icount is the number of instructions retired by all threads of all
// processes, those that exited included.
func (m *Machine) Icount() uint64 {
	n := m.sched.retiredByExited
	for _, t := range m.threads {
		n += t.CPU.Retired()
	}
	return n
}

// Processes returns the processes not reaped yet, in creation order.
func (m *Machine) Processes() []*Process { return m.procs }

// Threads returns every live thread of every process, in creation order.
func (m *Machine) Threads() []*Thread { return m.threads }

// process returns the live or zombie process with the given id.
func (m *Machine) process(pid int) *Process {
	for _, p := range m.procs {
		if p.PID == pid {
			return p
		}
	}
	return nil
}

// threadByID returns the live thread with the given id, in any process.
func (m *Machine) threadByID(tid int) *Thread {
	for _, t := range m.threads {
		if t.Tid == tid {
			return t
		}
	}
	return nil
}

// releaseAll kills what still runs when the first process ended and
// frees every host resource.
func (m *Machine) releaseAll() {
	m.done = true
	m.restoreUmask()
	m.removeProcDirs()
	for _, p := range m.procs {
		if !p.exited {
			p.exited = true
			p.status = ExitStatus{Signal: unix.SIGKILL}
		}
		p.release()
	}
	m.stopHelpers()
}

// exitProcess ends the process with st: its threads stop, its
// resources are freed, its children go to the first process, and it
// becomes a zombie that its parent's wait reaps (SIGCHLD tells the
// parent). err, when set, is an emulator error: for the first process
// Run returns it, for others it is logged.
func (p *Process) exitProcess(st ExitStatus, err error) {
	if p.exited {
		return
	}
	m := p.m
	p.exited = true
	p.stopped = false
	p.status = st
	p.err = err
	if p == m.init {
		// The run is over: Run reports the status and releases the rest.
		m.done = true
		return
	}
	if err != nil {
		p.logf("process %d (%s): %v", p.PID, p.exeName(), err)
	}
	if m.obs != nil {
		m.obs.ProcessEnd(p, st)
	}
	for _, t := range append([]*Thread(nil), p.threads...) {
		p.removeThread(t)
	}
	if len(p.tracees) > 0 {
		p.ptTracerExited()
	}
	p.release()
	p.vforkRelease()
	// Orphans go to the nearest ancestor that is a child subreaper
	// (prctl), else to the first process, which acts as one; a child's
	// threads with a death signal (PR_SET_PDEATHSIG) get it.
	heir := m.init
	for a := p.parent; a != nil; a = a.parent {
		if a.childSubreaper && !a.exited {
			heir = a
			break
		}
	}
	for _, c := range p.children {
		c.parent = heir
		heir.children = append(heir.children, c)
		if c.zombie {
			heir.childChanged(c)
			continue
		}
		for _, th := range c.threads {
			if sig := th.prctl.pdeathsig; sig != 0 {
				c.queueProcess(pendingSignal{info: SigInfo{Signo: int32(sig), Code: siUser, Pid: int32(p.PID), Uid: int32(unix.Getuid())}})
			}
		}
	}
	p.children = nil
	p.zombie = true
	if par := p.parent; par != nil {
		par.childChanged(p)
	}
}

// exeName is the program's base name, for messages.
func (p *Process) exeName() string {
	if len(p.argv) > 0 {
		return p.argv[0]
	}
	return p.exe
}

// vforkRelease lets the parent waiting in vfork go on (the child
// execed or exited).
func (p *Process) vforkRelease() {
	if mm := p.sharedMM; mm != nil {
		p.sharedMM = nil
		if p.obs == nil && p.m.obs != nil {
			// The unobserved child entered blocks of the shared code
			// cache: the observer must hear of them again when the
			// parent runs them (Observer.Decoded).
			mm.Code.NewEpoch()
		}
	}
	if p.vforkDone {
		return
	}
	p.vforkDone = true
	if t := p.vforkParent; t != nil {
		p.vforkParent = nil
		p.m.wake(t)
	}
}

// childChanged tells p that child c exited, stopped or continued: its
// threads waiting in wait4 or waitid look again, and SIGCHLD is sent.
// A child that exits while p ignores SIGCHLD (or set SA_NOCLDWAIT) is
// reaped at once, as by Linux.
func (p *Process) childChanged(c *Process) {
	if p.exited {
		return
	}
	code, status := c.waitCode()
	if c.zombie {
		act := p.sig[unix.SIGCHLD]
		if act.handler == sigIgn || act.flags&saNocldwait != 0 {
			p.reap(c)
		}
	}
	if sig := c.exitSig; sig != 0 && (code <= cldDumped || p.sig[unix.SIGCHLD].flags&saNocldstop == 0) {
		p.queueProcess(pendingSignal{info: SigInfo{Signo: int32(sig), Code: code, Pid: int32(c.PID),
			Uid: int32(unix.Getuid()), Value: uint64(uint32(status))}})
	}
	for _, t := range p.threads {
		if t.state == threadBlocked && t.w.child {
			p.m.wake(t)
		}
	}
}

// reap removes zombie c from the tree.
func (p *Process) reap(c *Process) {
	for i, x := range p.children {
		if x == c {
			p.children = append(p.children[:i], p.children[i+1:]...)
			break
		}
	}
	m := p.m
	for i, x := range m.procs {
		if x == c {
			m.procs = append(m.procs[:i], m.procs[i+1:]...)
			break
		}
	}
	c.zombie = false
}

// SIGCHLD si_code values and sigaction flags.
const (
	cldExited    = 1
	cldKilled    = 2
	cldDumped    = 3
	cldStopped   = 5
	cldContinued = 6

	saNocldstop = 1
	saNocldwait = 2
)

// coreDumped reports whether the status's signal dumped core: only when
// the default action dumps core and RLIMIT_CORE allows it.
func (p *Process) coreDumped() bool {
	return p.status.CoreDumps && p.rlimits[unix.RLIMIT_CORE].Cur > 0
}

// waitCode returns the SIGCHLD si_code and si_status of c's last state
// change.
func (c *Process) waitCode() (code int32, status int) {
	switch {
	case c.zombie && c.status.Signal != 0:
		if c.coreDumped() {
			return cldDumped, int(c.status.Signal)
		}
		return cldKilled, int(c.status.Signal)
	case c.zombie:
		return cldExited, c.status.Code & 0xff
	case c.waitStopped:
		return cldStopped, c.stopSig
	}
	return cldContinued, int(unix.SIGCONT)
}

// stop makes a stop signal hold the process (the first process ignores
// them: nobody could continue it).
func (p *Process) stop(sig int) {
	if p == p.m.init || p.exited || p.stopped {
		return
	}
	p.stopped = true
	p.stopSig = sig
	p.waitStopped = true
	p.waitContinue = false
	if p.parent != nil {
		p.parent.childChanged(p)
	}
	p.ptGroupStop(sig)
}

// cont continues a stopped process (SIGCONT).
func (p *Process) cont() {
	if !p.stopped {
		return
	}
	p.stopped = false
	p.waitStopped = false
	p.waitContinue = true
	if p.parent != nil {
		p.parent.childChanged(p)
	}
	p.ptContinued()
}
