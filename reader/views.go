package reader

import (
	"sort"

	"ttd/tracefile"
	"ttd/x86"
)

// Windows of many processes in one replay. A process tree's access
// summaries hold, for every process and checkpoint interval, what
// Refocus(pid) followed by Track would learn over the interval: the
// accesses in the process's memory, and before the process exists in
// that of its nearest ancestor (its memory is a copy of it). Built one
// replay per process and interval, a tree of a thousand short processes
// (xargs, make) re-simulated every interval a thousand times.
// TrackPids follows all of them in one replay.
//
// Each pid has a view: its lineage, the address space it sees now and
// the tracker of its window. Views that see the same memory with the
// same history share one tracker, so an access is marked once however
// many not-yet-started descendants look at their ancestor's memory.
// When a view's memory changes, it goes as Refocus's single tracker
// goes, on a copy of the tracker it shared:
//
//   - a fork: the child's window continues the parent's (the copy
//     starts with what the parent's window holds);
//   - an exec: everything is reset, and the old image's pages count as
//     read and written by the exec (replacedFocus);
//   - otherwise (a replay starting after the process's end) everything
//     is reset.
//
// Views that move together (a process and its descendants at an exec)
// share the copy. Accesses are routed by address space to the trackers
// of the views that see it (usually one).

type view struct {
	pid     int
	lineage []int
	fas     *addrSpace
	t       *tracker
	prev    *addrSpace // the memory it saw before the last refocus, when it moved
}

type views struct {
	list  []*view
	route map[*addrSpace][]*tracker
}

// TrackPids starts, at the replay's position, a tracking window for
// each of pids (0 is the focus's first process), in place of Track: the
// windows CutPids returns are those Refocus(pid) followed by Track and
// Cut would give. It is for forward runs over one interval.
func (r *Replay) TrackPids(pids []int) error {
	vw := &views{}
	shared := map[*addrSpace]*tracker{}
	for _, pid := range pids {
		l, err := r.t.lineageOf(pid)
		if err != nil {
			return err
		}
		v := &view{pid: pid, lineage: l, fas: r.spaceOf(l)}
		if shared[v.fas] == nil {
			shared[v.fas] = newTracker(r.pos)
		}
		v.t = shared[v.fas]
		vw.list = append(vw.list, v)
	}
	r.vw = vw
	vw.reroute()
	r.track = nil
	return nil
}

// refocusViews moves each view whose memory changed (see above).
func (r *Replay) refocusViews() {
	if r.vw == nil {
		return
	}
	type key struct {
		t  *tracker
		as *addrSpace
	}
	moved := map[key]*tracker{}
	changed := false
	for _, v := range r.vw.list {
		v.prev = nil
		as := r.spaceOf(v.lineage)
		if as == v.fas {
			continue
		}
		k := key{v.t, as}
		t := moved[k]
		if t == nil {
			t = v.t.clone()
			if !r.forkOf(v.fas, as) {
				t.reset(0, 1<<52)
			}
			moved[k] = t
		}
		v.prev, v.fas, v.t = v.fas, as, t
		changed = true
	}
	if changed {
		r.vw.reroute()
		r.retrack()
	}
}

// execViews marks, for the views an exec moved, the old image's pages
// as replaced (replacedFocus).
func (r *Replay) execViews(p *tracefile.Process) {
	if r.vw == nil || p.Event != tracefile.ProcessExeced {
		return
	}
	done := map[*tracker]bool{}
	for _, v := range r.vw.list {
		if v.prev == nil || done[v.t] {
			continue
		}
		done[v.t] = true
		for _, g := range v.prev.regions {
			if g.prot != 0 {
				v.t.replaced(g.start>>x86.PageShift, (g.end+x86.PageSize-1)>>x86.PageShift)
			}
		}
	}
}

// tracksFor is every tracker that learns what is written to as.
func (r *Replay) tracksFor(as *addrSpace) []*tracker {
	if r.vw != nil {
		return r.vw.route[as]
	}
	r.one[0] = r.trackFor(as)
	if r.one[0] == nil {
		return nil
	}
	return r.one[:]
}

// reroute rebuilds the routing of accesses from the views.
func (vw *views) reroute() {
	vw.route = map[*addrSpace][]*tracker{}
	for _, v := range vw.list {
		ts := vw.route[v.fas]
		found := false
		for _, t := range ts {
			found = found || t == v.t
		}
		if !found {
			vw.route[v.fas] = append(ts, v.t)
		}
	}
}

// CutPids closes the windows TrackPids opened, at the current position,
// and returns each pid's delta, in TrackPids' order. Views that share a
// tracker share the delta. Deltas carry no page contents.
func (r *Replay) CutPids() []*Delta {
	out := make([]*Delta, len(r.vw.list))
	done := map[*tracker]*Delta{}
	for i, v := range r.vw.list {
		d := done[v.t]
		if d == nil {
			d = v.t.cutBits(r.pos)
			done[v.t] = d
		}
		out[i] = d
	}
	return out
}

// clone is a copy of t's window. The two share t's pages until either
// changes one (tracker.own): a child of a busy parent costs its pages
// only as it touches them.
func (t *tracker) clone() *tracker {
	t.foldMarks()
	n := newTracker(t.start)
	for pn, p := range t.pages {
		p.owner = nil
		n.pages[pn] = p
	}
	t.flushTLB()
	n.resets = append([]Range(nil), t.resets...)
	n.repl = append([]Range(nil), t.repl...)
	n.logged = t.logged
	return n
}

// cutBits is cut without page contents: which bytes the window read,
// wrote and fetched, and what it unmapped.
func (t *tracker) cutBits(end uint64) *Delta {
	t.foldMarks()
	d := &Delta{Start: t.start, End: end, Resets: t.resets, Replaced: t.replacedRest()}
	d.Pages = make([]DeltaPage, 0, len(t.pages))
	for pn, p := range t.pages {
		d.Pages = append(d.Pages, t.deltaPage(pn, p))
	}
	sort.Slice(d.Pages, func(i, j int) bool { return d.Pages[i].PN < d.Pages[j].PN })
	return d
}
