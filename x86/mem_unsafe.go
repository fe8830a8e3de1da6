package x86

import "unsafe"

// tlbHit is the TLB entry of page p at page number pn: its host field is
// the address of p's data less pn's guest address (Page.Data is p's first
// field), which translated code adds to a guest address. p stays alive
// through the entry's page field.
func tlbHit(pn uint64, p *Page) tlbEntry {
	return tlbEntry{tag: pn, page: p, host: uintptr(unsafe.Pointer(p.Data)) - uintptr(pn<<PageShift)}
}
