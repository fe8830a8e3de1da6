package ttd

import (
	"io"
	"math/bits"
	"sort"

	"ttd/reader"
	"ttd/x86"
)

// Searching. Breakpoints, thread steps and the Find queries all look for
// the first (going forward) or last (going backward) point of the
// execution where a probe fires. They re-simulate "units" — a segment
// (checkpoint interval), or a window of a segment between two of the
// session's snapshots — on throw-away replays, skipping the units whose
// summary (the index for segments, the tracking deltas for windows) shows
// they cannot fire. Going backward, units are scanned newest first and
// each is re-simulated whole, remembering the last hit.

// watch is a memory range a probe watches.
type watch struct {
	id          int
	lo, hi      uint64
	read, write bool
}

// probe is what a search looks for, and what it found.
type probe struct {
	forward bool
	from    uint64 // hits must stop after from (forward) or before it

	pcs   []uint64 // execution breakpoints
	pcIDs []int
	mems  []watch
	// tid, for thread steps: the thread's instructions are hits (going
	// forward, from its second instruction at or after from).
	tid      int
	tidFirst uint64
	tidSeen  bool
	// match is a Search predicate.
	match InstMatcher
	// shared: mems show shared memory, which other processes (or other
	// mappings) write too: every process's accesses to it count, and the
	// focus's summaries, which hold its own accesses only, cannot rule
	// a segment out (sharedAt).
	shared bool

	find *finder

	unit   unit // where the hit was found
	found  bool
	stop   uint64
	reason StopReason
	bp     int
	acc    reader.Access
}

// offer records a hit that would stop at stop.
func (p *probe) offer(stop uint64, reason StopReason, id int, a *reader.Access) {
	if p.forward {
		if stop <= p.from || (p.found && stop >= p.stop) {
			return
		}
	} else {
		if stop >= p.from || (p.found && stop < p.stop) {
			return
		}
	}
	p.found, p.stop, p.reason, p.bp = true, stop, reason, id
	if a != nil {
		p.acc = *a
	}
}

func (p *probe) wantsHook() bool { return len(p.pcs) > 0 || p.tid != 0 || p.match != nil }

func (p *probe) hook(r *reader.Replay, c *x86.CPU, in *x86.Inst) {
	pos := r.InstPosition(c)
	for i, pc := range p.pcs {
		if pc == in.PC {
			p.offer(pos, StopBreakpoint, p.pcIDs[i], nil)
		}
	}
	// The predicate sees only the instructions that can be hits (it may
	// keep state from one to the next).
	if p.match != nil && (p.forward && pos > p.from || !p.forward && pos < p.from) {
		if tid, _ := r.Current(); p.match(tid, c, in) {
			p.offer(pos, StopMatch, 0, nil)
		}
	}
	if p.tid != 0 {
		if tid, _ := r.Current(); tid == p.tid {
			switch {
			case !p.forward:
				p.offer(pos, StopStep, 0, nil)
			case pos < p.from:
			case !p.tidSeen:
				p.tidSeen, p.tidFirst = true, pos
			case pos > p.tidFirst:
				p.offer(pos, StopStep, 0, nil)
			}
		}
	}
}

func (p *probe) access(r *reader.Replay, a *reader.Access) {
	if p.find != nil {
		p.find.access(r, a, p.forward, p.from)
		p.found = p.find.found
		return
	}
	end := a.Addr + uint64(a.Size)
	for _, w := range p.mems {
		if a.Addr >= w.hi || end <= w.lo || (a.Write && !w.write) || (!a.Write && !w.read) {
			continue
		}
		stop := a.Position
		if p.forward {
			stop++
		}
		p.offer(stop, StopWatchpoint, w.id, a)
	}
}

func (p *probe) ranges() []reader.Range {
	var rs []reader.Range
	for _, w := range p.mems {
		rs = append(rs, reader.Range{Lo: w.lo, Hi: w.hi})
	}
	return rs
}

// install makes r report to p.
func (p *probe) install(r *reader.Replay) {
	if p.wantsHook() {
		r.Hook = p.hook
		if p.match == nil && p.tid == 0 {
			// Execution breakpoints only: the blocks without their
			// addresses need no hook.
			pcs := p.pcs
			r.HookBlocks = func(lo, hi uint64) bool {
				for _, pc := range pcs {
					if pc >= lo && pc < hi {
						return true
					}
				}
				return false
			}
		}
	}
	if len(p.mems) > 0 {
		r.Watch(p.ranges())
		r.Access = func(a *reader.Access) { p.access(r, a) }
		if p.shared {
			r.WatchShared()
		}
	}
}

// mayHitSegment reports whether segment k can hold a hit.
func (p *probe) mayHitSegment(ix *Index, k int) bool {
	if p.tid != 0 || p.match != nil || p.shared {
		return true
	}
	sg := &ix.Segments[k]
	for _, pc := range p.pcs {
		if ix.mayExec(k, pc) {
			return true
		}
	}
	for _, w := range p.mems {
		if sg.MayAccess(w.lo, w.hi-w.lo, w.read, w.write, false) {
			return true
		}
	}
	return false
}

// windowAccessed reports whether the window d describes read (read) or
// wrote (write) a byte of [addr, addr+n), exactly.
func windowAccessed(d *reader.Delta, addr, n uint64, read, write bool) bool {
	for pn := addr >> x86.PageShift; pn <= (addr+n-1)>>x86.PageShift; pn++ {
		dp := d.Page(pn)
		if dp == nil {
			continue
		}
		var m uint64
		if read {
			m |= dp.Read
		}
		if write {
			m |= dp.Written
		}
		for ls := m & lines(pn, addr, n); ls != 0; ls &= ls - 1 {
			i := bits.TrailingZeros64(ls)
			var b uint64
			if read {
				b |= dp.ReadBytes[i]
			}
			if write {
				b |= dp.WrittenBytes[i]
			}
			if b&lineBytes(pn, i, addr, n) != 0 {
				return true
			}
		}
	}
	return false
}

// finder collects, for a Find query, the accesses of the found
// instruction and the queried range's bytes before it.
type finder struct {
	lo, hi      uint64
	read, write bool
	// cur is what the unit re-simulated so far knows of the range.
	cur, curHave []byte
	// before is cur just before the found instruction's first access.
	before, beforeHave []byte
	pos                uint64
	found              bool
	accs               []reader.Access
	code               []byte
	text               string
	disasmDue          bool
	s                  *Session
}

func newFinder(s *Session, lo, n uint64, read, write bool) *finder {
	return &finder{s: s, lo: lo, hi: lo + n, read: read, write: write}
}

// startUnit resets what the finder knows for a new unit.
func (f *finder) startUnit() {
	n := f.hi - f.lo
	f.cur, f.curHave = make([]byte, n), make([]byte, n)
}

func (f *finder) access(r *reader.Replay, a *reader.Access, forward bool, from uint64) {
	match := (a.Write && f.write) || (!a.Write && f.read)
	if match {
		valid := a.Position < from
		if forward {
			valid = a.Position >= from
		}
		switch {
		case !valid:
		case !f.found || (!forward && a.Position > f.pos):
			f.found, f.pos = true, a.Position
			f.before = append(f.before[:0], f.cur...)
			f.beforeHave = append(f.beforeHave[:0], f.curHave...)
			f.accs = append(f.accs[:0], *a)
			// Disassembled once the unit is done (runUnit): a busy
			// address is found again on every write of the unit.
			f.code, f.text, f.disasmDue = nil, "", a.PC != 0
		case a.Position == f.pos:
			f.accs = append(f.accs, *a)
		}
	}
	// Learn the bytes.
	for i := 0; i < a.Size; i++ {
		addr := a.Addr + uint64(i)
		if addr >= f.lo && addr < f.hi {
			f.cur[addr-f.lo] = byte(a.Value >> (8 * i))
			f.curHave[addr-f.lo] = 1
		}
	}
}

// unit is a stretch of re-simulation: [start, end) of segment seg,
// starting from the session's snapshot win of the segment, or from the
// segment's checkpoint when win is -1.
type unit struct {
	seg, win   int
	start, end uint64
	// snap, when set, is a micro snapshot of window win the unit
	// starts from (travel backward: not Find, whose values need the
	// window from its start).
	snap *reader.Snapshot
}

// openUnit returns a replay at the start of u.
func (s *Session) openUnit(u unit) (*reader.Replay, error) {
	if u.snap != nil {
		return s.tr.Resume(u.snap)
	}
	if u.win >= 0 {
		return s.tr.Resume(s.fine[u.seg].snaps[u.win])
	}
	return s.tr.NewReplayAt(s.cps[u.seg])
}

// runUnit re-simulates u with p installed, to u.end; going forward it
// stops at the first window boundary after a hit.
func (s *Session) runUnit(u unit, p *probe) error {
	r, err := s.openUnit(u)
	if err != nil {
		return err
	}
	defer r.Close()
	if p.find != nil {
		p.find.startUnit()
	}
	p.install(r)
	// A segment the session has no snapshots of, re-simulated from its
	// checkpoint, leaves them (and its windows' deltas) behind: the
	// re-simulation observes every access already, so tracking costs
	// little, and the next search or seek there re-simulates one window
	// instead of the segment.
	// So does a unit that starts from the last of the segment's
	// snapshots when no window follows it yet (the segment's first
	// snapshot alone, say, left by a seek to its start).
	// Only a search that observes memory keeps them: it pays for
	// observing every access anyway, while one for an execution
	// breakpoint or a predicate runs several times faster untracked
	// (the seek to its stop then re-simulates, tracking, from the
	// segment's start to the stop only).
	observes := len(p.mems) > 0
	keep := observes && u.win < 0 && r.Position() == s.cps[u.seg].Position && (s.fine[u.seg] == nil || len(s.fine[u.seg].snaps) == 0)
	if keep {
		r.Track()
		fl := s.fineFor(u.seg)
		sn := r.Snapshot()
		fl.snaps = append(fl.snaps, sn)
		s.addFine(fl, sn.Bytes())
	} else if fl := s.fine[u.seg]; observes && u.win >= 0 && u.snap == nil && fl != nil && u.win == len(fl.snaps)-1 && u.win == len(fl.deltas) &&
		r.Position() == fl.snaps[u.win].Position() && r.WindowStart() == r.Position() {
		keep = true
	}
	// A kept window keeps the code it ran too (execwin.go).
	var ex *execWindow
	if keep {
		ex = &execWindow{}
	}
	if !keep {
		// The session keeps nothing of this run: it need not track, and
		// going backward it stops at from (hits at or after it do not
		// count).
		r.Untrack()
		if !p.forward {
			u.end = min(u.end, max(p.from, u.start))
		}
	}
	for r.Position() < u.end {
		if err := s.interrupted(); err != nil {
			return err
		}
		// One window at a time: a search can be interrupted, and going
		// forward it stops at the first boundary after a hit.
		target := min(u.end, s.nextBoundary(u.seg, r.Position()))
		err := s.runTo(r, ex, u.seg, target)
		if err == reader.ErrEnd || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return err
		}
		if keep && r.Position() == target && target == s.nextBoundary(u.seg, target-1) {
			keep = s.keepWindow(u.seg, r, ex)
		}
		if p.forward && p.found {
			break
		}
	}
	if f := p.find; f != nil && f.found && f.disasmDue {
		f.code, f.text = s.disasm(r, f.accs[0].PC)
		f.disasmDue = false
	}
	return nil
}

// keepWindow closes r's tracking window at a window boundary of segment
// k, keeping its delta and a snapshot in the session's list when they
// extend it; it reports whether the list still follows r.
func (s *Session) keepWindow(k int, r *reader.Replay, ex *execWindow) bool {
	ws, b := r.WindowStart(), r.Position()
	d := r.Cut()
	fl := s.fine[k]
	if fl == nil {
		return false
	}
	j := int((ws - s.cps[k].Position) / s.opts.FineEvery)
	if len(fl.deltas) != j || len(fl.snaps) != j+1 {
		return false
	}
	fl.deltas = append(fl.deltas, d)
	s.addFine(fl, d.Bytes())
	cutExec(ex, fl, j, ws, b)
	if b < s.segEnd(k) {
		sn := r.Snapshot()
		fl.snaps = append(fl.snaps, sn)
		s.addFine(fl, sn.Bytes())
	}
	return true
}

// windowsBack lists the units of segment k that cover [lower, hi), newest
// first, using the session's snapshots when it has them.
func (s *Session) windowsBack(k int, lower, hi uint64) []unit {
	fl := s.fine[k]
	if fl == nil || len(fl.snaps) == 0 {
		return []unit{{seg: k, win: -1, start: s.cps[k].Position, end: hi}}
	}
	var us []unit
	j := sort.Search(len(fl.snaps), func(j int) bool { return fl.snaps[j].Position() >= hi }) - 1
	for ; j >= 0; j-- {
		ws := fl.snaps[j].Position()
		we := hi
		if j+1 < len(fl.snaps) {
			we = min(hi, fl.snaps[j+1].Position())
		}
		us = append(us, unit{seg: k, win: j, start: ws, end: we})
		if ws <= lower {
			break
		}
	}
	return us
}

// microIn returns the latest micro snapshot of segment k in (lo, hi),
// or nil.
func (s *Session) microIn(k int, lo, hi uint64) *reader.Snapshot {
	var best *reader.Snapshot
	for _, m := range s.micro {
		if pos := m.snap.Position(); m.seg == k && pos > lo && pos < hi && (best == nil || pos > best.Position()) {
			best = m.snap
		}
	}
	return best
}

// scanBack finds the last hit of p before p.from (and after lower).
func (s *Session) scanBack(p *probe, lower uint64) error {
	if p.from == 0 {
		return nil
	}
	ix, err := s.index()
	if err != nil {
		return err
	}
	for k := s.segOf(p.from - 1); k >= 0; k-- {
		if s.segEnd(k) < lower {
			break
		}
		if !p.mayHitSegment(ix, k) {
			continue
		}
		// Units end at a window boundary: a unit that holds from
		// runs on past it to the end of its window, so that the window
		// is re-simulated whole (and its snapshot and delta can be
		// kept); offer and the finder refuse the hits at or after from.
		hi := s.segEnd(k)
		if p.from < hi {
			hi = s.nextBoundary(k, p.from-1)
		}
		if hi <= s.cps[k].Position {
			continue
		}
		fl := s.fine[k]
		for i, u := range s.windowsBack(k, lower, hi) {
			if fl != nil && u.win >= 0 && u.win < len(fl.deltas) && !s.windowMayHit(p, fl, u.win) {
				continue
			}
			// The unit that holds from: first the stretch from the
			// micro snapshot closest before from (a step back after a
			// stop, a breakpoint a few lines back), then, when that
			// holds no hit, the whole unit.
			if m := s.microIn(k, u.start, p.from); i == 0 && m != nil && p.find == nil {
				mu := u
				mu.start, mu.snap = m.Position(), m
				if err := s.runUnit(mu, p); err != nil {
					return err
				}
				if p.found {
					p.unit = mu
					return nil
				}
			}
			if err := s.runUnit(u, p); err != nil {
				return err
			}
			if p.found {
				p.unit = u
				return nil
			}
		}
	}
	return nil
}

// scanForward finds the first hit of p after p.from (and before upper).
// Travel runs on from the current position (onward.go); a Find query
// re-simulates units.
func (s *Session) scanForward(p *probe, upper uint64) error {
	if p.find == nil && p.from == s.pos {
		return s.scanForwardCur(p, upper)
	}
	ix, err := s.index()
	if err != nil {
		return err
	}
	for k := s.segOf(p.from); k < len(s.cps) && s.cps[k].Position <= upper; k++ {
		if !p.mayHitSegment(ix, k) {
			continue
		}
		// An execution hit at upper is seen before instruction upper
		// runs, hence upper+1.
		u := unit{seg: k, win: -1, start: s.cps[k].Position, end: min(s.segEnd(k), upper+1)}
		if u.end <= u.start {
			continue
		}
		if u.start <= p.from {
			if fl := s.fine[k]; fl != nil {
				j := sort.Search(len(fl.snaps), func(j int) bool { return fl.snaps[j].Position() > p.from }) - 1
				if j >= 0 {
					u.win, u.start = j, fl.snaps[j].Position()
				}
			}
		}
		if err := s.runUnit(u, p); err != nil {
			return err
		}
		if p.found {
			p.unit = u
			return nil
		}
	}
	return nil
}
