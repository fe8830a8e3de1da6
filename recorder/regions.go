package recorder

import "ttd/emu"

// regionOps are the records that take an address space from one list of
// regions to the next.
type regionOps interface {
	munmap(lo, hi uint64)
	mmap(g emu.Region)
	mprotect(lo, hi uint64, prot int)
}

// diffRegions emits, for an address space that went from old to cur
// with the contents of dropped discarded on the way, the fewest records
// that say what happened to each address:
//   - a dropped range that was mapped: Munmap (the re-simulation forgets
//     its bytes), then Mmap if it is mapped again;
//   - an address mapped in both, under the same name and showing the
//     same shared memory at the same offset (or none): nothing if the
//     protection is the same, else Mprotect — a heap grown by brk, a
//     region split or merged by mprotect keep their bytes;
//   - under another name: Munmap and Mmap;
//   - mapped only before: Munmap; only after: Mmap.
//
// old, cur and dropped are sorted and disjoint.
func diffRegions(old, cur []emu.Region, dropped []emu.Range, out regionOps) {
	// The parts of old that were dropped go first, and leave old.
	var kept []emu.Region
	i := 0
	for _, g := range old {
		lo := g.Start
		for i < len(dropped) && dropped[i].End <= lo {
			i++
		}
		for k := i; k < len(dropped) && dropped[k].Start < g.End; k++ {
			d := dropped[k]
			if d.Start > lo {
				kept = append(kept, part(g, lo, d.Start))
			}
			out.munmap(max(lo, d.Start), min(g.End, d.End))
			lo = min(g.End, d.End)
		}
		if lo < g.End {
			kept = append(kept, part(g, lo, g.End))
		}
	}
	// Walk kept and cur together, one elementary piece at a time.
	a, b := 0, 0
	var at uint64
	for a < len(kept) || b < len(cur) {
		var ko, co *emu.Region
		if a < len(kept) && kept[a].End <= at {
			a++
			continue
		}
		if b < len(cur) && cur[b].End <= at {
			b++
			continue
		}
		// The next piece starts at the first address >= at covered by
		// either list and ends at the next boundary of either.
		next := ^uint64(0)
		if a < len(kept) {
			next = min(next, max(at, kept[a].Start))
		}
		if b < len(cur) {
			next = min(next, max(at, cur[b].Start))
		}
		at = next
		end := ^uint64(0)
		if a < len(kept) {
			if kept[a].Start <= at {
				ko = &kept[a]
				end = min(end, kept[a].End)
			} else {
				end = min(end, kept[a].Start)
			}
		}
		if b < len(cur) {
			if cur[b].Start <= at {
				co = &cur[b]
				end = min(end, cur[b].End)
			} else {
				end = min(end, cur[b].Start)
			}
		}
		switch {
		case ko != nil && co != nil && ko.Name == co.Name && sameObject(ko, co, at):
			if ko.Prot != co.Prot {
				out.mprotect(at, end, co.Prot)
			}
		case ko != nil && co != nil:
			out.munmap(at, end)
			out.mmap(part(*co, at, end))
		case ko != nil:
			out.munmap(at, end)
		case co != nil:
			out.mmap(part(*co, at, end))
		}
		at = end
	}
}

// part is g limited to [lo, hi), within it (the offset in shared memory
// moves with the start).
func part(g emu.Region, lo, hi uint64) emu.Region {
	if g.Obj != 0 {
		g.Off += lo - g.Start
	}
	g.Start, g.End = lo, hi
	return g
}

// sameObject reports whether a and b show the same memory at address
// at: the same shared memory at the same offset, or private memory.
func sameObject(a, b *emu.Region, at uint64) bool {
	return a.Obj == b.Obj && (a.Obj == 0 || a.Off+(at-a.Start) == b.Off+(at-b.Start))
}

// regionWriter writes diffRegions' records to the trace, merging
// adjacent records of the same kind (a brk that grew the heap across
// pieces is one Mmap).
type regionWriter struct {
	r       *Recorder
	sp      *spaceRec
	pending emu.Region
	kind    int // 0: none, 1: munmap, 2: mmap, 3: mprotect
}

func (w *regionWriter) add(kind int, g emu.Region) {
	p := &w.pending
	if w.kind == kind && p.End == g.Start && p.Prot == g.Prot && p.Name == g.Name &&
		p.Obj == g.Obj && (g.Obj == 0 || p.Off+(p.End-p.Start) == g.Off) {
		p.End = g.End
		return
	}
	w.flush()
	w.kind, w.pending = kind, g
}

func (w *regionWriter) munmap(lo, hi uint64) { w.add(1, emu.Region{Start: lo, End: hi}) }
func (w *regionWriter) mmap(g emu.Region)    { w.add(2, g) }
func (w *regionWriter) mprotect(lo, hi uint64, prot int) {
	w.add(3, emu.Region{Start: lo, End: hi, Prot: prot})
}

func (w *regionWriter) flush() {
	g := w.pending
	switch w.kind {
	case 1:
		w.r.w.Munmap(g.Start, g.End-g.Start)
		if w.r.summarizing() {
			w.r.sum.unmapped(g.Start, g.End-g.Start)
		}
		w.sp.forgetCode(g.Start, g.End)
	case 2:
		w.r.mmap(g)
		w.sp.forgetCode(g.Start, g.End)
		w.r.imageRange(w.sp, g.Start, g.End)
	case 3:
		w.r.w.Mprotect(g.Start, g.End-g.Start, g.Prot)
		w.sp.forgetCode(g.Start, g.End)
	}
	w.kind = 0
}
