package emu

import (
	"golang.org/x/sys/unix"

	"ttd/x86"
)

// What a recording that logs no reads (recorder's replayable mode) needs
// to know of an address space or a thread beyond the observer's events:
// a replay then takes every read from its own memory image, so every
// byte written outside the guest's instructions must reach the trace.

// PendingWrites are the kernel's writes to t's memory since its last
// syscall began, not reported yet: a forked child's CLONE_CHILD_SETTID
// word, written in the child's memory before it first runs.
func (t *Thread) PendingWrites() []MemRange { return t.writes }

// SharedAlias finds memory of the machine that a write can change at
// another place than the one written: a page of a MAP_SHARED mapping or
// System V segment that is mapped at two places (in two processes, or
// twice in one), one of them writable. It returns a process that maps it
// and the address there. A writable shared mapping mapped once is not
// one: ttd's copy of a file's page (mm_shared.go) changes only through
// that mapping, as a private page does, so a replay that keeps it as a
// private page reads what the recording read.
//
// Two mappings alias when they map overlapping pages of one file (by
// device and inode) or one segment, or, for anonymous shared memory,
// hold one page (a fork shares every page of the parent's).
func (m *Machine) SharedAlias() (pid int, addr uint64, ok bool) {
	type place struct {
		p *Process
		v *vma
	}
	var objs []place // file and segment mappings
	anon := map[*x86.Page]place{}
	seen := map[*MM]bool{}
	for _, p := range m.procs {
		mm := p.MM
		if mm == nil || seen[mm] {
			continue
		}
		seen[mm] = true
		for _, v := range mm.vmas {
			if !v.shared && v.shm == nil {
				continue
			}
			here := place{p, v}
			if v.file != nil || v.shm != nil {
				for _, o := range objs {
					if sameObject(o.v, v) && (o.v.prot|v.prot)&unix.PROT_WRITE != 0 {
						return p.PID, v.start, true
					}
				}
				objs = append(objs, here)
				continue
			}
			var hit *place
			mm.Mem.Pages(v.start>>x86.PageShift, v.end>>x86.PageShift, func(pn uint64, pg *x86.Page) {
				if o, dup := anon[pg]; dup && hit == nil && (o.v.prot|v.prot)&unix.PROT_WRITE != 0 {
					hit = &place{p, &vma{start: pn << x86.PageShift}}
				}
				anon[pg] = here
			})
			if hit != nil {
				return hit.p.PID, hit.v.start, true
			}
		}
	}
	return 0, 0, false
}

// sameObject reports whether two shared mappings of files or segments
// map a page of the same one.
func sameObject(a, b *vma) bool {
	switch {
	case a.shm != nil || b.shm != nil:
		if a.shm != b.shm {
			return false
		}
	case a.file.dev != b.file.dev || a.file.ino != b.file.ino:
		return false
	}
	return a.off < b.off+(b.end-b.start) && b.off < a.off+(a.end-a.start)
}
