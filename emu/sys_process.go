package emu

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// Getpid implements Linux syscall getpid(2).
func Getpid(t *Thread, a *SyscallArgs) (uint64, error) { return uint64(t.P.PID), nil }

// Getppid implements Linux syscall getppid(2).
func Getppid(t *Thread, a *SyscallArgs) (uint64, error) {
	if par := t.P.parent; par != nil {
		return uint64(par.PID), nil
	}
	return uint64(unix.Getppid()), nil
}

// Getuid implements Linux syscall getuid(2).
func Getuid(t *Thread, a *SyscallArgs) (uint64, error) { return uint64(unix.Getuid()), nil }

// Geteuid implements Linux syscall geteuid(2).
func Geteuid(t *Thread, a *SyscallArgs) (uint64, error) { return uint64(unix.Geteuid()), nil }

// Getgid implements Linux syscall getgid(2).
func Getgid(t *Thread, a *SyscallArgs) (uint64, error) { return uint64(unix.Getgid()), nil }

// Getegid implements Linux syscall getegid(2).
func Getegid(t *Thread, a *SyscallArgs) (uint64, error) { return uint64(unix.Getegid()), nil }

// Getresuid implements Linux syscall getresuid(2).
func Getresuid(t *Thread, a *SyscallArgs) (uint64, error) {
	r, e, s := unix.Getresuid()
	return t.writeIDs(a, uint32(r), uint32(e), uint32(s))
}

// Getresgid implements Linux syscall getresgid(2).
func Getresgid(t *Thread, a *SyscallArgs) (uint64, error) {
	r, e, s := unix.Getresgid()
	return t.writeIDs(a, uint32(r), uint32(e), uint32(s))
}

func (t *Thread) writeIDs(a *SyscallArgs, ids ...uint32) (uint64, error) {
	for i, id := range ids {
		if err := t.writeU32(a.A[i], id); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// Getgroups implements Linux syscall getgroups(2).
func Getgroups(t *Thread, a *SyscallArgs) (uint64, error) {
	gs, err := unix.Getgroups()
	if err != nil {
		return 0, errno(err)
	}
	n := a.Int(0)
	if n == 0 {
		return uint64(len(gs)), nil
	}
	if n < len(gs) {
		return 0, unix.EINVAL
	}
	b := make([]byte, 4*len(gs))
	for i, g := range gs {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(g))
	}
	return uint64(len(gs)), t.CopyOut(a.A[1], b)
}

// Getpgrp implements Linux syscall getpgrp(2).
func Getpgrp(t *Thread, a *SyscallArgs) (uint64, error) { return uint64(t.P.pgid), nil }

// guestOrHost returns the guest process pid names (0: the caller), or
// nil for a pid outside the tree.
func (t *Thread) guestProcess(pid int) *Process {
	if pid == 0 {
		return t.P
	}
	if p := t.P.m.process(pid); p != nil {
		return p
	}
	if th := t.P.m.threadByID(pid); th != nil {
		return th.P
	}
	return nil
}

// Getpgid implements Linux syscall getpgid(2) (the guest's groups for
// processes of the tree, the host's for others).
func Getpgid(t *Thread, a *SyscallArgs) (uint64, error) {
	if p := t.guestProcess(a.Int(0)); p != nil {
		return uint64(p.pgid), nil
	}
	g, err := unix.Getpgid(a.Int(0))
	return uint64(g), errno(err)
}

// Setpgid implements Linux syscall setpgid(2) for the processes of the
// tree (the host's process group of ttd is not changed).
func Setpgid(t *Thread, a *SyscallArgs) (uint64, error) {
	pid, pgid := a.Int(0), a.Int(1)
	if pgid < 0 {
		return 0, unix.EINVAL
	}
	p := t.P
	target := p
	if pid != 0 && pid != p.PID {
		target = p.m.process(pid)
		if target == nil || target.parent != p || target.zombie {
			return 0, unix.ESRCH
		}
		if target.sid != p.sid {
			return 0, unix.EPERM
		}
		if target.execed {
			return 0, unix.EACCES
		}
	}
	if target.sid == target.PID {
		return 0, unix.EPERM // a session leader
	}
	if pgid == 0 {
		pgid = target.PID
	}
	if pgid != target.PID {
		found := false
		for _, q := range p.m.procs {
			if q.pgid == pgid && q.sid == p.sid && !q.zombie {
				found = true
				break
			}
		}
		if !found && !(target == p.m.init && pgid == unix.Getpgrp()) {
			return 0, unix.EPERM
		}
	}
	target.pgid = pgid
	return 0, nil
}

// Getsid implements Linux syscall getsid(2).
func Getsid(t *Thread, a *SyscallArgs) (uint64, error) {
	if p := t.guestProcess(a.Int(0)); p != nil {
		return uint64(p.sid), nil
	}
	s, err := unix.Getsid(a.Int(0))
	return uint64(s), errno(err)
}

// Setsid implements Linux syscall setsid(2) for the processes of the
// tree (the host's session of ttd is not changed).
func Setsid(t *Thread, a *SyscallArgs) (uint64, error) {
	p := t.P
	for _, q := range p.m.procs {
		if q.pgid == p.PID && !q.zombie {
			return 0, unix.EPERM // already a group leader
		}
	}
	p.sid, p.pgid = p.PID, p.PID
	return uint64(p.PID), nil
}

// rlimit reads or writes a guest resource limit; the host's limits are
// not changed.
func (t *Thread) prlimit(res int, newAddr, oldAddr uint64) (uint64, error) {
	if res < 0 || res >= rlimNLimits {
		return 0, unix.EINVAL
	}
	lim := &t.P.rlimits[res]
	old := *lim
	if newAddr != 0 {
		var nl unix.Rlimit
		if err := copyInStruct(t, newAddr, &nl); err != nil {
			return 0, err
		}
		if nl.Cur > nl.Max {
			return 0, unix.EINVAL
		}
		if nl.Max > old.Max && unix.Geteuid() != 0 {
			return 0, unix.EPERM
		}
		*lim = nl
		if res == unix.RLIMIT_NOFILE {
			t.P.fds.limit = int(min(nl.Cur, 1<<20))
		}
	}
	if oldAddr != 0 {
		if err := copyOutStruct(t, oldAddr, &old); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// Getrlimit implements Linux syscall getrlimit(2).
func Getrlimit(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.prlimit(a.Int(0), 0, a.A[1])
}

// Setrlimit implements Linux syscall setrlimit(2).
func Setrlimit(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.prlimit(a.Int(0), a.A[1], 0)
}

// Prlimit64 implements Linux syscall prlimit64(2) for the process itself.
func Prlimit64(t *Thread, a *SyscallArgs) (uint64, error) {
	if pid := a.Int(0); pid != 0 && pid != t.P.PID {
		return 0, unix.ESRCH
	}
	return t.prlimit(a.Int(1), a.A[2], a.A[3])
}

// Getrusage implements Linux syscall getrusage(2) (the host's figures,
// which include the emulator's own work).
func Getrusage(t *Thread, a *SyscallArgs) (uint64, error) {
	var ru unix.Rusage
	who := a.Int(0)
	if who == unix.RUSAGE_THREAD {
		who = unix.RUSAGE_SELF
	}
	if err := unix.Getrusage(who, &ru); err != nil {
		return 0, errno(err)
	}
	return 0, copyOutStruct(t, a.A[1], &ru)
}

// Times implements Linux syscall times(2).
func Times(t *Thread, a *SyscallArgs) (uint64, error) {
	var tms unix.Tms
	r, err := unix.Times(&tms)
	if err != nil {
		return 0, errno(err)
	}
	if a.A[0] != 0 {
		if err := copyOutStruct(t, a.A[0], &tms); err != nil {
			return 0, err
		}
	}
	return uint64(r), nil
}

// Uname implements Linux syscall uname(2) (the host's, machine x86_64).
func Uname(t *Thread, a *SyscallArgs) (uint64, error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return 0, errno(err)
	}
	clear(u.Machine[:])
	copy(u.Machine[:], "x86_64")
	return 0, copyOutStruct(t, a.A[0], &u)
}

// Sysinfo implements Linux syscall sysinfo(2).
func Sysinfo(t *Thread, a *SyscallArgs) (uint64, error) {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0, errno(err)
	}
	return 0, copyOutStruct(t, a.A[0], &si)
}

// Getrandom implements Linux syscall getrandom(2).
func Getrandom(t *Thread, a *SyscallArgs) (uint64, error) {
	n := min(ioCount(a.A[1]), 1<<25)
	return t.readInto(a.A[0], n, func(b []byte) (int, error) { return unix.Getrandom(b, a.Int(2)) })
}

// Prctl implements Linux syscall prctl(2) for the options programs use at
// start-up: the settings are kept (per thread or per process, as Linux
// keeps them), the bounding set is the host's (the guest runs with ttd's
// credentials), and the death signal and subreapers act when a parent
// exits (Machine's exitProcess).
func Prctl(t *Thread, a *SyscallArgs) (uint64, error) {
	p := t.P
	zero := func(from int) bool { // arguments from..4 must be 0
		for i := from; i < 5; i++ {
			if a.A[i] != 0 {
				return false
			}
		}
		return true
	}
	switch a.Int(0) {
	case unix.PR_SET_NAME:
		var b [16]byte
		s, err := t.CopyInString(a.A[1], 4096)
		if err != nil {
			return 0, err
		}
		copy(b[:15], s)
		t.name = b
		return 0, nil
	case unix.PR_GET_NAME:
		return 0, t.CopyOut(a.A[1], t.name[:])
	case unix.PR_SET_DUMPABLE:
		if a.A[1] > 1 {
			return 0, unix.EINVAL
		}
		p.undumpable = a.A[1] == 0
		return 0, nil
	case unix.PR_GET_DUMPABLE:
		if p.undumpable {
			return 0, nil
		}
		return 1, nil
	case unix.PR_SET_PDEATHSIG:
		if a.A[1] > numSignals {
			return 0, unix.EINVAL
		}
		t.prctl.pdeathsig = int(a.A[1])
		return 0, nil
	case unix.PR_GET_PDEATHSIG:
		return 0, t.writeU32(a.A[1], uint32(t.prctl.pdeathsig))
	case unix.PR_SET_NO_NEW_PRIVS:
		if a.A[1] != 1 || !zero(2) {
			return 0, unix.EINVAL
		}
		t.prctl.noNewPrivs = true
		return 0, nil
	case unix.PR_GET_NO_NEW_PRIVS:
		if !zero(1) {
			return 0, unix.EINVAL
		}
		return boolResult(t.prctl.noNewPrivs), nil
	case unix.PR_SET_TIMERSLACK:
		t.prctl.timerslack = a.A[1]
		return 0, nil
	case unix.PR_GET_TIMERSLACK:
		if t.prctl.timerslack == 0 {
			return 50000, nil
		}
		return t.prctl.timerslack, nil
	case unix.PR_SET_KEEPCAPS:
		if a.A[1] > 1 {
			return 0, unix.EINVAL
		}
		t.prctl.keepcaps = a.A[1] == 1
		return 0, nil
	case unix.PR_GET_KEEPCAPS:
		return boolResult(t.prctl.keepcaps), nil
	case unix.PR_SET_CHILD_SUBREAPER:
		p.childSubreaper = a.A[1] != 0
		return 0, nil
	case unix.PR_GET_CHILD_SUBREAPER:
		return 0, t.writeU32(a.A[1], uint32(boolResult(p.childSubreaper)))
	case unix.PR_SET_THP_DISABLE:
		if !zero(2) {
			return 0, unix.EINVAL
		}
		p.thpDisable = a.A[1] != 0
		return 0, nil
	case unix.PR_GET_THP_DISABLE:
		if !zero(1) {
			return 0, unix.EINVAL
		}
		return boolResult(p.thpDisable), nil
	case unix.PR_CAPBSET_READ:
		r, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(a.A[1]), 0, 0, 0)
		return uint64(r), errno(err)
	case unix.PR_GET_SECCOMP:
		return 0, nil // no filter: ttd does not run seccomp filters
	case unix.PR_GET_TID_ADDRESS:
		return 0, t.writeU64(a.A[1], t.clearChildTID)
	case unix.PR_MCE_KILL_GET, unix.PR_GET_SPECULATION_CTRL:
		// Questions about the host's machine-check and speculation
		// policy, which the guest shares.
		if !zero(2) || a.Int(0) == unix.PR_MCE_KILL_GET && a.A[1] != 0 {
			return 0, unix.EINVAL
		}
		r, err := unix.PrctlRetInt(a.Int(0), uintptr(a.A[1]), 0, 0, 0)
		return uint64(r), errno(err)
	}
	return 0, unix.EINVAL
}

func boolResult(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// arch_prctl codes.
const (
	archSetGS = 0x1001
	archSetFS = 0x1002
	archGetFS = 0x1003
	archGetGS = 0x1004
)

// ArchPrctl implements Linux syscall arch_prctl(2).
func ArchPrctl(t *Thread, a *SyscallArgs) (uint64, error) {
	c := t.CPU
	switch a.Int(0) {
	case archSetFS:
		if a.A[1] >= taskSize {
			return 0, unix.EPERM
		}
		c.FSBase = a.A[1]
	case archSetGS:
		if a.A[1] >= taskSize {
			return 0, unix.EPERM
		}
		c.GSBase = a.A[1]
	case archGetFS:
		return 0, t.writeU64(a.A[1], c.FSBase)
	case archGetGS:
		return 0, t.writeU64(a.A[1], c.GSBase)
	default:
		return 0, unix.EINVAL
	}
	return 0, nil
}

// SchedGetscheduler implements Linux syscall sched_getscheduler(2).
func SchedGetscheduler(t *Thread, a *SyscallArgs) (uint64, error) { return 0, nil } // SCHED_OTHER

// SchedGetparam implements Linux syscall sched_getparam(2).
func SchedGetparam(t *Thread, a *SyscallArgs) (uint64, error) { return 0, t.writeU32(a.A[1], 0) }

// Getpriority implements Linux syscall getpriority(2).
// The nice value is the guest process's own (inherited at fork, kept
// at exec), not that of whichever host thread of ttd would run the
// call: the first process starts with ttd's. Linux keeps it per thread;
// ttd keeps it per process, which is what nice(1), renice and a
// single-threaded program see. PRIO_USER reaches the processes of the
// tree only.
func Getpriority(t *Thread, a *SyscallArgs) (uint64, error) {
	ps, err := t.prioTargets(a.Int(0), a.Int(1))
	if err != nil {
		return 0, err
	}
	best := -1
	for _, p := range ps {
		best = max(best, 20-p.nice) // the kernel's encoding: 40..1
	}
	return uint64(best), nil
}

// Setpriority implements Linux syscall setpriority(2).
func Setpriority(t *Thread, a *SyscallArgs) (uint64, error) {
	ps, err := t.prioTargets(a.Int(0), a.Int(1))
	if err != nil {
		return 0, err
	}
	nice := min(max(a.Int(2), -20), 19)
	for _, p := range ps {
		// Raising the priority needs CAP_SYS_NICE or RLIMIT_NICE
		// (set_one_prio's can_nice).
		if nice < p.nice && uint64(20-nice) > t.P.rlimits[unix.RLIMIT_NICE].Cur && unix.Geteuid() != 0 {
			return 0, unix.EACCES
		}
		p.nice = nice
	}
	return 0, nil
}

// prioTargets are the processes a getpriority or setpriority names:
// which is PRIO_PROCESS, PRIO_PGRP or PRIO_USER, who an id or 0 for the
// caller's own.
func (t *Thread) prioTargets(which, who int) ([]*Process, error) {
	m := t.P.m
	var out []*Process
	for _, p := range m.procs {
		if p.exited {
			continue
		}
		switch which {
		case unix.PRIO_PROCESS:
			if who == 0 && p == t.P || who != 0 && (p.PID == who || p.hasThread(who)) {
				out = append(out, p)
			}
		case unix.PRIO_PGRP:
			if who == 0 && p.pgid == t.P.pgid || who != 0 && p.pgid == who {
				out = append(out, p)
			}
		case unix.PRIO_USER:
			if who == 0 || who == unix.Getuid() {
				out = append(out, p)
			}
		default:
			return nil, unix.EINVAL
		}
	}
	if len(out) == 0 {
		return nil, unix.ESRCH
	}
	return out, nil
}

// hasThread says whether tid is one of p's live threads.
func (p *Process) hasThread(tid int) bool {
	for _, th := range p.threads {
		if th.Tid == tid {
			return true
		}
	}
	return false
}

// Getcpu implements Linux syscall getcpu(2).
func Getcpu(t *Thread, a *SyscallArgs) (uint64, error) {
	if a.A[0] != 0 {
		if err := t.writeU32(a.A[0], 0); err != nil {
			return 0, err
		}
	}
	if a.A[1] != 0 {
		if err := t.writeU32(a.A[1], 0); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// setIDs accepts a change of user or group ids that changes nothing
// (each id -1 or the current one), as programs that drop privileges
// they do not have do (posix_spawn's POSIX_SPAWN_RESETIDS, make). ttd's
// processes share the host's ids, so a real change fails with EPERM
// and --verbose names it.
func (t *Thread) setIDs(name string, cur []int, ids ...int) (uint64, error) {
	for _, id := range ids {
		if id == -1 {
			continue
		}
		ok := false
		for _, c := range cur {
			ok = ok || id == c
		}
		if !ok {
			t.unsupported(name + " to a different id")
			return 0, unix.EPERM
		}
	}
	return 0, nil
}

func uids() []int { r, e, s := unix.Getresuid(); return []int{r, e, s} }
func gids() []int { r, e, s := unix.Getresgid(); return []int{r, e, s} }

// Setuid implements Linux syscall setuid(2) for no change.
func Setuid(t *Thread, a *SyscallArgs) (uint64, error) { return t.setIDs("setuid", uids(), a.Int(0)) }

// Setgid implements Linux syscall setgid(2) for no change.
func Setgid(t *Thread, a *SyscallArgs) (uint64, error) { return t.setIDs("setgid", gids(), a.Int(0)) }

// Setreuid implements Linux syscall setreuid(2) for no change.
func Setreuid(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.setIDs("setreuid", uids(), a.Int(0), a.Int(1))
}

// Setregid implements Linux syscall setregid(2) for no change.
func Setregid(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.setIDs("setregid", gids(), a.Int(0), a.Int(1))
}

// Setresuid implements Linux syscall setresuid(2) for no change.
func Setresuid(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.setIDs("setresuid", uids(), a.Int(0), a.Int(1), a.Int(2))
}

// Setresgid implements Linux syscall setresgid(2) for no change.
func Setresgid(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.setIDs("setresgid", gids(), a.Int(0), a.Int(1), a.Int(2))
}
