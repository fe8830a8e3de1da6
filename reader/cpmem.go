package reader

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"

	"ttd/tracefile"
	"ttd/x86"
)

// Checkpoint memory: what lets a trace that logs no reads (replayable.go)
// re-simulate from any checkpoint. Its checkpoints carry registers, not
// memory, so one sequential replay of the whole trace (the index pass,
// BuildPages) writes, at each checkpoint, the pages each address space
// changed since the checkpoint before: a page that differs from its
// version at the last checkpoint (contents or presence; a page of zeros
// and no page are the same to a replay). A copy-on-write fork of each
// address space at each checkpoint (x86.Memory.Fork) is the dirty
// tracking: a page still shared with the fork was not written, one the
// replay wrote since is its private copy, compared with the fork's. The
// file (tracefile.Pages, FORMAT.md "Checkpoint memory") sits next to the
// trace; a replay that starts at a checkpoint gives each address space,
// when the checkpoint's ProcessState records (or, in a trace of one
// process, the checkpoint itself) make it, the latest version of each
// page at or before that checkpoint, materialised when first touched
// (addrSpace.pend). What else a segment needs at a checkpoint the trace
// holds: the threads' registers (Checkpoint), the processes and their
// sharing (ProcessState), each address space's regions (the Mmap records
// after them); the replay keeps no kernel state (fds, pipes: every
// syscall's result and writes are in the trace) and decodes code from
// memory.

// cpMemory is a Trace's checkpoint memory file.
type cpMemory struct {
	// path is the trace's file (Open), empty for a trace read from
	// elsewhere: its checkpoint memory cannot be built on demand.
	path  string
	once  sync.Once
	pages *tracefile.Pages
	err   error
	// opened is pages when the file was there at Open (set once, read
	// by PrefetchRestore's goroutine); ahead the frames it decoded.
	opened *tracefile.Pages
	ahead  aheadFrames
	// frames are, by checkpoint of opened, the frames a restore there
	// decompresses (restoredFrames).
	framesOnce sync.Once
	frames     []int
}

// IndexProgress, when set, hears how far an index pass building a
// trace's checkpoint memory on demand got (positions done of end).
var IndexProgress func(done, end int)

// openPages opens the checkpoint memory file next to the trace at path,
// if there is one (a trace that logs no reads).
func (t *Trace) openPages(path string) {
	t.cpm.path = path
	if !t.noReads {
		return
	}
	p, err := t.openPagesAt(tracefile.PagesPath(path))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		t.cpm.err = err
	default:
		t.cpm.pages, t.cpm.opened = p, p
	}
}

// Path is the trace's file, empty for a trace read from elsewhere
// (NewTrace).
func (t *Trace) Path() string { return t.cpm.path }

// Indexed reports whether re-simulation can start at any checkpoint:
// the trace logs reads, or its checkpoint memory file is open.
func (t *Trace) Indexed() bool { return !t.noReads || t.cpm.pages != nil }

// checkpointMemory returns the trace's checkpoint memory, building its
// file first if there is none (IndexProgress hears the progress).
func (t *Trace) checkpointMemory() (*tracefile.Pages, error) {
	t.cpm.once.Do(func() {
		if t.cpm.pages != nil || t.cpm.err != nil {
			return
		}
		if t.cpm.path == "" {
			t.cpm.err = ErrSequential
			return
		}
		t.cpm.pages, _, t.cpm.err = t.BuildPagesFile(tracefile.PagesPath(t.cpm.path), IndexProgress)
		if errors.Is(t.cpm.err, fs.ErrPermission) || errors.Is(t.cpm.err, syscall.EROFS) {
			// A trace in a directory this user cannot write: its
			// checkpoint memory lives as long as this process.
			t.cpm.pages, t.cpm.err = t.buildPagesTemp(IndexProgress)
		}
	})
	return t.cpm.pages, t.cpm.err
}

// buildPagesTemp runs the index pass into a file of the temporary
// directory that is gone once open, and makes t use it.
func (t *Trace) buildPagesTemp(progress func(done, end int)) (*tracefile.Pages, error) {
	f, err := os.CreateTemp("", "ttd-*.pages")
	if err != nil {
		return nil, fmt.Errorf("checkpoint memory: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := t.writePages(f, progress); err != nil {
		return nil, err
	}
	return t.openPagesAt(f.Name())
}

// writePages runs the index pass into f, and closes it.
func (t *Trace) writePages(f *os.File, progress func(done, end int)) (PagesStats, error) {
	st, err := t.BuildPages(f, progress)
	if err2 := f.Close(); err == nil {
		err = err2
	}
	return st, err
}

// openPagesAt opens the checkpoint memory file at path for t.
func (t *Trace) openPagesAt(path string) (*tracefile.Pages, error) {
	id, err := t.f.Identity()
	if err != nil {
		return nil, err
	}
	return tracefile.OpenPages(path, id)
}

// BuildPagesFile runs the index pass (BuildPages) into the file at path
// (written aside and renamed, so that a pass cut short leaves no file),
// and makes t use it.
func (t *Trace) BuildPagesFile(path string, progress func(done, end int)) (*tracefile.Pages, PagesStats, error) {
	f, err := createAside(path)
	if err != nil {
		return nil, PagesStats{}, err
	}
	defer os.Remove(f.Name())
	st, err := t.writePages(f, progress)
	if err != nil {
		return nil, st, err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return nil, st, fmt.Errorf("checkpoint memory: %w", err)
	}
	p, err := t.openPagesAt(path)
	if err != nil {
		return nil, st, err
	}
	t.cpm.pages, t.cpm.err = p, nil
	return p, st, nil
}

// PagesStats says what an index pass wrote.
type PagesStats struct {
	Checkpoints int
	Pages       int   // page versions stored (Restated included)
	Zeroed      int   // pages that became zeros or went away
	Stored      int64 // compressed bytes of the pages
	// Restated counts the unchanged pages stored again, out of frames
	// later versions made sparse (pagesBuilder.compact).
	Restated int
}

// BuildPages replays the trace from its start and writes its checkpoint
// memory to w (the index pass). progress, if not nil, hears how far it
// got.
func (t *Trace) BuildPages(w io.Writer, progress func(done, end int)) (PagesStats, error) {
	if !t.noReads {
		return PagesStats{}, errors.New("checkpoint memory: the trace logs reads (its replays start anywhere without it)")
	}
	b, err := t.newPagesBuilder(w)
	if err != nil {
		return PagesStats{}, err
	}
	defer b.pw.Abort() // (after Close, nothing)
	r, err := t.NewReplay(0)
	if err != nil {
		return PagesStats{}, err
	}
	defer r.Close()
	r.Stream()
	r.cpHook = b.checkpoint
	end := t.End()
	step := max(end/100, 1)
	for done := uint64(0); ; {
		done = min(done+step, end)
		err := r.RunTo(done)
		if progress != nil {
			progress(int(r.Position()), int(end))
		}
		if err == ErrEnd || err == io.ErrUnexpectedEOF || err == nil && done >= end {
			break
		}
		if err != nil {
			return b.st, err
		}
		if b.err != nil {
			return b.st, b.err
		}
	}
	err = b.close()
	return b.st, err
}

// abort ends an index pass that will write no index.
func (b *pagesBuilder) abort() {
	b.release()
	b.pw.Abort()
}

// release lets go of the last checkpoint's forks.
func (b *pagesBuilder) release() {
	for _, m := range b.prev {
		m.Release()
	}
	b.prev = nil
}

// createAside creates the file a checkpoint memory file at path is
// written to before it is renamed into place (so that a pass cut short
// leaves no file at path).
func createAside(path string) (*os.File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("checkpoint memory: %w", err)
	}
	f.Chmod(0o644)
	return f, nil
}

// newPagesBuilder starts an index pass writing t's checkpoint memory to
// w.
func (t *Trace) newPagesBuilder(w io.Writer) (*pagesBuilder, error) {
	id, err := t.f.Identity()
	if err != nil {
		return nil, err
	}
	pw, err := tracefile.NewPagesWriter(w, id)
	if err != nil {
		return nil, err
	}
	return &pagesBuilder{pw: pw, prev: map[uint32]*x86.Memory{}, ref: map[spacePage]uint32{}, zeroed: map[uint32]map[uint64]bool{}}, nil
}

// close ends an index pass that went to the trace's end: it lets go of
// the last checkpoint's forks and writes the file's index (its error,
// or the pass's).
func (b *pagesBuilder) close() error {
	if b.err != nil {
		b.abort()
		return b.err
	}
	b.release()
	if err := b.pw.Close(); err != nil {
		return err
	}
	b.st.Stored = b.pw.Stored
	return nil
}

// pagesBuilder is the index pass's state: each address space's memory
// at the last checkpoint (a copy-on-write fork), by space (pid), and
// where each page's contents are stored (compact).
type pagesBuilder struct {
	pw   *tracefile.PagesWriter
	prev map[uint32]*x86.Memory
	last uint64
	st   PagesStats
	err  error
	pns  []uint64
	// ref is the ref of each page's last version stored, for the pages
	// whose last entry is not 0; live counts, by frame, the pages whose
	// last version the frame holds, and held lists the pages it holds
	// (their last versions or not: nil once none is).
	ref  map[spacePage]uint32
	live []int32
	held [][]spacePage
	sps  []spacePage
	// zeroed are the pages of shared memory stored as pages of zeros,
	// by space (zeroShared).
	zeroed map[uint32]map[uint64]bool
}

// spacePage is page pn of address space sp.
type spacePage struct {
	sp uint32
	pn uint64
}

// checkpoint writes what changed in memory since the last checkpoint
// (Replay.cpHook: r has just applied a Checkpoint record). A second
// checkpoint at the same position adds nothing: a replay starts at the
// first (ctrlOf).
func (b *pagesBuilder) checkpoint(r *Replay) {
	if b.err != nil || b.st.Checkpoints > 0 && r.pos <= b.last {
		return
	}
	b.last = r.pos
	b.st.Checkpoints++
	if b.err = b.pw.Checkpoint(r.pos); b.err != nil {
		return
	}
	live := map[uint32]bool{}
	procs := slices.Clone(r.procs)
	slices.SortFunc(procs, func(a, b *process) int { return a.pid - b.pid })
	for _, p := range procs {
		if p.exited || p.shares != nil || p.as == nil {
			continue
		}
		sp := r.spaceKey(p.pid)
		if live[sp] {
			continue
		}
		live[sp] = true
		b.space(sp, p.as)
	}
	var gone []uint32
	for sp := range b.prev {
		if !live[sp] {
			gone = append(gone, sp)
		}
	}
	slices.Sort(gone)
	for _, sp := range gone {
		m := b.prev[sp]
		b.pns = b.pns[:0]
		m.Pages(0, 1<<52, func(pn uint64, pg *x86.Page) {
			if !zeroPage(pg) {
				b.pns = append(b.pns, pn)
			}
		})
		for pn := range b.zeroed[sp] {
			b.pns = append(b.pns, pn)
		}
		slices.Sort(b.pns)
		for _, pn := range b.pns {
			b.zero(sp, pn)
		}
		m.Release()
		delete(b.prev, sp)
		delete(b.zeroed, sp)
	}
	b.compact()
}

// compactBelow: a full frame holding the last version of fewer than this
// many pages is sparse, and compact stores its pages again. A restore
// decompresses every frame that holds a page it needs, for that page
// alone: xz -6's restores decompressed 20-25% used frames (300 frames,
// 75 MB, for 6,700 pages; zstd was 80 ms of `--jobs 2`'s CPU), since
// each of its checkpoints changes pages all over its match finder's
// tables. Counted
// over the checkpoint memory of session 31's traces (frames a restore
// decompresses, mean over checkpoints; pages stored), moving the pages
// of frames under 16 gives xz 301 -> 124 frames for 13% more pages
// stored, perl 137 -> 98 (+3%), sqlite3 30 -> 23 (+3%), bzip2 40 -> 32
// (+3%), python3 102 -> 99 (+1%), sort -n 74 -> 67 (+3%); under 32, xz
// 98 for 28% more, gzip's for 34% more (TestRestoreCost: xz's restores
// 73 -> 53 ms, gzip's file +29%).
const compactBelow = 16

// compact stores again the pages whose last version lies in a sparse
// frame (compactBelow), unchanged, so that a restore at this checkpoint
// or a later one reads them from frames of pages it needs. Their
// contents are those of the forks just taken (b.prev): a page that
// changed since its last version was stored at this checkpoint.
func (b *pagesBuilder) compact() {
	full := b.st.Pages / tracefile.PagesPerFrame // frames written whole
	sparse := false
	for f := 0; f < full && !sparse; f++ {
		sparse = b.live[f] > 0 && b.live[f] < compactBelow
	}
	if !sparse {
		return
	}
	b.sps = b.sps[:0]
	for f := 0; f < full; f++ {
		if b.live[f] == 0 || b.live[f] >= compactBelow {
			continue
		}
		for _, k := range b.held[f] {
			if tracefile.FrameOf(b.ref[k]) == f {
				b.sps = append(b.sps, k)
			}
		}
	}
	slices.SortFunc(b.sps, func(x, y spacePage) int {
		if x.sp != y.sp {
			return cmp.Compare(x.sp, y.sp)
		}
		return cmp.Compare(x.pn, y.pn)
	})
	for _, k := range b.sps {
		m := b.prev[k.sp]
		if m == nil {
			continue
		}
		if pg := m.Lookup(k.pn); pg != nil {
			b.store(k.sp, k.pn, pg.Data)
			b.st.Restated++
		}
	}
}

// store adds data as page pn of space sp to the checkpoint.
func (b *pagesBuilder) store(sp uint32, pn uint64, data *[x86.PageSize]byte) {
	b.pw.Page(sp, pn, data)
	b.st.Pages++
	b.moved(spacePage{sp, pn}, uint32(b.st.Pages))
}

// moved records that page k's last version is now ref (0: none).
func (b *pagesBuilder) moved(k spacePage, ref uint32) {
	if old, ok := b.ref[k]; ok {
		f := tracefile.FrameOf(old)
		if b.live[f]--; b.live[f] == 0 {
			b.held[f] = nil
		}
	}
	if ref == 0 {
		delete(b.ref, k)
		return
	}
	f := tracefile.FrameOf(ref)
	for len(b.live) <= f {
		b.live, b.held = append(b.live, 0), append(b.held, nil)
	}
	b.live[f]++
	b.held[f] = append(b.held[f], k)
	b.ref[k] = ref
}

// space writes the pages of space sp (address space as) that differ
// from its fork at the last checkpoint, and forks it again (its shared
// memory copied, shared.go: those pages are compared by their bytes).
func (b *pagesBuilder) space(sp uint32, as *addrSpace) {
	mem := as.mem
	prev := b.prev[sp]
	b.pns = b.pns[:0]
	mem.Pages(0, 1<<52, func(pn uint64, pg *x86.Page) {
		if prev == nil || prev.Lookup(pn) != pg {
			b.pns = append(b.pns, pn)
		}
	})
	if prev != nil {
		prev.Pages(0, 1<<52, func(pn uint64, pg *x86.Page) {
			if mem.Lookup(pn) == nil && !zeroPage(pg) {
				b.pns = append(b.pns, pn)
			}
		})
	}
	slices.Sort(b.pns)
	shared := as.hasShared()
	zeroed := b.zeroed[sp]
	for _, pn := range b.pns {
		pg := mem.Lookup(pn)
		var old *x86.Page
		if prev != nil {
			old = prev.Lookup(pn)
		}
		switch {
		case pg != nil && zeroPage(pg) && shared && as.sharedAt(pn):
			if old == nil || !zeroPage(old) {
				b.zeroShared(sp, pn)
			}
		case pg == nil || zeroPage(pg):
			if old != nil && (!zeroPage(old) || zeroed[pn]) {
				b.zero(sp, pn)
				delete(zeroed, pn)
			}
		case old == nil || *old.Data != *pg.Data:
			b.store(sp, pn, pg.Data)
			delete(zeroed, pn)
		}
	}
	if prev != nil {
		prev.Release()
	}
	b.prev[sp] = as.forkApart()
}

// zeroShared stores page pn of space sp, a page of shared memory that
// holds zeros, as a page of zeros rather than no page: another address
// space may write it, and an address space holds it, for its memory's
// hash (x86.HashMemory), once it touched it, as the recording's did.
// Private memory needs no such page: only its own writes change it,
// and they make it exist.
func (b *pagesBuilder) zeroShared(sp uint32, pn uint64) {
	b.store(sp, pn, &zeroData)
	if b.zeroed[sp] == nil {
		b.zeroed[sp] = map[uint64]bool{}
	}
	b.zeroed[sp][pn] = true
}

// zeroData is a page of zeros.
var zeroData [x86.PageSize]byte

func (b *pagesBuilder) zero(sp uint32, pn uint64) {
	b.pw.Page(sp, pn, nil)
	b.st.Zeroed++
	b.moved(spacePage{sp, pn}, 0)
}

func zeroPage(p *x86.Page) bool { return *p.Data == [x86.PageSize]byte{} }

// spaceKey names the address space of process pid in the checkpoint
// memory file: its pid in a tree, 0 in a trace of one process.
func (r *Replay) spaceKey(pid int) uint32 {
	if !r.t.tree {
		return 0
	}
	return uint32(pid)
}

// pageRefs are the pages of one address space at a checkpoint: page
// number -> tracefile.PageEntry.Ref (never 0).
type pageRefs = map[uint64]uint32

// restoreAt returns the pages of each address space (by space key) at
// the checkpoint at position pos: the latest version of each at or
// before it.
func (t *Trace) restoreAt(pos uint64) (map[uint32]pageRefs, error) {
	if rs := t.cpm.ahead.started(pos); rs != nil {
		return rs, nil
	}
	pages, err := t.checkpointMemory()
	if err != nil {
		return nil, err
	}
	return restoreRefs(pages, pos)
}

// restoreRefs is restoreAt in pages.
func restoreRefs(pages *tracefile.Pages, pos uint64) (map[uint32]pageRefs, error) {
	cps := pages.Checkpoints()
	n, found := slices.BinarySearchFunc(cps, pos, func(c tracefile.PagesCheckpoint, p uint64) int {
		switch {
		case c.Position < p:
			return -1
		case c.Position > p:
			return 1
		}
		return 0
	})
	if !found {
		return nil, fmt.Errorf("checkpoint memory has no checkpoint at position %d (%w)", pos, tracefile.ErrStale)
	}
	out := map[uint32]pageRefs{}
	for _, cp := range cps[:n+1] {
		for _, e := range cp.Entries {
			m := out[e.Space]
			if m == nil {
				m = pageRefs{}
				out[e.Space] = m
			}
			if e.Ref == 0 {
				delete(m, e.PN)
			} else {
				m[e.PN] = e.Ref
			}
		}
	}
	return out, nil
}

// restoreSpace gives as the pages of space sp at the checkpoint the
// replay starts at (the first it meets).
func (r *Replay) restoreSpace(as *addrSpace, sp uint32) {
	if r.restore == nil || r.Checkpoints != 1 {
		return
	}
	as.pend, as.pages, as.ahead = r.restore[sp], r.t.cpm.pages, &r.t.cpm.ahead
	delete(r.restore, sp)
}

// pendErr is the first error reading a restored page (addrSpace.source
// cannot return one), or nil.
func (r *Replay) pendErr() error {
	for _, p := range r.procs {
		if p.as != nil && p.as.pendErr != nil {
			return fmt.Errorf("restoring memory at a checkpoint: %w", p.as.pendErr)
		}
	}
	return nil
}

// restorePage gives p, which becomes page pn, its contents at the
// checkpoint the replay started at (page ref of the checkpoint memory),
// and materialises the other pages of as pending in the same frame of
// the file with theirs: a frame is decompressed once per replay, not
// once per page (sort -n's segments, which touch their heap at random,
// took 11 s of CPU decompressing frames against 0.4 s for a replay of
// the whole trace).
func (as *addrSpace) restorePage(pn uint64, ref uint32, p *x86.Page) {
	f, ok := as.ahead.take(tracefile.FrameOf(ref))
	var err error
	if !ok {
		f, err = as.pages.Frame(ref)
	}
	if err != nil {
		delete(as.pend, pn)
		if as.pendErr == nil {
			as.pendErr = err
		}
		return
	}
	defer f.Release()
	copy(p.Data[:], f.Page(ref))
	delete(as.pend, pn)
	if as.byFrame == nil {
		as.byFrame = map[int][]uint64{}
		for q, r := range as.pend {
			fi := tracefile.FrameOf(r)
			as.byFrame[fi] = append(as.byFrame[fi], q)
		}
	}
	fi := tracefile.FrameOf(ref)
	for _, q := range as.byFrame[fi] {
		r, ok := as.pend[q]
		if !ok {
			continue // touched or unmapped since
		}
		g := as.find(q << x86.PageShift)
		if g == nil || g.obj != 0 {
			// Not mapped (yet), or shared memory (sharedPage): it
			// stays pending.
			continue
		}
		np := as.spare.take(q)
		if np == nil {
			np = x86.NewPage()
		}
		copy(np.Data[:], f.Page(r))
		delete(as.pend, q)
		as.mem.SetPage(q, np, perm(g.prot))
	}
	delete(as.byFrame, fi)
}

// materialize makes every page restored at the checkpoint the replay
// started at and not touched yet a page of as's memory (before a hash
// of the whole memory).
func (as *addrSpace) materialize() {
	for pn := range as.pend {
		as.mem.PageAt(pn)
	}
}

// aheadFrames are frames of a trace's checkpoint memory decompressed
// ahead of the replays that restore them (PrefetchRestore), each held
// until a restore takes it, and the pages each prefetched checkpoint
// restores (restoreAt's), until its replay takes them.
type aheadFrames struct {
	mu     sync.Mutex
	frames map[int]tracefile.FrameData
	refs   map[uint64]map[uint32]pageRefs
	// begun are the positions a replay started at: a prefetch for one
	// stops (the replay decodes what it needs, on the core it runs on).
	begun map[uint64]bool
}

// PrefetchRestore decompresses the frames of the checkpoint memory a
// re-simulation starting at cp restores, and lists its pages, ahead of
// it (probe's jobs: on the core the serial part of a run leaves idle,
// which the second job's start then does not pay: 23-37 ms of zstd at
// a checkpoint of sort -n or xz -6), hottest first: the frames of the
// pages written in the segment before cp, then those before. It stops
// as soon as a replay starts at cp, and does nothing for a trace that
// logs reads, had no checkpoint memory file when opened, or at the
// trace's start.
func (t *Trace) PrefetchRestore(cp Checkpoint) {
	pages := t.cpm.opened
	if !t.noReads || pages == nil || cp.Chunk <= 0 && cp.Ctrl == 0 {
		return
	}
	a := &t.cpm.ahead
	if a.begunAt(cp.Position) {
		return
	}
	rs, err := restoreRefs(pages, cp.Position)
	if err != nil {
		return
	}
	order := hotFrames(pages.Checkpoints(), cp.Position, rs)
	a.mu.Lock()
	if a.begun[cp.Position] {
		a.mu.Unlock()
		return
	}
	if a.refs == nil {
		a.refs, a.frames = map[uint64]map[uint32]pageRefs{}, map[int]tracefile.FrameData{}
	}
	a.refs[cp.Position] = rs
	a.mu.Unlock()
	for _, fi := range order {
		if a.begunAt(cp.Position) {
			return
		}
		f, err := pages.Frame(uint32(fi*tracefile.PagesPerFrame) + 1)
		if err != nil {
			return
		}
		a.mu.Lock()
		if _, dup := a.frames[fi]; dup {
			f.Release()
		} else {
			a.frames[fi] = f
		}
		a.mu.Unlock()
	}
}

// hotFrames lists the frames holding the pages of rs (a checkpoint's at
// pos), each once, those of the pages the latest checkpoints wrote
// first.
func hotFrames(cps []tracefile.PagesCheckpoint, pos uint64, rs map[uint32]pageRefs) []int {
	var order []int
	seen := map[int]bool{}
	for i := len(cps) - 1; i >= 0; i-- {
		if cps[i].Position > pos {
			continue
		}
		for _, e := range cps[i].Entries {
			if e.Ref == 0 || rs[e.Space][e.PN] != e.Ref {
				continue // not the page's version at pos
			}
			if fi := tracefile.FrameOf(e.Ref); !seen[fi] {
				seen[fi] = true
				order = append(order, fi)
			}
		}
	}
	return order
}

// begunAt reports whether a replay started at pos.
func (a *aheadFrames) begunAt(pos uint64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.begun[pos]
}

// started records that a replay starts at pos, and gives it the pages
// its prefetch listed (nil: none).
func (a *aheadFrames) started(pos uint64) map[uint32]pageRefs {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.begun == nil {
		a.begun = map[uint64]bool{}
	}
	a.begun[pos] = true
	rs := a.refs[pos]
	delete(a.refs, pos)
	return rs
}

// take gives the frame fi decoded ahead, if any, which the caller then
// releases (a nil a: none).
func (a *aheadFrames) take(fi int) (tracefile.FrameData, bool) {
	if a == nil {
		return tracefile.FrameData{}, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	f, ok := a.frames[fi]
	if ok {
		delete(a.frames, fi)
	}
	return f, ok
}
