package syscalls

import (
	"ttd/internal/linux"
	"ttd/reader"
	"ttd/x86"
)

// The reader forgets what it knew of a page when the trace says the page
// was unmapped, and the recorder describes every change of the region
// list that way: the heap growing by brk is an unmap of the old heap and
// a map of the new one. The program's bytes there did not change, so
// the export keeps its own copy of what the re-simulation knew (shadow),
// taken (Replay.Cut) at every syscall that changes mappings, before its
// region records apply, and forgets a page only for what the syscall
// really did to it (munmap, a fixed mapping over it, mremap, madvise
// DONTNEED, brk shrinking).

type shadowPage struct {
	known reader.PageBits
	data  [x86.PageSize]byte
}

type shadow struct {
	pages map[uint64]*shadowPage
	brk   uint64
}

// mapsMemory are the syscalls after which the recorder may write region
// records.
var mapsMemory = map[int]bool{
	linux.SysMmap: true, linux.SysMunmap: true, linux.SysMremap: true, linux.SysMprotect: true,
	linux.SysBrk: true, linux.SysMadvise: true, linux.SysShmat: true, linux.SysShmdt: true,
	linux.SysExecve: true, linux.SysExecveat: true, linux.SysPkeyMprotect: true,
}

// merge adds what a closed tracking window learned.
func (s *shadow) merge(d *reader.Delta) {
	if s.pages == nil {
		s.pages = map[uint64]*shadowPage{}
	}
	for i := range d.Pages {
		dp := &d.Pages[i]
		if dp.Data == nil {
			continue
		}
		sp := s.pages[dp.PN]
		if sp == nil {
			sp = new(shadowPage)
			s.pages[dp.PN] = sp
		}
		for w, bits := range dp.Known {
			if bits == 0 {
				continue
			}
			sp.known[w] |= bits
			for b := 0; b < 64; b++ {
				if bits>>b&1 != 0 {
					sp.data[w*64+b] = dp.Data[w*64+b]
				}
			}
		}
	}
}

// drop forgets [addr, addr+n).
func (s *shadow) drop(addr, n uint64) {
	if n == 0 || s.pages == nil {
		return
	}
	end := addr + n
	for a := addr; a < end; {
		pn := a >> x86.PageShift
		pe := (pn + 1) << x86.PageShift
		sp := s.pages[pn]
		if sp != nil {
			if a == pn<<x86.PageShift && end >= pe {
				delete(s.pages, pn)
			} else {
				for b := a; b < min(end, pe); b++ {
					off := b & (x86.PageSize - 1)
					sp.known[off>>6] &^= 1 << (off & 63)
				}
			}
		}
		a = pe
		if uint64(len(s.pages)) == 0 {
			return
		}
		// Large ranges: skip to the next page the shadow holds.
		if end-a > 1<<24 {
			next := end
			for p := range s.pages {
				if q := p << x86.PageShift; q >= a && q < next {
					next = q
				}
			}
			a = next
		}
	}
}

// move carries the pages of an mremap to their new place.
func (s *shadow) move(old, n, to uint64) {
	if s.pages == nil || old == to {
		return
	}
	moved := map[uint64]*shadowPage{}
	for pn, sp := range s.pages {
		if a := pn << x86.PageShift; a >= old && a < old+n {
			moved[(a-old+to)>>x86.PageShift] = sp
			delete(s.pages, pn)
		}
	}
	for pn, sp := range moved {
		s.pages[pn] = sp
	}
}

// syscall forgets what a memory syscall replaced.
func (s *shadow) syscall(nr int, a [6]uint64, ret int64) {
	if ret < 0 && ret >= -linux.MaxErrno {
		return
	}
	switch nr {
	case linux.SysMunmap:
		s.drop(a[0], a[1])
	case linux.SysMmap:
		s.drop(uint64(ret), a[1])
	case linux.SysMremap:
		s.move(a[0], a[1], uint64(ret))
		if a[2] < a[1] {
			s.drop(uint64(ret)+a[2], a[1]-a[2])
		}
	case linux.SysMadvise:
		if a[2] == 4 || a[2] == 8 || a[2] == 9 {
			s.drop(a[0], a[1])
		}
	case linux.SysBrk:
		if s.brk != 0 && uint64(ret) < s.brk {
			s.drop(uint64(ret), s.brk-uint64(ret))
		}
		s.brk = uint64(ret)
	case linux.SysExecve, linux.SysExecveat:
		s.pages = nil
	}
}

// fill fills the bytes of b not in have from the shadow.
func (s *shadow) fill(addr uint64, b []byte, have []bool) {
	if s.pages == nil {
		return
	}
	var sp *shadowPage
	cur := ^uint64(0)
	for i := range b {
		if have[i] {
			continue
		}
		a := addr + uint64(i)
		if pn := a >> x86.PageShift; pn != cur {
			cur, sp = pn, s.pages[pn]
		}
		if sp == nil {
			continue
		}
		off := a & (x86.PageSize - 1)
		if sp.known[off>>6]>>(off&63)&1 != 0 {
			b[i], have[i] = sp.data[off], true
		}
	}
}
