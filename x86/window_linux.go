//go:build linux && amd64

package x86

import (
	"maps"
	"os"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The host window (issue 24): each address space reserves 2^winBits of
// host address space, in which the page of guest address a is visible
// at win + a while a TLB entry of that page exists, so that `ttd run`'s
// translated code takes an access's host address from the address alone
// (the TLB's register plus winOffset plus the address) instead of
// loading the entry's host field after comparing its tag.
//
// A page private to one address space (Memory.newPage: anonymous memory,
// a file's private mapping, a copy-on-write copy) has its data in the
// window itself, at win + its address, as qemu-user keeps guest memory:
// anonymous host memory, made readable and writable a 2 MiB region at a
// time over the reservation, so that a TLB fill maps nothing. A fork
// copies its parent's private pages into its own window. Pages that must
// be visible at two places or in two address spaces (shared memory, a
// file's shared mapping, pages made outside any address space: NewPage)
// live in 4 KiB slots of one memfd, the arena, and are shown in a window
// with an mmap of their slot (and of the pages after them whose slots
// follow) over the anonymous memory there.
//
// Session 28's window kept every page in the arena: each process faulted
// its window's pages in anew (two faults per 4 KiB page) and slots were
// reused only after the GC's cleanups. Here a released window keeps its
// memory for the next address space (winKeep), as Go's heap keeps its
// pages for main's: a tree's processes fault in almost nothing.
const (
	winBits    = 40
	winPages   = 1 << (winBits - PageShift)
	regionBits = 9 // 2 MiB regions of the window
	regionSize = PageSize << regionBits
	winRegions = winPages >> regionBits
	arenaSize  = 64 << 30
	arenaSlot  = arenaSize >> PageShift
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
	if winOn && !winFault {
		enableWinFault()
	}
	return winOn
}

// WinFaultOn reports whether translated reads take no TLB check
// (winfault_linux.go): code files keep such translations apart.
func WinFaultOn() bool { return winFault }

var arena struct {
	sync.Mutex
	once sync.Once
	ok   bool
	fd   int
	mem  []byte
	// next is the first slot never used; free are slots given back
	// (freeSlot), taken first.
	next uint32
	free []uint32
	// maps counts the windows' mappings of slots (winMaps).
	maps int
	// pool are the reservations of released windows (releaseWindow).
	pool []*winRes
}

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
	arena.fd, arena.mem, arena.ok = fd, b, true
}

// freeSlot gives back the slot of a page no longer reachable. The slot
// is zeroed here, so that a free slot is always zero, as a new page must
// be; no window can show it with a TLB entry, since an entry keeps its
// page reachable through its address space's page table.
func freeSlot(s uint32) {
	clear(arena.mem[uintptr(s)<<PageShift : uintptr(s+1)<<PageShift])
	arena.Lock()
	arena.free = append(arena.free, s)
	arena.Unlock()
}

// NewPage returns a new zeroed page that belongs to no address space
// yet (shared memory, a replay's pages): in a slot of the arena when
// the window is on, given back when the page is no longer reachable.
func NewPage() *Page {
	if !winOn {
		return heapPage()
	}
	arena.Lock()
	s, ok := takeFree(&arena.free, &arena.next, arenaSlot)
	arena.Unlock()
	if !ok {
		return heapPage()
	}
	p := &Page{Data: (*[PageSize]byte)(unsafe.Pointer(&arena.mem[uintptr(s)<<PageShift])), slot: s + 1}
	runtime.AddCleanup(p, freeSlot, s)
	return p
}

// takeFree takes the last of *free, else *next (counting it) while it
// is below end; false when neither is left.
func takeFree[T ~int | ~uint32](free *[]T, next *T, end T) (T, bool) {
	if n := len(*free); n > 0 {
		s := (*free)[n-1]
		*free = (*free)[:n-1]
		return s, true
	}
	if *next < end {
		*next++
		return *next - 1, true
	}
	return 0, false
}

// NewPage returns a new zeroed page private to m at page number pn: in
// m's window when it has one.
func (m *Memory) NewPage(pn uint64) *Page { return m.newPage(pn) }

func (m *Memory) newPage(pn uint64) *Page {
	if p := m.winPage(pn, true); p != nil {
		return p
	}
	return NewPage()
}

// winPage returns a page at pn's place in m's window (zeroed if zero),
// nil when m has no window there or its region cannot be made
// accessible.
func (m *Memory) winPage(pn uint64, zero bool) *Page {
	w := m.winState
	if w == nil || pn >= winPages {
		return nil
	}
	r := w.res
	ri := pn >> regionBits
	bit := uint64(1) << (ri % 64)
	addr := r.base + uintptr(pn)<<PageShift
	_, over := w.over[pn]
	if w.fault && !over && !w.noProt {
		// Page by page: the host protection is the guest's
		// (winfault_linux.go).
		if _, _, e := unix.Syscall(unix.SYS_MPROTECT, addr, PageSize, unix.PROT_READ|unix.PROT_WRITE); e != 0 {
			return nil
		}
	}
	if r.rw[ri/64]&bit == 0 {
		if !w.fault {
			if _, _, e := unix.Syscall(unix.SYS_MPROTECT, r.base+uintptr(ri)<<(regionBits+PageShift), regionSize, unix.PROT_READ|unix.PROT_WRITE); e != 0 {
				return nil
			}
		}
		r.rw[ri/64] |= bit
		r.regions++
	}
	d := (*[PageSize]byte)(r.mem[winOffset+uintptr(pn)<<PageShift:])
	if over {
		// A slot was shown here: anonymous memory again.
		if _, _, e := unix.Syscall6(unix.SYS_MMAP, addr, PageSize, unix.PROT_READ|unix.PROT_WRITE,
			unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED, ^uintptr(0), 0); e != 0 {
			return nil
		}
		delete(w.over, pn)
	} else if zero && r.dirty[ri/64]&bit != 0 {
		clear(d[:])
	} else {
		// Written now, the page faults in once: read first, it would
		// show the zero page, and fault again when written (python3 -c
		// pass: 4,800 page faults, 3,400 so).
		d[0] = 0
	}
	return &Page{Data: d}
}

// owns reports whether p is m's private page at pn, in m's window.
func (m *Memory) owns(pn uint64, p *Page) bool {
	return m.win != 0 && p.slot == 0 && uintptr(unsafe.Pointer(p.Data)) == m.win+uintptr(pn)<<PageShift
}

// winFreed notes that m's private page at pn is gone: its bytes stay
// until a new page there clears them, or Discard gives them back.
func (m *Memory) winFreed(pn uint64) {
	w := m.winState
	r := w.res
	ri := pn >> regionBits
	r.dirty[ri/64] |= 1 << (ri % 64)
	w.freed++
}

// Discard gives back the host memory of m's window in the pages
// [lo, hi), which hold no page any more (munmap), when at least
// discardMin of m's private pages went since the last Discard: a
// mapping made over a range where no page was (ld.so's loading a
// library over its reservation) keeps the memory a released window
// left there (bash x40 tree: 21,000 page faults with any 16 pages
// given back, 5,400 so).
func (m *Memory) Discard(lo, hi uint64) {
	w := m.winState
	if w == nil {
		return
	}
	hi = min(hi, winPages)
	if w.freed >= discardMin && lo < hi {
		unix.Madvise(w.res.mem[winOffset+lo<<PageShift:winOffset+hi<<PageShift], unix.MADV_DONTNEED)
	}
	w.freed = 0
}

// discardMin is the fewest pages Discard gives back: fewer are left for
// the next page there to clear (a system call costs more).
const discardMin = 16

// winStats prints each window's mappings when its address space ends.
var winStats = os.Getenv("TTD_WINSTATS") != ""

// winRes is a window's reservation: its TLBs, then the window, and the
// regions made accessible.
type winRes struct {
	all  []byte  // the reservation
	mem  []byte  // the TLBs and the window in it
	base uintptr // the window: &mem[winOffset]
	// rw has a bit for each region made readable and writable (regions
	// counts them); dirty one for each region where bytes of pages gone
	// may be left (winPage clears them).
	rw, dirty []uint64
	regions   int
}

// window is an address space's host window.
type window struct {
	res *winRes
	// over are the slots shown over the anonymous memory, by page.
	over map[uint64]uint32
	// maps counts the mappings this window may have made (arena.maps);
	// singleMaps counts its mmaps, for TTD_WINSTATS.
	maps, singleMaps int
	// freed counts the private pages gone since the last Discard.
	freed int
	// noProt is set while pages enter the window whose places were
	// made accessible together (forkProt, atCluster).
	noProt bool
	// fault is set when the window's host protection is the guest's,
	// page by page, and translated reads take no TLB check
	// (winfault_linux.go: from the start with TTD_WINFAULT=1, else
	// once the address space has run winFaultAfter instructions,
	// toFault); before, the window's regions are readable and
	// writable as a whole and reads check the TLB.
	fault bool
}

// newWindow reserves a window for m, when the window is on: a released
// one if there is (its memory faulted in already), else a fresh one.
func (m *Memory) newWindow() {
	if !winOn {
		return
	}
	var r *winRes
	arena.Lock()
	if n := len(arena.pool); n > 0 {
		// The last one kept with its memory, if any: one that went
		// over to host faults was not (toFault), and gcc's as and ld
		// after its cc1 faulted all their pages in anew.
		i := n - 1
		for k := n - 1; k >= 0; k-- {
			if arena.pool[k].regions > 0 {
				i = k
				break
			}
		}
		r = arena.pool[i]
		arena.pool = slices.Delete(arena.pool, i, i+1)
	}
	arena.Unlock()
	if r == nil {
		// The window starts at a multiple of 2 MiB, so that a region
		// can be one huge page.
		// A guard page follows it (at least): a read that runs past the
		// window's end from below faults (winfault_linux.go).
		all, err := unix.Mmap(-1, 0, winOffset+1<<winBits+regionSize+PageSize, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
		if err != nil {
			return
		}
		start := uintptr(unsafe.Pointer(&all[0]))
		off := (start+winOffset+regionSize-1)&^(regionSize-1) - winOffset - start
		b := all[off : off+winOffset+1<<winBits]
		if unix.Mprotect(b[:winOffset], unix.PROT_READ|unix.PROT_WRITE) != nil {
			unix.Munmap(all)
			return
		}
		r = &winRes{all: all, mem: b, base: uintptr(unsafe.Pointer(&b[winOffset])),
			rw: make([]uint64, winRegions/64), dirty: make([]uint64, winRegions/64)}
	}
	m.rtlb = (*[tlbSize]tlbEntry)(unsafe.Pointer(&r.mem[0]))
	m.wtlb = (*[tlbSize]tlbEntry)(unsafe.Pointer(&r.mem[wtlbOffset]))
	w := &window{res: r, over: map[uint64]uint32{}, fault: winFault && winFaultAfter == 0}
	m.winState = w
	m.win = r.base
	// The window goes with its Memory: translated code reaches the TLBs
	// and the window only through a CPU, which holds its Memory.
	runtime.AddCleanup(m, unmapWindow, w)
}

// forkPage gives n, a fork of m, a private copy of m's page p at pn:
// in n's window, or in a slot when n cannot have it there (p is at its
// place in m's window, which m's next address space takes over: n must
// not share it).
func (m *Memory) forkPage(n *Memory, pn uint64, p *Page, perm Perm) {
	np := n.winPage(pn, false)
	if np == nil {
		np = NewPage()
	}
	*np.Data = *p.Data
	n.pages[pn] = pte{np, perm}
}

// releaseWindow takes m's window away when its address space ends
// (Release, after emptying the TLBs), and m's TLBs become an empty pair
// that no page enters. The reservation is kept for the next address
// space (arena.pool), with its memory when that is small (winKeep) and
// shows no slot; else made one fresh reservation again. Unmapping the
// window alone left its TLBs' 1 MiB right below a 1 TiB hole, too small
// for the next window: `xargs -n2 echo` of 400 lines ran out of host
// address space after 125 processes.
func (m *Memory) releaseWindow() {
	w := m.winState
	if w == nil {
		return
	}
	r := w.res
	w.res = nil // (for unmapWindow)
	m.winState, m.win = nil, 0
	rt := releasedTLB()
	m.rtlb, m.wtlb = &rt[0], &rt[1]
	arena.Lock()
	arena.maps -= w.maps
	w.maps = 0
	// A window that went over to host faults (toFault) is not kept
	// with its memory, whose protection the next address space would
	// have to open again: its program ran long, so a fresh one costs
	// little by comparison.
	keep := len(w.over) <= winKeepOver && r.regions <= winKeep && (!w.fault || winFaultAfter == 0)
	kept := 0
	for _, q := range arena.pool {
		if q.regions > 0 {
			kept++
		}
	}
	keep = keep && kept < winKeepMax
	arena.Unlock()
	if winStats {
		println("window: regions", r.regions, "slot maps", w.singleMaps, "kept with its memory", keep)
	}
	// Made ready before it is in the pool, where another goroutine's
	// address space may take it.
	if keep && w.anonAgain(r) && (!w.fault || unix.Mprotect(r.mem[winOffset:], unix.PROT_NONE) == nil) {
		copy(r.dirty, r.rw)
	} else {
		// A fresh reservation over the window's mappings, in one call.
		unix.Syscall6(unix.SYS_MMAP, r.base, 1<<winBits, unix.PROT_NONE,
			unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE|unix.MAP_FIXED, ^uintptr(0), 0)
		clear(r.rw)
		clear(r.dirty)
		r.regions = 0
	}
	arena.Lock()
	pool := len(arena.pool) < winPoolMax
	if pool {
		arena.pool = append(arena.pool, r)
	}
	arena.Unlock()
	if !pool {
		unix.Munmap(r.all)
	}
}

// releasedTLB returns the TLB pair of released address spaces, made at
// the first release: as a global (1 MiB of pointers in the BSS) every
// collection scanned it, and the first one faulted its 256 pages in
// (about 0.5 ms of `ttd run /bin/true`'s 13).
var releasedTLB = sync.OnceValue(func() *[2][tlbSize]tlbEntry { return new([2][tlbSize]tlbEntry) })

// anonAgain makes the pages where w shows slots anonymous memory again,
// a run of them at a time, and reports whether it could.
func (w *window) anonAgain(r *winRes) bool {
	pns := slices.Sorted(maps.Keys(w.over))
	for i := 0; i < len(pns); {
		j := i + 1
		for j < len(pns) && pns[j] == pns[j-1]+1 {
			j++
		}
		if _, _, e := unix.Syscall6(unix.SYS_MMAP, r.base+uintptr(pns[i])<<PageShift, uintptr(j-i)<<PageShift, unix.PROT_READ|unix.PROT_WRITE,
			unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED, ^uintptr(0), 0); e != 0 {
			return false
		}
		i = j
	}
	clear(w.over)
	return true
}

// winPoolMax bounds the released reservations kept; winKeepMax those
// kept with their memory, each of at most winKeep regions (128 MiB) and
// winKeepOver pages where slots were shown (anonAgain).
const (
	winKeepOver = 1024
	winPoolMax  = 16
	winKeepMax  = 4
	winKeep     = 64
)

// unmapWindow unmaps the window of a Memory that is gone unreleased.
func unmapWindow(w *window) {
	arena.Lock()
	arena.maps -= w.maps
	r := w.res
	arena.Unlock()
	if r != nil {
		unix.Munmap(r.all)
	}
}

// mmap shows the n slots from s at page pn of w, adding to the count of
// mappings (two for each: it splits the anonymous memory around it):
// false when the count is at its bound or the mmap fails.
func (w *window) mmap(pn uint64, s uint32, n int) bool {
	arena.Lock()
	full := arena.maps+2 > winMaps
	if !full {
		arena.maps += 2
		w.maps += 2
	}
	arena.Unlock()
	if full {
		return false
	}
	_, _, e := unix.Syscall6(unix.SYS_MMAP, w.res.base+uintptr(pn<<PageShift), uintptr(n)<<PageShift,
		unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_FIXED, uintptr(arena.fd), uintptr(s)<<PageShift)
	if e != 0 {
		arena.Lock()
		arena.maps -= 2
		w.maps -= 2
		arena.Unlock()
		return false
	}
	return true
}

// winMap makes page p visible at page pn's place in m's window. It
// reports false when it cannot: the page must then stay out of the TLBs.
func (m *Memory) winMap(pn uint64, p *Page) bool {
	w := m.winState
	if w == nil || pn >= winPages {
		return false
	}
	if p.slot == 0 {
		return m.owns(pn, p)
	}
	s := p.slot - 1
	if o, ok := w.over[pn]; ok && o == s {
		return true
	}
	// The page's slot, and the pages after it in the region whose slots
	// follow (shared memory made in order, pages mremap moved), shown
	// with one mmap.
	n := 1
	end := (pn>>regionBits + 1) << regionBits
	for q := pn + 1; q < end && s+uint32(n) < arenaSlot; q++ {
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
		w.over[pn+uint64(k)] = s + uint32(k)
	}
	return true
}

// winSet keeps the host protection of page pn's place in m's window the
// guest's (winFault) as pn's table entry changes from old to *e: no
// longer readable there, it is made inaccessible. A page private to m
// that the guest may not read leaves the window for a slot first (Go
// reads its data through Page.Data, which must stay accessible).
func (m *Memory) winSet(pn uint64, old pte, e *pte) {
	w := m.winState
	if w == nil || !w.fault || pn >= winPages {
		return
	}
	m.winLeave(pn, e)
	s, over := w.over[pn]
	was := over || old.page != nil && m.owns(pn, old.page)
	now := e.page != nil && e.perm&PermRead != 0 && (m.owns(pn, e.page) || over && e.page.slot == s+1)
	if !was || now {
		return
	}
	addr := w.res.base + uintptr(pn)<<PageShift
	if over {
		// Anonymous memory again, as winPage expects where no slot is
		// shown.
		unix.Syscall6(unix.SYS_MMAP, addr, PageSize, unix.PROT_NONE,
			unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED, ^uintptr(0), 0)
		delete(w.over, pn)
		return
	}
	unix.Syscall(unix.SYS_MPROTECT, addr, PageSize, unix.PROT_NONE)
}

// forkProt makes the places of m's private pages accessible in n's
// window, n a fork of m, a run of pages per mprotect rather than one
// for each page forkPage copies (winFault): bash's forks copy 300-1,000
// pages each. done ends it.
func (m *Memory) forkProt(n *Memory) (done func()) {
	w := n.winState
	if w == nil || !w.fault || m.winState == nil {
		return func() {}
	}
	pns := make([]uint64, 0, len(m.pages))
	for pn, e := range m.pages {
		if m.owns(pn, e.page) {
			pns = append(pns, pn)
		}
	}
	if !w.open(pns) {
		return func() {} // page by page, then
	}
	w.noProt = true
	return func() { w.noProt = false }
}

// open makes the places of pages pns readable and writable in w, a run
// of pages per mprotect (pns is sorted here); false when one fails.
func (w *window) open(pns []uint64) bool {
	slices.Sort(pns)
	for i := 0; i < len(pns); {
		j := i + 1
		for j < len(pns) && pns[j] == pns[j-1]+1 {
			j++
		}
		if _, _, e := unix.Syscall(unix.SYS_MPROTECT, w.res.base+uintptr(pns[i])<<PageShift, uintptr(j-i)<<PageShift, unix.PROT_READ|unix.PROT_WRITE); e != 0 {
			return false
		}
		i = j
	}
	return true
}

// winCluster is the number of pages materialised together with
// winFault (atCluster): an aligned block.
const winCluster = 16

// atCluster materialises page pn and the pages of its aligned block of
// winCluster that are not yet, through Source, making their places in
// the window accessible with one mprotect, and inaccessible again where
// the guest may not read: page by page, each of bash x40's processes
// made 540 mprotects, which split the window's mapping into as many
// (21,000 mprotects: 100-200 ms) and each first read a host fault. It
// returns pn's entry, and false when it cannot (no window: at does it).
func (m *Memory) atCluster(pn uint64) (pte, bool) {
	w := m.winState
	if w == nil || !w.fault || pn >= winPages {
		return pte{}, false
	}
	// The pages of pn's block from pn's mapping (Near): a file's are
	// read with one pread (Clustering).
	lo, hi := pn, pn+1
	if m.Near != nil {
		b := pn &^ (winCluster - 1)
		for q := b; q < b+winCluster && q < winPages; q++ {
			if _, ok := m.pages[q]; !ok && m.Near(pn, q) {
				lo, hi = min(lo, q), max(hi, q+1)
			}
		}
	}
	base := w.res.base
	if _, _, e := unix.Syscall(unix.SYS_MPROTECT, base+uintptr(lo)<<PageShift, uintptr(hi-lo)<<PageShift, unix.PROT_READ|unix.PROT_WRITE); e != 0 {
		return pte{}, false
	}
	w.noProt = true
	m.cluster++
	m.inCluster = true
	for q := lo; q < hi; q++ {
		if _, ok := m.pages[q]; ok || q != pn && !m.Near(pn, q) {
			continue
		}
		p, perm := m.Source(q)
		if p == nil {
			continue
		}
		e := pte{p, perm}
		m.winSet(q, pte{}, &e)
		m.pages[q] = e
	}
	w.noProt = false
	m.inCluster = false
	visible := func(q uint64) bool {
		if _, ok := w.over[q]; ok {
			return true
		}
		return m.winReadable(q)
	}
	m.winRuns(lo, hi, func(q uint64) bool { return !visible(q) }, unix.PROT_NONE)
	return m.pages[pn], true
}

// winReadable reports whether page pn is m's private page, at its place
// in m's window, and the guest may read it.
func (m *Memory) winReadable(pn uint64) bool {
	e := m.pages[pn]
	return e.page != nil && e.perm&PermRead != 0 && m.owns(pn, e.page)
}

// winRuns gives the places of the pages in [lo, hi) for which in is
// true the host protection prot, a run of them per mprotect.
func (m *Memory) winRuns(lo, hi uint64, in func(pn uint64) bool, prot int) {
	base := m.winState.res.base
	for q := lo; q < hi; {
		if !in(q) {
			q++
			continue
		}
		r := q + 1
		for r < hi && in(r) {
			r++
		}
		unix.Syscall(unix.SYS_MPROTECT, base+uintptr(q)<<PageShift, uintptr(r-q)<<PageShift, uintptr(prot))
		q = r
	}
}

// winLeave moves page pn, whose table entry becomes *e, out of m's
// window into a slot when it is m's private page there and the guest
// may not read it (Go reads its data through Page.Data, which must
// stay accessible where the host protection is the guest's).
func (m *Memory) winLeave(pn uint64, e *pte) {
	if e.page != nil && e.perm&PermRead == 0 && m.owns(pn, e.page) {
		np := NewPage()
		*np.Data = *e.page.Data
		np.code = e.page.code
		e.page = np
		m.winFreed(pn)
	}
}

// toFault turns m's window over to host faults (window.fault): its
// host protection becomes the guest's, page by page, so that translated
// reads need no TLB check (jitModeFault). A short process never gets
// here (winFaultAfter): each page it touches would cost an mprotect,
// its pages would enter in blocks it does not all need, and its
// release would close what it opened (bash x40 took 1.28x the CPU
// with TTD_WINFAULT=1, session 30). It reports whether m's window is
// now in host-fault mode.
func (m *Memory) toFault() bool {
	w := m.winState
	if w == nil || !winFault {
		return false
	}
	if w.fault {
		return true
	}
	// Pages the guest may not read leave the window (winLeave), and
	// slots shown for pages not readable there are taken away.
	for pn, e := range m.pages {
		if e.perm&PermRead == 0 && m.owns(pn, e.page) {
			m.winLeave(pn, &e)
			m.pages[pn] = e
			m.dropTLB(pn)
		}
	}
	pns := make([]uint64, 0, len(m.pages))
	for pn, s := range w.over {
		e := m.pages[pn]
		if e.page != nil && e.perm&PermRead != 0 && e.page.slot == s+1 {
			pns = append(pns, pn)
			continue
		}
		unix.Syscall6(unix.SYS_MMAP, w.res.base+uintptr(pn)<<PageShift, PageSize, unix.PROT_NONE,
			unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED, ^uintptr(0), 0)
		delete(w.over, pn)
	}
	if unix.Mprotect(w.res.mem[winOffset:], unix.PROT_NONE) != nil {
		return false
	}
	for pn := range m.pages {
		if m.winReadable(pn) {
			pns = append(pns, pn)
		}
	}
	w.open(pns)
	w.fault = true
	winFaultSwitches++
	return true
}

// winFaulting reports whether m's window is in host-fault mode.
func (m *Memory) winFaulting() bool { return m.winState != nil && m.winState.fault }

// Clustering returns the number of the materialisation of a cluster of
// pages under way (atCluster), 0 when none: Source may read a file's
// bytes for the cluster's pages at once.
func (m *Memory) Clustering() uint64 {
	if !m.inCluster {
		return 0
	}
	return m.cluster
}
