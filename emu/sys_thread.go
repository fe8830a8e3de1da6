package emu

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"ttd/x86"
)

// Gettid implements Linux syscall gettid(2).
func Gettid(t *Thread, a *SyscallArgs) (uint64, error) { return uint64(t.Tid), nil }

// SetTidAddress implements Linux syscall set_tid_address(2).
func SetTidAddress(t *Thread, a *SyscallArgs) (uint64, error) {
	t.clearChildTID = a.A[0]
	return uint64(t.Tid), nil
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
	th := t
	if a.Int(0) != 0 {
		if th = t.P.thread(a.Int(0)); th == nil {
			return 0, unix.ESRCH
		}
	}
	if err := t.writeU64(a.A[1], th.robustList); err != nil {
		return 0, err
	}
	return 0, t.writeU64(a.A[2], 24)
}

// cloneArgs are the arguments of clone and clone3 that ttd uses.
type cloneArgs struct {
	flags                    uint64
	stack                    uint64 // the child's rsp (0: the parent's)
	parentTID, childTID, tls uint64
	pidfd                    uint64
	exitSig                  int // the signal the parent gets when the child ends
}

// Clone flags that make a thread: a new thread shares the address space,
// file table, file-system state and signal handlers of its process.
const cloneThread = unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD

// Clone implements Linux syscall clone(2): threads, and processes
// (fork, vfork, posix_spawn's CLONE_VM|CLONE_VFORK).
func Clone(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.clone(cloneArgs{flags: a.A[0] &^ 0xff, exitSig: int(a.A[0] & 0xff), stack: a.A[1], parentTID: a.A[2],
		childTID: a.A[3], tls: a.A[4]})
}

// Clone3 implements Linux syscall clone3(2).
func Clone3(t *Thread, a *SyscallArgs) (uint64, error) {
	size := a.A[1]
	if size < 64 || size > 4096 { // CLONE_ARGS_SIZE_VER0
		return 0, unix.EINVAL
	}
	if t.retrying {
		return t.clone(cloneArgs{})
	}
	b := make([]byte, size)
	if err := t.CopyIn(a.A[0], b); err != nil {
		return 0, err
	}
	le := binary.LittleEndian
	if err := t.clone3Refused(b); err != nil {
		return 0, err
	}
	ca := cloneArgs{flags: le.Uint64(b[0:]), childTID: le.Uint64(b[16:]), parentTID: le.Uint64(b[24:]),
		tls: le.Uint64(b[56:])}
	es := le.Uint64(b[32:])
	if es > numSignals || ca.flags&0xff&^unix.CLONE_NEWTIME != 0 {
		return 0, unix.EINVAL
	}
	ca.exitSig = int(es)
	if ca.flags&unix.CLONE_PIDFD != 0 {
		ca.pidfd = le.Uint64(b[8:])
	}
	if stack, n := le.Uint64(b[40:]), le.Uint64(b[48:]); stack != 0 || n != 0 {
		if stack == 0 || n == 0 {
			return 0, unix.EINVAL
		}
		ca.stack = stack + n
	}
	return t.clone(ca)
}

// clone3Refused checks clone3's set_tid and cgroup fields (struct
// clone_args after its first 64 bytes) as Linux does for an
// unprivileged process: malformed ones are EINVAL; choosing the child's
// pid (set_tid) or cgroup needs privileges ttd does not emulate (EPERM,
// named under --verbose). Any other non-zero byte is an extension ttd
// does not know (E2BIG, as Linux says of fields newer than it).
func (t *Thread) clone3Refused(b []byte) error {
	le := binary.LittleEndian
	var setTID, setTIDSize, cgroup uint64
	if len(b) >= 80 {
		setTID, setTIDSize = le.Uint64(b[64:]), le.Uint64(b[72:])
	}
	if len(b) >= 88 {
		cgroup = le.Uint64(b[80:])
	}
	for _, x := range b[min(len(b), 88):] {
		if x != 0 {
			return unix.E2BIG
		}
	}
	flags := le.Uint64(b)
	switch {
	case setTIDSize > 32 || (setTID == 0) != (setTIDSize == 0): // MAX_PID_NS_LEVEL
		return unix.EINVAL
	case flags&unix.CLONE_INTO_CGROUP != 0 && (cgroup > 1<<31-1 || len(b) < 88):
		return unix.EINVAL
	}
	if setTIDSize > 0 {
		tids := make([]byte, 4*setTIDSize)
		if err := t.CopyIn(setTID, tids); err != nil {
			return err
		}
		for i := uint64(0); i < setTIDSize; i++ {
			if tid := int32(le.Uint32(tids[4*i:])); tid < 1 {
				return unix.EINVAL
			}
		}
		if setTIDSize > 1 {
			// More levels than the one pid namespace ttd has.
			return unix.EINVAL
		}
		t.unsupported("clone3 with set_tid")
		return unix.EPERM
	}
	if flags&unix.CLONE_INTO_CGROUP != 0 {
		t.unsupported("clone3 with CLONE_INTO_CGROUP")
		return unix.EPERM
	}
	return nil
}

// Namespace flags of clone and unshare.
const cloneNamespaces = unix.CLONE_NEWNS | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// unsupported names, under --verbose, a feature a program asked for
// that ttd refuses (once each).
func (t *Thread) unsupported(what string) {
	m := t.P.m
	if !m.cfg.Verbose {
		return
	}
	if m.unsupportedSeen == nil {
		m.unsupportedSeen = make(map[string]bool)
	}
	if !m.unsupportedSeen[what] {
		m.unsupportedSeen[what] = true
		t.P.logf("unsupported: %s", what)
	}
}

// cloneFlagNames names clone flags for messages.
func cloneFlagNames(f uint64) string {
	names := []struct {
		bit  uint64
		name string
	}{{unix.CLONE_NEWNS, "CLONE_NEWNS"}, {unix.CLONE_NEWUSER, "CLONE_NEWUSER"}, {unix.CLONE_NEWPID, "CLONE_NEWPID"},
		{unix.CLONE_NEWNET, "CLONE_NEWNET"}, {unix.CLONE_NEWIPC, "CLONE_NEWIPC"}, {unix.CLONE_NEWUTS, "CLONE_NEWUTS"},
		{unix.CLONE_NEWCGROUP, "CLONE_NEWCGROUP"}, {unix.CLONE_NEWTIME, "CLONE_NEWTIME"}, {unix.CLONE_PIDFD, "CLONE_PIDFD"},
		{unix.CLONE_SIGHAND, "CLONE_SIGHAND"}, {unix.CLONE_VFORK, "CLONE_VFORK"}, {unix.CLONE_FS, "CLONE_FS"},
		{unix.CLONE_FILES, "CLONE_FILES"}, {unix.CLONE_SYSVSEM, "CLONE_SYSVSEM"}, {unix.CLONE_PARENT, "CLONE_PARENT"},
		{unix.CLONE_CLEAR_SIGHAND, "CLONE_CLEAR_SIGHAND"}, {unix.CLONE_INTO_CGROUP, "CLONE_INTO_CGROUP"}}
	s := ""
	for _, n := range names {
		if f&n.bit != 0 {
			if s != "" {
				s += "|"
			}
			s += n.name
		}
	}
	return s
}

// clone creates a thread or a process.
func (t *Thread) clone(ca cloneArgs) (uint64, error) {
	p := t.P
	f := ca.flags
	if t.retrying {
		// A vfork parent waiting for its child.
		return t.vforkWait()
	}
	if f&cloneNamespaces != 0 {
		// New namespaces need privileges ttd does not emulate: Linux
		// answers EPERM to an unprivileged caller.
		t.unsupported("clone with " + cloneFlagNames(f&cloneNamespaces))
		return 0, unix.EPERM
	}
	if f&unix.CLONE_THREAD == 0 {
		if f&unix.CLONE_SIGHAND != 0 && f&unix.CLONE_VM == 0 {
			return 0, unix.EINVAL
		}
		return t.fork(ca)
	}
	if f&unix.CLONE_SIGHAND == 0 || f&unix.CLONE_VM == 0 {
		return 0, unix.EINVAL
	}
	if f&cloneThread != cloneThread || f&(unix.CLONE_VFORK|unix.CLONE_PIDFD) != 0 {
		// Threads with their own file table or cwd: not supported.
		t.unsupported("clone of a thread with " + cloneFlagNames(f&^cloneThread|(cloneThread&^f)))
		return 0, unix.EINVAL
	}
	c := t.CPU.Clone()
	c.Icount = 0
	c.R[x86.RAX] = 0
	if ca.stack != 0 {
		c.R[x86.RSP] = ca.stack
	}
	if f&unix.CLONE_SETTLS != 0 {
		if ca.tls >= taskSize {
			return 0, unix.EPERM
		}
		c.FSBase = ca.tls
	}
	m := p.m
	nt := &Thread{P: p, CPU: c, Tid: m.nextID, sigMask: t.sigMask, altStack: stackT{flags: ssDisable}, name: t.name, ioprio: t.ioprio,
		prctl: t.prctl.inherited()}
	m.nextID++
	if f&unix.CLONE_PARENT_SETTID != 0 {
		t.writeU32(ca.parentTID, uint32(nt.Tid)) // a fault is ignored, as by Linux
	}
	if f&unix.CLONE_CHILD_SETTID != 0 {
		t.writeU32(ca.childTID, uint32(nt.Tid))
	}
	if f&unix.CLONE_CHILD_CLEARTID != 0 {
		nt.clearChildTID = ca.childTID
	}
	p.threads = append(p.threads, nt)
	m.threads = append(m.threads, nt)
	if p.obs != nil {
		p.obs.ThreadStart(nt)
	}
	t.ptAttachChild(nt, f, 0)
	return uint64(nt.Tid), nil
}

// Exit implements Linux syscall exit(2): it ends the calling thread, and
// the process with the last thread. The memory the kernel writes for a
// dying thread (robust futexes, the clear_child_tid word) is written here,
// so that the exit's Syscall event reports it.
func Exit(t *Thread, a *SyscallArgs) (uint64, error) {
	t.exitCode = a.Int(0) & 0xff
	t.releaseRobustList()
	if addr := t.clearChildTID; addr != 0 {
		if t.writeU32(addr, 0) != nil {
			t.clearChildTID = 0
		}
	}
	return 0, errExitThread
}

// ExitGroup implements Linux syscall exit_group(2).
func ExitGroup(t *Thread, a *SyscallArgs) (uint64, error) {
	t.exitCode = a.Int(0) & 0xff
	return 0, errExitGroup
}

// exit ends thread t after its exit syscall was reported: waiters on its
// clear_child_tid word (pthread_join) are woken.
func (t *Thread) exit(code int) {
	p := t.P
	if addr := t.clearChildTID; addr != 0 {
		p.m.futexWake(t.futexKeyOf(addr, false), 1, ^uint32(0))
	}
	if p.obs != nil {
		p.obs.ThreadExit(t, code)
	}
	p.removeThread(t)
	if len(p.threads) == 0 {
		// The last thread's code is the process's status (as on
		// Linux 6, whichever thread that is).
		p.exitProcess(ExitStatus{Code: code}, nil)
	}
}

// exitGroup ends every thread and the process.
func (p *Process) exitGroup(code int) {
	if p.obs != nil {
		for _, th := range p.threads {
			p.obs.ThreadExit(th, code)
		}
	}
	p.exitProcess(ExitStatus{Code: code}, nil)
}

// Robust futex list constants.
const (
	futexWaiters    = 0x80000000
	futexOwnerDied  = 0x40000000
	futexTidMask    = 0x3fffffff
	robustListLimit = 2048
)

// releaseRobustList marks the robust mutexes t holds as owned by a dead
// thread and wakes one waiter of each, as Linux does at thread exit.
func (t *Thread) releaseRobustList() {
	head := t.robustList
	if head == 0 {
		return
	}
	t.robustList = 0
	next, err := t.readU64(head)
	if err != nil {
		return
	}
	off, err := t.readU64(head + 8)
	if err != nil {
		return
	}
	pending, _ := t.readU64(head + 16)
	handle := func(entry uint64) {
		addr := entry + off
		v, err := t.readU32(addr)
		if err != nil || v&futexTidMask != uint32(t.Tid) {
			return
		}
		if t.writeU32(addr, v&futexWaiters|futexOwnerDied) == nil && v&futexWaiters != 0 {
			t.P.m.futexWake(t.futexKeyOf(addr, false), 1, ^uint32(0))
		}
	}
	for i := 0; next != head && next != 0 && i < robustListLimit; i++ {
		entry := next &^ 1
		if next, err = t.readU64(entry); err != nil {
			break
		}
		if entry != pending {
			handle(entry)
		}
	}
	if pending != 0 {
		handle(pending &^ 1)
	}
}

// SchedYield implements Linux syscall sched_yield(2): the thread's time
// slice ends.
func SchedYield(t *Thread, a *SyscallArgs) (uint64, error) {
	t.yield = true
	return 0, nil
}

// SchedGetaffinity implements Linux syscall sched_getaffinity(2): the
// guest sees the CPUs ttd may run on (its threads run one at a time
// whatever the count).
func SchedGetaffinity(t *Thread, a *SyscallArgs) (uint64, error) {
	if a.Int(0) != 0 && t.P.thread(a.Int(0)) == nil {
		return 0, unix.ESRCH
	}
	if a.A[1] < 8 || a.A[1]%8 != 0 {
		return 0, unix.EINVAL
	}
	var set unix.CPUSet
	b := structBytes(&set)
	// Linux reports the size of its CPU mask (which depends on the
	// kernel's build, not on the CPUs present): the host's answer.
	r, err := hostSyscall(unix.SYS_SCHED_GETAFFINITY, hInt(0), hInt(min(uint64(len(b)), a.A[1])), hBuf(b))
	n := uint64(r)
	if err != nil {
		clear(b)
		b[0], n = 1, 8
	}
	return n, t.CopyOut(a.A[2], b[:n])
}

// SchedSetaffinity implements Linux syscall sched_setaffinity(2): the
// mask is read and checked as Linux checks it (EFAULT, EINVAL when it
// names none of the CPUs ttd may run on), then ignored, since the
// guest's threads run one at a time whatever the mask.
func SchedSetaffinity(t *Thread, a *SyscallArgs) (uint64, error) {
	if a.Int(0) != 0 && t.P.thread(a.Int(0)) == nil {
		return 0, unix.ESRCH
	}
	var want, host unix.CPUSet
	w := structBytes(&want)
	if err := t.CopyIn(a.A[2], w[:min(uint64(len(w)), a.A[1])]); err != nil {
		return 0, err
	}
	if unix.SchedGetaffinity(0, &host) != nil {
		return 0, nil
	}
	for i, x := range structBytes(&host) {
		if x&w[i] != 0 {
			return 0, nil
		}
	}
	return 0, unix.EINVAL
}
