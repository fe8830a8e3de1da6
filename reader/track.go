package reader

import (
	"os"
	"sort"

	"ttd/predict"
	"ttd/tracefile"
	"ttd/x86"
)

// Memory knowledge. The re-simulated x86.Memory does not hold the
// program's data: a read takes its value from the prediction cache or the
// trace, not from the image. With tracking on (Replay.Track), the replay
// corrects the image on every read whose value differs from it and
// remembers which bytes the program read or wrote (or a syscall or a
// signal delivery wrote, or that were fetched as code) since the tracking
// window began: those bytes of the image are the program's memory, the
// others are unknown. Cut closes a window into a Delta.

// LineShift is log2 of the line size of the access summaries: a page has
// 64 lines of 64 bytes, one bit each in a uint64 (and the 64 bytes of a
// line are one uint64 of a known mask).
const LineShift = 6

// PageBits is a page's byte mask: bit b of word w is byte 64*w+b.
type PageBits [x86.PageSize / 64]uint64

// tpage is the knowledge about one page in the current window.
type tpage struct {
	known               PageBits
	read, written, exec uint64 // line masks
	// m holds the exact bytes read (RW[0]), written (RW[1]) and
	// fetched (Ex). Translated code may mark accesses in it itself
	// (x86.AccessMarker: Replay.AccessMarks), which known and the line
	// masks take in foldMarks.
	m    x86.MarkPage
	next *tpage // free list
	// noMarks: the page was unmapped in the window (reset), so its
	// accesses are marked in Go from then on: known must not take
	// the bytes it was accessed at before. inMarks: it is in
	// tracker.marked.
	noMarks, inMarks bool
	// owner is the tracker that may change the page in place; a page
	// clone shares between two trackers has none, and each copies it
	// before its first change (own).
	owner *tracker
}

const trackTLB = 256

type trackEntry struct {
	pn uint64
	p  *tpage
}

// tracker records the knowledge of the current window.
type tracker struct {
	pages  map[uint64]*tpage
	tlb    [trackTLB]trackEntry
	free   *tpage
	resets []Range // page-number ranges unmapped in this window
	// repl are page-number ranges an exec replaced in this window: each
	// of their bytes counts as read and written (replaced). A range,
	// not a page each: an exec of a process with a large mapping would
	// otherwise cost a page of knowledge per page of it.
	repl  []Range
	start uint64 // position the window began at
	// logged counts the accesses translated code logged (AccessLogCache).
	logged uint64
	// marks is the page lookup translated code marks this tracker's
	// accesses through (Replay.AccessMarks), made on first use; marked
	// are the pages entered in it since foldMarks.
	marks  *x86.MarkTable
	marked []*tpage
}

func newTracker(start uint64) *tracker {
	t := &tracker{pages: make(map[uint64]*tpage), start: start}
	t.flushTLB()
	return t
}

func (t *tracker) flushTLB() {
	for i := range t.tlb {
		t.tlb[i] = trackEntry{pn: ^uint64(0)}
	}
}

func (t *tracker) page(pn uint64) *tpage {
	e := &t.tlb[pn&(trackTLB-1)]
	if e.pn == pn {
		return e.p
	}
	return t.pageSlow(pn)
}

func (t *tracker) pageSlow(pn uint64) *tpage {
	p := t.pages[pn]
	if p == nil {
		p = t.alloc()
		t.pages[pn] = p
	} else {
		p = t.own(pn, p)
	}
	t.tlb[pn&(trackTLB-1)] = trackEntry{pn: pn, p: p}
	return p
}

// alloc is a zeroed page t owns.
func (t *tracker) alloc() *tpage {
	p := t.free
	if p != nil {
		t.free = p.next
		*p = tpage{}
	} else {
		p = new(tpage)
	}
	p.owner = t
	return p
}

// own returns t's page pn (p) for a change: p itself if t owns it, else
// t's own copy of it, which takes p's place in t.pages.
func (t *tracker) own(pn uint64, p *tpage) *tpage {
	if p.owner == t {
		return p
	}
	c := t.alloc()
	*c = *p
	c.next, c.owner, c.inMarks = nil, t, false
	t.pages[pn] = c
	return c
}

// mark records an access of size bytes (1..8) at addr.
func (t *tracker) mark(addr uint64, size int, write bool) {
	off := addr & (x86.PageSize - 1)
	if off+uint64(size) > x86.PageSize {
		n := int(x86.PageSize - off)
		t.mark(addr, n, write)
		t.mark(addr+uint64(n), size-n, write)
		return
	}
	p := t.page(addr >> x86.PageShift)
	w, b := off>>6, off&63
	m := uint64(1)<<uint(size) - 1
	bits := &p.m.RW[0]
	if write {
		bits = &p.m.RW[1]
	}
	p.known[w] |= m << b
	bits[w] |= m << b
	lines := uint64(1) << w
	if b+uint64(size) > 64 {
		p.known[w+1] |= m >> (64 - b)
		bits[w+1] |= m >> (64 - b)
		lines |= lines << 1
	}
	if write {
		p.written |= lines
	} else {
		p.read |= lines
	}
}

// markRange records n bytes at addr as written (write) or fetched as code.
func (t *tracker) markRange(addr uint64, n int, write bool) {
	for n > 0 {
		off := addr & (x86.PageSize - 1)
		k := min(n, int(x86.PageSize-off))
		p := t.page(addr >> x86.PageShift)
		lo, hi := int(off), int(off)+k // bytes [lo, hi)
		for w := lo >> 6; w <= (hi-1)>>6; w++ {
			m := tracefile.LineMask(lo, hi, w)
			p.known[w] |= m
			if write {
				p.m.RW[1][w] |= m
				p.written |= 1 << uint(w)
			} else {
				p.m.Ex[w] |= m
				p.exec |= 1 << uint(w)
			}
		}
		addr += uint64(k)
		n -= k
	}
}

// reset forgets pages [lo, hi) (page numbers): they were unmapped, so
// nothing known about them before holds.
func (t *tracker) reset(lo, hi uint64) {
	if hi <= lo {
		return
	}
	t.foldMarks()
	for pn, p := range t.pages {
		if pn >= lo && pn < hi && p.known != (PageBits{}) {
			p = t.own(pn, p)
			p.known, p.noMarks = PageBits{}, true
		}
	}
	t.resets = append(t.resets, Range{lo, hi})
}

// replaced records pages [lo, hi) (page numbers) as read and written
// whole without knowing their bytes: an exec replaced the address space
// they belonged to, so every search there must stop at this window
// (nothing the old image did is the new one's history).
func (t *tracker) replaced(lo, hi uint64) {
	if hi > lo {
		t.repl = append(t.repl, Range{lo, hi})
	}
}

// AllBytes is every byte of a page.
func AllBytes() (b PageBits) {
	for w := range b {
		b[w] = ^uint64(0)
	}
	return b
}

var fullPage = AllBytes()

// replacedRest is the page ranges t.repl covers that t.pages does not
// hold, sorted and disjoint.
func (t *tracker) replacedRest() []Range {
	repl := append([]Range(nil), t.repl...)
	sort.Slice(repl, func(i, j int) bool { return repl[i].Lo < repl[j].Lo })
	var merged, rest []Range
	for _, r := range repl {
		if n := len(merged); n > 0 && r.Lo <= merged[n-1].Hi {
			merged[n-1].Hi = max(merged[n-1].Hi, r.Hi)
			continue
		}
		merged = append(merged, r)
	}
	for _, r := range merged {
		lo := r.Lo
		for pn := r.Lo; pn < r.Hi; pn++ {
			if t.pages[pn] != nil {
				if lo < pn {
					rest = append(rest, Range{lo, pn})
				}
				lo = pn + 1
			}
		}
		if lo < r.Hi {
			rest = append(rest, Range{lo, r.Hi})
		}
	}
	return rest
}

// deltaPage is t's page pn (p) in a Delta, without its contents: the
// bytes read, written and fetched, every byte of it read and written if
// an exec replaced it.
func (t *tracker) deltaPage(pn uint64, p *tpage) DeltaPage {
	dp := DeltaPage{PN: pn, Read: p.read, Written: p.written, Exec: p.exec,
		ReadBytes: p.m.RW[0], WrittenBytes: p.m.RW[1], ExecBytes: p.m.Ex}
	if t.inRepl(pn) {
		dp.Read, dp.Written, dp.ReadBytes, dp.WrittenBytes = ^uint64(0), ^uint64(0), fullPage, fullPage
	}
	return dp
}

// inRepl reports whether an exec replaced page pn in the window.
func (t *tracker) inRepl(pn uint64) bool {
	for _, r := range t.repl {
		if pn >= r.Lo && pn < r.Hi {
			return true
		}
	}
	return false
}

// Range is the half-open interval [Lo, Hi) of addresses (or page numbers).
type Range struct{ Lo, Hi uint64 }

// Delta is what a window of re-simulation [Start, End) learned about
// memory: for every page it touched, which bytes became known and their
// values at End, and which 64-byte lines it read, wrote or executed.
type Delta struct {
	Start, End uint64
	// Pages are sorted by page number.
	Pages []DeltaPage
	// Resets are page-number ranges unmapped in the window: what older
	// windows knew about them no longer holds (bytes known again later
	// in the window are in Pages).
	Resets []Range
	// Replaced are page-number ranges, sorted and disjoint, that an exec
	// replaced in the window (every byte counts as read and written) and
	// that Pages does not hold; only CutPids's deltas have them (Cut
	// holds such pages in Pages).
	Replaced []Range
}

// DeltaPage is one page of a Delta.
type DeltaPage struct {
	PN    uint64
	Known PageBits
	// Read, Written and Exec are line masks (bit i: bytes 64i..64i+63).
	Read, Written, Exec uint64
	// ReadBytes, WrittenBytes and ExecBytes are the exact bytes read,
	// written and fetched as code.
	ReadBytes, WrittenBytes, ExecBytes PageBits
	// Data holds the page's bytes at the window's end; only known
	// bytes are meaningful. Nil when no byte is known.
	Data *[x86.PageSize]byte
}

// Page returns the delta's page pn, or nil.
func (d *Delta) Page(pn uint64) *DeltaPage {
	i := sort.Search(len(d.Pages), func(i int) bool { return d.Pages[i].PN >= pn })
	if i < len(d.Pages) && d.Pages[i].PN == pn {
		return &d.Pages[i]
	}
	return nil
}

// WasReset reports whether page pn was unmapped in the window.
func (d *Delta) WasReset(pn uint64) bool {
	for _, r := range d.Resets {
		if pn >= r.Lo && pn < r.Hi {
			return true
		}
	}
	return false
}

// Bytes is the memory a Delta holds (for cache accounting).
func (d *Delta) Bytes() int {
	n := 64 + 16*len(d.Resets)
	for i := range d.Pages {
		n += 2200
		if d.Pages[i].Data != nil {
			n += x86.PageSize
		}
	}
	return n
}

// cut closes the window at position end into a Delta, reading the values
// from mem, and starts a new, empty window.
func (t *tracker) cut(mem *x86.Memory, end uint64) *Delta {
	t.foldMarks()
	d := &Delta{Start: t.start, End: end, Resets: t.resets}
	d.Pages = make([]DeltaPage, 0, len(t.pages))
	for pn, p := range t.pages {
		dp := t.deltaPage(pn, p)
		dp.Known = p.known
		if p.known != (PageBits{}) {
			if pg := mem.Lookup(pn); pg != nil {
				data := new([x86.PageSize]byte)
				*data = *pg.Data
				dp.Data = data
			} else {
				dp.Known = PageBits{}
			}
		}
		d.Pages = append(d.Pages, dp)
		if p.owner == t {
			p.next = t.free
			t.free = p
		}
	}
	for _, r := range t.replacedRest() {
		for pn := r.Lo; pn < r.Hi; pn++ {
			d.Pages = append(d.Pages, DeltaPage{PN: pn, Read: ^uint64(0), Written: ^uint64(0), ReadBytes: fullPage, WrittenBytes: fullPage})
		}
	}
	sort.Slice(d.Pages, func(i, j int) bool { return d.Pages[i].PN < d.Pages[j].PN })
	clear(t.pages)
	t.flushTLB()
	t.resets, t.repl = nil, nil
	t.start = end
	return d
}

// known fills buf with the window's knowledge of memory at addr: for
// each byte already marked in have, nothing; for each byte the window
// knows, its value from mem and a mark in have.
func (t *tracker) known(mem *x86.Memory, addr uint64, buf []byte, have []bool) {
	t.foldMarks()
	for i := range buf {
		if have[i] {
			continue
		}
		a := addr + uint64(i)
		p := t.pages[a>>x86.PageShift]
		if p == nil {
			continue
		}
		off := a & (x86.PageSize - 1)
		if p.known[off>>6]&(1<<(off&63)) == 0 {
			continue
		}
		if pg := mem.Lookup(a >> x86.PageShift); pg != nil {
			buf[i] = pg.Data[off]
			have[i] = true
		}
	}
}

// resetSince reports whether page pn was unmapped in the window.
func (t *tracker) wasReset(pn uint64) bool {
	for _, r := range t.resets {
		if pn >= r.Lo && pn < r.Hi {
			return true
		}
	}
	return false
}

// AccessLogCache lets translated code run while the replay tracks
// (x86.AccessLogger): when tracking is all that needs to see the
// accesses (no Access callback), translated code checks the running
// thread's prediction cache as it does untracked, logs every access,
// and LoggedAccesses marks them; the interpreter's accesses still come
// through MemRead and MemWrite.
func (r *Replay) AccessLogCache(c *x86.CPU) *predict.Cache {
	if !r.observe || !r.logsAccesses() || r.cur == nil || r.t.noReads {
		return nil
	}
	return r.cur.cache
}

// RunAccessLog lets translated code run as `ttd run`'s and log every
// access while the replay of a trace that logs no reads tracks
// (x86.RunAccessLogger): its memory is the program's, there is no cache
// to check.
func (r *Replay) RunAccessLog(c *x86.CPU) bool {
	return r.observe && r.logsAccesses() && r.cur != nil && r.t.noReads
}

// logsAccesses reports whether translated code logs the accesses while
// the replay observes them: tracking is all that needs them. Then it
// may also take the logged reads to come (FeedReads): the accesses it
// logs include those.
func (r *Replay) logsAccesses() bool {
	return r.track != nil && r.Access == nil && !noAccessLog
}

// LoggedAccesses marks the accesses translated code made (x86.AccessLogger).
func (r *Replay) LoggedAccesses(c *x86.CPU, acc []x86.LoggedAccess) {
	if r.marker != r.track {
		c = nil // translated code marks nothing of r.track in place
	}
	r.track.logAccesses(c, acc)
	for _, t := range r.more {
		t.logAccesses(nil, acc)
	}
}

// AccessMarks lets translated code mark the accesses of a replay of a
// trace that logs no reads in the tracker's pages itself
// (x86.AccessMarker, jitModeRunTrack), when one tracker takes them:
// logAccesses enters a page in the tracker's lookup (x86.MarkTable) at
// its first logged access, and the page's next accesses are marked by
// an OR in place. On sort -n's summaries logAccesses took a third of the
// CPU. known and the line masks take the bytes marked so in foldMarks,
// before anything reads them.
func (r *Replay) AccessMarks(c *x86.CPU) *x86.MarkTable {
	var want *tracker
	if r.track != nil && len(r.more) == 0 && r.t.noReads && !noAccessMarks {
		want = r.track
	}
	if want != r.marker {
		if r.marker != nil {
			r.marker.foldMarks()
		}
		r.marker = want
	}
	if want == nil {
		return nil
	}
	if want.marks == nil {
		want.marks = new(x86.MarkTable)
		want.marks.Empty()
	}
	return want.marks
}

// foldMarks makes known and the line masks take the bytes translated
// code marked in place (AccessMarks), and empties the lookup, so that
// the pages' next accesses are logged (and Go may change or free them).
// A page reset in the window is never entered there (tpage.noMarks):
// everything it ever marked is known.
func (t *tracker) foldMarks() {
	if len(t.marked) == 0 {
		return
	}
	for _, p := range t.marked {
		for w := range p.known {
			rd, wr := p.m.RW[0][w], p.m.RW[1][w]
			p.known[w] |= rd | wr
			if rd != 0 {
				p.read |= 1 << w
			}
			if wr != 0 {
				p.written |= 1 << w
			}
		}
		p.inMarks = false
	}
	clear(t.marked)
	t.marked = t.marked[:0]
	t.marks.Empty()
}

// logAccesses marks the accesses translated code logged, as mark does.
// An access of up to 8 bytes within one 64-byte line, most of them, is
// marked here, its page looked up once for a run of accesses to it
// (the stack's, a buffer's): mark's call per access and its lookup took
// half the CPU of sort -n's summaries. With c, translated code marks
// the page's next accesses in place (AccessMarks).
func (t *tracker) logAccesses(c *x86.CPU, acc []x86.LoggedAccess) {
	t.logged += uint64(len(acc))
	lastPN := ^uint64(0)
	var p *tpage
	for _, a := range acc {
		n, addr, w := a.Size(), a.Addr, a.Write()
		off := addr & (x86.PageSize - 1)
		if b := off & 63; n <= 8 && b+uint64(n) <= 64 {
			if pn := addr >> x86.PageShift; pn != lastPN {
				p, lastPN = t.page(pn), pn
				if c != nil && !p.noMarks {
					t.marks.EnterMarks(c, pn, &p.m)
					if !p.inMarks {
						p.inMarks = true
						t.marked = append(t.marked, p)
					}
				}
			}
			wd := off >> 6
			m := (uint64(1)<<uint(n) - 1) << b
			p.known[wd] |= m
			if w {
				p.m.RW[1][wd] |= m
				p.written |= 1 << wd
			} else {
				p.m.RW[0][wd] |= m
				p.read |= 1 << wd
			}
			continue
		}
		for n > 8 {
			t.mark(addr, 8, w)
			addr += 8
			n -= 8
		}
		t.mark(addr, n, w)
		lastPN = ^uint64(0) // mark may have looked other pages up
	}
}

// noAccessLog turns the translated code's access log off: tracking runs
// in the interpreter (TTD_ACCLOG=off, for comparisons).
var noAccessLog = os.Getenv("TTD_ACCLOG") == "off"

// SetAccessLog sets how a tracking replay takes translated code's
// accesses, as TTD_ACCLOG does: "off" runs everything in the
// interpreter, "log" has every access logged, "" marks them in place
// where it can. It returns the setting before (for tests).
func SetAccessLog(mode string) (was string) {
	switch {
	case noAccessLog:
		was = "off"
	case noAccessMarks:
		was = "log"
	}
	noAccessLog, noAccessMarks = mode == "off", mode == "log"
	return was
}

// noAccessMarks turns marking in place off: translated code logs every
// access (TTD_ACCLOG=log, for comparisons).
var noAccessMarks = os.Getenv("TTD_ACCLOG") == "log"
