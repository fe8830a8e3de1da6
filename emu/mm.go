package emu

import (
	"fmt"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"ttd/x86"
)

// Address-space layout, as Linux lays out an x86-64 process without
// address-space randomisation.
const (
	pageSize = x86.PageSize
	// taskSize is the end of the user address space.
	taskSize = 0x7ffffffff000
	// stackMax is the stack size limit (RLIMIT_STACK); the whole range is
	// reserved at start and materialised page by page as it is touched.
	stackMax = 8 << 20
	// stackExpand is how far below its arguments Linux maps the stack
	// at execve (setup_arg_pages).
	stackExpand = 128 << 10
	// mmapMin is vm.mmap_min_addr.
	mmapMin = 0x10000
	// noFileEnd marks a mapping whose file contents are not truncated.
	noFileEnd = ^uint64(0)
)

// The layout's places: Linux's, or below 2^40 with x86's host window
// (UseHostWindow).
var (
	// stackTop is the end of the main thread's stack.
	stackTop uint64 = taskSize
	// mmapBase is where top-down mmap allocation starts: below the stack
	// and its 128 MiB gap.
	mmapBase = stackTop - 128<<20
	// etDynBase is ELF_ET_DYN_BASE, where PIE programs are loaded.
	etDynBase uint64 = 0x555555554000
)

// UseHostWindow turns on x86's host window for the address spaces made
// from now on (`ttd run`, before any process exists; x86.EnableWindow),
// and reports whether it is on. Translated code sees the pages below
// 2^40 only through the window (above it every access goes through Go),
// so the places the kernel chooses move below it: the stack ends at
// 1 TiB, mmap allocates down from there and PIE programs load at
// 0x5555554000. The address space still ends at taskSize: a hint or
// MAP_FIXED above 1 TiB is honoured, and findFree goes above the stack
// when the space below is full.
func UseHostWindow() bool {
	if !x86.EnableWindow() {
		return false
	}
	stackTop = 0xfffffff000
	// 160 MiB below the stack rather than Linux's 128 (both fixed here,
	// where Linux randomises them): with 128, the top of the mmap area
	// and the top of the stack have the same TLB index (tlbBits: a
	// period of 64 MiB), and node's loop, its V8 heap right under the
	// mmap base, left translated code on 11.6M TLB misses, not 0.5M.
	mmapBase = stackTop - 160<<20
	etDynBase = 0x5555554000
	return true
}

func pageDown(a uint64) uint64 { return a &^ (pageSize - 1) }
func pageUp(a uint64) uint64   { return (a + pageSize - 1) &^ (pageSize - 1) }

// mappedFile is a host file backing one or more mappings. Its pages are
// copied into guest memory when first touched; what the program writes
// through a shared mapping goes back to the file (mm_shared.go), later
// writes to the file are not seen through the mapping.
type mappedFile struct {
	fd       int
	path     string
	dev, ino uint64 // the host file's, for /proc/PID/maps
	refs     int
	// shared are the file's pages every MAP_SHARED mapping of it in
	// the machine holds (nil for a private mapping).
	shared *filePages
}

func (f *mappedFile) ref() *mappedFile {
	if f != nil {
		f.refs++
	}
	return f
}

func (f *mappedFile) unref() {
	if f == nil {
		return
	}
	f.refs--
	if f.refs == 0 {
		unix.Close(f.fd)
		f.shared.unuse()
	}
}

// vma is one mapping: a page-aligned range with one protection and one
// backing (anonymous zero pages or a file).
type vma struct {
	start, end uint64
	prot       int // PROT_ bits as the guest asked
	shared     bool
	file       *mappedFile
	off        uint64 // file offset of start
	fileEnd    uint64 // addresses at or past fileEnd read as zeros (ELF bss)
	name       string // "[heap]", "[stack]" or the file's path
	// shm is the System V segment the mapping attaches (off is then
	// the offset in it), whose pages it shares.
	shm *shmSegment
	// anon is the anonymous shared memory a MAP_SHARED|MAP_ANONYMOUS
	// mapping shows (off is then the offset in it), nil for others.
	anon *anonShared
}

// object names the shared memory v shows, and the offset of v.start in
// it (Region.Obj, Region.Off): 0 for a private mapping.
func (v *vma) object() (obj, off uint64) {
	switch {
	case v.shm != nil:
		return v.shm.obj, v.off
	case v.anon != nil:
		return v.anon.obj, v.off
	case v.shared && v.file != nil && v.file.shared != nil:
		return v.file.shared.obj, v.off
	}
	return 0, 0
}

func (v *vma) String() string {
	p := []byte("---p")
	if v.prot&unix.PROT_READ != 0 {
		p[0] = 'r'
	}
	if v.prot&unix.PROT_WRITE != 0 {
		p[1] = 'w'
	}
	if v.prot&unix.PROT_EXEC != 0 {
		p[2] = 'x'
	}
	if v.shared {
		p[3] = 's'
	}
	var off, dev, ino uint64
	if v.file != nil {
		off, dev, ino = v.off, v.file.dev, v.file.ino
	}
	// The kernel's layout (fs/proc/task_mmu.c): at least 8 hex digits,
	// and a name starts in column 74.
	s := fmt.Sprintf("%08x-%08x %s %08x %02x:%02x %d ", v.start, v.end, p, off, unix.Major(dev), unix.Minor(dev), ino)
	if v.name != "" {
		s = fmt.Sprintf("%-72s %s", s, v.name)
	}
	return s
}

// newMappedFile keeps a duplicate of host descriptor fd for a mapping of
// the file; name is the file's path as the kernel gives it.
func newMappedFile(fd int, name string) (*mappedFile, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	h, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return &mappedFile{fd: h, path: name, dev: st.Dev, ino: st.Ino, refs: 1}, nil
}

// perm is the page permission for a protection: x86 cannot make a page
// writable or executable without making it readable.
func perm(prot int) x86.Perm {
	var p x86.Perm
	if prot&unix.PROT_READ != 0 {
		p |= x86.PermRead
	}
	if prot&unix.PROT_WRITE != 0 {
		p |= x86.PermWrite | x86.PermRead
	}
	if prot&unix.PROT_EXEC != 0 {
		p |= x86.PermExec | x86.PermRead
	}
	return p
}

// MM is a process's address space policy on top of x86.Memory: a sorted
// list of VMAs, the program break and the mmap allocator. Pages are
// materialised lazily by Memory.Source, so a large PROT_NONE reservation
// costs one VMA, not one page per reserved page.
type MM struct {
	Mem  *x86.Memory
	Code *x86.CodeCache

	vmas []*vma
	gen  uint64 // counts changes to vmas (Gen)
	// users counts the processes using the address space beyond the
	// first (clone with CLONE_VM, vfork).
	users    int
	brkStart uint64
	brk      uint64
	// stackLow is where Linux's stack mapping started after execve:
	// 128 KiB below the page of the lowest argument string. It grows
	// down as the program touches pages below (Maps).
	stackLow uint64
	pristine sharedPages // pages of shared file mappings as read (mm_shared.go)
	ahead    readAhead   // a file's bytes read for x86's cluster of pages
	// dropped are the ranges whose contents were discarded since an
	// observer last asked (Dropped).
	dropped []Range
}

// Gen counts the changes to the address space's regions: Regions returns
// the same list while Gen stays the same.
func (mm *MM) Gen() uint64 { return mm.gen }

// NewMM returns an empty address space, whose code cache shares its
// decoded blocks through a store of its own, dormant until the process
// forks or execs (x86.NewDormantCodeStore).
func NewMM() *MM { return newMM(x86.NewDormantCodeStore()) }

// newMM returns an empty address space whose code cache shares decoded
// blocks through store: the address spaces of one machine share one
// (fork, exec), so that a process tree decodes its common code once.
func newMM(store *x86.CodeStore) *MM {
	mm := &MM{Mem: x86.NewMemory()}
	mm.Code = x86.NewCodeCache(mm.Mem)
	mm.Code.ShareWith(store)
	mm.Mem.Source = mm.source
	mm.Mem.Near = mm.near
	return mm
}

// near reports whether source gives page q, as page pn, as a new page
// private to the address space from pn's mapping, which the guest may
// read (x86.Memory.Near).
func (mm *MM) near(pn, q uint64) bool {
	v := mm.find(pn << x86.PageShift)
	a := q << x86.PageShift
	return v != nil && !v.shared && v.shm == nil && v.prot&unix.PROT_READ != 0 && a >= v.start && a < v.end
}

// preadFull reads b from fd at off; what lies past the file's end stays.
func preadFull(fd int, b []byte, off int64) {
	for len(b) > 0 {
		k, err := unix.Pread(fd, b, off)
		if err == unix.EINTR {
			continue
		}
		if k <= 0 || err != nil {
			return // past the end of the file: zeros
		}
		b = b[k:]
		off += int64(k)
	}
}

// readAhead keeps the bytes of a file read for the pages of one of
// x86's clusters (Memory.Clustering): the neighbours of a page come from
// one pread, and no guest code runs between them (the file cannot
// change).
type readAhead struct {
	cluster uint64
	file    *mappedFile
	off     int64
	n       int
	buf     []byte
}

// readAheadSize is what one pread reads ahead: x86's cluster.
const readAheadSize = 16 << x86.PageShift

// read fills b with the file's bytes at off, from the bytes read ahead
// in this cluster or read now; false when not in a cluster.
func (r *readAhead) read(cluster uint64, f *mappedFile, b []byte, off int64) bool {
	if cluster == 0 {
		return false
	}
	if r.cluster != cluster || r.file != f || off < r.off || off+int64(len(b)) > r.off+readAheadSize {
		if r.buf == nil {
			r.buf = make([]byte, readAheadSize)
		}
		r.cluster, r.file, r.off = cluster, f, off
		clear(r.buf)
		r.n = 0
		b := r.buf
		for len(b) > 0 {
			k, err := unix.Pread(f.fd, b, off+int64(r.n))
			if err == unix.EINTR {
				continue
			}
			if k <= 0 || err != nil {
				break
			}
			b = b[k:]
			r.n += k
		}
	}
	copy(b, r.buf[off-r.off:])
	return true
}

// fork returns a copy of the address space for a child process: the
// same mappings, and the pages shared copy-on-write (pages of shared
// mappings, anonymous or of a file, stay shared for writing, with their
// pristine copies: mm_shared.go).
func (mm *MM) fork() *MM {
	mm.Code.WakeStore()
	var shared []*vma
	for _, v := range mm.vmas {
		if v.shared {
			shared = append(shared, v)
			if v.anon != nil || v.shm != nil {
				continue // (the child's come from the object)
			}
			// Both processes must see one page: make them all exist.
			for a := v.start; a < v.end; a += pageSize {
				mm.Mem.PageAt(a >> x86.PageShift)
			}
		}
	}
	var keep func(pn uint64) bool
	if len(shared) > 0 {
		keep = func(pn uint64) bool {
			a := pn << x86.PageShift
			for _, v := range shared {
				if a >= v.start && a < v.end {
					return true
				}
			}
			return false
		}
	}
	n := &MM{Mem: mm.Mem.Fork(keep), brkStart: mm.brkStart, brk: mm.brk, stackLow: mm.stackLow, gen: mm.gen}
	if len(mm.pristine) > 0 {
		n.pristine = make(sharedPages, len(mm.pristine))
		for pn, c := range mm.pristine {
			n.pristine[pn] = c // one copy for the one shared page
		}
	}
	n.Code = x86.NewCodeCache(n.Mem)
	n.Code.ShareWith(mm.Code.Store())
	n.Code.UseCodeFile(mm.Code.CodeFile(), n.fileCode)
	n.Mem.Source = n.source
	n.Mem.Near = n.near
	n.vmas = make([]*vma, len(mm.vmas))
	for i, v := range mm.vmas {
		w := *v
		w.file.ref()
		n.vmas[i] = &w
	}
	return n
}

// release drops one process's use of the address space; the last one
// unmaps everything.
func (mm *MM) release() {
	if mm.users > 0 {
		mm.users--
		return
	}
	mm.Code.SaveCodeFile()
	mm.writeBack(0, taskSize) // shared file mappings reach their files at exit
	for _, v := range mm.vmas {
		v.file.unref()
	}
	mm.vmas = nil
	mm.gen++
	mm.Code.Discard()
	mm.Mem.Release()
}

// fileCode reports whether pc is in a private, executable, unwritable
// mapping of a file: code worth keeping in the persistent code file
// (x86.CodeFile), which checks the bytes again when it is used.
func (mm *MM) fileCode(pc uint64) bool {
	v := mm.find(pc)
	return v != nil && v.file != nil && v.shm == nil && !v.shared &&
		v.prot&unix.PROT_EXEC != 0 && v.prot&unix.PROT_WRITE == 0
}

// source materialises page pn from its VMA: zeros, or the file's bytes.
func (mm *MM) source(pn uint64) (*x86.Page, x86.Perm) {
	addr := pn << x86.PageShift
	v := mm.find(addr)
	if v == nil {
		return nil, 0
	}
	if v.shm != nil {
		return v.shm.page((v.off + addr - v.start) >> x86.PageShift), perm(v.prot)
	}
	if v.anon != nil {
		return v.anon.page((v.off + addr - v.start) >> x86.PageShift), perm(v.prot)
	}
	var fp *filePages
	if v.shared && v.file != nil {
		fp = v.file.shared
	}
	idx := (v.off + addr - v.start) >> x86.PageShift
	if pg := fp.page(idx); pg != nil {
		// Another mapping of the file has the page: the same one,
		// whatever the protection each mapping gives it.
		mm.keepPristine(pn, pg)
		return pg, perm(v.prot)
	}
	// A shared mapping's page may be shown at other places: not in the
	// host window (x86.NewPage).
	var p *x86.Page
	if v.shared {
		p = x86.NewPage()
	} else {
		p = mm.Mem.NewPage(pn)
	}
	if v.file != nil && addr < v.fileEnd {
		n := uint64(pageSize)
		if v.fileEnd-addr < n {
			n = v.fileEnd - addr
		}
		off := int64(v.off + addr - v.start)
		if !v.shared && mm.ahead.read(mm.Mem.Clustering(), v.file, p.Data[:n], off) {
			// (from the pages read ahead for x86's cluster)
		} else {
			preadFull(v.file.fd, p.Data[:n], off)
		}
		if v.shared {
			mm.keepPristine(pn, p)
		}
	}
	fp.keep(idx, p)
	return p, perm(v.prot)
}

// find returns the VMA containing addr, or nil.
func (mm *MM) find(addr uint64) *vma {
	i := sort.Search(len(mm.vmas), func(i int) bool { return mm.vmas[i].end > addr })
	if i < len(mm.vmas) && mm.vmas[i].start <= addr {
		return mm.vmas[i]
	}
	return nil
}

// index returns the index of the first VMA ending after addr.
func (mm *MM) index(addr uint64) int {
	return sort.Search(len(mm.vmas), func(i int) bool { return mm.vmas[i].end > addr })
}

// isFree reports whether no VMA overlaps [lo, hi).
func (mm *MM) isFree(lo, hi uint64) bool {
	i := mm.index(lo)
	return i == len(mm.vmas) || mm.vmas[i].start >= hi
}

// mapped reports whether [lo, hi) is entirely covered by VMAs.
func (mm *MM) mapped(lo, hi uint64) bool {
	for a := lo; a < hi; {
		v := mm.find(a)
		if v == nil {
			return false
		}
		a = v.end
	}
	return true
}

// findFree returns the highest free range of length bytes below
// mmapBase (top-down allocation, as Linux does), or, under the host
// window, above its stack when none is.
func (mm *MM) findFree(length uint64) (uint64, bool) {
	if a, ok := mm.findFreeBelow(length, mmapBase); ok || stackTop == taskSize {
		return a, ok
	}
	return mm.findFreeBelow(length, taskSize) // above the host window's stack
}

// split makes sure a VMA boundary exists at addr.
func (mm *MM) split(addr uint64) {
	mm.gen++
	i := mm.index(addr)
	if i == len(mm.vmas) {
		return
	}
	v := mm.vmas[i]
	if v.start >= addr {
		return
	}
	w := *v
	w.start = addr
	if w.file != nil {
		w.off += addr - v.start
		w.file.ref()
	} else if w.shm != nil || w.anon != nil {
		w.off += addr - v.start
	}
	v.end = addr
	mm.vmas = append(mm.vmas, nil)
	copy(mm.vmas[i+2:], mm.vmas[i+1:])
	mm.vmas[i+1] = &w
}

// dropPages forgets the materialised pages of [lo, hi); they come back
// from their VMA (zeros or file contents) when touched again.
func (mm *MM) dropPages(lo, hi uint64) {
	mm.noteDropped(lo, hi)
	mm.writeBack(lo, hi)
	mm.forgetPristine(lo, hi)
	var pns []uint64
	mm.Mem.Pages(lo>>x86.PageShift, hi>>x86.PageShift, func(pn uint64, p *x86.Page) { pns = append(pns, pn) })
	for _, pn := range pns {
		mm.Code.InvalidatePage(pn)
		mm.Mem.SetPage(pn, nil, 0)
	}
	mm.Mem.Discard(lo>>x86.PageShift, hi>>x86.PageShift)
}

// unmap removes every mapping in [lo, hi).
func (mm *MM) unmap(lo, hi uint64) {
	mm.gen++
	if lo >= hi {
		return
	}
	mm.split(lo)
	mm.split(hi)
	mm.writeBack(lo, hi) // before the mappings and their files go
	i := mm.index(lo)
	j := i
	for j < len(mm.vmas) && mm.vmas[j].start < hi {
		mm.vmas[j].file.unref()
		j++
	}
	mm.vmas = append(mm.vmas[:i], mm.vmas[j:]...)
	mm.dropPages(lo, hi)
}

// insert adds v, whose range must be free, merging it with compatible
// neighbours.
func (mm *MM) insert(v *vma) {
	mm.gen++
	i := mm.index(v.start)
	mm.vmas = append(mm.vmas, nil)
	copy(mm.vmas[i+1:], mm.vmas[i:])
	mm.vmas[i] = v
	mm.merge(i)
}

// compatible reports whether b can be merged onto the end of a.
func compatible(a, b *vma) bool {
	if a.end != b.start || a.prot != b.prot || a.shared != b.shared || a.name != b.name || a.file != b.file ||
		a.shm != b.shm || a.anon != b.anon {
		return false
	}
	if a.file != nil || a.shm != nil || a.anon != nil {
		return a.off+(a.end-a.start) == b.off && a.fileEnd == b.fileEnd
	}
	return true
}

// merge joins vmas[i] with its neighbours where compatible.
func (mm *MM) merge(i int) {
	mm.gen++
	if i+1 < len(mm.vmas) && compatible(mm.vmas[i], mm.vmas[i+1]) {
		mm.vmas[i].end = mm.vmas[i+1].end
		mm.vmas[i+1].file.unref()
		mm.vmas = append(mm.vmas[:i+1], mm.vmas[i+2:]...)
	}
	if i > 0 && compatible(mm.vmas[i-1], mm.vmas[i]) {
		mm.vmas[i-1].end = mm.vmas[i].end
		mm.vmas[i].file.unref()
		mm.vmas = append(mm.vmas[:i], mm.vmas[i+1:]...)
	}
}

// protect changes the protection of [lo, hi), which must be mapped.
func (mm *MM) protect(lo, hi uint64, prot int) {
	mm.gen++
	mm.split(lo)
	mm.split(hi)
	for i := mm.index(lo); i < len(mm.vmas) && mm.vmas[i].start < hi; i++ {
		mm.vmas[i].prot = prot
	}
	// The protection is this address space's: a page another process
	// shares (MAP_SHARED, shm, copy-on-write) keeps its protection there.
	var code []uint64
	mm.Mem.Protect(lo>>x86.PageShift, hi>>x86.PageShift, perm(prot), func(pn uint64) { code = append(code, pn) })
	for _, pn := range code {
		mm.Code.InvalidatePage(pn)
	}
	mm.Mem.FlushTLB()
	for i := mm.index(lo); i < len(mm.vmas) && mm.vmas[i].start <= hi; {
		n := len(mm.vmas)
		mm.merge(i)
		if len(mm.vmas) == n {
			i++
		}
	}
}

// move relocates the mappings and pages of [lo, lo+n) to dst, which must
// be free.
func (mm *MM) move(lo, n, dst uint64) {
	mm.gen++
	mm.split(lo)
	mm.split(lo + n)
	i := mm.index(lo)
	var moved []*vma
	for i < len(mm.vmas) && mm.vmas[i].start < lo+n {
		moved = append(moved, mm.vmas[i])
		mm.vmas = append(mm.vmas[:i], mm.vmas[i+1:]...)
	}
	var pns []uint64
	mm.Mem.Pages(lo>>x86.PageShift, (lo+n)>>x86.PageShift, func(pn uint64, p *x86.Page) { pns = append(pns, pn) })
	for _, pn := range pns {
		mm.Code.InvalidatePage(pn)
	}
	mm.movePristine(lo, n, dst)
	delta := dst - lo
	for _, v := range moved {
		v.start += delta
		v.end += delta
		if v.fileEnd != noFileEnd {
			v.fileEnd += delta
		}
		mm.insert(v)
	}
	for _, pn := range pns {
		mm.Mem.MovePage(pn, pn-lo>>x86.PageShift+dst>>x86.PageShift)
	}
	mm.Mem.FlushTLB()
}

// Maps formats the address space like /proc/self/maps.
func (mm *MM) Maps() string {
	var b strings.Builder
	for _, v := range mm.vmas {
		if v.name == "[stack]" && v.end == stackTop && v.start < mm.stackLow && mm.stackLow < v.end {
			// ttd reserves the whole stack at once; Linux's mapping
			// is what the program has grown it to.
			shown := *v
			shown.start = mm.stackLow
			for pn := v.start / pageSize; pn < mm.stackLow/pageSize; pn++ {
				if mm.Mem.Lookup(pn) != nil {
					shown.start = pn * pageSize
					break
				}
			}
			v = &shown
		}
		b.WriteString(v.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// accessible reports whether [addr, addr+n) is mapped with prot (for
// checking a buffer before a host call that cannot be undone).
func (mm *MM) accessible(addr, n uint64, prot int) bool {
	if n == 0 {
		return true
	}
	end := addr + n
	if end < addr || end > taskSize {
		return false
	}
	for a := addr; a < end; {
		v := mm.find(a)
		if v == nil || perm(v.prot)&perm(prot) != perm(prot) {
			return false
		}
		a = v.end
	}
	return true
}
