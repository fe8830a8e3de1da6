package emu

// Region is one mapping of the address space as an observer sees it.
type Region struct {
	Start, End uint64
	Prot       int // PROT_ bits
	Name       string
	// Obj names the shared memory the mapping shows (a file mapped
	// MAP_SHARED, a System V segment, anonymous shared memory), one
	// name for every mapping of it in the machine while it exists; 0
	// for a private mapping. Off is the offset of Start in it: a page
	// at the same Obj and offset is the same page wherever it is
	// mapped. File is set when Obj is a file's pages: a fork makes
	// every page of the mapping exist first (MM.fork), as its replay
	// must for their hashes to agree.
	Obj, Off uint64
	File     bool
}

// Regions appends the current mappings, in address order, to dst.
func (mm *MM) Regions(dst []Region) []Region {
	for _, v := range mm.vmas {
		obj, off := v.object()
		dst = append(dst, Region{Start: v.start, End: v.end, Prot: v.prot, Name: v.name, Obj: obj, Off: off,
			File: obj != 0 && v.file != nil})
	}
	return dst
}

// Range is a half-open range of addresses [Start, End).
type Range struct{ Start, End uint64 }

// Dropped appends to dst the ranges whose contents the address space
// discarded since the last call (munmap, a fixed mapping over older
// ones, brk shrinking, madvise(MADV_DONTNEED)), sorted and merged, and
// forgets them. A region that only grew (brk), moved (mremap) or changed
// protection kept its bytes and is not in the list: an observer diffing
// Regions tells those from a discard with it.
func (mm *MM) Dropped(dst []Range) []Range {
	dst = append(dst, mm.dropped...)
	mm.dropped = mm.dropped[:0]
	return dst
}

// noteDropped adds [lo, hi) to the discarded ranges, keeping the list
// sorted and merged (so it stays as small as the address space's
// regions even when no observer takes it, as for unrecorded processes).
func (mm *MM) noteDropped(lo, hi uint64) {
	if lo >= hi {
		return
	}
	mm.gen++
	d := mm.dropped
	i := 0
	for i < len(d) && d[i].End < lo {
		i++
	}
	j := i
	for j < len(d) && d[j].Start <= hi {
		lo, hi = min(lo, d[j].Start), max(hi, d[j].End)
		j++
	}
	if i == j {
		d = append(d, Range{})
		copy(d[i+1:], d[i:])
		d[i] = Range{lo, hi}
	} else {
		d[i] = Range{lo, hi}
		d = append(d[:i+1], d[j:]...)
	}
	mm.dropped = d
}
