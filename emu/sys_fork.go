package emu

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"ttd/x86"
)

// Fork implements Linux syscall fork(2).
func Fork(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.clone(cloneArgs{exitSig: int(unix.SIGCHLD)})
}

// Vfork implements Linux syscall vfork(2): the child runs in the
// parent's address space and the parent waits until it execs or exits.
func Vfork(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.clone(cloneArgs{flags: unix.CLONE_VM | unix.CLONE_VFORK, exitSig: int(unix.SIGCHLD)})
}

// fork creates a child process running a copy of t (clone without
// CLONE_THREAD). The child's address space is a copy-on-write copy of
// the parent's, or the same one with CLONE_VM (vfork, posix_spawn); its
// file table, working directory and signal dispositions are copies, or
// shared with CLONE_FILES and CLONE_FS.
func (t *Thread) fork(ca cloneArgs) (uint64, error) {
	p := t.P
	m := p.m
	f := ca.flags
	if bad := f & (unix.CLONE_SIGHAND | unix.CLONE_PIDFD | unix.CLONE_INTO_CGROUP | unix.CLONE_CLEAR_SIGHAND); bad != 0 {
		t.unsupported("clone of a process with " + cloneFlagNames(bad))
		return 0, unix.EINVAL
	}
	if ca.exitSig < 0 || ca.exitSig > numSignals {
		return 0, unix.EINVAL
	}
	if p.cfg.NoChildren {
		t.unsupported("new processes (fork, vfork, clone) while recording: this observer follows one process")
		return 0, unix.ENOSYS
	}
	c := &Process{m: m, cfg: p.cfg, log: p.log, obs: p.obs, exitSig: ca.exitSig,
		PID: m.nextID, exe: p.exe, argv: p.argv, auxv: p.auxv, env: p.env, execed: false,
		pgid: p.pgid, sid: p.sid, sig: p.sig, rlimits: p.rlimits, nice: p.nice, parent: p,
		undumpable: p.undumpable, thpDisable: p.thpDisable, persona: p.persona}
	if f&unix.CLONE_PARENT != 0 && p.parent != nil {
		c.parent = p.parent
	}
	if f&unix.CLONE_FILES != 0 {
		c.fds = p.fds
		p.fds.users++
	} else {
		fds, err := p.fds.fork()
		if err != nil {
			return 0, errno(err)
		}
		c.fds = fds
	}
	if f&unix.CLONE_FS != 0 {
		c.fs = p.fs
		p.fs.users++
	} else {
		fs, err := p.fs.fork()
		if err != nil {
			c.fds.release()
			return 0, errno(err)
		}
		c.fs = fs
	}
	if f&unix.CLONE_VM != 0 {
		c.MM = p.MM
		c.sharedMM = p.MM
		p.MM.users++
	} else {
		c.MM = p.MM.fork()
	}
	m.nextID++
	c.cloneFlags = f | uint64(ca.exitSig)
	if m.cfg.FollowFirst {
		c.obs = nil
	}
	cpu := t.CPU.CloneWith(c.MM.Mem, c.MM.Code)
	if c.obs == nil {
		cpu.Obs = nil
	}
	cpu.Icount = 0
	cpu.R[x86.RAX] = 0
	if ca.stack != 0 {
		cpu.R[x86.RSP] = ca.stack
	}
	if f&unix.CLONE_SETTLS != 0 {
		if ca.tls >= taskSize {
			c.release()
			return 0, unix.EPERM
		}
		cpu.FSBase = ca.tls
	}
	nt := &Thread{P: c, CPU: cpu, Tid: c.PID, sigMask: t.sigMask, altStack: t.altStack, name: t.name, prctl: t.prctl.inherited(),
		ioprio: t.ioprio}
	c.threads = []*Thread{nt}
	if f&unix.CLONE_PARENT_SETTID != 0 {
		t.writeU32(ca.parentTID, uint32(nt.Tid))
	}
	if f&unix.CLONE_CHILD_SETTID != 0 {
		nt.writeU32(ca.childTID, uint32(nt.Tid)) // in the child's memory
	}
	if f&unix.CLONE_CHILD_CLEARTID != 0 {
		nt.clearChildTID = ca.childTID
	}
	c.parent.children = append(c.parent.children, c)
	m.procs = append(m.procs, c)
	m.threads = append(m.threads, nt)
	if m.obs != nil {
		m.obs.ProcessStart(c, t)
	}
	if c.obs != nil {
		c.obs.ThreadStart(nt)
	}
	t.ptAttachChild(nt, f, ca.exitSig)
	if f&unix.CLONE_VFORK != 0 {
		c.vforkParent = t
		t.vforkChild = c
		return 0, t.sleep(wait{what: "vfork child " + itoa(c.PID)})
	}
	return uint64(c.PID), nil
}

// vforkWait is the vfork parent's syscall running again: it completes
// when the child has execed or exited. Signals wait, as on Linux.
func (t *Thread) vforkWait() (uint64, error) {
	c := t.vforkChild
	if c == nil {
		return 0, unix.EINVAL
	}
	if !c.vforkDone {
		return 0, t.sleep(wait{what: "vfork child " + itoa(c.PID)})
	}
	t.vforkChild = nil
	return uint64(c.PID), nil
}

// Unshare implements Linux syscall unshare(2): CLONE_FILES and CLONE_FS
// take private copies; namespaces fail with EPERM (they need privileges
// ttd does not emulate), and --verbose names them.
func Unshare(t *Thread, a *SyscallArgs) (uint64, error) {
	f := a.A[0]
	p := t.P
	if f&cloneNamespaces != 0 {
		t.unsupported("unshare of " + cloneFlagNames(f&cloneNamespaces))
		return 0, unix.EPERM
	}
	known := uint64(unix.CLONE_FILES | unix.CLONE_FS | unix.CLONE_SYSVSEM | unix.CLONE_VM | unix.CLONE_SIGHAND |
		unix.CLONE_THREAD)
	if f&^known != 0 {
		return 0, unix.EINVAL
	}
	if f&(unix.CLONE_VM|unix.CLONE_SIGHAND|unix.CLONE_THREAD) != 0 && len(p.threads) > 1 {
		return 0, unix.EINVAL
	}
	if f&unix.CLONE_FILES != 0 && p.fds.users > 0 {
		fds, err := p.fds.fork()
		if err != nil {
			return 0, errno(err)
		}
		p.fds.users--
		p.fds = fds
	}
	if f&unix.CLONE_FS != 0 && p.fs.users > 0 {
		fs, err := p.fs.fork()
		if err != nil {
			return 0, errno(err)
		}
		p.fs.users--
		p.fs = fs
	}
	return 0, nil
}

// nsTypes are the namespace files of /proc/PID/ns by the name their
// link starts with, and the clone flag of each.
var nsTypes = map[string]uint64{"mnt": unix.CLONE_NEWNS, "net": unix.CLONE_NEWNET, "ipc": unix.CLONE_NEWIPC,
	"uts": unix.CLONE_NEWUTS, "pid": unix.CLONE_NEWPID, "pid_for_children": unix.CLONE_NEWPID,
	"user": unix.CLONE_NEWUSER, "cgroup": unix.CLONE_NEWCGROUP, "time": unix.CLONE_NEWTIME,
	"time_for_children": unix.CLONE_NEWTIME}

// Setns implements Linux syscall setns(2) as an unprivileged process
// sees it: joining a namespace needs privileges ttd does not emulate
// (EPERM; EINVAL for the user namespace the process is in, as Linux
// refuses re-entering it before it checks privileges), a descriptor that
// is not a namespace is EINVAL, and --verbose names the refusal.
func Setns(t *Thread, a *SyscallArgs) (uint64, error) {
	h, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	link, err := os.Readlink("/proc/self/fd/" + itoa(h))
	if err != nil {
		return 0, unix.EINVAL
	}
	name, _, ok := strings.Cut(link, ":[")
	typ, isNS := nsTypes[name]
	if !ok || !isNS {
		if link == "anon_inode:[pidfd]" {
			t.unsupported("setns to a pidfd")
			return 0, unix.EPERM
		}
		return 0, unix.EINVAL
	}
	if nstype := a.A[1]; nstype != 0 && nstype != typ {
		return 0, unix.EINVAL
	}
	t.unsupported("setns to a " + cloneFlagNames(typ) + " namespace")
	if typ == unix.CLONE_NEWUSER {
		return 0, unix.EINVAL
	}
	return 0, unix.EPERM
}
