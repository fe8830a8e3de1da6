package syscalls

import (
	"ttd/internal/linux"
)

// SharedWrite is what a MAP_SHARED file mapping carried to its file: the
// bytes of the mapping the re-simulation knows (the program wrote or
// read them) when the program synced or unmapped it, or ended. strace
// never sees these writes; a recording holds them as memory writes.
type SharedWrite struct {
	Pos      uint64
	Pid, Tid int
	// Why is "msync", "munmap", "mmap" (a fixed mapping over it),
	// "mremap" (the tail a shrinking mremap cut, or a fixed move over
	// it) or "exit".
	Why  string
	Addr uint64
	// Fd and Off are the descriptor and file offset the mapping was made
	// with (at MapPos); the descriptor may be closed since.
	Fd     int
	Off    uint64
	MapPos uint64
	Data   []byte
	Known  []bool // Known[i]: Data[i] is the program's; the others are not written
}

// SharedWriter is a Sink that also takes shared-mapping write-backs.
type SharedWriter interface {
	SharedWrite(w *SharedWrite) error
}

type sharedMap struct {
	pid       int
	addr, len uint64
	fd        int
	off, pos  uint64
}

// sharedMaps follows the shared file mappings of the recording.
type sharedMaps struct {
	maps []sharedMap
	w    SharedWrite
}

// syscall notes a new mapping and reports the write-backs a call causes
// (before it takes effect on the mappings).
func (s *sharedMaps) syscall(c *Call, m *replayMemory, emit func(*SharedWrite) error) error {
	if c.Ret < 0 && c.Ret >= -linux.MaxErrno {
		return nil
	}
	a := c.Raw
	switch c.Nr {
	case linux.SysMsync:
		return s.flush(c, m, a[0], pageUp(a[1]), "msync", false, emit)
	case linux.SysMunmap:
		return s.flush(c, m, a[0], pageUp(a[1]), "munmap", true, emit)
	case linux.SysMremap:
		return s.mremap(c, m, emit)
	case linux.SysMmap:
		if err := s.flush(c, m, uint64(c.Ret), pageUp(a[1]), "mmap", true, emit); err != nil {
			return err
		}
		t := a[3] & linux.MAP_TYPE
		if (t == linux.MAP_SHARED || t == 3) && a[3]&linux.MAP_ANONYMOUS == 0 && a[2]&2 != 0 {
			s.maps = append(s.maps, sharedMap{pid: c.Pid, addr: uint64(c.Ret), len: pageUp(a[1]), fd: int(int32(a[4])), off: a[5], pos: c.Pos})
		}
	}
	return nil
}

// mremap carries the shared mappings in the range an mremap resized or
// moved along with it. Its syscall record says all there is to know (the
// old range, the new length, where it went), so the trace needs no
// record of its own for a move: the pages' bytes follow through the
// export's shadow of moved memory (shadow.go), the mappings through
// this. A shrink writes back the tail it cut, as munmap would; a grown
// mapping maps the file on from where it ended.
func (s *sharedMaps) mremap(c *Call, m *replayMemory, emit func(*SharedWrite) error) error {
	a := c.Raw
	old, oldLen, newLen, to := a[0], pageUp(a[1]), pageUp(a[2]), uint64(c.Ret)
	if oldLen == 0 {
		return nil // a copy of a shared mapping: a new mapping of its own, not followed
	}
	if newLen < oldLen {
		if err := s.flush(c, m, old+newLen, oldLen-newLen, "mremap", true, emit); err != nil {
			return err
		}
	}
	if to != old && a[3]&linux.MREMAP_FIXED != 0 {
		// A fixed move unmaps what was at its target.
		if err := s.flush(c, m, to, newLen, "mremap", true, emit); err != nil {
			return err
		}
	}
	keep := min(oldLen, newLen)
	for i := range s.maps {
		sm := s.maps[i]
		// mremap works within one mapping: the range lies in it.
		if sm.pid != c.Pid || sm.addr > old || old+keep > sm.addr+sm.len {
			continue
		}
		// The range goes to its new place (a grown one maps the file on
		// from where it ended); what is left of the mapping on either
		// side stays.
		s.maps[i] = sharedMap{pid: sm.pid, addr: to, len: newLen, fd: sm.fd, off: sm.off + (old - sm.addr), pos: sm.pos}
		if sm.addr < old {
			s.maps = append(s.maps, sharedMap{pid: sm.pid, addr: sm.addr, len: old - sm.addr, fd: sm.fd, off: sm.off, pos: sm.pos})
		}
		if end := sm.addr + sm.len; end > old+keep {
			s.maps = append(s.maps, sharedMap{pid: sm.pid, addr: old + keep, len: end - old - keep, fd: sm.fd, off: sm.off + (old + keep - sm.addr), pos: sm.pos})
		}
		return nil
	}
	return nil
}

// flush reports what the mappings of c's process in [addr, addr+n) hold,
// and forgets them when drop is set.
func (s *sharedMaps) flush(c *Call, m *replayMemory, addr, n uint64, why string, drop bool, emit func(*SharedWrite) error) error {
	end := addr + n
	var kept []sharedMap
	for _, sm := range s.maps {
		se := sm.addr + sm.len
		if sm.pid != c.Pid || se <= addr || sm.addr >= end {
			kept = append(kept, sm)
			continue
		}
		lo, hi := max(addr, sm.addr), min(end, se)
		if err := s.emit(c.Pos, c.Pid, c.Tid, why, sm, lo, hi, m, emit); err != nil {
			return err
		}
		if !drop {
			kept = append(kept, sm)
			continue
		}
		if sm.addr < lo {
			kept = append(kept, sharedMap{pid: sm.pid, addr: sm.addr, len: lo - sm.addr, fd: sm.fd, off: sm.off, pos: sm.pos})
		}
		if se > hi {
			kept = append(kept, sharedMap{pid: sm.pid, addr: hi, len: se - hi, fd: sm.fd, off: sm.off + (hi - sm.addr), pos: sm.pos})
		}
	}
	s.maps = kept
	return nil
}

// exit reports what every mapping still holds when the program ends.
func (s *sharedMaps) exit(pos uint64, tid int, m *replayMemory, emit func(*SharedWrite) error) error {
	for _, sm := range s.maps {
		if err := s.emit(pos, sm.pid, tid, "exit", sm, sm.addr, sm.addr+sm.len, m, emit); err != nil {
			return err
		}
	}
	s.maps = nil
	return nil
}

func (s *sharedMaps) emit(pos uint64, pid, tid int, why string, sm sharedMap, lo, hi uint64, m *replayMemory, emit func(*SharedWrite) error) error {
	w := &s.w
	n := int(hi - lo)
	if cap(w.Data) < n {
		w.Data, w.Known = make([]byte, n), make([]bool, n)
	}
	w.Data, w.Known = w.Data[:n], w.Known[:n]
	clear(w.Data)
	clear(w.Known)
	m.known(lo, w.Data, w.Known)
	*w = SharedWrite{Pos: pos, Pid: pid, Tid: tid, Why: why, Addr: lo, Fd: sm.fd, Off: sm.off + (lo - sm.addr), MapPos: sm.pos, Data: w.Data, Known: w.Known}
	return emit(w)
}

func pageUp(n uint64) uint64 { return (n + 4095) &^ 4095 }
