package x86

import (
	"math/bits"
	"slices"
	"sync"
)

// Access marks: translated code that marks the bytes it accesses itself.
// A recorder that builds the access summaries while recording
// (jitModeRecordTrack) used to have every access logged (acclog.go) and
// marked by Go afterwards (AccessLogger.LoggedAccesses): a Go loop over
// every access, and a return to Go every accLogSize accesses, about a
// third of `ttd record`'s CPU on xz -6. An AccessLogger that is also an
// AccessMarker hands translated code its MarkPages instead, through the
// TLB entries (MarkTable.EnterMarks): an access of 1, 2, 4 or 8 bytes
// to a page whose TLB entry points at its MarkPage is marked in place,
// by an OR into it (jit_acclog_amd64.go), and so is a vector access of
// 16 or 32 bytes; any other access (an entry that points at none, an
// access of another size) is logged as before, and LoggedAccesses,
// which marks it, makes the page's entries point at its MarkPage, so
// that the next access is marked in place.
//
// The table belongs to the AccessMarker: it may change it (or empty it,
// MarkPN's ^0) whenever Go runs, never while translated code does.

// MarkPage is what an interval did to one page: the bytes it read
// (RW[0]) and wrote (RW[1]), and fetched (Ex), as bitmaps of the page's
// bytes (word w bit b: byte 64w+b). Each bitmap is one run of bits in
// memory, byte o of the page at bit o&7 of the bitmap's byte o>>3, so
// that translated code marks an access of up to 32 bytes with one OR of
// the unaligned 64-bit word at that byte, whatever its line
// (jit_acclog_amd64.go): before, read and written bits of a line were
// side by side ([64][2]uint64), and an access across a 64-byte line had
// to be logged. The OR of the last bytes of RW[0] or RW[1] runs up to 7
// bytes into the field that follows, with zero bits: Go never writes a
// MarkPage while translated code runs.
type MarkPage struct {
	RW [2][PageSize / 64]uint64
	Ex [PageSize / 64]uint64
}

// MarkTableSize is the number of entries of a MarkTable: xz -6 touches
// pages all over its 90 MB, and with 256 entries the recorder's map
// lookup took 9% of its CPU.
const MarkTableSize = 4096

// MarkEntry is an entry of a MarkTable: the page whose number is PN
// (PageShift), or none when PN is NoMarkPN.
type MarkEntry struct {
	PN   uint64
	Page *MarkPage
}

// NoMarkPN is the PN of an empty MarkEntry (no page number is that
// large).
const NoMarkPN = ^uint64(0)

// MarkTable is a direct-mapped lookup from a page number to its
// MarkPage: page pn is at entry pn % MarkTableSize, or absent.
//
// Translated code does not look pages up in it: it marks an access
// through the MarkPage the access's TLB entry points at (tlbEntry.mark),
// and logs it when the entry points at none. EnterMarks, which the
// AccessMarker calls as it marks logged accesses, makes the entries of a
// page point at its MarkPage; every TLB entry made or emptied starts
// without one. Empty forgets them all, in every Memory the table served:
// a MarkPage the table no longer holds may be reused for another page,
// or freed.
type MarkTable struct {
	Entries [MarkTableSize]MarkEntry
	// mems are the address spaces whose TLB entries may point at the
	// table's pages (EnterMarks since the last Empty).
	mems []*Memory
}

// EnterMarks makes the TLB entries of page pn of c's address space, if
// it has any, point at p, the page's MarkPage in t, until t.Empty: the
// accesses translated code makes to the page are then marked in p.
func (t *MarkTable) EnterMarks(c *CPU, pn uint64, p *MarkPage) {
	m := c.Mem
	if m == nil || p == nil {
		return
	}
	t.use(m)
	i := pn & tlbMask
	if e := &m.rtlb[i]; e.tag == pn {
		e.mark = markAddr(p)
	}
	if e := &m.wtlb[i]; e.tag == pn {
		e.mark = markAddr(p)
	}
}

// Empty empties the table, and the TLB entries that point at its pages.
func (t *MarkTable) Empty() {
	for i := range t.Entries {
		t.Entries[i] = MarkEntry{PN: NoMarkPN}
	}
	for _, m := range t.mems {
		m.forgetMarks()
	}
	// No entry points at the table's pages any more: let go of the
	// address spaces (a tree's ended processes and their TLBs),
	// EnterMarks notes the live ones again.
	clear(t.mems)
	t.mems = t.mems[:0]
}

// use notes that translated code marks accesses to m through t.
func (t *MarkTable) use(m *Memory) {
	if m != nil && !slices.Contains(t.mems, m) {
		t.mems = append(t.mems, m)
	}
}

// forgetMarks empties the mark field of m's TLB entries (those in the
// chunks that may hold entries).
func (m *Memory) forgetMarks() {
	for _, x := range [2]struct {
		t *[tlbSize]tlbEntry
		d *tlbDirty
	}{{m.rtlb, &m.rdirty}, {m.wtlb, &m.wdirty}} {
		for w := range x.d {
			for b := x.d[w]; b != 0; b &= b - 1 {
				c := w*64 + bits.TrailingZeros64(b)
				for i := c << tlbChunkBits; i < (c+1)<<tlbChunkBits; i++ {
					x.t[i].mark = 0
				}
			}
		}
	}
}

// AccessMarker, when an AccessLogger that is a ReadLogger (a recorder)
// or a RunAccessLogger (the tracking replay of a trace that logs no
// reads) implements it, lets translated code mark accesses in the pages
// of its table instead of logging them.
type AccessMarker interface {
	// AccessMarks returns the table translated code marks into while
	// it runs c.
	AccessMarks(c *CPU) *MarkTable
}

// noMarks returns the table of an AccessLogger that marks nothing
// itself: every access misses it and is logged. It is made on first use
// (64 KiB filled at package init took 0.5 ms of every ttd command).
var noMarks = sync.OnceValue(func() *MarkTable {
	t := new(MarkTable)
	t.Empty()
	return t
})

// accMasks[s][b] is the mask of an access of 1<<s bytes (1 to 32: a
// vector access is one) at bit b of a 64-bit word, or 0 when it runs
// past the word's end. Translated code indexes it by the access's
// address mod 8 (markAccess), so never finds a 0 there.
var accMasks = func() (m [6][64]uint64) {
	for s := range m {
		n := uint(1) << s
		for b := range m[s] {
			if uint(b)+n <= 64 {
				m[s][b] = (uint64(1)<<n - 1) << uint(b)
			}
		}
	}
	return
}()

// syncAccessMarks points translated code at the observer's MarkTable
// (syncAccessLog), or at one that is always empty.
func (c *CPU) syncAccessMarks(al AccessLogger) {
	c.acc.marks = noMarks()
	if am, ok := al.(AccessMarker); ok {
		if t := am.AccessMarks(c); t != nil {
			c.acc.marks = t
		}
	}
	if c.acc.masks[0][0] == 0 {
		c.acc.masks = accMasks
	}
}
