package ttd

import (
	"errors"
	"fmt"

	"ttd/reader"
)

// ErrNotFound is returned by the Find queries when no access matches.
var ErrNotFound = errors.New("no such access")

// Found is the answer to a Find query: the instruction (or syscall, or
// signal delivery) that accessed the queried range.
type Found struct {
	// Position is the position just before the access: the state there
	// does not include it, the state at Position+1 does. Asking
	// FindPrev again from Position finds the access before this one.
	Position uint64
	Tid      int
	PC       uint64 // the accessing instruction (0 for a signal frame)
	Source   reader.AccessSource
	Write    bool
	// Code and Disasm are the instruction's bytes and text.
	Code   []byte
	Disasm string
	// Accesses are the accesses of that instruction overlapping the
	// range, in order (a 16-byte store is two, a rep movs many).
	Accesses []reader.Access
	// Before is the queried range just before the instruction, After
	// just after it (its writes applied; reads change nothing).
	Before, After Memory
}

// FindPrevWrite finds the last write to [addr, addr+size) before
// position from.
func (s *Session) FindPrevWrite(addr, size, from uint64) (*Found, error) {
	return s.Find(Backward, AccessWrite, addr, size, from)
}

// FindNextWrite finds the first write to [addr, addr+size) at or after
// position from (the instruction at from included).
func (s *Session) FindNextWrite(addr, size, from uint64) (*Found, error) {
	return s.Find(Forward, AccessWrite, addr, size, from)
}

// FindPrevRead finds the last read of [addr, addr+size) before from.
func (s *Session) FindPrevRead(addr, size, from uint64) (*Found, error) {
	return s.Find(Backward, AccessRead, addr, size, from)
}

// FindNextRead finds the first read of [addr, addr+size) at or after
// from.
func (s *Session) FindNextRead(addr, size, from uint64) (*Found, error) {
	return s.Find(Forward, AccessRead, addr, size, from)
}

// Find is the general query: the last access of kind to [addr,
// addr+size) before from (Backward), or the first at or after it
// (Forward). It does not move the session.
func (s *Session) Find(dir Direction, kind AccessKind, addr, size, from uint64) (*Found, error) {
	if size == 0 || addr+size < addr || size > MaxRead {
		return nil, fmt.Errorf("bad range of %d bytes at %#x", size, addr)
	}
	from = min(from, s.end)
	f := newFinder(s, addr, size, kind&AccessRead != 0, kind&AccessWrite != 0)
	p := &probe{forward: dir == Forward, from: from, find: f,
		mems: []watch{{lo: addr, hi: addr + size, read: f.read, write: f.write}}}
	p.shared = s.sharedAt(p.mems, from)
	var err error
	if dir == Forward {
		// Hits at from count: offer compares with from-1.
		err = s.scanForward(p, s.end)
	} else {
		s.prefetchBefore(p, addr, size)
		err = s.scanBack(p, 0)
	}
	if err != nil {
		return nil, err
	}
	if !f.found {
		if dir == Backward && s.Start() > 0 {
			return nil, &BeforeWindowError{Start: s.Start()}
		}
		return nil, ErrNotFound
	}
	a := f.accs[0]
	out := &Found{Position: f.pos, Tid: a.Tid, PC: a.PC, Source: a.Source, Write: a.Write,
		Code: f.code, Disasm: f.text, Accesses: append([]reader.Access(nil), f.accs...)}
	if a.Source != reader.AccessCPU {
		out.Disasm = ""
		if a.Source == reader.AccessSyscall && f.text != "" {
			out.Disasm = f.text
		}
	}
	// Before: what the unit learned before the access, then what was
	// known when the unit started.
	before := Memory{Addr: addr, Data: make([]byte, size), Known: make([]bool, size)}
	for i := range before.Data {
		if f.beforeHave[i] != 0 {
			before.Data[i], before.Known[i] = f.before[i], true
		}
	}
	u := p.unit
	j := u.win
	if j < 0 {
		j = 0
	}
	if err := s.knownBefore(u.seg, j, &before, make([]bool, size)); err != nil {
		return nil, err
	}
	after := Memory{Addr: addr, Data: append([]byte(nil), before.Data...), Known: append([]bool(nil), before.Known...)}
	for _, x := range f.accs {
		for i := 0; i < x.Size; i++ {
			b := x.Addr + uint64(i)
			if b >= addr && b < addr+size {
				after.Data[b-addr] = byte(x.Value >> (8 * i))
				after.Known[b-addr] = true
			}
		}
	}
	out.Before, out.After = before, after
	return out, nil
}

// prefetchBefore starts computing, while the backward search runs, the
// delta that Found.Before will likely need: that of the last segment
// before the one holding the hit that touched the range (the summaries
// name both exactly). Without a hit in sight, or when the session's
// own snapshots cover the segment, it does nothing.
func (s *Session) prefetchBefore(p *probe, addr, size uint64) {
	if p.from == 0 {
		return
	}
	ix, err := s.index()
	if err != nil {
		return
	}
	k := s.segOf(p.from - 1)
	for ; k >= 0 && !p.mayHitSegment(ix, k); k-- {
	}
	if k <= 0 || s.fine[k] != nil && len(s.fine[k].snaps) > 1 {
		return
	}
	for kk := k - 1; kk >= 0; kk-- {
		if ix.Segments[kk].MayAccess(addr, size, true, true, true) {
			ix.Prefetch(kk)
			return
		}
	}
}

// sharedAt reports whether the focus maps shared memory over part of
// one of ws at position from, in a recording of a process tree: a
// search there must hear every process's accesses to it (probe.shared).
// When a process maps shared memory there, it re-simulates from the
// checkpoint before from, blind (at `ttd run`'s speed), once for all of
// ws. A recording of one process is not asked: its shared memory
// changes through another mapping of its own only (a file or a System V
// segment mapped twice), which a search does not follow.
func (s *Session) sharedAt(ws []watch, from uint64) bool {
	if len(ws) == 0 || len(s.Processes()) < 2 {
		return false
	}
	// The control records from the checkpoint (whose Mmap records
	// restate every mapping) say whether any process maps shared memory.
	cp := s.cps[s.segOf(max(from, 1)-1)]
	maps := false
	if err := s.tr.ScanEvents(cp, func(ev *reader.Event) bool {
		maps = ev.Kind == reader.EventMmap && ev.Record.Mmap.Object != 0
		return !maps && ev.Position <= from
	}); err != nil || !maps {
		return false
	}
	r, err := s.tr.NewReplayAt(cp)
	if err != nil {
		return false
	}
	defer r.Close()
	if err := r.RunTo(from); err != nil && err != reader.ErrEnd {
		return false
	}
	for _, w := range ws {
		if r.SharedIn(w.lo, w.hi) {
			return true
		}
	}
	return false
}
