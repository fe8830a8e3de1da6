package syscalls

import (
	"slices"

	"ttd/internal/linux"
	"ttd/tracefile"
	"ttd/x86"
)

// Each process of a tree has its own memory. The re-simulation tracks
// what each one knows (reader.Replay.TrackProcesses); the export keeps,
// per process, what it guesses the rest from: the files mapped there,
// the anonymous mappings (zeros), the pages an mremap moved and the
// initial arguments. A fork copies its parent's (the child's memory is
// a copy), a CLONE_VM child shares them, an exec starts afresh.

// space is what the export knows of one process's memory besides the
// re-simulation.
type space struct {
	maps  []fileMapping // sorted by addr, disjoint
	moved moved
	argv  initialArgs
	// zeros are the anonymous mappings made during the recording, sorted.
	zeros []fileMapping
	// exec is the exec record of the process until its execve returns
	// (the new stack pointer is known then, and the call is printed
	// from it: execve.go).
	exec *tracefile.Process
}

// clone copies s for a forked child.
func (s *space) clone() *space {
	n := &space{maps: slices.Clone(s.maps), zeros: slices.Clone(s.zeros), argv: s.argv}
	n.argv.ptrs = slices.Clone(s.argv.ptrs)
	if len(s.moved.pages) > 0 {
		n.moved.pages = make(map[uint64]*movedPage, len(s.moved.pages))
		for pn, p := range s.moved.pages {
			c := *p
			n.moved.pages[pn] = &c
		}
	}
	return n
}

// use makes the memory of process pid (0 for a trace of one process)
// the one calls are decoded in.
func (m *replayMemory) use(pid int) {
	switch {
	case !m.tree:
		pid = 0
	case pid == 0:
		pid = m.first // before the first process's record
	}
	if m.sp != nil && m.pid == pid {
		return
	}
	sp := m.spaces[pid]
	if sp == nil {
		sp = &space{}
		m.spaces[pid] = sp
	}
	m.sp, m.pid = sp, pid
}

// pidOf is the process of thread tid.
func (m *replayMemory) pidOf(tid int) int {
	if !m.tree {
		return 0
	}
	return m.r.Pid(tid)
}

// recordsPid is the process the address-space records apply to now.
func (m *replayMemory) recordsPid() int {
	if !m.tree {
		return 0
	}
	return m.r.RecordsPid()
}

// process follows the tree: a fork copies (or, with CLONE_VM, shares)
// its parent's memory, an exec starts a new one, an end drops it.
func (m *replayMemory) process(p *tracefile.Process) {
	if !m.tree {
		return
	}
	switch p.Event {
	case tracefile.ProcessStarted:
		if p.Tid == 0 {
			return // the first process
		}
		parent := m.spaces[m.r.Pid(p.Tid)]
		switch {
		case parent == nil:
		case p.Flags&linux.CLONE_VM != 0:
			m.spaces[p.Pid] = parent
		default:
			m.spaces[p.Pid] = parent.clone()
		}
	case tracefile.ProcessExeced:
		m.spaces[p.Pid] = &space{exec: p}
	case tracefile.ProcessExited:
		delete(m.spaces, p.Pid)
	}
	m.sp = nil
	m.use(m.pid)
}

// execed returns the exec record of the process whose execve the call
// at hand is, if it succeeded, and takes note of its new stack: its
// arguments are at the top (initialArgs).
func (m *replayMemory) execed(tid, nr int) *tracefile.Process {
	p := m.sp.exec
	if !m.tree || nr != linux.SysExecve && nr != linux.SysExecveat || p == nil {
		return nil
	}
	tids, cpus := m.r.Threads()
	for i, t := range tids {
		if t == tid {
			m.sp.argv = initialArgs{sp: cpus[i].R[x86.RSP], args: p.Argv}
		}
	}
	m.sp.exec = nil
	return p
}

// loaded maps the segments of an executable or library that an Mmap
// record maps in this process when a Module record named it in
// another: the recorder names each file once, so a child that execs
// and loads libc again gets Mmap records only. The first mapping of
// the file is its lowest segment (the loader maps the whole file
// there first). It reports whether the record was such a mapping.
func (m *replayMemory) loaded(mm *tracefile.Mmap) bool {
	if !m.tree || len(mm.Path) == 0 {
		return false
	}
	p := m.abs(string(mm.Path))
	id, ok := m.modules[p]
	if !ok {
		return false
	}
	for _, fm := range m.sp.maps {
		if fm.module && fm.path == p {
			return true // mapped already: a segment of it
		}
	}
	m.module(&tracefile.Module{Path: mm.Path, LoadAddr: mm.Addr, BuildID: id})
	return true
}
