package emu

import (
	"testing"

	"golang.org/x/sys/unix"

	"ttd/x86"
)

// TestSharedObjects: every mapping of one piece of shared memory names
// it with one Region.Obj, at the offset of its start — a fork's copy, a
// piece an mprotect split off, a grown tail — and a page at one object
// and offset is one page wherever it is mapped (what a replay shares,
// reader/shared.go); two objects side by side stay two regions, and
// private memory names none.
func TestSharedObjects(t *testing.T) {
	const P = pageSize
	const rw = unix.PROT_READ | unix.PROT_WRITE
	m := &Machine{}
	mm := NewMM()
	a, b := m.newAnonShared(), m.newAnonShared()
	mm.insert(&vma{start: 0x1000_0000, end: 0x1000_0000 + 4*P, prot: rw, shared: true, anon: a, fileEnd: noFileEnd})
	mm.insert(&vma{start: 0x1000_0000 + 4*P, end: 0x1000_0000 + 6*P, prot: rw, shared: true, anon: b, fileEnd: noFileEnd})
	mm.insert(&vma{start: 0x2000_0000, end: 0x2000_0000 + 2*P, prot: rw, fileEnd: noFileEnd})
	mm.protect(0x1000_0000+P, 0x1000_0000+2*P, unix.PROT_READ)
	mm.growTail(0x1000_0000+6*P, 0x1000_0000+7*P)
	want := []Region{
		{Start: 0x1000_0000, End: 0x1000_0000 + P, Prot: rw, Obj: a.obj},
		{Start: 0x1000_0000 + P, End: 0x1000_0000 + 2*P, Prot: unix.PROT_READ, Obj: a.obj, Off: P},
		{Start: 0x1000_0000 + 2*P, End: 0x1000_0000 + 4*P, Prot: rw, Obj: a.obj, Off: 2 * P},
		{Start: 0x1000_0000 + 4*P, End: 0x1000_0000 + 7*P, Prot: rw, Obj: b.obj},
		{Start: 0x2000_0000, End: 0x2000_0000 + 2*P, Prot: rw},
	}
	got := mm.Regions(nil)
	if len(got) != len(want) {
		t.Fatalf("regions %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("region %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if a.obj == 0 || b.obj == 0 || a.obj == b.obj {
		t.Errorf("objects %d and %d: want two names, not 0", a.obj, b.obj)
	}
	// The child of a fork maps the same pages, touched before the fork
	// or after, by the parent or by itself.
	before := mm.Mem.PageAt(0x1000_0000>>x86.PageShift + 2)
	child := mm.fork()
	if got := child.Mem.PageAt(0x1000_0000>>x86.PageShift + 2); got != before {
		t.Error("a page of anonymous shared memory touched before the fork is not the child's")
	}
	if c, p := child.Mem.PageAt(0x1000_0000>>x86.PageShift+3), mm.Mem.PageAt(0x1000_0000>>x86.PageShift+3); c != p || c == nil {
		t.Error("a page of anonymous shared memory first touched by the child is not the parent's")
	}
	if c, p := child.Mem.PageAt(0x2000_0000>>x86.PageShift), mm.Mem.PageAt(0x2000_0000>>x86.PageShift); c == nil || c == p && child.Mem.Private(0x2000_0000>>x86.PageShift) == p {
		t.Error("a private page stays one page after the child writes it")
	}
	if cr := child.Regions(nil); len(cr) != len(want) || cr[1] != want[1] {
		t.Errorf("the child's regions %+v, want the parent's", cr)
	}
	// madvise(MADV_DONTNEED) drops the page from this address space;
	// touched again, it is the object's (Linux's shmem keeps it).
	mm.dropPages(0x1000_0000+2*P, 0x1000_0000+3*P)
	if got := mm.Mem.PageAt(0x1000_0000>>x86.PageShift + 2); got != before {
		t.Error("anonymous shared memory dropped and touched again is not the object's page")
	}
}
