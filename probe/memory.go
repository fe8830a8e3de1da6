package probe

import (
	"encoding/binary"

	"ttd/x86"
)

// Reading the program's memory from a probe. A byte is known when this
// segment's re-simulation saw it (read, written, written by a syscall,
// fetched as code), else when an earlier segment learned it (the trace's
// index), else when it lies in a read-only segment of a module (the ELF
// file). Unknown bytes are never invented: reading one is a fault
// ("invalid address"), as a bad pointer is in DTrace.

// readInto fills buf from what is known at the current position, in
// the memory of the running clause's process. In a tree, another process
// than the trace's focus (the first) knows what this segment's
// re-simulation saw of its memory (reader.Replay.KnownOf), and its
// program's read-only data.
func (s *segEval) readInto(addr uint64, buf []byte, known []bool) {
	if s.b.mem != nil {
		s.b.mem(addr, buf, known)
		return
	}
	if s.r != nil && len(s.b.procs) > 1 && s.cr.ev != nil {
		if pid := s.eventPid(s.cr.ev); pid != s.b.T.Trace.Focus() {
			s.r.KnownOf(pid, addr, buf, known)
			s.static(addr, buf, known)
			return
		}
	}
	if s.r == nil {
		if s.lookback {
			s.earlier(addr, buf, known, make([]bool, len(buf)))
		}
		s.static(addr, buf, known)
		return
	}
	s.r.Known(addr, buf, known)
	if all(known) {
		return
	}
	blocked := make([]bool, len(buf))
	for i := range buf {
		if !known[i] && s.r.WasReset((addr+uint64(i))>>x86.PageShift) {
			blocked[i] = true
		}
	}
	if s.lookback {
		s.earlier(addr, buf, known, blocked)
	}
	s.static(addr, buf, known)
}

func all(known []bool) bool {
	for _, k := range known {
		if !k {
			return false
		}
	}
	return true
}

func (s *segEval) static(addr uint64, buf []byte, known []bool) {
	if sy := s.syms(); sy != nil && !all(known) {
		sy.ReadStatic(addr, buf, known)
	}
}

// earlier takes unknown bytes from the deltas of the segments before
// this one, newest first (as ttd.Session.ReadMemory does).
func (s *segEval) earlier(addr uint64, buf []byte, known, blocked []bool) {
	ix := s.b.T.Index
	for kk := s.k - 1; kk >= 0 && kk < len(ix.Segments); kk-- {
		missing := false
		need := false
		sg := &ix.Segments[kk]
		for i := range buf {
			if known[i] || blocked[i] {
				continue
			}
			missing = true
			a := addr + uint64(i)
			pn := a >> x86.PageShift
			if sg.Touched(a) {
				need = true
				break
			}
			if sg.WasReset(pn) {
				blocked[i] = true
			}
		}
		if !missing {
			return
		}
		if !need {
			continue
		}
		d, err := ix.Delta(kk)
		if err != nil {
			return
		}
		for i := range buf {
			if known[i] || blocked[i] {
				continue
			}
			a := addr + uint64(i)
			pn := a >> x86.PageShift
			dp := d.Page(pn)
			off := a & (x86.PageSize - 1)
			if dp != nil && dp.Data != nil && dp.Known[off>>6]&(1<<(off&63)) != 0 {
				buf[i] = dp.Data[off]
				known[i] = true
				continue
			}
			if d.WasReset(pn) {
				blocked[i] = true
			}
		}
	}
}

// readBytes reads n bytes or faults naming the first unknown address.
func (s *segEval) readBytes(p Pos, addr uint64, n int) []byte {
	buf := make([]byte, n)
	known := make([]bool, n)
	s.readInto(addr, buf, known)
	for i, k := range known {
		if !k {
			s.faultf(p, "invalid address (%#x)", addr+uint64(i))
		}
	}
	return buf
}

func (s *segEval) loadInt(p Pos, addr uint64, size int, signed bool) int64 {
	b := s.readBytes(p, addr, size)
	var w [8]byte
	copy(w[:], b)
	return extend(binary.LittleEndian.Uint64(w[:]), size, signed)
}

// readString reads a NUL-terminated string of at most max bytes, in
// pieces that do not cross a page (the rest of a page may be unmapped).
func (s *segEval) readString(p Pos, addr uint64, max int) string {
	var out []byte
	for len(out) < max {
		a := addr + uint64(len(out))
		n := min(int(x86.PageSize-a&(x86.PageSize-1)), 64, max-len(out))
		buf := make([]byte, n)
		known := make([]bool, n)
		s.readInto(a, buf, known)
		for i := 0; i < n; i++ {
			if !known[i] {
				s.faultf(p, "invalid address (%#x)", a+uint64(i))
			}
			if buf[i] == 0 {
				return string(append(out, buf[:i]...))
			}
		}
		out = append(out, buf...)
	}
	return string(out)
}
