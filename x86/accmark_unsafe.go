package x86

import "unsafe"

// markAddr is the address of p, as a TLB entry keeps it (tlbEntry.mark;
// the MarkTable that holds p keeps it alive until it forgets it).
func markAddr(p *MarkPage) uintptr { return uintptr(unsafe.Pointer(p)) }
