package x86

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math/bits"
)

// Page geometry of the guest address space.
const (
	PageShift = 12
	PageSize  = 1 << PageShift
	pageMask  = PageSize - 1
)

// Perm is an address space's protection of a page.
type Perm uint8

// Page protections, as in mmap's PROT_ bits.
const (
	PermRead  Perm = 1
	PermWrite Perm = 2
	PermExec  Perm = 4
)

// Page is one guest page and its host backing. Its protection is not
// the page's but each address space's (Memory's page table): a page
// shared by several processes (MAP_SHARED, System V shared memory, or
// copy-on-write since a fork) may be writable in one and read-only in
// another, as Linux's page tables allow.
type Page struct {
	// Data is the page's contents: out of line, so that a page private
	// to an address space with a host window can be in the window
	// itself, and others in the window's arena (window_linux.go).
	Data *[PageSize]byte
	// code is set while decoded instructions from this page are cached;
	// a write to the page then goes through the slow path and invalidates them.
	code bool
	// cow counts the address spaces other than one that hold this page
	// since a Fork: while it is non-zero nobody writes the page in
	// place, the writer takes a private copy first (copy-on-write).
	cow int32
	// slot is the page's slot in the window's arena plus 1, 0 when its
	// data is on the Go heap or in a window (window_linux.go).
	slot uint32
}

// pageBuf is a Page and its data in one allocation, for pages outside
// the window's arena.
type pageBuf struct {
	p Page
	d [PageSize]byte
}

// heapPage returns a new zeroed page on the Go heap.
func heapPage() *Page {
	b := new(pageBuf)
	b.p.Data = &b.d
	return &b.p
}

// Fault is a guest memory access that the address space refuses.
type Fault struct {
	Addr   uint64
	Write  bool
	Exec   bool
	Mapped bool // the page exists but its protection forbids the access
	// NonCanonical is set for an address whose bits 63-47 are not all
	// equal: the hardware raises #GP (Linux: SIGSEGV, SI_KERNEL, no address).
	NonCanonical bool
}

func (f *Fault) Error() string {
	kind := "read"
	if f.Write {
		kind = "write"
	} else if f.Exec {
		kind = "execute"
	}
	why := "unmapped"
	if f.Mapped {
		why = "protection"
	}
	return fmt.Sprintf("%s fault at %#x (%s)", kind, f.Addr, why)
}

// tlbBits sizes the TLBs: 16,384 entries cover 64 MiB. zstd -12 of 3 MB
// (hash and chain tables of about 50 MB, touched at random) missed a
// 4,096-entry TLB 2.6M times, each a round trip from translated code
// through the interpreter, and a 16,384-entry one 0.15M times (CPU time
// 0.64x); each Memory holds two TLBs of 512 KiB.
//
// An entry is empty when its tag is noTag, or 0 anywhere but at index 0
// and at the last index (tlbEnds): only page 0 has index 0 and tag 0,
// and translated code compares the tag of the entry of an access's first
// page with the page of its last byte, which is page 0 for an access at
// the very top of the address space that wraps around, whose first page
// has the last index. So a new Memory's TLBs are
// the zeroed memory Go allocates them in, untouched; and the TLBs are
// emptied a chunk of tlbChunk entries (4 KiB) at a time, only the chunks
// an entry was entered into since (tlbDirty). A Memory used to write
// noTag into all 1 MiB when made, at a fork and when released: an
// `xargs -n2 echo` tree of 200 processes spent 6-8% of its CPU time on
// it (ttd run, interleaved, against 2,048-entry TLBs).
const (
	tlbBits = 14
	tlbSize = 1 << tlbBits
	tlbMask = tlbSize - 1
	noTag   = ^uint64(0)

	tlbChunkBits = 7
	tlbChunks    = tlbSize >> tlbChunkBits
)

// tlbDirty has a bit for each chunk of a TLB that may hold an entry.
type tlbDirty [tlbChunks / 64]uint64

// enter makes t's entry of page pn e, marking its chunk in d.
func (d *tlbDirty) enter(t *[tlbSize]tlbEntry, pn uint64, e tlbEntry) {
	i := pn & tlbMask
	c := i >> tlbChunkBits
	d[c/64] |= 1 << (c % 64)
	t[i] = e
}

// drop empties t's entry of page pn.
func (d *tlbDirty) drop(t *[tlbSize]tlbEntry, pn uint64) {
	i := pn & tlbMask
	c := i >> tlbChunkBits
	if d[c/64]&(1<<(c%64)) != 0 {
		t[i] = tlbEntry{tag: noTag}
	}
}

// empty empties every entry of t: the chunks marked in d, and the two
// entries where a zero entry would not be empty (tlbEnds).
func (d *tlbDirty) empty(t *[tlbSize]tlbEntry) {
	for w := range d {
		for b := d[w]; b != 0; b &= b - 1 {
			c := w*64 + bits.TrailingZeros64(b)
			clear(t[c<<tlbChunkBits : (c+1)<<tlbChunkBits])
		}
		d[w] = 0
	}
	tlbEnds(t)
}

// tlbEnds empties t's first and last entries with noTag (tlbBits).
func tlbEnds(t *[tlbSize]tlbEntry) {
	t[0] = tlbEntry{tag: noTag}
	t[tlbMask] = tlbEntry{tag: noTag}
}

// tlbEntry maps guest page number tag to its page. host is the host address of the
// page's data less the guest address of the page (tlbHit), so that
// translated code finds an access's host address with one add; the
// entry is 32 bytes, which translated code indexes with one shift and
// mask (tlbEntryShift). mark belongs to a recording's translated code
// (accmark.go): the address of the MarkPage of the entry's page, or 0;
// every entry made or emptied here starts with 0.
type tlbEntry struct {
	tag  uint64
	page *Page
	host uintptr
	mark uintptr
}

// PageSource supplies pages that the address space has not materialised
// yet, with the protection this address space gives them: emu answers
// from its mappings (zero pages, file contents) or returns nil when the
// address is not mapped.
type PageSource func(pn uint64) (*Page, Perm)

// pte is one entry of an address space's page table: the page and this
// address space's protection of it.
type pte struct {
	page *Page
	perm Perm
}

// Memory is a guest address space: pages with permissions, a software TLB
// for reads and one for writes, and the hooks that keep the code cache
// coherent. All threads of a process share one Memory; they run one at a
// time, so the TLBs need no locking.
type Memory struct {
	pages map[uint64]pte
	// rtlb and wtlb are one block, wtlb right after rtlb (wtlbOffset);
	// with the host window, the block is right below it (winOffset).
	rtlb *[tlbSize]tlbEntry
	wtlb *[tlbSize]tlbEntry
	// win is the host window's base (window_linux.go), 0 without one.
	win      uintptr
	winState *window
	// rdirty and wdirty are the chunks of rtlb and wtlb that may hold
	// entries.
	rdirty, wdirty tlbDirty

	// Source materialises pages on first touch; nil means every page
	// must be created with Map.
	Source PageSource
	// Near, if not nil, reports whether Source gives page q, as page
	// pn, as a new page private to this address space from pn's
	// mapping, readable: such pages are materialised together
	// (atCluster, Clustering).
	Near func(pn, q uint64) bool
	// cluster numbers atCluster's materialisations; inCluster is set
	// during one.
	cluster   uint64
	inCluster bool
	// codeWritten is called when a page holding cached code is written.
	codeWritten func(pn uint64)
	// watched are the pages never entered into the TLBs (watchpages.go).
	watched map[uint64]bool
}

// NewMemory returns an empty address space.
func NewMemory() *Memory {
	return newMemory(make(map[uint64]pte))
}

// newMemory returns an address space of pages with empty TLBs.
func newMemory(pages map[uint64]pte) *Memory {
	m := &Memory{pages: pages}
	m.newWindow()
	if m.rtlb == nil {
		b := new([2 * tlbSize]tlbEntry)
		m.rtlb, m.wtlb = (*[tlbSize]tlbEntry)(b[:tlbSize]), (*[tlbSize]tlbEntry)(b[tlbSize:])
	}
	tlbEnds(m.rtlb)
	tlbEnds(m.wtlb)
	return m
}

// FlushTLB forgets all cached translations (after munmap, mprotect…).
func (m *Memory) FlushTLB() {
	m.rdirty.empty(m.rtlb)
	m.wdirty.empty(m.wtlb)
}

// PageAt returns the materialised page with number pn, creating it through
// Source if needed, or nil.
func (m *Memory) PageAt(pn uint64) *Page { return m.at(pn).page }

// at returns page pn's table entry, materialising the page through
// Source if needed; its page is nil when pn is not mapped.
func (m *Memory) at(pn uint64) pte {
	if e, ok := m.pages[pn]; ok {
		return e
	}
	if m.Source == nil {
		return pte{}
	}
	if e, ok := m.atCluster(pn); ok {
		return e
	}
	p, perm := m.Source(pn)
	if p == nil {
		return pte{}
	}
	e := pte{p, perm}
	m.winSet(pn, pte{}, &e)
	m.pages[pn] = e
	return e
}

// Lookup returns the page if it is already materialised, without creating it.
func (m *Memory) Lookup(pn uint64) *Page { return m.pages[pn].page }

// PermOf returns this address space's protection of page pn, and false
// when the page is not materialised.
func (m *Memory) PermOf(pn uint64) (Perm, bool) {
	e, ok := m.pages[pn]
	return e.perm, ok
}

// SetPage installs p as page pn with protection perm (a nil p removes
// the page). A page shared with another address space since a Fork is
// released (the other keeps it).
func (m *Memory) SetPage(pn uint64, p *Page, perm Perm) {
	old := m.pages[pn].page
	if old != nil && old.code && m.codeWritten != nil {
		m.codeWritten(pn)
	}
	if old != nil && old != p {
		if old.cow > 0 {
			old.cow--
		} else if m.owns(pn, old) {
			m.winFreed(pn)
		}
	}
	m.setPage(pn, pte{p, perm})
}

// MovePage moves page pn to page to, which holds none, with its
// protection in this address space (mremap); the page stays counted as
// held. A page in m's host window is copied to its new place there
// (pages at their place need no mmap to be shown).
func (m *Memory) MovePage(pn, to uint64) {
	old := m.pages[pn]
	if old.page == nil {
		return
	}
	if old.page.code && m.codeWritten != nil {
		m.codeWritten(pn)
	}
	p := old.page
	if m.owns(pn, p) {
		// Copied before the page leaves pn, whose place in the window
		// may then be inaccessible (winSet).
		np := m.winPage(to, false)
		if np == nil {
			np = NewPage()
		}
		*np.Data = *p.Data
		m.winFreed(pn)
		p = np
	}
	m.setPage(pn, pte{})
	m.setPage(to, pte{p, old.perm})
}

func (m *Memory) setPage(pn uint64, e pte) {
	m.winSet(pn, m.pages[pn], &e)
	if e.page == nil {
		delete(m.pages, pn)
	} else {
		m.pages[pn] = e
	}
	m.dropTLB(pn)
}

// dropTLB empties the TLB entries where page pn would be.
func (m *Memory) dropTLB(pn uint64) {
	m.rdirty.drop(m.rtlb, pn)
	m.wdirty.drop(m.wtlb, pn)
}

// Protect gives the materialised pages in [lo, hi) page numbers the
// protection perm in this address space only (mprotect, SHM_RDONLY):
// other address spaces holding the same pages keep theirs. lostExec, if
// not nil, is called for each page whose execute permission this removes.
func (m *Memory) Protect(lo, hi uint64, perm Perm, lostExec func(pn uint64)) {
	set := func(pn uint64, e pte) {
		if e.perm == perm {
			return
		}
		if lostExec != nil && e.perm&PermExec != 0 && perm&PermExec == 0 {
			lostExec(pn)
		}
		m.setPage(pn, pte{e.page, perm})
	}
	if hi-lo > uint64(len(m.pages)) {
		for pn, e := range m.pages {
			if pn >= lo && pn < hi {
				set(pn, e) // (replacing an existing key's value while ranging is allowed)
			}
		}
		return
	}
	for pn := lo; pn < hi; pn++ {
		if e, ok := m.pages[pn]; ok {
			set(pn, e)
		}
	}
}

// Pages calls fn for every materialised page in [lo, hi) page numbers.
func (m *Memory) Pages(lo, hi uint64, fn func(pn uint64, p *Page)) {
	if hi-lo > uint64(len(m.pages)) {
		for pn, e := range m.pages {
			if pn >= lo && pn < hi {
				fn(pn, e.page)
			}
		}
		return
	}
	for pn := lo; pn < hi; pn++ {
		if e, ok := m.pages[pn]; ok {
			fn(pn, e.page)
		}
	}
}

// Fork returns a copy-on-write copy of the address space (fork(2)):
// the new Memory holds the same pages, and whichever side writes a
// page first writes a private copy of it. keep reports the pages that
// stay shared for writing (MAP_SHARED memory); it may be nil. The cost
// is one map entry per materialised page, whatever their contents, and
// a copy of each page in m's host window into the new Memory's (a
// window shows one address space's pages only). The new Memory has no
// Source yet.
func (m *Memory) Fork(keep func(pn uint64) bool) *Memory {
	// (maps.Clone copies the table as a whole: 3x faster than
	// inserting 65,536 pages one by one.)
	n := newMemory(maps.Clone(m.pages))
	done := m.forkProt(n)
	for pn, e := range m.pages {
		if m.owns(pn, e.page) {
			m.forkPage(n, pn, e.page, e.perm)
			continue
		}
		if keep == nil || !keep(pn) {
			e.page.cow++
		}
	}
	done()
	// This side's writes must now find out about the sharing.
	m.wdirty.empty(m.wtlb)
	return n
}

// Private returns page pn, materialising it and first replacing it by a
// private copy if it is shared copy-on-write with another address
// space, so that its contents may be changed; nil when the page is not
// mapped.
func (m *Memory) Private(pn uint64) *Page {
	e := m.at(pn)
	if e.page != nil && e.page.cow > 0 {
		return m.unshare(pn, e)
	}
	return e.page
}

// unshare replaces the copy-on-write page of e at pn by a private copy.
func (m *Memory) unshare(pn uint64, e pte) *Page {
	p := e.page
	np := m.newPage(pn)
	np.code = p.code
	*np.Data = *p.Data
	p.cow--
	m.pages[pn] = pte{np, e.perm}
	m.dropTLB(pn)
	return np
}

// Release drops every page (the address space is discarded), giving
// the pages shared with other address spaces back to them.
func (m *Memory) Release() {
	for _, e := range m.pages {
		if e.page.cow > 0 {
			e.page.cow--
		}
	}
	m.pages = make(map[uint64]pte)
	m.FlushTLB()
	m.releaseWindow()
}

// NumPages is the number of materialised pages.
func (m *Memory) NumPages() int { return len(m.pages) }

func (m *Memory) translate(addr uint64, write bool) *Page {
	pn := addr >> PageShift
	e := m.at(pn)
	p := e.page
	if p == nil {
		if a := int64(addr) >> 47; a != 0 && a != -1 {
			panic(&Fault{Addr: addr, Write: write, NonCanonical: true})
		}
		panic(&Fault{Addr: addr, Write: write})
	}
	if write {
		if e.perm&PermWrite == 0 {
			panic(&Fault{Addr: addr, Write: true, Mapped: true})
		}
		if p.cow > 0 {
			p = m.unshare(pn, e)
		}
		if p.code {
			p.code = false
			if m.codeWritten != nil {
				m.codeWritten(pn)
			}
		}
		if (m.watched == nil || !m.watched[pn]) && (!winOn || m.winMap(pn, p)) {
			m.wdirty.enter(m.wtlb, pn, tlbHit(pn, p))
		}
	} else {
		if e.perm&PermRead == 0 {
			panic(&Fault{Addr: addr, Mapped: true})
		}
		if (m.watched == nil || !m.watched[pn]) && (!winOn || m.winMap(pn, p)) {
			m.rdirty.enter(m.rtlb, pn, tlbHit(pn, p))
		}
	}
	return p
}

func (m *Memory) readByteSlow(a uint64) byte {
	e := m.rtlb[(a>>PageShift)&tlbMask]
	if e.tag == a>>PageShift {
		return e.page.Data[a&pageMask]
	}
	return m.translate(a, false).Data[a&pageMask]
}

func (m *Memory) writeByteSlow(a uint64, v byte) {
	e := m.wtlb[(a>>PageShift)&tlbMask]
	if e.tag == a>>PageShift {
		e.page.Data[a&pageMask] = v
		return
	}
	m.translate(a, true).Data[a&pageMask] = v
}

func (m *Memory) readSlow(a uint64, size int) uint64 {
	if a&pageMask <= uint64(PageSize-size) {
		p := m.translate(a, false)
		return loadLE(p.Data[a&pageMask:], size)
	}
	// Crosses a page: check both pages before reading anything. A fault
	// on the second page is at its first byte, as the hardware reports.
	m.translate(a, false)
	m.translate((a+uint64(size)-1)&^pageMask, false)
	var v uint64
	for i := 0; i < size; i++ {
		v |= uint64(m.readByteSlow(a+uint64(i))) << (8 * i)
	}
	return v
}

func (m *Memory) writeSlow(a uint64, size int, v uint64) {
	if a&pageMask <= uint64(PageSize-size) {
		p := m.translate(a, true)
		storeLE(p.Data[a&pageMask:], size, v)
		return
	}
	m.translate(a, true)
	m.translate((a+uint64(size)-1)&^pageMask, true)
	for i := 0; i < size; i++ {
		m.writeByteSlow(a+uint64(i), byte(v>>(8*i)))
	}
}

func loadLE(b []byte, size int) uint64 {
	switch size {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

func storeLE(b []byte, size int, v uint64) {
	switch size {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, v)
	}
}

// Read8 reads guest memory; an access fault panics with *Fault, which the
// execution loop turns into an exit. Outside the loop use ReadBytes.
func (m *Memory) Read8(a uint64) uint8 {
	e := m.rtlb[(a>>PageShift)&tlbMask]
	if e.tag == a>>PageShift {
		return e.page.Data[a&pageMask]
	}
	return uint8(m.readSlow(a, 1))
}

// Read16 reads a little-endian 16-bit value (see Read8).
func (m *Memory) Read16(a uint64) uint16 {
	e := m.rtlb[(a>>PageShift)&tlbMask]
	if e.tag == a>>PageShift && a&pageMask <= PageSize-2 {
		return binary.LittleEndian.Uint16(e.page.Data[a&pageMask:])
	}
	return uint16(m.readSlow(a, 2))
}

// Read32 reads a little-endian 32-bit value (see Read8).
func (m *Memory) Read32(a uint64) uint32 {
	e := m.rtlb[(a>>PageShift)&tlbMask]
	if e.tag == a>>PageShift && a&pageMask <= PageSize-4 {
		return binary.LittleEndian.Uint32(e.page.Data[a&pageMask:])
	}
	return uint32(m.readSlow(a, 4))
}

// Read64 reads a little-endian 64-bit value (see Read8).
func (m *Memory) Read64(a uint64) uint64 {
	e := m.rtlb[(a>>PageShift)&tlbMask]
	if e.tag == a>>PageShift && a&pageMask <= PageSize-8 {
		return binary.LittleEndian.Uint64(e.page.Data[a&pageMask:])
	}
	return m.readSlow(a, 8)
}

// Write8 writes guest memory (see Read8).
func (m *Memory) Write8(a uint64, v uint8) {
	e := m.wtlb[(a>>PageShift)&tlbMask]
	if e.tag == a>>PageShift {
		e.page.Data[a&pageMask] = v
		return
	}
	m.writeSlow(a, 1, uint64(v))
}

// Write16 writes a little-endian 16-bit value (see Read8).
func (m *Memory) Write16(a uint64, v uint16) {
	e := m.wtlb[(a>>PageShift)&tlbMask]
	if e.tag == a>>PageShift && a&pageMask <= PageSize-2 {
		binary.LittleEndian.PutUint16(e.page.Data[a&pageMask:], v)
		return
	}
	m.writeSlow(a, 2, uint64(v))
}

// Write32 writes a little-endian 32-bit value (see Read8).
func (m *Memory) Write32(a uint64, v uint32) {
	e := m.wtlb[(a>>PageShift)&tlbMask]
	if e.tag == a>>PageShift && a&pageMask <= PageSize-4 {
		binary.LittleEndian.PutUint32(e.page.Data[a&pageMask:], v)
		return
	}
	m.writeSlow(a, 4, uint64(v))
}

// Write64 writes a little-endian 64-bit value (see Read8).
func (m *Memory) Write64(a uint64, v uint64) {
	e := m.wtlb[(a>>PageShift)&tlbMask]
	if e.tag == a>>PageShift && a&pageMask <= PageSize-8 {
		binary.LittleEndian.PutUint64(e.page.Data[a&pageMask:], v)
		return
	}
	m.writeSlow(a, 8, v)
}

// Read reads size (1, 2, 4 or 8) bytes.
func (m *Memory) Read(a uint64, size int) uint64 {
	switch size {
	case 1:
		return uint64(m.Read8(a))
	case 2:
		return uint64(m.Read16(a))
	case 4:
		return uint64(m.Read32(a))
	}
	return m.Read64(a)
}

// Write writes size (1, 2, 4 or 8) bytes.
func (m *Memory) Write(a uint64, size int, v uint64) {
	switch size {
	case 1:
		m.Write8(a, uint8(v))
	case 2:
		m.Write16(a, uint16(v))
	case 4:
		m.Write32(a, uint32(v))
	default:
		m.Write64(a, v)
	}
}

// catch turns a *Fault panic into an error.
func catch(err *error) {
	if r := recover(); r != nil {
		f, ok := r.(*Fault)
		if !ok {
			panic(r)
		}
		*err = f
	}
}

// ReadBytes copies guest memory at a into b, checking permissions as a
// user-mode read would. It returns a *Fault for the first inaccessible byte.
func (m *Memory) ReadBytes(a uint64, b []byte) (err error) {
	defer catch(&err)
	for len(b) > 0 {
		p := m.translate(a, false)
		n := copy(b, p.Data[a&pageMask:])
		b = b[n:]
		a += uint64(n)
	}
	return nil
}

// WriteBytes copies b into guest memory at a, checking permissions.
func (m *Memory) WriteBytes(a uint64, b []byte) (err error) {
	defer catch(&err)
	// Check every page first so a failing write changes nothing.
	for x := a &^ pageMask; x < a+uint64(len(b)); x += PageSize {
		m.translate(x, true)
	}
	for len(b) > 0 {
		p := m.translate(a, true)
		n := copy(p.Data[a&pageMask:], b)
		b = b[n:]
		a += uint64(n)
	}
	return nil
}

// ReadString reads a NUL-terminated string of at most max bytes.
func (m *Memory) ReadString(a uint64, max int) (s string, err error) {
	defer catch(&err)
	var buf []byte
	for len(buf) < max {
		c := m.readByteSlow(a)
		if c == 0 {
			return string(buf), nil
		}
		buf = append(buf, c)
		a++
	}
	return string(buf), fmt.Errorf("string at %#x longer than %d bytes", a, max)
}

// Poke writes b at a ignoring page protections (the loader and the kernel
// side of syscalls use it); pages must be mapped.
func (m *Memory) Poke(a uint64, b []byte) error {
	for len(b) > 0 {
		p := m.Private(a >> PageShift)
		if p == nil {
			return &Fault{Addr: a, Write: true}
		}
		if p.code {
			p.code = false
			if m.codeWritten != nil {
				m.codeWritten(a >> PageShift)
			}
			m.wtlb[(a>>PageShift)&tlbMask] = tlbEntry{tag: noTag}
		}
		n := copy(p.Data[a&pageMask:], b)
		b = b[n:]
		a += uint64(n)
	}
	return nil
}

// Peek reads guest memory ignoring page protections.
func (m *Memory) Peek(a uint64, b []byte) error {
	for len(b) > 0 {
		p := m.PageAt(a >> PageShift)
		if p == nil {
			return &Fault{Addr: a}
		}
		n := copy(b, p.Data[a&pageMask:])
		b = b[n:]
		a += uint64(n)
	}
	return nil
}
