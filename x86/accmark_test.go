package x86

import "testing"

// TestMarkTableEmptyForgetsTLBMarks: the MarkPages translated code keeps
// in TLB entries (tlbEntry.mark) are forgotten by MarkTable.Empty in
// every Memory the table served, in both TLBs and in every chunk, and an
// entry made afresh (a new page, a fork's child, after FlushTLB) points
// at none.
func TestMarkTableEmptyForgetsTLBMarks(t *testing.T) {
	var tab MarkTable
	tab.Empty()
	pns := []uint64{0, 1, 1<<tlbChunkBits - 1, 1 << tlbChunkBits, tlbMask - 1, tlbMask, 0x5000, 0x7fff0}
	fill := func(m *Memory) {
		for _, pn := range pns {
			m.SetPage(pn, &Page{}, PermRead|PermWrite)
			m.Write64(pn<<PageShift, pn)
			m.Read64(pn << PageShift)
			r, w := &m.rtlb[pn&tlbMask], &m.wtlb[pn&tlbMask]
			if r.tag != pn || w.tag != pn {
				t.Fatalf("page %#x did not enter the TLBs", pn)
			}
			if r.mark != 0 || w.mark != 0 {
				t.Fatalf("page %#x entered the TLBs with a mark page", pn)
			}
			r.mark, w.mark = 0x1000+uintptr(pn), 0x2000+uintptr(pn) // as findMarks does
		}
	}
	marks := func(m *Memory) (n int) {
		for i := range m.rtlb {
			if m.rtlb[i].mark != 0 {
				n++
			}
			if m.wtlb[i].mark != 0 {
				n++
			}
		}
		return n
	}
	a, b, other := NewMemory(), NewMemory(), NewMemory()
	tab.use(a)
	tab.use(b)
	tab.use(a) // once is enough
	tab.use(nil)
	if len(tab.mems) != 2 {
		t.Fatalf("the table serves %d memories, want 2", len(tab.mems))
	}
	for _, m := range []*Memory{a, b, other} {
		fill(m)
	}
	if n := marks(a); n != 2*len(pns) {
		t.Fatalf("%d marks set, want %d", n, 2*len(pns))
	}
	// EnterMarks: the entries of the page, and only those.
	c, i := &CPU{Mem: b}, uint64(0x5000&tlbMask)
	tab.EnterMarks(c, 0x5000+tlbSize, &MarkPage{}) // another page at the same index
	if b.rtlb[i].mark != 0x1000+0x5000 || b.wtlb[i].mark != 0x2000+0x5000 {
		t.Errorf("EnterMarks changed the entries of another page")
	}
	tab.EnterMarks(c, 0x5000, &MarkPage{})
	if b.rtlb[i].mark == 0x1000+0x5000 || b.wtlb[i].mark == 0x2000+0x5000 {
		t.Errorf("EnterMarks left page 0x5000's entries")
	}
	child := a.Fork(nil)
	if n := marks(child); n != 0 {
		t.Errorf("a fork's child has %d mark pages", n)
	}
	tab.Empty()
	if n := marks(a) + marks(b); n != 0 {
		t.Errorf("Empty left %d mark pages in the TLBs it served", n)
	}
	if n := marks(other); n != 2*len(pns) {
		t.Errorf("Empty changed a Memory it did not serve (%d marks left, want %d)", n, 2*len(pns))
	}
	for _, e := range tab.Entries {
		if e.PN != NoMarkPN {
			t.Fatalf("Empty left page %#x in the table", e.PN)
		}
	}
	if len(tab.mems) != 0 {
		t.Errorf("Empty kept %d address spaces (a tree's ended processes and their TLBs)", len(tab.mems))
	}
	fill(a)
	a.FlushTLB()
	if n := marks(a); n != 0 {
		t.Errorf("FlushTLB left %d mark pages", n)
	}
}
