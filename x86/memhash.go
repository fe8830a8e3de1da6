package x86

import "slices"

// HashMemory hashes the contents of m's materialised pages that are not
// all zero, in address order, with their page numbers: two address
// spaces hash alike when every address reads alike, whichever zero
// pages each has materialised. A recording that logs no reads writes it
// at checkpoints and a verifying replay compares it (recorder's
// replayable mode).
func HashMemory(m *Memory) uint64 {
	pns := make([]uint64, 0, len(m.pages))
	for pn, e := range m.pages {
		if e.page != nil && *e.page.Data != ([PageSize]byte{}) {
			pns = append(pns, pn)
		}
	}
	slices.Sort(pns)
	const prime = 0x100000001b3
	h := uint64(0xcbf29ce484222325)
	for _, pn := range pns {
		h = (h ^ pn) * prime
		d := m.pages[pn].page.Data
		for i := 0; i < PageSize; i += 8 {
			w := uint64(d[i]) | uint64(d[i+1])<<8 | uint64(d[i+2])<<16 | uint64(d[i+3])<<24 |
				uint64(d[i+4])<<32 | uint64(d[i+5])<<40 | uint64(d[i+6])<<48 | uint64(d[i+7])<<56
			h = (h ^ w) * prime
		}
	}
	return h
}
