package x86

import "testing"

// TestMemoryRecycle checks that Recycle hands over each page once: a
// page a fork shares goes with the last address space that holds it,
// with its bytes and without its code mark, and the recycled Memory is
// empty.
func TestMemoryRecycle(t *testing.T) {
	m := NewMemory()
	for pn := uint64(16); pn < 20; pn++ {
		m.SetPage(pn, NewPage(), PermRead|PermWrite)
	}
	a := uint64(16) << PageShift
	m.Write64(a, 111)
	m.Lookup(17).code = true
	c := m.Fork(nil)
	c.Write64(a+PageSize, 222) // page 17: the child's own copy now
	got := map[*Page]uint64{}
	keep := func(pn uint64, p *Page) {
		if _, dup := got[p]; dup {
			t.Fatalf("page %d handed over twice", pn)
		}
		got[p] = pn
	}
	shared := m.Lookup(16)
	m.Recycle(keep)
	if m.NumPages() != 0 || m.Lookup(16) != nil {
		t.Fatalf("recycled memory keeps %d pages", m.NumPages())
	}
	// The parent's own page 17 only: 16, 18 and 19 stay the child's.
	if len(got) != 1 {
		t.Fatalf("the parent handed over %d pages, want its own copy of page 17 only", len(got))
	}
	for p, pn := range got {
		if pn != 17 || p.code {
			t.Fatalf("handed over page %d (code mark %v)", pn, p.code)
		}
	}
	// The child now writes page 16 in place: no one else holds it.
	c.Write64(a, 333)
	if c.Lookup(16) != shared || shared.Data[0] != 333%256 {
		t.Fatalf("the child copied page 16 after its sharer was recycled")
	}
	c.Recycle(keep)
	if len(got) != 5 {
		t.Fatalf("%d pages handed over in all, want 5", len(got))
	}
	if got[shared] != 16 {
		t.Fatalf("page 16 handed over as %d", got[shared])
	}
}
