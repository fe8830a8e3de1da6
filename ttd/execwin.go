package ttd

import (
	"cmp"
	"slices"

	"ttd/reader"
	"ttd/x86"
)

// Executed code per window. The access summaries say which code pages a
// segment executed, so that a breakpoint search skips the segments that
// never ran its address; within a segment, the session learns which
// code each window of its snapshots executed as it re-simulates the
// window, so that searches skip those windows too (skipWindow going
// forward, the backward scan going back): the address ranges of the
// blocks it ran.
//
// The replay asks its block filter (x86.BlockFilter, reader's
// HookBlocks) for a verdict on every block it executes, once per RunTo:
// each RunTo starts a new generation of verdicts (reader's
// FilterVersion). So a filter installed around every RunTo of the
// session's replay sees every block that runs in it; the blocks
// gathered over the RunTo calls that cover a window end to end hold
// every address the window executed (and the rest of a block a fault
// or an interrupt left early).

// codeRange is the address range of a block, [lo, hi).
type codeRange struct{ lo, hi uint64 }

// execWindow gathers the blocks cur executes from start on.
type execWindow struct {
	// start is where gathering began and pos where the last counted run
	// ended: a run of cur that starts elsewhere begins again.
	start, pos uint64
	blocks     map[codeRange]struct{}
	// ok: start is a window boundary, so the blocks describe the window
	// from its beginning.
	ok bool
	// skipped counts the windows skipWindow jumped over (for tests).
	skipped int
}

func noHook(*reader.Replay, *x86.CPU, *x86.Inst) {}

// runCurTo is cur.RunTo(target) with the executed blocks gathered.
func (s *Session) runCurTo(target uint64) error { return s.runTo(s.cur, &s.ex, s.curSeg, target) }

// runTo is r.RunTo(target), r being in segment k, with the executed
// blocks gathered into ex (nil: none). The probe a search installed
// keeps its verdicts; a run whose blocks the filter cannot all see (a
// HookBlock that accepts blocks before HookBlocks is asked) gathers
// nothing for its window.
func (s *Session) runTo(r *reader.Replay, ex *execWindow, k int, target uint64) error {
	if ex == nil {
		return r.RunTo(target)
	}
	if pos := r.Position(); ex.blocks == nil || pos != ex.pos {
		ex.start, ex.ok = pos, (pos-s.cps[k].Position)%s.opts.FineEvery == 0
		if ex.blocks == nil {
			ex.blocks = map[codeRange]struct{}{}
		}
		clear(ex.blocks)
	}
	if r.HookBlock != nil {
		ex.ok = false
		err := r.RunTo(target)
		ex.pos = r.Position()
		return err
	}
	h, hb := r.Hook, r.HookBlocks
	see := func(lo, hi uint64) { ex.blocks[codeRange{lo, max(hi, lo+1)}] = struct{}{} }
	switch {
	case h == nil:
		// No observer: a hook that never runs, so that the filter is
		// asked (every block declined).
		r.Hook = noHook
		r.HookBlocks = func(lo, hi uint64) bool { see(lo, hi); return false }
	case hb == nil:
		// The probe observes every block.
		r.HookBlocks = func(lo, hi uint64) bool { see(lo, hi); return true }
	default:
		r.HookBlocks = func(lo, hi uint64) bool { see(lo, hi); return hb(lo, hi) }
	}
	err := r.RunTo(target)
	r.Hook, r.HookBlocks = h, hb
	ex.pos = r.Position()
	return err
}

// cutExec hands the blocks ex gathered for window j of fine list fl,
// which ends at b, to fl when they cover the window from its start (ws),
// and starts gathering for the next window.
func cutExec(ex *execWindow, fl *fineList, j int, ws, b uint64) {
	if ex == nil {
		return
	}
	if ex.ok && ex.start == ws && ex.pos == b && ex.blocks != nil {
		blocks := make([]codeRange, 0, len(ex.blocks))
		for c := range ex.blocks {
			blocks = append(blocks, c)
		}
		slices.SortFunc(blocks, func(a, b codeRange) int { return cmp.Compare(a.lo, b.lo) })
		for len(fl.exec) <= j {
			fl.exec = append(fl.exec, nil)
		}
		if fl.exec[j] == nil {
			fl.exec[j] = blocks
		}
	}
	ex.start, ex.ok = b, true
	if ex.blocks != nil {
		clear(ex.blocks)
	}
}

// windowMayHit reports whether window j of fine list fl can hold a hit
// of p: its accesses (the window's delta) for data breakpoints, the code
// it executed for execution breakpoints (unknown: it may). Thread steps
// and predicates always may.
func (s *Session) windowMayHit(p *probe, fl *fineList, j int) bool {
	if p.tid != 0 || p.match != nil || p.shared {
		return true
	}
	if len(p.pcs) > 0 {
		if j >= len(fl.exec) || fl.exec[j] == nil {
			return true
		}
		for _, pc := range p.pcs {
			if ranAt(fl.exec[j], pc) {
				return true
			}
		}
	}
	d := fl.deltas[j]
	for _, w := range p.mems {
		if windowAccessed(d, w.lo, w.hi-w.lo, w.read, w.write) {
			return true
		}
	}
	return false
}

// ranAt reports whether one of blocks (sorted by lo) holds pc.
func ranAt(blocks []codeRange, pc uint64) bool {
	n, _ := slices.BinarySearchFunc(blocks, pc+1, func(c codeRange, t uint64) int { return cmp.Compare(c.lo, t) })
	for _, c := range blocks[:n] {
		if pc < c.hi {
			return true
		}
	}
	return false
}
