package emu

import (
	"golang.org/x/sys/unix"

	"ttd/x86"
)

// Shared file mappings. A page of a MAP_SHARED file mapping is copied
// from the file when first touched, as for a private one, unless
// another shared mapping of the file holds it already (filePages: then
// it is that page), and a pristine copy is kept; the bytes the program changed since (those that differ
// from the pristine copy) are written back to the file at msync, when
// the page is dropped (munmap, a mapping over it, MADV_DONTNEED) and when
// the process ends (its address space is unmapped), as Linux's page
// cache would have them written. Writes to the file by other means after
// a page was copied are not seen through the mapping (there is no shared
// page cache), and bytes the program did not change are never written,
// so such writes are not undone either. A mapping with another
// protection than the page's gets its own copy.

// filePages are the pages of one file (by page index in it) that its
// MAP_SHARED mappings hold, in every process of the machine: a second
// mapping of the file, in the same process or another, gets the same
// page objects, so a write through one is seen through the others at
// once, as Linux's page cache shows it. They go when the file's last
// shared mapping goes (the next mapping reads the file again).
type filePages struct {
	m     *Machine
	id    fileKey
	obj   uint64 // its name for observers (Region.Obj)
	pages map[uint64]*x86.Page
	users int // mappedFiles using it
}

// newObj names a new shared memory object (Region.Obj).
func (m *Machine) newObj() uint64 {
	m.objNext++
	return m.objNext
}

// anonShared is anonymous shared memory (MAP_SHARED|MAP_ANONYMOUS, or
// /dev/zero mapped shared), Linux's shmem object: its pages by index
// from the mapping's start, which every mapping of it shows (the one
// mmap made, its pieces, and their copies in forked children), made
// zeroed when first touched through any of them.
type anonShared struct {
	obj   uint64 // its name for observers (Region.Obj)
	pages map[uint64]*x86.Page
}

// newAnonShared makes an anonymous shared memory object.
func (m *Machine) newAnonShared() *anonShared {
	return &anonShared{obj: m.newObj(), pages: map[uint64]*x86.Page{}}
}

// page returns page i, made zeroed the first time.
func (a *anonShared) page(i uint64) *x86.Page { return objectPage(a.pages, i) }

// objectPage returns page i of a shared memory object's pages, made
// zeroed the first time. Not in a host window (x86.NewPage): it may be
// shown at several places, each with its own protection (Memory's page
// table).
func objectPage(pages map[uint64]*x86.Page, i uint64) *x86.Page {
	p := pages[i]
	if p == nil {
		p = x86.NewPage()
		pages[i] = p
	}
	return p
}

// fileKey identifies a host file.
type fileKey struct{ dev, ino uint64 }

// filePagesFor returns the shared pages of the file with stat st, one
// more user counted.
func (m *Machine) filePagesFor(st *unix.Stat_t) *filePages {
	k := fileKey{st.Dev, st.Ino}
	fp := m.files[k]
	if fp == nil {
		if m.files == nil {
			m.files = map[fileKey]*filePages{}
		}
		fp = &filePages{m: m, id: k, obj: m.newObj(), pages: map[uint64]*x86.Page{}}
		m.files[k] = fp
	}
	fp.users++
	return fp
}

// page returns page i, or nil (also for a nil fp).
func (fp *filePages) page(i uint64) *x86.Page {
	if fp == nil {
		return nil
	}
	return fp.pages[i]
}

// keep makes p page i when none is (a nil fp keeps nothing).
func (fp *filePages) keep(i uint64, p *x86.Page) {
	if fp != nil && fp.pages[i] == nil {
		fp.pages[i] = p
	}
}

// unuse drops one user; the last one forgets the pages.
func (fp *filePages) unuse() {
	if fp == nil {
		return
	}
	if fp.users--; fp.users == 0 {
		delete(fp.m.files, fp.id)
	}
}

// sharedPages are the pristine copies of the materialised pages of
// shared file mappings, by page number.
type sharedPages map[uint64]*[x86.PageSize]byte

// keepPristine records page pn's contents as read from a shared file
// mapping.
func (mm *MM) keepPristine(pn uint64, p *x86.Page) {
	if mm.pristine == nil {
		mm.pristine = sharedPages{}
	}
	c := new([x86.PageSize]byte)
	*c = *p.Data
	mm.pristine[pn] = c
}

// writeBack writes the changed bytes of the shared file mappings' pages
// in [lo, hi) to their files and makes them the new pristine copies.
func (mm *MM) writeBack(lo, hi uint64) error {
	if len(mm.pristine) == 0 {
		return nil
	}
	var first error
	for _, v := range mm.vmas {
		if v.end <= lo || v.start >= hi || !v.shared || v.file == nil {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstat(v.file.fd, &st); err != nil {
			continue
		}
		for a := max(lo, v.start); a < min(hi, v.end); a += pageSize {
			pn := a >> x86.PageShift
			old := mm.pristine[pn]
			p := mm.Mem.Lookup(pn)
			if old == nil || p == nil {
				continue
			}
			base := int64(v.off + a - v.start)
			for i := 0; i < pageSize; {
				if p.Data[i] == old[i] {
					i++
					continue
				}
				j := i
				for j < pageSize && p.Data[j] != old[j] {
					j++
				}
				// Linux writes back nothing past the end of the file.
				if end := min(int64(j), st.Size-base); end > int64(i) {
					if _, err := unix.Pwrite(v.file.fd, p.Data[i:end], base+int64(i)); err != nil && first == nil {
						first = err
					}
				}
				copy(old[i:j], p.Data[i:j])
				i = j
			}
		}
	}
	return first
}

// forgetPristine drops the pristine copies of [lo, hi).
func (mm *MM) forgetPristine(lo, hi uint64) {
	for pn := range mm.pristine {
		if a := pn << x86.PageShift; a >= lo && a < hi {
			delete(mm.pristine, pn)
		}
	}
}

// movePristine moves the pristine copies of [lo, lo+n) to dst (mremap).
func (mm *MM) movePristine(lo, n, dst uint64) {
	moved := sharedPages{}
	for pn, c := range mm.pristine {
		if a := pn << x86.PageShift; a >= lo && a < lo+n {
			moved[(a-lo+dst)>>x86.PageShift] = c
			delete(mm.pristine, pn)
		}
	}
	for pn, c := range moved {
		mm.pristine[pn] = c
	}
}
