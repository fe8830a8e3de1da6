package x86

import "testing"

// TestWatchPagesStayOutOfTLB: reads and writes of a watched page work
// (through the slow path) but never enter it into the TLBs, while its
// neighbour's do; unwatching lets it in again.
func TestWatchPagesStayOutOfTLB(t *testing.T) {
	m := NewMemory()
	const watched, other = 0x40, 0x41
	m.SetPage(watched, NewPage(), PermRead|PermWrite)
	m.SetPage(other, NewPage(), PermRead|PermWrite)
	inTLB := func(pn uint64) (r, w bool) {
		return m.rtlb[pn&tlbMask].tag == pn, m.wtlb[pn&tlbMask].tag == pn
	}
	m.Write64(watched<<PageShift+8, 7)
	m.WatchPages([]uint64{watched})
	if r, w := inTLB(watched); r || w {
		t.Fatalf("WatchPages left the page in the TLBs (read %v, write %v)", r, w)
	}
	for i := 0; i < 3; i++ {
		m.Write64(watched<<PageShift+8, uint64(i))
		m.Write64(other<<PageShift+8, uint64(i))
		if got := m.Read64(watched<<PageShift + 8); got != uint64(i) {
			t.Fatalf("read %d of the watched page, wrote %d", got, i)
		}
		m.Read64(other<<PageShift + 8)
	}
	if r, w := inTLB(watched); r || w {
		t.Errorf("accesses entered the watched page into the TLBs (read %v, write %v)", r, w)
	}
	if r, w := inTLB(other); !r || !w {
		t.Errorf("the unwatched page is not in the TLBs (read %v, write %v)", r, w)
	}
	if m.WatchedPages() != 1 {
		t.Errorf("WatchedPages = %d, want 1", m.WatchedPages())
	}
	m.WatchPages(nil)
	m.Read64(watched<<PageShift + 8)
	if r, _ := inTLB(watched); !r || m.WatchedPages() != 0 {
		t.Errorf("unwatched, the page stays out of the read TLB")
	}
}
