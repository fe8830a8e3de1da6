package reader

import (
	"sort"

	"ttd/x86"
)

// region is a mapping as the recording announced it.
type region struct {
	start, end uint64
	prot       int
}

// addrSpace mirrors the recorded address space's layout and protections.
// Page contents do not matter for re-simulation (reads come from the
// prediction cache and the trace), except code, which the code records
// write in.
type addrSpace struct {
	mem     *x86.Memory
	regions []region
}

func newAddrSpace() *addrSpace {
	as := &addrSpace{mem: x86.NewMemory()}
	as.mem.Source = as.source
	return as
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

func (as *addrSpace) source(pn uint64) *x86.Page {
	g := as.find(pn << x86.PageShift)
	if g == nil {
		return nil
	}
	return &x86.Page{Perm: perm(g.prot)}
}

// cut removes [lo, hi) from the region list.
func (as *addrSpace) cut(lo, hi uint64) {
	out := as.regions[:0:0]
	for _, g := range as.regions {
		if g.end <= lo || g.start >= hi {
			out = append(out, g)
			continue
		}
		if g.start < lo {
			out = append(out, region{g.start, lo, g.prot})
		}
		if g.end > hi {
			out = append(out, region{hi, g.end, g.prot})
		}
	}
	as.regions = out
}

// mmap maps [addr, addr+n) with prot; pages already materialised there
// keep their bytes (code) and take the new protection.
func (as *addrSpace) mmap(addr, n uint64, prot int) {
	lo, hi := addr&^(x86.PageSize-1), (addr+n+x86.PageSize-1)&^(x86.PageSize-1)
	as.cut(lo, hi)
	i := sort.Search(len(as.regions), func(i int) bool { return as.regions[i].start >= hi })
	as.regions = append(as.regions, region{})
	copy(as.regions[i+1:], as.regions[i:])
	as.regions[i] = region{lo, hi, prot}
	p := perm(prot)
	as.mem.Pages(lo>>x86.PageShift, hi>>x86.PageShift, func(pn uint64, pg *x86.Page) { pg.Perm = p })
	as.mem.FlushTLB()
}

// munmap removes [addr, addr+n) and its pages.
func (as *addrSpace) munmap(addr, n uint64) {
	lo, hi := addr&^(x86.PageSize-1), (addr+n+x86.PageSize-1)&^(x86.PageSize-1)
	as.cut(lo, hi)
	var drop []uint64
	as.mem.Pages(lo>>x86.PageShift, hi>>x86.PageShift, func(pn uint64, pg *x86.Page) { drop = append(drop, pn) })
	for _, pn := range drop {
		as.mem.SetPage(pn, nil)
	}
	as.mem.FlushTLB()
}
