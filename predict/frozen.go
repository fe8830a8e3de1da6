package predict

// pageSlots is the number of slots in 4 KiB of a cache: the unit a
// Frozen copy shares.
const pageSlots = 512

type page = [pageSlots]uint64

// Frozen is a cache's contents and counters at one moment (a
// re-simulation snapshot keeps one per thread). It is kept by 4 KiB
// page: a page equal to the same page of the Frozen copy it was made
// against shares that copy's memory, and a zero page takes none. A
// cache changes few of its pages in the million instructions between
// two of a reader's snapshots, so a snapshot of a 2 MiB cache usually
// costs tens of KiB, not 2 MiB. Frozen copies are immutable.
type Frozen struct {
	pages []*page  // nil: zero
	small []uint64 // the whole cache, when it is smaller than a page
	mask  uint64
	// Reads and Stop are the cache's counters.
	Reads, Stop uint64
	// owned counts the pages this copy allocated.
	owned int
}

// Freeze returns a copy of the cache and its counters, sharing the pages
// that are unchanged from base (nil, or a copy of a cache of the same
// size).
func (c *Cache) Freeze(base *Frozen) *Frozen {
	f := &Frozen{mask: c.mask, Reads: c.Reads, Stop: c.Stop}
	if len(c.slots) < pageSlots {
		f.small = append([]uint64(nil), c.slots...)
		return f
	}
	if base != nil && base.mask != c.mask {
		base = nil
	}
	f.pages = make([]*page, len(c.slots)/pageSlots)
	for i := range f.pages {
		live := (*page)(c.slots[i*pageSlots:])
		if base != nil && base.pages[i] != nil && *base.pages[i] == *live {
			f.pages[i] = base.pages[i]
			continue
		}
		if *live == (page{}) {
			continue
		}
		p := new(page)
		*p = *live
		f.pages[i] = p
		f.owned++
	}
	return f
}

// Thaw makes c hold f's contents and counters; f must be a copy of a
// cache of c's size.
func (c *Cache) Thaw(f *Frozen) {
	c.Reads, c.Stop = f.Reads, f.Stop
	if f.small != nil {
		copy(c.slots, f.small)
		return
	}
	for i, p := range f.pages {
		live := (*page)(c.slots[i*pageSlots:])
		if p == nil {
			*live = page{}
		} else {
			*live = *p
		}
	}
}

// Bytes is the memory f took beyond the pages it shares.
func (f *Frozen) Bytes() int {
	return 64 + 8*len(f.small) + 8*len(f.pages) + f.owned*pageSlots*8
}
