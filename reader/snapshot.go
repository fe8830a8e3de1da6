package reader

import (
	"maps"
	"slices"

	"ttd/predict"
	"ttd/tracefile"
	"ttd/x86"
)

// Snapshot is a re-simulation's complete state at a position, taken
// between two RunTo calls: every thread's registers and prediction cache,
// the cursors into the trace, and the address space's layout and code.
// Resuming it continues exactly as the replay it came from would have.
// The iDNA paper's checkpoints are in the trace; snapshots are the
// reader's own, finer, kept in memory around the position a user
// examines, so that stepping backwards re-simulates little.
type Snapshot struct {
	pos         uint64
	ch          *chunk
	ci          int
	codeDone    int
	rd, nd      int
	threads     []threadState
	cur         int // index into threads, or -1
	regions     []region
	code        map[uint64]*[x86.PageSize]byte
	exit        *tracefile.Exit
	atEnd       bool
	checkpoints int
}

type threadState struct {
	tid                     int
	regs                    []byte
	cache                   *predict.Cache
	reads, lastLogged, seen uint64
	exited                  bool
}

// Position is where the snapshot was taken.
func (s *Snapshot) Position() uint64 { return s.pos }

// Bytes is the memory the snapshot holds, roughly (shared code pages are
// counted in every snapshot that refers to them).
func (s *Snapshot) Bytes() int {
	n := 256 + len(s.regions)*24 + len(s.code)*32
	for _, t := range s.threads {
		n += len(t.regs) + 8*t.cache.Slots() + 64
	}
	return n
}

// Snapshot captures the replay's state. It must not be called from a
// Hook, Access or OnEvent callback.
func (r *Replay) Snapshot() *Snapshot {
	s := &Snapshot{pos: r.pos, ch: r.ch, ci: r.ci, codeDone: r.codeDone, rd: r.rd, nd: r.nd, cur: -1,
		regions: slices.Clone(r.as.regions), code: r.as.codePages(), exit: r.exit, atEnd: r.atEnd, checkpoints: r.Checkpoints}
	for i, t := range r.threads {
		s.threads = append(s.threads, threadState{tid: t.tid, regs: t.cpu.MarshalState(nil), cache: t.cache.Clone(),
			reads: t.reads, lastLogged: t.lastLogged, seen: t.seen, exited: t.exited})
		if t == r.cur {
			s.cur = i
		}
	}
	return s
}

// Resume returns a new Replay in the state s was taken in. The snapshot
// can be resumed any number of times.
func (t *Trace) Resume(s *Snapshot) (*Replay, error) {
	r := t.newReplay()
	r.as.regions = slices.Clone(s.regions)
	r.as.init = maps.Clone(s.code)
	r.pos, r.ch, r.ci, r.codeDone, r.rd, r.nd = s.pos, s.ch, s.ci, s.codeDone, s.rd, s.nd
	r.exit, r.atEnd, r.Checkpoints = s.exit, s.atEnd, s.checkpoints
	for i, ts := range s.threads {
		th := r.thread(ts.tid)
		if err := th.cpu.UnmarshalState(ts.regs); err != nil {
			return nil, err
		}
		th.cache = ts.cache.Clone()
		th.reads, th.lastLogged, th.seen, th.exited = ts.reads, ts.lastLogged, ts.seen, ts.exited
		if i == s.cur {
			r.cur = th
		}
	}
	return r, nil
}
