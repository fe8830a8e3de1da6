package reader

import "ttd/x86"

// Watching shared memory. A watched range of the focus that shows
// shared memory (a MAP_SHARED mapping a fork shares, a System V segment,
// a file mapped twice) changes when any process writes the same object
// through its own mapping, at its own address. With WatchShared, the
// Access callback hears those accesses too, each at the focus's address
// of the byte it touched: the last write to a byte the child wrote is
// the child's, not the parent's before it. The running process's
// mappings of the watched objects are its aliases (aliasRange); a
// process that has some runs observed, the others blind as before.

// aliasRange is [lo, hi) of an address space, which shows the same
// shared memory as the focus's [lo+delta, hi+delta) (modulo 2^64).
type aliasRange struct{ lo, hi, delta uint64 }

// aliasCache is the aliases of one address space, for the layouts (gen)
// of that address space and of the focus they were computed for.
type aliasCache struct {
	as, fas   *addrSpace
	gen, fgen uint64
	rs        []aliasRange
}

// WatchShared makes the Access callback also report the accesses of
// every process (the focus's through another mapping included) to the
// shared memory the focus's watched ranges show, at the focus's
// addresses. Call it with Watch, before the first RunTo.
func (r *Replay) WatchShared() { r.shWatch = true }

// SharedIn reports whether the focus maps shared memory over part of
// [lo, hi) now.
func (r *Replay) SharedIn(lo, hi uint64) bool {
	for _, g := range r.fas.regions {
		if g.obj != 0 && g.start < hi && g.end > lo {
			return true
		}
	}
	return false
}

// aliasesOf returns the aliases of the watched ranges in as.
func (r *Replay) aliasesOf(as *addrSpace) []aliasRange {
	c := &r.alias
	if c.as == as && c.fas == r.fas && c.gen == as.gen && c.fgen == r.fas.gen {
		return c.rs
	}
	c.as, c.fas, c.gen, c.fgen = as, r.fas, as.gen, r.fas.gen
	c.rs = c.rs[:0]
	for _, w := range r.watch {
		for _, g := range r.fas.regions {
			if g.obj == 0 || g.end <= w.Lo || g.start >= w.Hi {
				continue
			}
			// The object's bytes [olo, ohi) the watch covers here.
			olo := g.off + max(g.start, w.Lo) - g.start
			ohi := g.off + min(g.end, w.Hi) - g.start
			for _, h := range as.regions {
				if h.obj != g.obj || as == r.fas && h.start == g.start {
					continue
				}
				lo, hi := max(olo, h.off), min(ohi, h.off+h.end-h.start)
				if lo >= hi {
					continue
				}
				// Object offset x is h.start+x-h.off here, g.start+x-g.off in the focus.
				c.rs = append(c.rs, aliasRange{lo: h.start + lo - h.off, hi: h.start + hi - h.off, delta: g.start - g.off - (h.start - h.off)})
			}
		}
	}
	return c.rs
}

// aliased reports whether as shows some of the watched shared memory
// elsewhere than the focus's watched ranges.
func (r *Replay) aliased(as *addrSpace) bool {
	return r.shWatch && r.Access != nil && as != nil && r.fas != nil && len(r.aliasesOf(as)) > 0
}

// aliasAt returns the focus's address of the access at addr of the
// running address space, when it touches watched shared memory through
// an alias.
func (r *Replay) aliasAt(addr uint64, n int) (uint64, bool) {
	for _, a := range r.aliasesOf(r.as) {
		if addr < a.hi && addr+uint64(n) > a.lo {
			return addr + a.delta, true
		}
	}
	return 0, false
}

// observeAlias reports an access of the running process through an
// alias of watched shared memory.
func (r *Replay) observeAlias(c *x86.CPU, addr uint64, size int, v uint64, write bool) {
	fa, ok := r.aliasAt(addr, size)
	if !ok {
		return
	}
	r.acc = Access{Position: r.InstPosition(c), Tid: r.cur.tid, Addr: fa, Size: size, Value: v, Write: write}
	if in := c.CurrentInst(); in != nil {
		r.acc.PC = in.PC
	}
	r.Access(&r.acc)
}

// observeNow sets observe for the running address space: the focus's,
// every one for AccessAllProcesses, and those with aliases.
func (r *Replay) observeNow() {
	r.observe = r.observing && (r.as == r.fas || r.accessAll && r.Access != nil || r.aliased(r.as))
}

// writtenAlias is written for what a syscall or a signal delivery wrote
// in as through aliases of watched shared memory.
func (r *Replay) writtenAlias(as *addrSpace, addr uint64, b []byte) {
	if !r.aliased(as) {
		return
	}
	end := addr + uint64(len(b))
	for _, a := range r.aliasesOf(as) {
		lo, hi := max(addr, a.lo), min(end, a.hi)
		if lo < hi {
			r.written(lo+a.delta, b[lo-addr:hi-addr])
		}
	}
}
