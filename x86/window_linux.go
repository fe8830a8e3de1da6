//go:build linux && amd64

package x86

import (
	"math/bits"
	"os"
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The host window (issue 24, TTD_WINDOW=1): each address space reserves
// 2^winBits of host address space, in which the page of guest address a
// is visible at win + a while a TLB entry of that page exists, so that
// `ttd run`'s translated code takes an access's host address from the
// address alone (the TLB's register plus winOffset plus the address)
// instead of loading the entry's host field after comparing its tag.
//
// Pages' data live in one memfd, the arena, in 4 KiB slots (Page.Data
// points into the arena's own mapping; the rest of Page is on the Go
// heap). An address space gives the pages of each aligned run of extPages
// guest pages (a region) the slots of one extent of extPages slots, each
// page the slot at its offset in the region (its natural slot), so that
// the first TLB fill in a region shows the whole region with one mmap of
// its extent; a page that cannot have its natural slot (taken by a page
// shared since a fork, or a page made outside any address space) gets a
// slot of its own, shown with an mmap of one page over the region's.
const (
	winBits   = 40
	winPages  = 1 << (winBits - PageShift)
	extBits   = 9
	extPages  = 1 << extBits
	arenaSize = 64 << 30
	arenaSlot = arenaSize >> PageShift
	// winOffset is the distance from an address space's read TLB to its
	// window: both TLBs lie right below the window.
	winOffset = 2 * tlbSize << tlbEntryShift
)

// winOn turns the window on (EnableWindow): every Memory made after
// has one, and translated code without the prediction cache takes host
// addresses from it.
var winOn bool

// WindowOn reports whether address spaces have host windows (emu keeps
// its layout below 2^winBits then).
func WindowOn() bool { return winOn }

// EnableWindow turns host windows on for every address space made from
// now on (`ttd run`; before any Memory exists), and reports whether they
// are: false when the arena cannot be made.
func EnableWindow() bool {
	arena.once.Do(arenaInit)
	winOn = arena.ok
	return winOn
}

var arena struct {
	sync.Mutex
	once sync.Once
	ok   bool
	fd   int
	mem  []byte
	base uintptr
	// next is the first slot of no extent yet; single is the next
	// slot given to pages outside their natural slot, up to singleEnd.
	next, single, singleEnd uint32
	used                    []uint64 // a bit per slot
	// free are slots given back (freeSlot) that no region has as a
	// natural slot: singlePage takes them first.
	free []uint32
	// maps counts the windows' mappings (winMaps).
	maps int
	// refs counts the address spaces that have each extent as a
	// region's natural slots (window.ext); spare are extents no
	// address space has any more, for newExtent.
	refs  map[uint32]int32
	spare []uint32
	look  int // the next spare extent newExtent looks at
}

// Extents are used again: each one fresh puts 512 new pages into the
// memfd as its slots are first used (the memfd's pages are not huge: the
// host's shmem_enabled is "never"), and each new page took a page fault
// where Go first wrote it through the arena's mapping, and the memfd kept
// them all (freeSlot zeroes a slot, it does not give its page back): a
// tree of 40 bash processes made 29,000 page faults (main: 2,400). A
// released address space's extents are spare; newExtent takes one whose
// slots are all free but spareUsed, or makes one when none is (a slot
// still used, by a page another address space shares or one the GC has
// not collected yet, is not its region's natural slot then: the page
// there gets a single slot, newPage).
const spareUsed = 32

// winMaps bounds the windows' mappings, under the host's 65,530
// (vm.max_map_count) with room for Go's and ttd's own: past it a page
// stays out of the TLBs (every access to it goes through Go).
const winMaps = 50000

func arenaInit() {
	fd, err := unix.MemfdCreate("ttd-pages", unix.MFD_CLOEXEC)
	if err != nil {
		return
	}
	if unix.Ftruncate(fd, arenaSize) != nil {
		unix.Close(fd)
		return
	}
	b, err := unix.Mmap(fd, 0, arenaSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_NORESERVE)
	if err != nil {
		unix.Close(fd)
		return
	}
	arena.fd, arena.mem, arena.base, arena.ok = fd, b, uintptr(unsafe.Pointer(&b[0])), true
	arena.used = make([]uint64, arenaSlot/64)
	arena.refs = map[uint32]int32{}
}

// newExtent returns the first slot of a new extent, false when the
// arena is full: with spare, a spare one (at most spareUsed of its slots
// used, of spareLook spare ones looked at in turn) if there is one, else one
// never used (singlePage's: it hands its slots out in turn). The arena
// is locked.
func newExtent(spare bool) (uint32, bool) {
	for k := 0; spare && k < spareLook && len(arena.spare) > 0; k++ {
		n := len(arena.spare)
		i := arena.look % n
		arena.look = i + 1
		if b := arena.spare[i]; extUsed(b) <= spareUsed {
			arena.spare[i] = arena.spare[n-1]
			arena.spare = arena.spare[:n-1]
			return b, true
		}
	}
	if arena.next+extPages > arenaSlot {
		return 0, false
	}
	b := arena.next
	arena.next += extPages
	return b, true
}

const spareLook = 8

// extUsed counts the used slots of the extent from slot b.
func extUsed(b uint32) int {
	n := 0
	for _, u := range arena.used[b/64 : (b+extPages)/64] {
		n += bits.OnesCount64(u)
	}
	return n
}

// holdExtent and dropExtent count an address space's holding extent b
// as its natural slots; an extent no one holds is spare. The arena is
// locked.
func holdExtent(b uint32) { arena.refs[b]++ }

func dropExtent(b uint32) {
	if arena.refs[b]--; arena.refs[b] <= 0 {
		delete(arena.refs, b)
		arena.spare = append(arena.spare, b)
	}
}

// dropExtents drops every extent of w (its address space is released
// or gone). The arena is locked.
func (w *window) dropExtents() {
	for _, b := range w.ext {
		dropExtent(b)
	}
	w.ext = nil
}

// arenaPage returns the page of slot s, marking it used; the slot is
// given back when the page is no longer reachable (freeSlot).
func arenaPage(s uint32, natural bool) *Page {
	arena.used[s/64] |= 1 << (s % 64)
	p := &Page{Data: (*[PageSize]byte)(unsafe.Pointer(&arena.mem[uintptr(s)<<PageShift])), slot: s + 1}
	runtime.AddCleanup(p, freeSlot, s|boolBit(!natural)<<31)
	return p
}

func boolBit(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// freeSlot gives back the slot of a page no longer reachable (bit 31: a
// single slot, which goes to the free list). The slot is zeroed here, so
// that a free slot is always zero, as a new page must be; no window can
// show it with a TLB entry, since an entry keeps its page reachable
// through its address space's page table.
func freeSlot(x uint32) {
	s := x &^ (1 << 31)
	clear(arena.mem[uintptr(s)<<PageShift : uintptr(s+1)<<PageShift])
	arena.Lock()
	arena.used[s/64] &^= 1 << (s % 64)
	if x>>31 != 0 {
		arena.free = append(arena.free, s)
	}
	arena.Unlock()
}

// singlePage returns a page in a slot of its own. The arena is locked.
func singlePage() *Page {
	if n := len(arena.free); n > 0 {
		s := arena.free[n-1]
		arena.free = arena.free[:n-1]
		return arenaPage(s, false)
	}
	if arena.single == arena.singleEnd {
		b, ok := newExtent(false)
		if !ok {
			return nil
		}
		arena.single, arena.singleEnd = b, b+extPages
	}
	s := arena.single
	arena.single++
	return arenaPage(s, false)
}

// NewPage returns a new zeroed page that belongs to no address space
// yet (shared memory, a replay's pages).
func NewPage() *Page {
	if !winOn {
		return heapPage()
	}
	arena.once.Do(arenaInit)
	if !arena.ok {
		return heapPage()
	}
	arena.Lock()
	p := singlePage()
	arena.Unlock()
	if p == nil {
		return heapPage()
	}
	return p
}

// NewPage returns a new zeroed page for page number pn of m: in its
// natural slot when free.
func (m *Memory) NewPage(pn uint64) *Page { return m.newPage(pn) }

func (m *Memory) newPage(pn uint64) *Page {
	w := m.winState
	if w == nil {
		return NewPage()
	}
	r := pn >> extBits
	arena.Lock()
	defer arena.Unlock()
	b, ok := w.ext[r]
	if !ok {
		if b, ok = newExtent(true); !ok {
			return heapPage()
		}
		w.ext[r] = b
		holdExtent(b)
	}
	s := b + uint32(pn&(extPages-1))
	if arena.used[s/64]&(1<<(s%64)) == 0 {
		return arenaPage(s, true)
	}
	if p := singlePage(); p != nil {
		return p
	}
	return heapPage()
}

// winStats prints each window's mappings when its address space ends.
var winStats = os.Getenv("TTD_WINSTATS") != ""

// window is an address space's host window.
type window struct {
	mem []byte
	// ext is the extent of each region that has one (natural slots).
	ext map[uint64]uint32
	// shown is the extent each region's window shows, over are the
	// slots shown at single pages over it (and overN their count by
	// region).
	shown map[uint64]uint32
	over  map[uint64]uint32
	overN map[uint64]int32
	// maps counts the mappings this window may have made (arena.maps);
	// regionMaps and singleMaps count its mmaps, for TTD_WINSTATS.
	maps, regionMaps, singleMaps int
}

// newWindow reserves a window for m, when the window is on.
func (m *Memory) newWindow() {
	if !winOn {
		return
	}
	arena.once.Do(arenaInit)
	if !arena.ok {
		return
	}
	var b []byte
	arena.Lock()
	if n := len(winPool); n > 0 {
		b = winPool[n-1]
		winPool = winPool[:n-1]
	}
	arena.Unlock()
	if b == nil {
		var err error
		b, err = unix.Mmap(-1, 0, winOffset+1<<winBits, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
		if err != nil {
			return
		}
		if unix.Mprotect(b[:winOffset], unix.PROT_READ|unix.PROT_WRITE) != nil {
			unix.Munmap(b)
			return
		}
	}
	m.rtlb = (*[tlbSize]tlbEntry)(unsafe.Pointer(&b[0]))
	m.wtlb = (*[tlbSize]tlbEntry)(unsafe.Pointer(&b[wtlbOffset]))
	w := &window{mem: b, ext: map[uint64]uint32{}, shown: map[uint64]uint32{},
		over: map[uint64]uint32{}, overN: map[uint64]int32{}}
	m.winState = w
	m.win = uintptr(unsafe.Pointer(&b[winOffset]))
	// The window goes with its Memory: translated code reaches the TLBs
	// and the window only through a CPU, which holds its Memory.
	runtime.AddCleanup(m, unmapWindow, w)
}

// forkWindow gives n, a fork of m, m's natural slots.
func (m *Memory) forkWindow(n *Memory) {
	if m.winState == nil || n.winState == nil {
		return
	}
	arena.Lock()
	for r, b := range m.winState.ext {
		n.winState.ext[r] = b
		holdExtent(b)
	}
	arena.Unlock()
}

// releaseWindow takes m's window away when its address space ends
// (Release, after emptying the TLBs): the window's pages are unmapped,
// its reservation kept for the next address space (winPool), and m's
// TLBs become an empty pair that no page enters. Unmapping the window
// alone left its TLBs' 1 MiB right below a 1 TiB hole, too small for
// the next window: `xargs -n2 echo` of 400 lines ran out of host address
// space after 125 processes.
func (m *Memory) releaseWindow() {
	w := m.winState
	if w == nil {
		return
	}
	if winStats {
		println("window: region maps", w.regionMaps, "single maps", w.singleMaps)
	}
	b := w.mem
	w.mem = nil // (for unmapWindow)
	m.winState, m.win = nil, 0
	m.rtlb, m.wtlb = &releasedTLB[0], &releasedTLB[1]
	arena.Lock()
	arena.maps -= w.maps
	w.maps = 0
	w.dropExtents()
	pool := len(winPool) < winPoolMax
	if pool {
		winPool = append(winPool, b)
	}
	arena.Unlock()
	if !pool {
		unix.Munmap(b)
		return
	}
	// A fresh reservation over the window's mappings, in one call.
	unix.Syscall6(unix.SYS_MMAP, uintptr(unsafe.Pointer(&b[winOffset])), 1<<winBits, unix.PROT_NONE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE|unix.MAP_FIXED, ^uintptr(0), 0)
}

// winPool are reservations of released windows, their TLBs empty, for
// newWindow; releasedTLB is the TLB pair of released address spaces.
var (
	winPool     [][]byte
	releasedTLB [2][tlbSize]tlbEntry
)

const winPoolMax = 16

// unmapWindow unmaps the window of a Memory that is gone unreleased.
func unmapWindow(w *window) {
	arena.Lock()
	arena.maps -= w.maps
	w.dropExtents()
	b := w.mem
	arena.Unlock()
	if b != nil {
		unix.Munmap(b)
	}
}

// mmap shows the n slots from s at page pn of w, adding to the count of
// mappings (two for a mapping inside another, which splits it): false
// when the count is at its bound or the mmap fails.
func (w *window) mmap(pn uint64, s uint32, n int) bool {
	c := 1
	if n < extPages {
		c = 2
	}
	arena.Lock()
	full := arena.maps+c > winMaps
	if !full {
		arena.maps += c
		w.maps += c
	}
	arena.Unlock()
	if full {
		return false
	}
	_, _, e := unix.Syscall6(unix.SYS_MMAP, uintptr(unsafe.Pointer(&w.mem[0]))+winOffset+uintptr(pn<<PageShift), uintptr(n)<<PageShift,
		unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_FIXED, uintptr(arena.fd), uintptr(s)<<PageShift)
	if e != 0 {
		arena.Lock()
		arena.maps -= c
		w.maps -= c
		arena.Unlock()
		return false
	}
	return true
}

// winMap makes page p visible at page pn's place in m's window. It
// reports false when it cannot: the page must then stay out of the TLBs.
func (m *Memory) winMap(pn uint64, p *Page) bool {
	w := m.winState
	if w == nil || p.slot == 0 || pn >= winPages {
		return false
	}
	s := p.slot - 1
	r := pn >> extBits
	o, isOver := w.over[pn]
	if isOver {
		if o == s {
			return true
		}
	} else if b, ok := w.shown[r]; ok && b+uint32(pn&(extPages-1)) == s {
		return true
	}
	b, natural := w.ext[r]
	natural = natural && b+uint32(pn&(extPages-1)) == s
	if _, ok := w.shown[r]; !ok && natural {
		// The region's first page shown: the whole extent, replacing
		// single pages shown in it before.
		if !w.mmap(r<<extBits, b, extPages) {
			return false
		}
		w.regionMaps++
		w.shown[r] = b
		if w.overN[r] > 0 {
			for q := r << extBits; q < (r+1)<<extBits; q++ {
				if _, ok := w.over[q]; ok {
					delete(w.over, q)
					m.dropTLB(q)
				}
			}
			delete(w.overN, r)
		}
		return true
	}
	if natural {
		// Back to the region's own slot.
		if !w.mmap(pn, s, 1) {
			return false
		}
		w.singleMaps++
		if isOver {
			delete(w.over, pn)
			w.overN[r]--
		}
		return true
	}
	// A page outside its natural slot, and the pages after it in the
	// region whose slots follow its slot (pages mremap moved, shared
	// memory made in order), shown with one mmap.
	n := 1
	for q := pn + 1; q < (r+1)<<extBits && s+uint32(n) < arenaSlot; q++ {
		e, ok := m.pages[q]
		if !ok || e.page.slot != s+uint32(n)+1 {
			break
		}
		n++
	}
	if !w.mmap(pn, s, n) {
		return false
	}
	w.singleMaps++
	for k := 0; k < n; k++ {
		q := pn + uint64(k)
		if _, ok := w.over[q]; !ok {
			w.overN[r]++
		}
		w.over[q] = s + uint32(k)
	}
	return true
}
