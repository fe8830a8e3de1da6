package ttd

import "ttd/reader"

// Forward searches run on from where the session is. A continue, a
// range step or a thread step going forward re-simulates the session's
// own replay (cur) from the current position with the probe installed,
// instead of a throw-away replay restored from the snapshot before it:
// the instructions between that snapshot and the current position are
// not run again, and when the probe fires cur is already near the stop.
//
// The replay cannot stop in the middle of a run when the probe fires
// (the hook only observes), so it runs in chunks that grow from
// firstChunk, each starting from a snapshot when it does not start on a
// window boundary (where the session keeps one anyway). A chunk that
// holds the hit is run again from its start to the hit, at most its own
// length; the chunk's snapshot is then kept among the micro snapshots,
// so that stepping back from the stop re-simulates little.
//
// Find queries keep the unit scan (scan.go): a finder learns the bytes
// of the range from the start of a window.

// firstChunk is the length of the first chunk a forward search runs:
// short continues (gdb's range steps, a breakpoint a few lines on) stop
// within it.
const firstChunk = 4096

// scanForwardCur finds the first hit of p after p.from (at or before
// upper) by running cur. When nothing is found, cur is left at or
// before upper+1, close to upper when the last chunk had a snapshot.
func (s *Session) scanForwardCur(p *probe, upper uint64) error {
	if err := s.sync(); err != nil {
		return err
	}
	ix, err := s.index()
	if err != nil {
		return err
	}
	chunk := uint64(firstChunk)
	for k := s.segOf(p.from); k < len(s.cps) && s.cps[k].Position <= upper; k++ {
		if !p.mayHitSegment(ix, k) {
			continue
		}
		// An execution hit at upper is seen before instruction upper
		// runs, hence upper+1.
		end := min(s.segEnd(k), upper+1)
		if end <= s.cps[k].Position || end <= s.cur.Position() {
			continue
		}
		if s.cur.Position() < s.cps[k].Position {
			// The segments in between cannot hit: jump over them.
			if err := s.seekCur(s.cps[k].Position); err != nil {
				return err
			}
		}
		if err := s.runCur(p, end, upper, &chunk); err != nil {
			return err
		}
		if p.found {
			p.unit = unit{seg: k, win: -1, start: s.cps[k].Position, end: end}
			return nil
		}
	}
	return nil
}

// runCur runs cur with p installed to end (in cur's segment), chunk by
// chunk, until p finds a hit. It leaves cur at or before the hit, or,
// when p found none, at or before upper when the last chunk can be
// started again.
func (s *Session) runCur(p *probe, end, upper uint64, chunk *uint64) error {
	p.install(s.cur)
	defer func() { uninstall(s.cur) }()
	for s.cur.Position() < end {
		if err := s.interrupted(); err != nil {
			return err
		}
		a, k := s.cur.Position(), s.curSeg
		onBoundary := (a-s.cps[k].Position)%s.opts.FineEvery == 0
		if onBoundary && s.skipWindow(p, k, a, end) {
			p.install(s.cur)
			continue
		}
		target := min(end, s.nextBoundary(k, a))
		var snap *reader.Snapshot
		if !onBoundary {
			snap = s.cur.Snapshot()
		}
		target = min(target, a+*chunk)
		*chunk = min(2**chunk, s.opts.FineEvery)
		done, err := s.advanceWindow(target)
		if err != nil {
			return err
		}
		if !p.found && !done && s.cur.Position() < end {
			continue
		}
		want := upper
		if p.found {
			want = p.stop
		}
		if s.cur.Position() > want && snap != nil {
			// Start the chunk again: the caller goes to want next.
			uninstall(s.cur)
			r, err := s.tr.ResumeInto(snap, s.cur)
			if err != nil {
				return err
			}
			s.cur, s.curSeg = r, k
			s.addMicro(k, snap)
		}
		return nil
	}
	return nil
}

// skipWindow moves cur, which is on a window boundary of segment k, to
// the next one when the session knows the window cannot hold a hit of p
// (its delta, or the code it executed, and the next snapshot are kept)
// and the next boundary is not past end. It reports whether it moved
// cur.
func (s *Session) skipWindow(p *probe, k int, a, end uint64) bool {
	fl := s.fine[k]
	if fl == nil {
		return false
	}
	j := int((a - s.cps[k].Position) / s.opts.FineEvery)
	if j >= len(fl.deltas) || j+1 >= len(fl.snaps) || fl.snaps[j+1].Position() > end || s.windowMayHit(p, fl, j) {
		return false
	}
	r, err := s.tr.ResumeInto(fl.snaps[j+1], s.cur)
	if err != nil {
		return false
	}
	r.Track()
	s.cur, s.curSeg = r, k
	s.ex.skipped++
	return true
}

// uninstall removes what probe.install set on r.
func uninstall(r *reader.Replay) {
	r.Hook, r.HookBlocks, r.Access = nil, nil, nil
	r.Watch(nil)
}

// addMicro keeps sn, a snapshot of cur in segment k, among the micro
// snapshots (most recent last).
func (s *Session) addMicro(k int, sn *reader.Snapshot) {
	if s.hasMicro(k, sn.Position()) {
		return
	}
	s.micro = append(s.micro, microSnap{seg: k, snap: sn})
	if len(s.micro) > maxMicro {
		s.micro = s.micro[1:]
	}
}
