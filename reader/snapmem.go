package reader

import (
	"maps"

	"ttd/tracefile"
	"ttd/x86"
)

// Snapshots of a replay of a trace that logs no reads (replayable.go)
// carry its memory, which re-simulation reads its values from: a
// copy-on-write fork of each address space (x86.Memory.Fork), and the
// pages restored at the checkpoint it started at that it had not touched
// yet (addrSpace.pend). Resuming forks the snapshot's memory again, so a
// snapshot resumes any number of times; a page costs a copy only when
// one side writes it. Pages of shared memory are copies in the snapshot
// (forkApart), made one page per object again on resuming (reshare).

// spaceMem is an address space's memory in a snapshot.
type spaceMem struct {
	mem   *x86.Memory
	pend  pageRefs
	pages *tracefile.Pages
}

// snapMemory returns as's memory for a snapshot.
func (as *addrSpace) snapMemory() *spaceMem {
	return &spaceMem{mem: as.forkApart(), pend: maps.Clone(as.pend), pages: as.pages}
}

// addrSpaceFrom is an address space with a snapshot's memory and
// regions (their shared memory its own copy until reshare).
func (r *Replay) addrSpaceFrom(sm *spaceMem, regions []region) *addrSpace {
	as := r.newAddrSpace()
	as.mem = sm.mem.Fork(nil)
	as.mem.Source = as.source
	as.pend, as.pages = maps.Clone(sm.pend), sm.pages
	as.regions = append([]region(nil), regions...)
	return as
}

// snapMemories adds the memory of r's address spaces to s (a trace that
// logs no reads), by pid (the only process's under 0 in a trace of one).
func (r *Replay) snapMemories(s *Snapshot) {
	if !r.t.noReads {
		return
	}
	s.mems = map[int]*spaceMem{}
	if !r.t.tree {
		s.mems[0] = r.as.snapMemory()
		return
	}
	for _, p := range r.procs {
		if p.shares == nil && p.as != nil {
			s.mems[p.pid] = p.as.snapMemory()
		}
	}
}

// memBytes is what the snapshot's memory costs, roughly: a page table
// entry per page, and the copies of the pages one side writes later,
// which a snapshot near the position examined sees few of (an eighth).
func (s *Snapshot) memBytes() int {
	n := 0
	for _, sm := range s.mems {
		n += sm.mem.NumPages()*(64+x86.PageSize/8) + len(sm.pend)*16
	}
	return n
}
