package reader

import (
	"bytes"
	"slices"
	"sort"

	"ttd/tracefile"
	"ttd/x86"
)

// region is a mapping as the recording announced it.
type region struct {
	start, end uint64
	prot       int
	// obj is the shared memory the region shows, 0 for private memory;
	// off the offset of start in it; file is set when it is a file's
	// pages (shared.go).
	obj, off uint64
	file     bool
}

// addrSpace mirrors the recorded address space's layout and protections.
// Page contents do not matter for re-simulation (reads come from the
// prediction cache and the trace), except code, which the code records
// write in.
type addrSpace struct {
	mem     *x86.Memory
	regions []region
	// gen counts the changes of regions (aliasCache).
	gen uint64
	// code holds the pages code bytes were written to; frozen the
	// last copy of each a snapshot took (shared by snapshots while the
	// page does not change).
	code   map[uint64]bool
	frozen map[uint64]*[x86.PageSize]byte
	// init are page contents to materialise pages with (a resumed
	// snapshot's code pages), data the same for the pages a resumed
	// tracking window knows bytes of.
	init, data map[uint64]*[x86.PageSize]byte
	scratch    []byte
	// spare are the pages a replay left (leftovers.go), or nil;
	// zeroSpare clears them first (a trace that logs no reads).
	spare     *Leftovers
	zeroSpare bool
	// pend are the pages restored at the checkpoint a replay of a trace
	// that logs no reads started at, not materialised yet: page number
	// -> page in pages (cpmem.go); pendErr the first error reading one.
	pend    pageRefs
	pages   *tracefile.Pages
	ahead   *aheadFrames // frames decoded ahead (cpmem.go), or nil
	pendErr error
	// byFrame are pend's pages by the frame of pages that holds them
	// (made when first needed).
	byFrame map[int][]uint64
	// shared are the pages of the shared memory the replay's address
	// spaces map (shared.go).
	shared *sharedMem
}

func newAddrSpace() *addrSpace {
	as := &addrSpace{mem: x86.NewMemory(), code: map[uint64]bool{}, frozen: map[uint64]*[x86.PageSize]byte{},
		data: map[uint64]*[x86.PageSize]byte{}}
	as.mem.Source = as.source
	return as
}

// pokeCode writes code bytes and remembers their pages. Bytes the
// memory holds already are not written again: a write would throw away
// the blocks decoded from the page, which a replay resumed into a
// recycled address space (ResumeInto) must keep.
func (as *addrSpace) pokeCode(addr uint64, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	for pn := addr >> x86.PageShift; pn <= (addr+uint64(len(b))-1)>>x86.PageShift; pn++ {
		as.code[pn] = true
	}
	as.scratch = slices.Grow(as.scratch[:0], len(b))[:len(b)]
	if as.mem.Peek(addr, as.scratch) == nil && bytes.Equal(as.scratch, b) {
		return nil
	}
	return as.mem.Poke(addr, b)
}

// codePages returns the current contents of the code pages, sharing the
// copies of pages that did not change since the last call.
func (as *addrSpace) codePages() map[uint64]*[x86.PageSize]byte {
	out := make(map[uint64]*[x86.PageSize]byte, len(as.code))
	for pn := range as.code {
		pg := as.mem.Lookup(pn)
		if pg == nil {
			delete(as.code, pn)
			delete(as.frozen, pn)
			continue
		}
		f := as.frozen[pn]
		if f == nil || *f != *pg.Data {
			f = new([x86.PageSize]byte)
			*f = *pg.Data
			as.frozen[pn] = f
		}
		out[pn] = f
	}
	for pn, d := range as.init {
		out[pn] = d // not materialised since the resume
	}
	return out
}

func perm(prot int) x86.Perm {
	var p x86.Perm
	if prot&1 != 0 {
		p |= x86.PermRead
	}
	if prot&2 != 0 {
		p |= x86.PermWrite
	}
	if prot&4 != 0 {
		p |= x86.PermExec
	}
	return p
}

func (as *addrSpace) find(addr uint64) *region {
	i := sort.Search(len(as.regions), func(i int) bool { return as.regions[i].end > addr })
	if i < len(as.regions) && as.regions[i].start <= addr {
		return &as.regions[i]
	}
	return nil
}

func (as *addrSpace) source(pn uint64) (*x86.Page, x86.Perm) {
	g := as.find(pn << x86.PageShift)
	if g == nil {
		return nil, 0
	}
	if g.obj != 0 {
		return as.sharedPage(pn, g), perm(g.prot)
	}
	p := as.spare.take(pn) // its bytes another position's (Leftovers)
	if p == nil {
		p = x86.NewPage()
	} else if as.zeroSpare {
		*p.Data = [x86.PageSize]byte{} // reads come from memory (replayable.go)
	}
	as.fill(pn, p)
	return p, perm(g.prot)
}

// fill gives p, a new page pn, the contents it has at this position
// beyond zeros: a resumed snapshot's code, a tracking window's data,
// what the checkpoint the replay started at restored.
func (as *addrSpace) fill(pn uint64, p *x86.Page) {
	if d := as.init[pn]; d != nil {
		*p.Data = *d
		as.code[pn] = true
		as.frozen[pn] = d
		delete(as.init, pn)
	} else if d := as.data[pn]; d != nil {
		*p.Data = *d
		delete(as.data, pn)
	} else if ref, ok := as.pend[pn]; ok {
		as.restorePage(pn, ref, p)
	}
}

// cut removes [lo, hi) from the region list.
func (as *addrSpace) cut(lo, hi uint64) {
	as.gen++
	out := as.regions[:0:0]
	for _, g := range as.regions {
		if g.end <= lo || g.start >= hi {
			out = append(out, g)
			continue
		}
		if g.start < lo {
			out = append(out, g.part(g.start, lo))
		}
		if g.end > hi {
			out = append(out, g.part(hi, g.end))
		}
	}
	as.regions = out
}

// mmap maps [addr, addr+n) with prot, showing shared memory object obj
// from offset off (0: private memory; file: a file's pages); pages
// already materialised there keep their bytes (code) and take the new
// protection.
func (as *addrSpace) mmap(addr, n uint64, prot int, obj, off uint64, file bool) {
	lo, hi := addr&^(x86.PageSize-1), (addr+n+x86.PageSize-1)&^(x86.PageSize-1)
	as.insert(region{lo, hi, prot, obj, off, file})
	as.mem.Protect(lo>>x86.PageShift, hi>>x86.PageShift, perm(prot), nil)
	as.mem.FlushTLB()
}

// insert puts g in the region list in place of what was there.
func (as *addrSpace) insert(g region) {
	as.cut(g.start, g.end)
	i := sort.Search(len(as.regions), func(i int) bool { return as.regions[i].start >= g.end })
	as.regions = append(as.regions, region{})
	copy(as.regions[i+1:], as.regions[i:])
	as.regions[i] = g
}

// protect gives [addr, addr+n) the protection prot (an Mprotect record:
// a range not mapped becomes private memory); shared memory stays shared.
func (as *addrSpace) protect(addr, n uint64, prot int) {
	lo, hi := addr&^(x86.PageSize-1), (addr+n+x86.PageSize-1)&^(x86.PageSize-1)
	var shared []region
	for _, g := range as.regions {
		if g.obj != 0 && g.end > lo && g.start < hi {
			shared = append(shared, g.part(max(g.start, lo), min(g.end, hi)))
		}
	}
	as.mmap(addr, n, prot, 0, 0, false)
	for _, g := range shared {
		g.prot = prot
		as.insert(g)
	}
}

// munmap removes [addr, addr+n) and its pages.
func (as *addrSpace) munmap(addr, n uint64) {
	lo, hi := addr&^(x86.PageSize-1), (addr+n+x86.PageSize-1)&^(x86.PageSize-1)
	as.cut(lo, hi)
	var drop []uint64
	as.mem.Pages(lo>>x86.PageShift, hi>>x86.PageShift, func(pn uint64, pg *x86.Page) { drop = append(drop, pn) })
	for _, pn := range drop {
		as.mem.SetPage(pn, nil, 0)
		delete(as.code, pn)
		delete(as.frozen, pn)
	}
	for pn := range as.pend {
		if pn >= lo>>x86.PageShift && pn < hi>>x86.PageShift {
			delete(as.pend, pn)
		}
	}
	for _, m := range []map[uint64]*[x86.PageSize]byte{as.init, as.data} {
		for pn := range m {
			if pn >= lo>>x86.PageShift && pn < hi>>x86.PageShift {
				delete(m, pn)
			}
		}
	}
	as.mem.FlushTLB()
}

// Mapping returns the protection (PROT_ bits) of the mapping that holds
// addr at the current position, and whether one does.
func (r *Replay) Mapping(addr uint64) (prot int, ok bool) {
	if g := r.fas.find(addr); g != nil {
		return g.prot, true
	}
	return 0, false
}
