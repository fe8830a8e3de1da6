package emu

import (
	"golang.org/x/sys/unix"

	"ttd/x86"
)

// Shared file mappings. A page of a MAP_SHARED file mapping is copied
// from the file when first touched, as for a private one, and a pristine
// copy is kept; the bytes the program changed since (those that differ
// from the pristine copy) are written back to the file at msync, when
// the page is dropped (munmap, a mapping over it, MADV_DONTNEED) and when
// the process ends (its address space is unmapped), as Linux's page
// cache would have them written. Writes to the file by other means after
// a page was copied are not seen through the mapping (there is no shared
// page cache), and bytes the program did not change are never written,
// so such writes are not undone either.

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
	*c = p.Data
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
