package reader

import "ttd/x86"

// Memory knowledge of every process. Track follows the focus's address
// space only: the other processes of a tree run unobserved, so what
// their syscalls read and wrote is unknown. TrackProcesses gives every
// address space of the tree a tracker of its own (one window each,
// from the position tracking began), kept as the tree changes:
//
//   - a fork's child starts with what its parent's tracker knew (its
//     memory is a copy); a CLONE_VM child shares its parent's;
//   - an exec starts an empty one (the old memory is gone);
//   - an address space no process uses any more is dropped.
//
// Known, Cut, WasReset and WindowStart keep reporting the focus's;
// KnownOf reports any process's. The replay observes every read and
// write, whichever process runs, so it runs at tracking speed
// throughout. It is for forward runs (syscall export): snapshots of it
// keep the focus's window only.

// procKnown holds the tracker of every address space of the tree.
type procKnown struct {
	spaces map[*addrSpace]*tracker
}

// TrackProcesses starts tracking, like Track, in every process's
// address space (see above). Call it before the first RunTo.
func (r *Replay) TrackProcesses() {
	r.Track()
	if r.pk == nil {
		r.pk = &procKnown{spaces: map[*addrSpace]*tracker{}}
		if r.fas != nil {
			r.pk.spaces[r.fas] = r.track
		}
	}
}

// of returns the tracker of as, starting an empty window at pos when it
// has none.
func (k *procKnown) of(as *addrSpace, pos uint64) *tracker {
	t := k.spaces[as]
	if t == nil {
		t = newTracker(pos)
		k.spaces[as] = t
	}
	return t
}

// focusTrack is the tracker of the focus's address space.
func (r *Replay) focusTrack() *tracker {
	if r.pk != nil {
		return r.pk.of(r.fas, r.pos)
	}
	return r.track
}

// trackFor is the tracker that learns what is written to as, or nil.
func (r *Replay) trackFor(as *addrSpace) *tracker {
	switch {
	case r.pk != nil:
		return r.pk.of(as, r.pos)
	case as == r.fas:
		return r.track
	}
	return nil
}

// retrack points tracking at the address space records apply to now
// (retarget), and observes every process's accesses.
func (r *Replay) retrack() {
	if r.vw != nil {
		r.track, r.more = nil, nil
		if ts := r.vw.route[r.as]; len(ts) > 0 {
			r.track, r.more = ts[0], ts[1:]
		}
		r.observe = r.observing && (r.track != nil || r.accessAll && r.Access != nil)
		return
	}
	if r.pk == nil {
		return
	}
	r.track = r.pk.of(r.as, r.pos)
	r.observe = r.observing
}

// tracksHere reports whether r.track is the running process's tracker:
// with one tracker (Track) it is the focus's, and an access of another
// process, observed for AccessAllProcesses, is not its.
func (r *Replay) tracksHere() bool { return r.as == r.fas || r.pk != nil || r.vw != nil }

// knownProcess keeps the trackers in step with a Process record, before
// the focus is found again (applyProcess).
func (r *Replay) knownProcess() {
	if r.pk == nil {
		return
	}
	if r.forked != nil {
		r.pk.spaces[r.forked] = r.pk.of(r.forkedFrom, r.pos).fork(r.pos)
	}
	used := map[*addrSpace]bool{r.fas: true}
	for _, p := range r.procs {
		if !p.exited {
			used[p.as] = true
		}
	}
	for as := range r.pk.spaces {
		if !used[as] {
			delete(r.pk.spaces, as)
		}
	}
}

// fork returns a tracker that knows what t knows, in a window starting
// at pos.
func (t *tracker) fork(pos uint64) *tracker {
	t.foldMarks()
	n := newTracker(pos)
	for pn, p := range t.pages {
		if p.known != (PageBits{}) {
			n.pages[pn] = &tpage{known: p.known}
		}
	}
	return n
}

// KnownOf is Known for the memory of process pid: with TrackProcesses
// on, what re-simulation learned of that process's memory; without
// it, the focus's knowledge when pid is the focus, nothing otherwise.
func (r *Replay) KnownOf(pid int, addr uint64, buf []byte, have []bool) {
	p := r.proc(pid)
	switch {
	case p == nil && len(r.procs) == 1 && r.procs[0].pid == 0:
		p = r.procs[0] // before the first Process record
	case p == nil:
		return
	}
	if r.t.noReads {
		mappedBytes(p.as.mem, addr, buf, have)
		return
	}
	if r.pk == nil {
		if p.as == r.fas && r.track != nil {
			r.track.known(r.fas.mem, addr, buf, have)
		}
		return
	}
	if t := r.pk.spaces[p.as]; t != nil {
		t.known(p.as.mem, addr, buf, have)
	}
}

// KnownPages is the number of pages the trackers hold (to check that
// tracking stays bounded).
func (r *Replay) KnownPages() int {
	if r.pk == nil {
		if r.track == nil {
			return 0
		}
		return len(r.track.pages)
	}
	n := 0
	for _, t := range r.pk.spaces {
		n += len(t.pages)
	}
	return n
}

// RecordsPid is the process whose address space the address-space
// records (Mmap, Munmap, Mprotect) apply to at this point: the process
// a checkpoint's ProcessState re-describes, else the running thread's
// (0 before the first process is known).
func (r *Replay) RecordsPid() int {
	switch {
	case r.mapTo != nil:
		return r.mapTo.pid
	case r.cur != nil && r.cur.proc != nil:
		return r.cur.proc.pid
	}
	return 0
}

// mappedBytes fills the bytes of buf not marked in have from mem's
// mapped pages.
func mappedBytes(mem *x86.Memory, addr uint64, buf []byte, have []bool) {
	for i := 0; i < len(buf); {
		a := addr + uint64(i)
		off := int(a & (x86.PageSize - 1))
		n := min(len(buf)-i, x86.PageSize-off)
		if pg := mem.Lookup(a >> x86.PageShift); pg != nil {
			for j := i; j < i+n; j++ {
				if !have[j] {
					buf[j] = pg.Data[off+j-i]
					have[j] = true
				}
			}
		}
		i += n
	}
}
