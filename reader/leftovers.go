package reader

import "ttd/x86"

// Leftovers is what a finished replay leaves to the next re-simulation
// of the same trace on the same goroutine (CloseLeaving,
// NewReplayAtFrom): a job of ttd probe that steals segments starts a
// re-simulation of its own after finishing one. The next replay
// materialises its pages with the pages the last one had, by page
// number where it can, and shares the last one's store of decoded blocks
// and translations (x86.CodeStore: a block is taken only where the bytes
// are the same). A fresh re-simulation otherwise allocates, faults in
// and misses on every page again: after a steal, perl's segments cost
// 120-140 ms of the job's CPU where one re-simulation from the start
// spent 55-70 ms on them.
//
// The pages keep their bytes. Re-simulation does not read its memory
// for values (addrSpace): a read takes the prediction cache's value or
// the trace's, and memory is made to hold it where it held something
// else, as it is for the bytes of mapped files the trace does not carry.
// Only code is read from memory, and the trace gives its bytes again
// after every checkpoint (pokeCode writes those that differ). So a page
// with another position's bytes re-simulates as a page of zeros does.
type Leftovers struct {
	t *Trace
	// at are pages by the page number they had; free the others.
	at    map[uint64]*x86.Page
	free  []*x86.Page
	store *x86.CodeStore
}

// take returns a page for page number pn, or nil: pn's own if it had
// one, else any.
func (lo *Leftovers) take(pn uint64) *x86.Page {
	if lo == nil {
		return nil
	}
	if p := lo.at[pn]; p != nil {
		delete(lo.at, pn)
		return p
	}
	if len(lo.free) == 0 {
		// Some of the numbered ones, a batch at a time (a map's
		// iteration starts anew each time).
		for k, p := range lo.at {
			lo.free = append(lo.free, p)
			delete(lo.at, k)
			if len(lo.free) == leftoverBatch {
				break
			}
		}
	}
	if n := len(lo.free); n > 0 {
		p := lo.free[n-1]
		lo.free[n-1] = nil
		lo.free = lo.free[:n-1]
		return p
	}
	return nil
}

// leftoverBatch is how many numbered pages take moves to the free list
// when it runs out.
const leftoverBatch = 64

// CloseLeaving is Close, and returns what r leaves to the next replay of
// the trace (NewReplayAtFrom): its processes' pages and its code store.
// Nothing taken from r may be used afterwards (snapshots included).
func (r *Replay) CloseLeaving() *Leftovers {
	lo := r.spare
	if lo == nil {
		lo = &Leftovers{t: r.t, at: map[uint64]*x86.Page{}}
	}
	r.spare = nil
	lo.store = r.store
	var seen map[*x86.Page]bool
	if r.shm != nil && len(r.shm.pages) > 0 {
		// Shared memory's pages are in several address spaces
		// (shared.go), swept or not: each goes once.
		seen = map[*x86.Page]bool{}
	}
	for _, p := range r.procs {
		if p.as == nil {
			continue
		}
		// (A vfork child's is its parent's: recycled once, the
		// second finds it empty.)
		p.as.mem.Recycle(func(pn uint64, pg *x86.Page) {
			if seen != nil {
				if seen[pg] {
					return
				}
				seen[pg] = true
			}
			if lo.at[pn] == nil {
				lo.at[pn] = pg
			} else {
				lo.free = append(lo.free, pg)
			}
		})
	}
	r.Close()
	r.procs = nil
	return lo
}

// NewReplayAtFrom is NewReplayAt making the replay with what a replay of
// the same trace left (CloseLeaving; nil or another trace's: nothing).
// lo must not be used again.
func (t *Trace) NewReplayAtFrom(cp Checkpoint, lo *Leftovers) (*Replay, error) {
	if lo != nil && lo.t != t {
		lo = nil
	}
	return t.newReplayAt(cp, lo)
}
