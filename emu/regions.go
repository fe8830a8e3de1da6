package emu

// Region is one mapping of the address space as an observer sees it.
type Region struct {
	Start, End uint64
	Prot       int // PROT_ bits
	Name       string
}

// Regions appends the current mappings, in address order, to dst.
func (mm *MM) Regions(dst []Region) []Region {
	for _, v := range mm.vmas {
		dst = append(dst, Region{Start: v.start, End: v.end, Prot: v.prot, Name: v.name})
	}
	return dst
}
