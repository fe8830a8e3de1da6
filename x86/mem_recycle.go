package x86

// Recycle empties m, as Release does, and hands keep each of its pages
// that no other address space holds, for another Memory's Source to
// materialise a page with (the reader's next re-simulation on the same
// goroutine: a page there is a 4 KiB allocation, a host page fault and
// a miss of the translated code's TLB). A page keeps its bytes; its
// mark of cached code goes, m's code cache going with m. m must not be
// used afterwards.
func (m *Memory) Recycle(keep func(pn uint64, p *Page)) {
	for pn, e := range m.pages {
		if e.page.cow > 0 {
			e.page.cow-- // another address space keeps it
			continue
		}
		e.page.code = false
		keep(pn, e.page)
	}
	m.pages = make(map[uint64]pte)
	m.FlushTLB()
}
