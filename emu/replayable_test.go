package emu

import (
	"testing"

	"golang.org/x/sys/unix"

	"ttd/x86"
)

// TestSharedAlias: memory mapped at two places, one of them writable, is
// found whichever comes first in the address space and in the machine;
// a shared mapping mapped once, two read-only ones, disjoint ranges of a
// file, two files, two segments and a private mapping are not aliases.
func TestSharedAlias(t *testing.T) {
	const P = pageSize
	const rw, ro = unix.PROT_READ | unix.PROT_WRITE, unix.PROT_READ
	f1, f2, f3 := &mappedFile{dev: 1, ino: 2}, &mappedFile{dev: 1, ino: 3}, &mappedFile{dev: 2, ino: 2}
	s1, s2 := &shmSegment{id: 1}, &shmSegment{id: 2}
	file := func(start, off, pages uint64, prot int, f *mappedFile) *vma {
		return &vma{start: start, end: start + pages*P, off: off, prot: prot, shared: true, file: f}
	}
	seg := func(start, off, pages uint64, prot int, s *shmSegment) *vma {
		return &vma{start: start, end: start + pages*P, off: off, prot: prot, shm: s}
	}
	private := file(0x9000_0000, 0, 4, rw, f1)
	private.shared = false
	for _, c := range []struct {
		name  string
		vmas  [][]*vma // by process
		alias bool
	}{
		{"one writable file mapping", [][]*vma{{file(0x1000_0000, 0, 3, rw, f1)}}, false},
		{"a file mapped twice read-only", [][]*vma{{file(0x1000_0000, 0, 3, ro, f1), file(0x2000_0000, 0, 3, ro, f1)}}, false},
		{"a file mapped twice, the first writable", [][]*vma{{file(0x1000_0000, 0, 2, rw, f1), file(0x2000_0000, P, 2, ro, f1)}}, true},
		{"a file mapped twice, the second writable", [][]*vma{{file(0x1000_0000, P, 2, ro, f1), file(0x2000_0000, 0, 2, rw, f1)}}, true},
		{"the second inside the first", [][]*vma{{file(0x1000_0000, 0, 4, rw, f1), file(0x2000_0000, P, 1, rw, f1)}}, true},
		{"the first inside the second", [][]*vma{{file(0x1000_0000, 2*P, 1, rw, f1), file(0x2000_0000, P, 3, rw, f1)}}, true},
		{"disjoint ranges of a file", [][]*vma{{file(0x1000_0000, 0, 2, rw, f1), file(0x2000_0000, 2*P, 2, rw, f1)}}, false},
		{"ranges that touch", [][]*vma{{file(0x1000_0000, 2*P, 2, rw, f1), file(0x2000_0000, 0, 2, rw, f1)}}, false},
		{"two files", [][]*vma{{file(0x1000_0000, 0, 2, rw, f1), file(0x2000_0000, 0, 2, rw, f2)}}, false},
		{"two files of one inode number", [][]*vma{{file(0x1000_0000, 0, 2, rw, f1), file(0x2000_0000, 0, 2, rw, f3)}}, false},
		{"a file in two processes", [][]*vma{{file(0x1000_0000, 0, 2, ro, f1)}, {file(0x1000_0000, P, 1, rw, f1)}}, true},
		{"a private mapping of the file", [][]*vma{{file(0x1000_0000, 0, 2, rw, f1), private}}, false},
		{"a segment attached twice", [][]*vma{{seg(0x1000_0000, 0, 2, ro, s1)}, {seg(0x3000_0000, 0, 2, rw, s1)}}, true},
		{"two segments", [][]*vma{{seg(0x1000_0000, 0, 2, rw, s1), seg(0x3000_0000, 0, 2, rw, s2)}}, false},
		{"a segment and a file", [][]*vma{{seg(0x1000_0000, 0, 2, rw, s1), file(0x3000_0000, 0, 2, rw, f1)}}, false},
	} {
		m := &Machine{}
		for i, vs := range c.vmas {
			m.procs = append(m.procs, &Process{PID: 100 + i, MM: &MM{Mem: x86.NewMemory(), vmas: vs}})
		}
		if _, _, got := m.SharedAlias(); got != c.alias {
			t.Errorf("%s: alias %v, want %v", c.name, got, c.alias)
		}
	}
	// Anonymous shared memory: a fork shares its pages.
	anon := &vma{start: 0x1000_0000, end: 0x1000_0000 + 2*P, prot: rw, shared: true}
	mm := &MM{Mem: x86.NewMemory(), vmas: []*vma{anon}}
	mm.Mem.SetPage(anon.start>>x86.PageShift, x86.NewPage(), x86.PermRead|x86.PermWrite) // as MM.source makes a shared page
	m := &Machine{procs: []*Process{{PID: 1, MM: mm}}}
	if _, _, ok := m.SharedAlias(); ok {
		t.Error("anonymous shared memory of one process: an alias")
	}
	child := &MM{Mem: mm.Mem.Fork(func(uint64) bool { return true }), vmas: []*vma{{start: anon.start, end: anon.end, prot: ro, shared: true}}}
	m.procs = append(m.procs, &Process{PID: 2, MM: child})
	if pid, a, ok := m.SharedAlias(); !ok || pid != 2 || a != anon.start {
		t.Errorf("anonymous shared memory a fork shares: %d %#x %v, want 2 %#x true", pid, a, ok, anon.start)
	}
	child.vmas[0].shared = false // a private copy-on-write copy
	if _, _, ok := m.SharedAlias(); ok {
		t.Error("a private copy of anonymous shared memory: an alias")
	}
	m.procs[1] = &Process{PID: 2, MM: mm} // a thread group sharing the space
	if _, _, ok := m.SharedAlias(); ok {
		t.Error("one address space seen from two processes: an alias")
	}
}
