package reader

import (
	"fmt"
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
	carry       [][]logRead
	carryCh     []*chunk
	carryN      int
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
	// track is the tracking window, when the replay was tracking.
	track *trackState
	// procs are the processes of a process tree (regions and code are
	// then unused); mapTo the process the Mmap records apply to.
	procs []procState
	mapTo int
	// mems are the memory of each address space, by pid, in a trace
	// that logs no reads (snapmem.go).
	mems map[int]*spaceMem
}

// procState is a process of a tree in a snapshot.
type procState struct {
	pid, ppid, shares int
	regions           []region
	code              map[uint64]*[x86.PageSize]byte
	exited            bool
	exit              *tracefile.Exit
	verified          int
}

// trackState is a tracking window: what it knows and the bytes.
type trackState struct {
	start  uint64
	pages  map[uint64]tpage
	data   map[uint64]*[x86.PageSize]byte
	resets []Range
}

type threadState struct {
	tid              int
	regs             []byte
	cache            *predict.Frozen
	lastLogged, seen uint64 // the cache keeps the read count
	exited           bool
	pid              int
}

// Position is where the snapshot was taken.
func (s *Snapshot) Position() uint64 { return s.pos }

// Bytes is the memory the snapshot holds, roughly: shared code pages are
// counted in every snapshot that refers to them, and the pages of a
// prediction cache in the snapshot that copied them only (a thread's
// next snapshot shares those it did not change).
func (s *Snapshot) Bytes() int {
	n := 256 + len(s.regions)*24 + len(s.code)*32
	for _, t := range s.threads {
		n += len(t.regs) + 64
		if t.cache != nil {
			n += t.cache.Bytes()
		}
	}
	if s.track != nil {
		n += len(s.track.pages)*600 + len(s.track.data)*x86.PageSize
	}
	return n + s.memBytes()
}

// Snapshot captures the replay's state. It must not be called from a
// Hook, Access or OnEvent callback.
func (r *Replay) Snapshot() *Snapshot {
	s := &Snapshot{pos: r.pos, ch: r.ch, carry: r.carry, carryCh: r.carryCh, carryN: r.carryN, ci: r.ci, codeDone: r.codeDone, rd: r.rd, nd: r.nd, cur: -1,
		exit: r.exit, atEnd: r.atEnd, checkpoints: r.Checkpoints}
	if r.streaming {
		r.t.cache.pin(r.heldNow()) // the snapshot reads them too
	}
	if r.t.tree {
		for _, p := range r.procs {
			ps := procState{pid: p.pid, ppid: p.ppid, exited: p.exited, exit: p.exit, verified: p.verified}
			if p.shares != nil {
				ps.shares = p.shares.pid
			} else {
				ps.regions, ps.code = slices.Clone(p.as.regions), p.as.codePages()
			}
			s.procs = append(s.procs, ps)
		}
		if r.mapTo != nil {
			s.mapTo = r.mapTo.pid
		}
	} else {
		s.regions, s.code = slices.Clone(r.as.regions), r.as.codePages()
	}
	r.snapMemories(s)
	for i, t := range r.threads {
		if !t.exited {
			t.frozen = t.cache.Freeze(t.frozen)
		}
		s.threads = append(s.threads, threadState{tid: t.tid, regs: t.cpu.MarshalState(nil), cache: t.frozen,
			lastLogged: t.lastLogged, seen: t.seen, exited: t.exited, pid: t.proc.pid})
		if t == r.cur {
			s.cur = i
		}
	}
	if tr := r.track; tr != nil {
		tr.foldMarks()
		ts := &trackState{start: tr.start, pages: make(map[uint64]tpage, len(tr.pages)),
			data: map[uint64]*[x86.PageSize]byte{}, resets: slices.Clone(tr.resets)}
		for pn, p := range tr.pages {
			ts.pages[pn] = tpage{known: p.known, read: p.read, written: p.written, exec: p.exec}
			if p.known != (PageBits{}) {
				if pg := r.fas.mem.Lookup(pn); pg != nil {
					d := new([x86.PageSize]byte)
					*d = *pg.Data
					ts.data[pn] = d
				}
			}
		}
		s.track = ts
	}
	return s
}

// Resume returns a new Replay in the state s was taken in, tracking
// (with the same window) if the replay was. The snapshot can be resumed
// any number of times.
func (t *Trace) Resume(s *Snapshot) (*Replay, error) { return t.resume(s, nil, nil) }

// resume is Resume; in a process tree, the address spaces (and decoded
// code) of the processes in reuse whose layout is the snapshot's are
// recycled rather than made again, and so are the threads of old (by
// tid) whose process's space was recycled: their CPUs and prediction
// caches.
func (t *Trace) resume(s *Snapshot, reuse map[int]*process, old []*thread) (*Replay, error) {
	r := t.newReplay()
	if t.tree {
		r.procs = nil
		for _, ps := range s.procs {
			p := &process{pid: ps.pid, ppid: ps.ppid, exited: ps.exited, exit: ps.exit, verified: ps.verified}
			if ps.shares == 0 {
				if sm := s.mems[ps.pid]; t.noReads && sm != nil {
					p.as = r.addrSpaceFrom(sm, ps.regions)
					p.code = r.newCode(p.as.mem)
				} else if o := reuse[ps.pid]; o != nil && slices.Equal(o.as.regions, ps.regions) {
					p.as, p.code = o.as, o.code
					p.as.recycle(ps.code)
				} else {
					p.as = newAddrSpace()
					p.as.regions = slices.Clone(ps.regions)
					p.as.init = maps.Clone(ps.code)
					p.code = r.newCode(p.as.mem)
				}
			}
			r.procs = append(r.procs, p)
		}
		for i, ps := range s.procs {
			if ps.shares != 0 {
				q := r.proc(ps.shares)
				if q == nil {
					return nil, fmt.Errorf("snapshot: process %d shares the memory of process %d, which it does not hold", ps.pid, ps.shares)
				}
				p := r.procs[i]
				p.shares, p.as, p.code = q, q.as, q.code
			}
		}
		r.mapTo = r.proc(s.mapTo)
		r.reshare()
	} else if sm := s.mems[0]; t.noReads && sm != nil {
		p := r.procs[0]
		p.as = r.addrSpaceFrom(sm, s.regions)
		p.code = r.newCode(p.as.mem)
		r.reshare()
		r.refocus()
		r.retarget()
	} else {
		r.as.regions = slices.Clone(s.regions)
		r.as.gen++
		r.as.init = maps.Clone(s.code)
	}
	r.restorePosition(s)
	for i, ts := range s.threads {
		var th *thread
		if t.tree {
			p := r.proc(ts.pid)
			if p == nil {
				return nil, fmt.Errorf("snapshot: thread %d of process %d, which it does not hold", ts.tid, ts.pid)
			}
			for k, o := range old {
				if o != nil && o.tid == ts.tid && o.cache != nil && o.cpu.Mem == p.as.mem {
					th, old[k] = o, nil
					th.proc, th.cpu.Obs = p, r
					r.threads = append(r.threads, th)
					break
				}
			}
			if th == nil {
				th = r.newThread(ts.tid, p)
			}
		} else {
			th = r.thread(ts.tid)
		}
		if err := th.restore(&ts, t.cacheBits); err != nil {
			return nil, err
		}
		if i == s.cur {
			r.cur = th
		}
	}
	r.refocus()
	r.retarget()
	if ts := s.track; ts != nil {
		r.track = ts.tracker()
		for pn, d := range ts.data {
			if pg := r.fas.mem.Lookup(pn); pg != nil {
				// A recycled page.
				if *pg.Data != *d {
					r.fas.mem.Poke(pn<<x86.PageShift, d[:])
				}
			} else if r.fas.init[pn] == nil {
				r.fas.data[pn] = d
			}
		}
		// The window's known bytes are read from the pages: make them.
		for pn, p := range r.track.pages {
			if p.known != (PageBits{}) {
				r.fas.mem.PageAt(pn)
			}
		}
	}
	return r, nil
}

// ResumeInto is Resume reusing r, a replay of the same trace that is no
// longer needed: its memory, decoded code and prediction caches are
// recycled when the address space's layout is the snapshot's, which makes
// going back to a nearby snapshot cheap (no allocation, no decoding). r
// must not be used afterwards; the returned replay may be r itself.
func (t *Trace) ResumeInto(s *Snapshot, r *Replay) (*Replay, error) {
	if t.noReads {
		// Its memory is the snapshot's, not recycled pages.
		return t.Resume(s)
	}
	if r != nil && r.t == t && t.tree {
		// Each process's address space and decoded code are recycled
		// when its layout is the snapshot's (stepping back in a tree
		// decodes nothing again); the threads are made again.
		reuse := map[int]*process{}
		for _, p := range r.procs {
			if p.shares == nil && p.as != nil {
				reuse[p.pid] = p
			}
		}
		old := r.threads
		r.threads, r.cur = nil, nil
		nr, err := t.resume(s, reuse, old)
		// The threads not reused give their prediction caches back.
		for _, o := range old {
			if o != nil && o.cache != nil {
				o.cpu.DropPred()
				o.cache.Release()
				o.cache = nil
			}
		}
		return nr, err
	}
	if r == nil || r.t != t || !slices.Equal(r.as.regions, s.regions) {
		return t.Resume(s)
	}
	as := r.as
	as.recycle(s.code)
	// Threads: the snapshot's, reusing CPUs and caches by thread id.
	old := r.threads
	r.threads = nil
	for i, ts := range s.threads {
		var th *thread
		for _, o := range old {
			if o != nil && o.tid == ts.tid {
				th = o
				break
			}
		}
		if th == nil {
			th = r.thread(ts.tid)
		} else {
			r.threads = append(r.threads, th)
		}
		if err := th.restore(&ts, t.cacheBits); err != nil {
			return nil, err
		}
		if i == s.cur {
			r.cur = th
		}
	}
	if s.cur < 0 {
		r.cur = nil
	}
	r.restorePosition(s)
	r.err = nil
	r.Hook, r.Access, r.OnEvent, r.Output, r.watch, r.Verify = nil, nil, nil, nil, nil, false
	r.track = nil
	if ts := s.track; ts != nil {
		r.track = ts.tracker()
		// The window's known bytes must be in the pages.
		for pn, d := range ts.data {
			pg := as.mem.PageAt(pn)
			if pg != nil && *pg.Data != *d {
				as.mem.Poke(pn<<x86.PageShift, d[:])
			}
		}
	}
	return r, nil
}

// recycle prepares an address space a replay used for a resume of a
// snapshot with the same layout, whose code pages are code: the
// snapshot's version of every code page (a page that changed is
// rewritten, which invalidates its decoded blocks; the others keep
// theirs).
func (as *addrSpace) recycle(code map[uint64]*[x86.PageSize]byte) {
	as.init = map[uint64]*[x86.PageSize]byte{}
	clear(as.data)
	for pn, f := range code {
		pg := as.mem.Lookup(pn)
		switch {
		case pg == nil:
			as.init[pn] = f
		case *pg.Data != *f && !onlyAdded(f, pg.Data):
			as.mem.Poke(pn<<x86.PageShift, f[:]) // invalidates its blocks
			as.frozen[pn] = f
		default:
			// The same, or code the trace gives later added where
			// the snapshot has zeros (it gives the same bytes again
			// before they run): the page's decoded blocks stay.
			as.frozen[pn] = f
		}
	}
}

// onlyAdded reports whether cur differs from old only in bytes that are
// zero in old.
func onlyAdded(old, cur *[x86.PageSize]byte) bool {
	for i := range old {
		if old[i] != cur[i] && old[i] != 0 {
			return false
		}
	}
	return true
}

// restorePosition puts r where the snapshot was taken in the trace.
func (r *Replay) restorePosition(s *Snapshot) {
	r.pos, r.ch, r.carry, r.carryCh, r.carryN, r.ci, r.codeDone, r.rd, r.nd = s.pos, s.ch, s.carry, s.carryCh, s.carryN, s.ci, s.codeDone, s.rd, s.nd
	r.setSegs()
	r.rehold() // the snapshot's chunks are pinned (Snapshot)
	r.exit, r.atEnd, r.Checkpoints = s.exit, s.atEnd, s.checkpoints
}

// restore gives th the snapshot's registers, prediction cache (with its
// read count; a thread that had ended has none) and progress.
func (th *thread) restore(ts *threadState, cacheBits uint) error {
	if err := th.cpu.UnmarshalState(ts.regs); err != nil {
		return err
	}
	switch {
	case ts.exited:
		th.cpu.DropPred()
		if th.cache != nil {
			th.cache.Release()
		}
		th.cache = nil
	case th.cache == nil:
		th.cache = predict.New(cacheBits)
		fallthrough
	default:
		th.cache.Thaw(ts.cache)
	}
	th.frozen = ts.cache
	th.lastLogged, th.seen, th.exited = ts.lastLogged, ts.seen, ts.exited
	return nil
}

// tracker returns a tracker in the state ts saved (its pages' data is
// the caller's to place).
func (ts *trackState) tracker() *tracker {
	t := newTracker(ts.start)
	t.resets = slices.Clone(ts.resets)
	for pn, p := range ts.pages {
		np := new(tpage)
		*np = p
		t.pages[pn] = np
	}
	return t
}
