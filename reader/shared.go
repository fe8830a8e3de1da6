package reader

import (
	"golang.org/x/sys/unix"

	"ttd/tracefile"
	"ttd/x86"
)

// Shared memory in a replay (tracefile/shared.go): a region that shows a
// shared memory object (region.obj, from a SharedMmap record) takes its
// pages from the replay's table of those objects' pages (sharedMem), so
// that every address space mapping the same object and offset holds the
// same x86.Page, as the recording's did (emu: a file's pages, a System V
// segment, anonymous shared memory a fork shares). A write through one
// mapping then shows at the others, and every read reads what the
// recording read. Such pages are never shared copy-on-write: a fork keeps
// them (addrSpace.fork), a snapshot and the index pass's dirty tracking
// copy them (forkApart), and a resumed snapshot makes its copies one page
// again (reshare).

// objPage is page Idx of shared memory object Obj.
type objPage struct{ obj, idx uint64 }

// sharedMem are the pages of the shared memory objects of a replay's
// address spaces, by object and page index.
type sharedMem struct {
	pages map[objPage]*x86.Page
}

// part is g limited to [lo, hi), within it: a shared region's offset
// moves with its start.
func (g region) part(lo, hi uint64) region {
	if g.obj != 0 {
		g.off += lo - g.start
	}
	g.start, g.end = lo, hi
	return g
}

// key is the object page that page pn of shared region g shows.
func (g *region) key(pn uint64) objPage {
	return objPage{g.obj, (g.off + pn<<x86.PageShift - g.start) >> x86.PageShift}
}

// hasShared reports whether as maps shared memory.
func (as *addrSpace) hasShared() bool {
	for i := range as.regions {
		if as.regions[i].obj != 0 {
			return true
		}
	}
	return false
}

// sharedAt reports whether page pn is in a region of shared memory.
func (as *addrSpace) sharedAt(pn uint64) bool {
	g := as.find(pn << x86.PageShift)
	return g != nil && g.obj != 0
}

// sharedPage returns page pn of shared region g: the object's page if
// another mapping (or this one, before an munmap) made it, else a new
// one with the contents source gives a private page, which becomes the
// object's. A page restored at the checkpoint the replay started at is
// then stale (the object's page may have been written since): it goes.
func (as *addrSpace) sharedPage(pn uint64, g *region) *x86.Page {
	if as.shared == nil {
		as.shared = &sharedMem{}
	}
	k := g.key(pn)
	if p := as.shared.pages[k]; p != nil {
		delete(as.pend, pn)
		delete(as.init, pn)
		delete(as.data, pn)
		return p
	}
	// Not in a host window, nor another replay's page: it may be shown
	// at several places.
	p := x86.NewPage()
	as.fill(pn, p)
	if as.shared.pages == nil {
		as.shared.pages = map[objPage]*x86.Page{}
	}
	as.shared.pages[k] = p
	return p
}

// mapAnonymous is Linux's MAP_ANONYMOUS: in the Flags of a SharedMmap
// record, shared memory that is not a file's pages.
const mapAnonymous = 0x20

// materializeFiles makes every page of as's shared file mappings exist,
// before a fork, as the recording did (emu's MM.fork: the processes
// then share the file's pages with their pristine copies): memory
// hashes count the pages an address space holds.
func (as *addrSpace) materializeFiles() {
	for i := range as.regions {
		if g := &as.regions[i]; g.obj != 0 && g.file {
			for pn := g.start >> x86.PageShift; pn < g.end>>x86.PageShift; pn++ {
				as.mem.PageAt(pn)
			}
		}
	}
}

// keepShared is the keep function of a fork of as's memory: the pages
// of its shared regions stay one page (nil when it has none).
func (as *addrSpace) keepShared() func(pn uint64) bool {
	if !as.hasShared() {
		return nil
	}
	return as.sharedAt
}

// forkApart returns a copy-on-write fork of as's memory whose pages of
// shared regions are copies: a snapshot of them (snapshots, the index
// pass's dirty tracking), which as's writes to the shared pages do not
// change and which does not make them copy-on-write.
func (as *addrSpace) forkApart() *x86.Memory {
	keep := as.keepShared()
	n := as.mem.Fork(keep)
	if keep == nil {
		return n
	}
	for i := range as.regions {
		g := &as.regions[i]
		if g.obj == 0 {
			continue
		}
		var pns []uint64
		n.Pages(g.start>>x86.PageShift, g.end>>x86.PageShift, func(pn uint64, _ *x86.Page) { pns = append(pns, pn) })
		for _, pn := range pns {
			c := x86.NewPage()
			*c.Data = *n.Lookup(pn).Data
			perm, _ := n.PermOf(pn)
			n.SetPage(pn, c, perm)
		}
	}
	return n
}

// reshare makes the pages of the shared regions of r's address spaces,
// just resumed from a snapshot (each with its own copy), one page per
// object page again: the first copy met, copied out of the snapshot's
// copy-on-write memory.
func (r *Replay) reshare() {
	seen := map[*addrSpace]bool{}
	for _, p := range r.procs {
		as := p.as
		if as == nil || seen[as] || !as.hasShared() {
			continue
		}
		seen[as] = true
		if as.shared == nil {
			as.shared = r.sharedMem()
		}
		for i := range as.regions {
			g := &as.regions[i]
			if g.obj == 0 {
				continue
			}
			type pg struct {
				pn uint64
				p  *x86.Page
			}
			var pgs []pg
			as.mem.Pages(g.start>>x86.PageShift, g.end>>x86.PageShift, func(pn uint64, p *x86.Page) { pgs = append(pgs, pg{pn, p}) })
			for _, e := range pgs {
				k := g.key(e.pn)
				np := as.shared.pages[k]
				if np == nil {
					np = x86.NewPage()
					*np.Data = *e.p.Data
					if as.shared.pages == nil {
						as.shared.pages = map[objPage]*x86.Page{}
					}
					as.shared.pages[k] = np
				}
				perm, _ := as.mem.PermOf(e.pn)
				as.mem.SetPage(e.pn, np, perm)
			}
		}
	}
}

// sharedMem is the table of shared pages of r's address spaces.
func (r *Replay) sharedMem() *sharedMem {
	if r.shm == nil {
		r.shm = &sharedMem{}
	}
	return r.shm
}

// sweepShared lets go of the pages of the shared memory objects no live
// address space of r maps any more (at checkpoints): a program that maps
// and unmaps shared memory over and over keeps only what is mapped. A
// page that goes and is mapped again later is in the trace then (the
// recording logs the contents of a page at its first touch through each
// mapping).
func (r *Replay) sweepShared() {
	if r.shm == nil || len(r.shm.pages) == 0 {
		return
	}
	live := map[uint64]bool{}
	for _, p := range r.procs {
		if p.exited || p.as == nil {
			continue
		}
		for _, g := range p.as.regions {
			if g.obj != 0 {
				live[g.obj] = true
			}
		}
	}
	for k := range r.shm.pages {
		if !live[k.obj] {
			delete(r.shm.pages, k)
		}
	}
}

// sharedPages is the set of pages of r's shared memory objects (which
// several address spaces hold: CloseLeaving recycles each once).
func (r *Replay) sharedPages() map[*x86.Page]bool {
	if r.shm == nil || len(r.shm.pages) == 0 {
		return nil
	}
	s := make(map[*x86.Page]bool, len(r.shm.pages))
	for _, p := range r.shm.pages {
		s[p] = true
	}
	return s
}

// faultTouch makes the page a recorded fault (SIGSEGV or SIGBUS the
// CPU raised, s) hit exist in t's address space, as the recording's
// did: emu materialises a page before it checks the access's
// protection (x86.Memory.translate), while the replay delivers the
// signal at the faulting instruction without executing it. Only memory
// hashes see the difference, for a page of shared memory another
// process wrote: a child's write to its SHM_RDONLY attachment made the
// page its own before the parent wrote it.
func (r *Replay) faultTouch(t *thread, s *tracefile.Signal) {
	if !r.t.noReads || s.Code <= 0 || s.Signo != int(unix.SIGSEGV) && s.Signo != int(unix.SIGBUS) {
		return
	}
	if as := t.proc.as; as != nil {
		as.mem.PageAt(s.Addr >> x86.PageShift)
	}
}
