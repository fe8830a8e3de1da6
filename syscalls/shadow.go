package syscalls

import (
	"ttd/internal/linux"
	"ttd/reader"
	"ttd/x86"
)

// The re-simulation knows the bytes the program read or wrote since its
// page was mapped (Replay.Known), and the recorder unmaps a page in the
// trace only when the address space discarded its contents (munmap, a
// fixed mapping over it, brk shrinking, madvise DONTNEED): a heap grown
// by brk or a region re-protected keeps what the re-simulation knew.
//
// One change moves bytes instead of discarding them: mremap. The trace
// says the old pages were unmapped and new ones mapped (it has no record
// for a move), so the export copies what the re-simulation knew of the
// old range at the mremap, before its region records apply, to where
// the range went (moved), and forgets a moved page when it is unmapped
// in turn. What the program writes there later is known to the
// re-simulation itself, which takes precedence.

// knownFunc fills the bytes of b not in have that the re-simulation
// knows (and marks them in have).
type knownFunc func(addr uint64, b []byte, have []bool)

type movedPage struct {
	known reader.PageBits
	data  [x86.PageSize]byte
}

type moved struct {
	pages map[uint64]*movedPage
	buf   []byte
	have  []bool
	// The last move: at position at, to [to, to+n). The region records
	// of the mremap itself follow its syscall record at its position; an
	// unmap among them of what was at the target of a fixed move came
	// before the move and must not forget the pages it brought.
	at, to, n uint64
}

// unmapped forgets the moved pages in a range a Munmap record at pos
// unmapped, unless the record belongs to the move that brought them.
func (s *moved) unmapped(pos, addr, n uint64) {
	if pos == s.at && s.to <= addr && addr+n <= s.to+s.n {
		return
	}
	s.drop(addr, n)
}

// mremap copies the known bytes of [old, old+n) to [to, to+n).
func (s *moved) mremap(known knownFunc, old, n, to uint64) {
	if old == to || n == 0 {
		return
	}
	if s.pages == nil {
		s.pages = map[uint64]*movedPage{}
	}
	if s.buf == nil {
		s.buf, s.have = make([]byte, x86.PageSize), make([]bool, x86.PageSize)
	}
	// The pages of an earlier move that this one moves on.
	carried := map[uint64]*movedPage{}
	for off := uint64(0); off < n; off += x86.PageSize {
		k := min(x86.PageSize, n-off)
		b, have := s.buf[:k], s.have[:k]
		clear(have)
		known(old+off, b, have)
		var mp *movedPage
		for i, h := range have {
			if !h {
				continue
			}
			if mp == nil {
				mp = new(movedPage)
			}
			a := to + off + uint64(i) // to is page-aligned: the same offset
			o := a & (x86.PageSize - 1)
			mp.known[o>>6] |= 1 << (o & 63)
			mp.data[o] = b[i]
		}
		if mp != nil {
			carried[(to+off)>>x86.PageShift] = mp
		}
	}
	s.drop(old, n)
	s.drop(to, n)
	for pn, mp := range carried {
		s.pages[pn] = mp
	}
}

// drop forgets [addr, addr+n).
func (s *moved) drop(addr, n uint64) {
	if len(s.pages) == 0 || n == 0 {
		return
	}
	lo, hi := addr>>x86.PageShift, (addr+n+x86.PageSize-1)>>x86.PageShift
	for pn := range s.pages {
		if pn >= lo && pn < hi {
			delete(s.pages, pn)
		}
	}
}

// syscall follows the calls that move or discard moved pages; pos is
// the call's position.
func (s *moved) syscall(known knownFunc, pos uint64, nr int, a [6]uint64, ret int64) {
	if ret < 0 && ret >= -linux.MaxErrno {
		return
	}
	switch nr {
	case linux.SysMremap:
		s.mremap(known, a[0], min(a[1], a[2]), uint64(ret))
		s.at, s.to, s.n = pos, uint64(ret), pageUp(a[2])
	case linux.SysExecve, linux.SysExecveat:
		s.pages = nil
	}
}

func (s *moved) fillFrom(mp *movedPage, addr uint64, b []byte, have []bool) {
	if mp == nil {
		return
	}
	for i := range b {
		if have[i] {
			continue
		}
		o := (addr + uint64(i)) & (x86.PageSize - 1)
		if mp.known[o>>6]>>(o&63)&1 != 0 {
			b[i], have[i] = mp.data[o], true
		}
	}
}

// fill fills the bytes of b not in have from the moved pages.
func (s *moved) fill(addr uint64, b []byte, have []bool) {
	if len(s.pages) == 0 {
		return
	}
	for i := 0; i < len(b); {
		a := addr + uint64(i)
		k := min(len(b)-i, int(x86.PageSize-a&(x86.PageSize-1)))
		s.fillFrom(s.pages[a>>x86.PageShift], a, b[i:i+k], have[i:i+k])
		i += k
	}
}
