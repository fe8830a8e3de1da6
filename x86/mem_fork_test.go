package x86

import "testing"

// TestMemoryForkCopyOnWrite checks that after Fork each side sees its own
// writes only, that protection changes through Private stay on one side,
// and that releasing one side leaves the other intact.
func TestMemoryForkCopyOnWrite(t *testing.T) {
	m := NewMemory()
	for pn := uint64(16); pn < 20; pn++ {
		m.SetPage(pn, NewPage(), PermRead|PermWrite)
	}
	a := uint64(16) << PageShift
	m.Write64(a, 111)
	m.Write64(a+PageSize, 222)
	c := m.Fork(nil)
	if got := c.Read64(a); got != 111 {
		t.Fatalf("child reads %d before any write, want 111", got)
	}
	c.Write64(a, 333)
	if got := m.Read64(a); got != 111 {
		t.Errorf("parent reads %d after the child's write, want 111", got)
	}
	if got := c.Read64(a); got != 333 {
		t.Errorf("child reads %d after its write, want 333", got)
	}
	m.Write64(a+PageSize, 444)
	if got := c.Read64(a + PageSize); got != 222 {
		t.Errorf("child reads %d after the parent's write, want 222", got)
	}
	if err := m.Poke(a+2*PageSize, []byte{9}); err != nil {
		t.Fatal(err)
	}
	var b [1]byte
	c.Peek(a+2*PageSize, b[:])
	if b[0] != 0 {
		t.Errorf("a Poke by the parent reached the child: %d", b[0])
	}
	c.Protect(19, 20, PermRead, nil)
	if p, _ := m.PermOf(19); p&PermWrite == 0 {
		t.Errorf("a protection change in the child reached the parent")
	}
	c.Release()
	// The parent now holds page 17 alone, written in place again.
	p := m.Lookup(17)
	m.Write64(a+PageSize, 555)
	if m.Lookup(17) != p {
		t.Errorf("the parent copied a page nobody else holds any more")
	}
	if got := m.Read64(a + PageSize); got != 555 {
		t.Errorf("parent reads %d, want 555", got)
	}
}

// BenchmarkMemoryFork256MiB measures fork of an address space that has
// touched 256 MiB (65,536 pages): the cost is per page mapped, not per
// byte, and no page is copied until written.
func BenchmarkMemoryFork256MiB(b *testing.B) {
	m := NewMemory()
	const pages = 256 << 20 >> PageShift
	for pn := uint64(0); pn < pages; pn++ {
		p := NewPage()
		p.Data[0] = byte(pn)
		m.SetPage(0x1000+pn, p, PermRead|PermWrite)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := m.Fork(nil)
		c.Release()
	}
}

// BenchmarkMemoryForkOnly256MiB is BenchmarkMemoryFork256MiB without the
// release of the copy (what the forking process waits for).
func BenchmarkMemoryForkOnly256MiB(b *testing.B) {
	m := NewMemory()
	const pages = 256 << 20 >> PageShift
	for pn := uint64(0); pn < pages; pn++ {
		m.SetPage(0x1000+pn, NewPage(), PermRead|PermWrite)
	}
	var kids []*Memory
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		kids = append(kids, m.Fork(nil))
	}
	b.StopTimer()
	for _, c := range kids {
		c.Release()
	}
}

// addWrite makes page pn of m writable as well (the tests of
// self-modifying code).
func addWrite(m *Memory, pn uint64) {
	p, _ := m.PermOf(pn)
	m.Protect(pn, pn+1, p|PermWrite, nil)
}

// TestMemorySharedPageProtection checks that the protection of a page
// is each address space's: after a Fork that keeps a page shared for
// writing (MAP_SHARED), one side making it read-only faults on its own
// writes while the other still writes the same page, and the writes of
// either side are seen by both. The same holds for a page two address
// spaces install with different protections (System V shared memory
// attached SHM_RDONLY in one process).
func TestMemorySharedPageProtection(t *testing.T) {
	const pn = 32
	a := uint64(pn) << PageShift
	m := NewMemory()
	shared := NewPage()
	m.SetPage(pn, shared, PermRead|PermWrite)
	m.Write64(a, 1)
	c := m.Fork(func(uint64) bool { return true })
	c.Write64(a, 2) // fill the child's write TLB before the change
	c.Protect(pn, pn+1, PermRead, nil)
	if err := c.WriteBytes(a, []byte{3}); err == nil {
		t.Errorf("the child wrote a page it made read-only")
	} else if f, ok := err.(*Fault); !ok || !f.Mapped || !f.Write {
		t.Errorf("the child's write: %v, want a protection fault", err)
	}
	m.Write64(a, 4)
	if got := c.Read64(a); got != 4 {
		t.Errorf("the child reads %d after the parent's write, want 4", got)
	}
	if c.Lookup(pn) != shared || m.Lookup(pn) != shared {
		t.Errorf("a protection change copied the shared page")
	}
	if p, _ := m.PermOf(pn); p != PermRead|PermWrite {
		t.Errorf("the parent's protection is %v after the child's mprotect", p)
	}

	// Two address spaces installing one page with different protections.
	x, y := NewMemory(), NewMemory()
	seg := NewPage()
	x.SetPage(pn, seg, PermRead|PermWrite)
	y.SetPage(pn, seg, PermRead)
	x.Write64(a, 5)
	if got := y.Read64(a); got != 5 {
		t.Errorf("the read-only side reads %d, want 5", got)
	}
	if err := y.WriteBytes(a, []byte{6}); err == nil {
		t.Errorf("the read-only side wrote the page")
	}

	// Copy-on-write pages keep each side's protection when copied.
	q := NewMemory()
	q.SetPage(pn, NewPage(), PermRead|PermWrite)
	r := q.Fork(nil)
	q.Protect(pn, pn+1, PermRead, nil)
	r.Write64(a, 7) // r copies the page; q keeps it, read-only
	if p, _ := r.PermOf(pn); p != PermRead|PermWrite {
		t.Errorf("the writer's copy has protection %v", p)
	}
	if err := q.WriteBytes(a, []byte{8}); err == nil {
		t.Errorf("q wrote a page it made read-only")
	}
	if got := q.Read64(a); got != 0 {
		t.Errorf("q reads %d, want 0 (r's write is r's)", got)
	}

	// Protect removing execute reports the page.
	var lost []uint64
	q.SetPage(pn+1, NewPage(), PermRead|PermExec)
	q.Protect(pn, pn+2, PermRead, func(pn uint64) { lost = append(lost, pn) })
	if len(lost) != 1 || lost[0] != pn+1 {
		t.Errorf("lostExec reported %v, want [%d]", lost, pn+1)
	}
	// The range ends before hi.
	q.SetPage(pn+2, NewPage(), PermRead|PermWrite)
	q.Protect(pn, pn+2, PermRead|PermExec, nil)
	if p, _ := q.PermOf(pn + 2); p != PermRead|PermWrite {
		t.Errorf("page hi's protection became %v", p)
	}
	if p, _ := q.PermOf(pn + 1); p != PermRead|PermExec {
		t.Errorf("page hi-1's protection is %v", p)
	}
}
