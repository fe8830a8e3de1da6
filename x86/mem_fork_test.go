package x86

import "testing"

// TestMemoryForkCopyOnWrite checks that after Fork each side sees its own
// writes only, that protection changes through Private stay on one side,
// and that releasing one side leaves the other intact.
func TestMemoryForkCopyOnWrite(t *testing.T) {
	m := NewMemory()
	for pn := uint64(16); pn < 20; pn++ {
		m.SetPage(pn, &Page{Perm: PermRead | PermWrite})
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
	c.Private(19).Perm = PermRead
	if m.Lookup(19).Perm&PermWrite == 0 {
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
		p := &Page{Perm: PermRead | PermWrite}
		p.Data[0] = byte(pn)
		m.SetPage(0x1000+pn, p)
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
		m.SetPage(0x1000+pn, &Page{Perm: PermRead | PermWrite})
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
