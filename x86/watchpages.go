package x86

// Watched pages: an address space of which a few pages must have every
// access seen (a live watch probe, probe/live) while the rest runs at
// full speed. A watched page is never entered into the TLBs, so every
// access to it misses them: translated code leaves for the interpreter
// before the instruction (as on any TLB miss), and the interpreter's
// slow paths (loadSlow, storeSlow, the 16- and 32-byte halves) hand the
// access to the Observer's MemRead or MemWrite whenever no prediction
// cache takes it — always for a MemoryBlind observer (ttd run's), whose
// string instructions also go element by element. Accesses to the other
// pages never reach Go.

// WatchPages makes pns the watched pages of m (none: no page), and drops
// their TLB entries.
func (m *Memory) WatchPages(pns []uint64) {
	for pn := range m.watched {
		m.dropTLB(pn)
	}
	m.watched = nil
	if len(pns) == 0 {
		return
	}
	m.watched = make(map[uint64]bool, len(pns))
	for _, pn := range pns {
		m.watched[pn] = true
		m.dropTLB(pn)
	}
}

// WatchedPages reports how many pages of m are watched.
func (m *Memory) WatchedPages() int { return len(m.watched) }
