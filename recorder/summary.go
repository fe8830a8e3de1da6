package recorder

import (
	"fmt"
	"os"
	"slices"
	"time"

	"ttd/predict"
	"ttd/tracefile"
	"ttd/x86"
)

// Access summaries (tracefile.AccessSummary: for every checkpoint
// interval, the bytes it read, wrote and fetched as code).
//
// For a recording of one process, the recorder builds them from its own
// run (summarizer): every thread's
// CPU then runs without Pred, so that the interpreter's accesses reach
// MemRead and MemWrite, and its translated code logs every access besides
// the reads the prediction cache misses (x86.AccessLogger, in the mode
// that is also a ReadLogger); syscalls' and signal deliveries' writes,
// decoded blocks and unmapped ranges are marked where the recorder logs
// them. The result is what re-simulating each interval with tracking on
// learns (ttd.SummarizeTrace), byte for byte; TestInlineSummaries and
// TestInlineSummariesPrograms compare the two. The bytes fetched as
// code are those of the blocks each side decoded: they agree because
// where a block starts and ends does not depend on where runs stop (a
// run that stops inside a block resumes it, x86.CPU.Run; the recording
// stops at the ends of time slices, a replay elsewhere) and a checkpoint
// starts a new epoch, where the replay of an interval starts afresh.
//
// With Options.SummariesPass (or TTD_RECSUM=off), and for a recording of more than one process (or an exec),
// a ring buffer or a Tap, the summaries pass builds them
// (Options.Summaries: re-simulating the checkpoint intervals of the
// flushed trace in parallel; what a summary of a process tree means
// belongs to package ttd and the reader).

// Summarizer computes the access summaries of the trace at path, which
// holds every record of the recording (flushed, not yet closed).
type Summarizer func(path string) ([]tracefile.AccessSummary, error)

// summariesPass makes the summaries pass build the summaries
// (TTD_RECSUM=off), as Options.SummariesPass does.
var summariesPass = os.Getenv("TTD_RECSUM") == "off"

// sumPage is what the current interval did to one page: the bytes it
// read and wrote (RW[0][w] and RW[1][w] bit b: byte 64w+b) and fetched
// (Ex). Translated code marks most accesses in it itself (x86.AccessMarker).
type sumPage = x86.MarkPage

// The kinds of access a summarizer marks.
const (
	sumRead = iota
	sumWrite
	sumExec
)

// summarizer builds the access summaries of a single-process recording
// as it runs.
type summarizer struct {
	pages map[uint64]*sumPage
	// tlb is the page lookup, which translated code marks through
	// (x86.AccessMarker).
	tlb    *x86.MarkTable
	free   []*sumPage
	resets []tracefile.PageRange
	// pns, pas, masks and enc are what cut builds a summary in.
	pns   []uint64
	pas   []tracefile.PageAccess
	masks []uint64
	enc   []byte
	start uint64
	open  bool // an interval began (at the first checkpoint)
	// off: the recording became a process tree (or execed); the
	// summaries pass builds them instead.
	off  bool
	done []tracefile.EncodedSummary
	err  error // a summary that would not encode (none are written)
}

func newSummarizer() *summarizer {
	s := &summarizer{pages: map[uint64]*sumPage{}, tlb: new(x86.MarkTable)}
	s.flushTLB()
	return s
}

func (s *summarizer) flushTLB() { s.tlb.Empty() }

func (s *summarizer) page(pn uint64) *sumPage {
	e := &s.tlb.Entries[pn%x86.MarkTableSize]
	if e.PN == pn {
		return e.Page
	}
	p := s.pages[pn]
	if p == nil {
		if n := len(s.free); n > 0 {
			p = s.free[n-1]
			s.free = s.free[:n-1]
			*p = sumPage{}
		} else {
			p = new(sumPage)
		}
		s.pages[pn] = p
	}
	e.PN, e.Page = pn, p
	return p
}

// mark records an access of size bytes (1..8) at addr.
func (s *summarizer) mark(addr uint64, size int, kind int) {
	off := addr & (x86.PageSize - 1)
	b := off & 63
	if b+uint64(size) > 64 {
		s.markRange(addr, size, kind)
		return
	}
	p := s.page(addr >> x86.PageShift)
	m := (uint64(1)<<uint(size) - 1) << b
	if kind == sumExec {
		p.Ex[off>>6] |= m
	} else {
		p.RW[kind][off>>6] |= m
	}
}

// markRange records n bytes at addr.
func (s *summarizer) markRange(addr uint64, n int, kind int) {
	for n > 0 {
		off := addr & (x86.PageSize - 1)
		k := min(n, int(x86.PageSize-off))
		p := s.page(addr >> x86.PageShift)
		lo, hi := int(off), int(off)+k // bytes [lo, hi)
		for w := lo >> 6; w <= (hi-1)>>6; w++ {
			m := tracefile.LineMask(lo, hi, w)
			if kind == sumExec {
				p.Ex[w] |= m
			} else {
				p.RW[kind][w] |= m
			}
		}
		addr += uint64(k)
		n -= k
	}
}

// markSized records an access of any size (a vector access is one).
func (s *summarizer) markSized(addr uint64, size int, kind int) {
	if size <= 8 {
		s.mark(addr, size, kind)
		return
	}
	s.markRange(addr, size, kind)
}

// unmapped records that [addr, addr+n) was unmapped, as the replay
// reads the Munmap record.
func (s *summarizer) unmapped(addr, n uint64) {
	lo := addr >> x86.PageShift
	hi := (addr + n + x86.PageSize - 1) >> x86.PageShift
	if hi > lo {
		s.resets = append(s.resets, tracefile.PageRange{Lo: lo, Hi: hi})
	}
}

// cut ends the interval open at pos, if any, and begins the next one.
// The interval's summary is kept encoded (a few bytes a page, not the
// 128 of a PageAccess and its masks), and what cut builds it in is
// reused from one interval to the next: allocated afresh, it was memory
// for the kernel to zero (xz -6 touches 20,000 pages an interval).
func (s *summarizer) cut(pos uint64) {
	if s.open && !s.off && s.err == nil {
		sum := tracefile.AccessSummary{Start: s.start, End: pos, Unmapped: s.resets, Pages: s.pas[:0]}
		pns := s.pns[:0]
		for pn := range s.pages {
			pns = append(pns, pn)
		}
		slices.Sort(pns)
		s.pns = pns
		masks := s.masks[:0]
		for _, pn := range pns {
			p := s.pages[pn]
			pa := tracefile.PageAccess{PN: pn}
			pa.Read, masks = tracefile.AppendByteSet(masks, &p.RW[sumRead])
			pa.Written, masks = tracefile.AppendByteSet(masks, &p.RW[sumWrite])
			pa.Exec, masks = tracefile.AppendByteSet(masks, &p.Ex)
			if !(pa.Read.Empty() && pa.Written.Empty() && pa.Exec.Empty()) {
				sum.Pages = append(sum.Pages, pa)
			}
			s.free = append(s.free, p)
		}
		// (A set's masks have no spare capacity: the slab growing
		// leaves the sets before it where they were.)
		s.pas, s.masks = sum.Pages[:0], masks[:0]
		e, err := tracefile.EncodeAccessSummary(s.enc[:0], &sum)
		if err != nil {
			s.err = err
		} else {
			s.enc = e.Body()
			s.done = append(s.done, e.Clone())
		}
	}
	clear(s.pages)
	s.flushTLB()
	s.resets = nil
	s.start, s.open = pos, true
}

// partialLines counts the lines of masks that are neither empty nor full
// (the masks a ByteSet of them keeps).
func partialLines(masks *[64]uint64) int {
	n := 0
	for _, m := range masks {
		if m != 0 && m != ^uint64(0) {
			n++
		}
	}
	return n
}

// summarizing reports whether the recorder marks accesses for the
// summaries now.
func (r *Recorder) summarizing() bool { return r.sum != nil && !r.sum.off }

// stopSummarizing hands the summaries to the summaries pass (a process
// tree).
func (r *Recorder) stopSummarizing() {
	if r.sum != nil {
		r.sum.off = true
		r.sum.done = nil
		clear(r.sum.pages)
		r.sum.flushTLB() // translated code marks nothing more
	}
}

// AccessLogCache lets translated code run while the recorder builds the
// summaries (x86.AccessLogger): it checks the thread's prediction cache
// as it does without them, and logs every access.
func (r *Recorder) AccessLogCache(c *x86.CPU) *predict.Cache {
	if r.sum == nil {
		return nil
	}
	t := r.rec(c)
	if t.exited {
		return nil
	}
	return t.cache
}

// AccessMarks hands translated code the summarizer's page lookup, to
// mark accesses in place (x86.AccessMarker).
func (r *Recorder) AccessMarks(c *x86.CPU) *x86.MarkTable {
	if r.sum == nil {
		return nil
	}
	return r.sum.tlb
}

// LoggedAccesses marks the accesses translated code logged
// (x86.AccessLogger): those it could not mark in place (a page not in
// the lookup, which page enters there, a vector, an access across a
// line). Most stay within a line of the page the one before touched:
// that page's bits are at hand, and the rest go through mark.
func (r *Recorder) LoggedAccesses(c *x86.CPU, acc []x86.LoggedAccess) {
	s := r.sum
	if s.off {
		return
	}
	lastPN := ^uint64(0)
	var p *sumPage
	for _, a := range acc {
		size := uint64(a.Size())
		off := a.Addr & (x86.PageSize - 1)
		b := off & 63
		if size > 8 || b+size > 64 {
			kind := sumRead
			if a.Write() {
				kind = sumWrite
			}
			s.markSized(a.Addr, int(size), kind)
			continue
		}
		if pn := a.Addr >> x86.PageShift; pn != lastPN {
			p, lastPN = s.page(pn), pn
			// Translated code marks the page's next accesses
			// itself, through its TLB entries.
			s.tlb.EnterMarks(c, pn, p)
		}
		p.RW[a.WriteBit()][off>>6] |= (uint64(1)<<size - 1) << b
	}
}

// writeSummaries writes the summaries: those built while recording, or
// those Options.Summaries computes. A failure leaves the trace without
// them (a session then builds them on open) and is reported in
// Stats.SummaryError.
func (r *Recorder) writeSummaries() {
	if r.opts.Summaries == nil || r.err != nil {
		return
	}
	t0 := time.Now()
	if r.summarizing() {
		r.sum.cut(r.pos)
		r.stats.SummaryTime = time.Since(t0)
		if r.sum.err != nil {
			r.stats.SummaryError = fmt.Sprintf("access summaries: %v", r.sum.err)
			return
		}
		r.stats.SummaryInline = true
		for _, e := range r.sum.done {
			r.w.EncodedAccessSummary(e)
		}
		r.stats.Summaries = len(r.sum.done)
		return
	}
	if err := r.w.Flush(); err != nil {
		r.fail(err)
		return
	}
	sums, err := r.opts.Summaries(r.opts.Path)
	r.stats.SummaryTime = time.Since(t0)
	if err != nil {
		r.stats.SummaryError = fmt.Sprintf("access summaries: %v", err)
		return
	}
	for i := range sums {
		r.w.AccessSummary(&sums[i])
	}
	r.stats.Summaries = len(sums)
}

// markKernelWrites marks the bytes a syscall or a signal delivery wrote
// (r.ranges).
func (r *Recorder) markKernelWrites() {
	if !r.summarizing() {
		return
	}
	for _, w := range r.ranges {
		r.sum.markRange(w.Addr, len(w.Bytes), sumWrite)
	}
}
