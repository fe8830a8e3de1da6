package x86

import "testing"

// tlbMatches reports whether t's entry of the page of addr's first byte
// has the tag of the page of the access's last byte, as translated code
// checks it (jitT.tlb): a hit.
func tlbMatches(t *[tlbSize]tlbEntry, addr uint64, size int) bool {
	return t[(addr>>PageShift)&tlbMask].tag == (addr+uint64(size)-1)>>PageShift
}

// TestTLBEmptyEntriesNeverHit: the TLBs of a new Memory, of a fork's
// child and after FlushTLB are empty for every access, as translated code
// and the handlers check them: page 0 (a zero entry is empty anywhere
// but at index 0) and an access at the top of the address space that
// wraps around to page 0 (its first page has the last index) included.
func TestTLBEmptyEntriesNeverHit(t *testing.T) {
	check := func(what string, m *Memory) {
		t.Helper()
		for _, c := range []struct {
			addr uint64
			size int
		}{{0, 1}, {0, 8}, {1 << PageShift, 8}, {^uint64(0) - 1, 4}, {^uint64(0) - 6, 8}, {^uint64(0), 1}, {0x7fff_ffff_f000, 8}} {
			if tlbMatches(m.rtlb, c.addr, c.size) || tlbMatches(m.wtlb, c.addr, c.size) {
				t.Errorf("%s: an access of %d bytes at %#x hits an empty TLB", what, c.size, c.addr)
			}
		}
		for i := range m.rtlb {
			if m.rtlb[i].tag != noTag && m.rtlb[i].tag != 0 || m.wtlb[i].tag != noTag && m.wtlb[i].tag != 0 {
				t.Fatalf("%s: TLB entry %d holds page %#x", what, i, m.rtlb[i].tag)
			}
		}
	}
	m := NewMemory()
	check("new", m)
	top := uint64(tlbMask) // the last index's page, and the first's
	for _, pn := range []uint64{0, 1, 1<<tlbChunkBits - 1, top - 1, top, 0x5000, 0x7fff0} {
		m.SetPage(pn, NewPage(), PermRead|PermWrite)
		m.Write64(pn<<PageShift, pn)
		if m.Read64(pn<<PageShift) != pn || !tlbMatches(m.rtlb, pn<<PageShift, 8) || !tlbMatches(m.wtlb, pn<<PageShift, 8) {
			t.Fatalf("page %#x did not enter the TLBs", pn)
		}
	}
	child := m.Fork(nil)
	check("fork's child", child)
	for _, pn := range []uint64{0, 1, 1<<tlbChunkBits - 1, top - 1, top, 0x5000, 0x7fff0} {
		if tlbMatches(m.wtlb, pn<<PageShift, 8) {
			t.Errorf("fork: page %#x stays in the parent's write TLB", pn)
		}
		if !tlbMatches(m.rtlb, pn<<PageShift, 8) {
			t.Errorf("fork: page %#x left the parent's read TLB", pn)
		}
	}
	m.FlushTLB()
	check("flushed", m)
	// An entry dropped alone, next to another in its chunk.
	m.Read64(top << PageShift)
	m.Read64((top - 1) << PageShift)
	m.SetPage(top, NewPage(), PermRead)
	if tlbMatches(m.rtlb, top<<PageShift, 8) || !tlbMatches(m.rtlb, (top-1)<<PageShift, 8) {
		t.Errorf("SetPage: dropped the wrong read TLB entries")
	}
	m.Release()
	check("released", m)
}

// BenchmarkNewMemoryFork: making an address space and forking one (each
// Memory holds 1 MiB of TLBs, which they leave untouched).
func BenchmarkNewMemoryFork(b *testing.B) {
	m := NewMemory()
	for pn := uint64(0x400); pn < 0x440; pn++ {
		m.SetPage(pn, NewPage(), PermRead|PermWrite)
		m.Write8(pn<<PageShift, 1)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c := m.Fork(nil)
		c.Release()
		NewMemory()
	}
}
