package ttd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"sort"
	"sync"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/sys/unix"

	"ttd/reader"
	"ttd/tracefile"
	"ttd/x86"
)

// The index summarises every checkpoint interval ("segment") of a trace:
// exactly which bytes it read, wrote and fetched as code, and which pages
// it unmapped. With it, a search re-simulates only the segments that
// accessed the bytes it looks for, even when their neighbours in the
// same cache line are written all the time, and reading memory at a
// position re-simulates only the last segment before it that touched
// each byte. The summaries are stored in the trace (tracefile's
// AccessSummary records, which `ttd record` writes); a trace without
// them gets them built in memory on open, by re-simulating all segments
// in parallel. They are a cache of facts the trace holds, never needed
// for correctness; this file gives them their meaning.

// Segment is what the checkpoint interval [Start, End) did to memory.
type Segment struct {
	Start, End uint64
	// Pages are sorted by page number.
	Pages []tracefile.PageAccess
	// Resets are the page-number ranges the segment unmapped.
	Resets []reader.Range
}

// Page returns the segment's summary of page pn, or nil.
func (s *Segment) Page(pn uint64) *tracefile.PageAccess {
	i := sort.Search(len(s.Pages), func(i int) bool { return s.Pages[i].PN >= pn })
	if i < len(s.Pages) && s.Pages[i].PN == pn {
		return &s.Pages[i]
	}
	return nil
}

// WasReset reports whether the segment unmapped page pn.
func (s *Segment) WasReset(pn uint64) bool {
	for _, r := range s.Resets {
		if pn >= r.Lo && pn < r.Hi {
			return true
		}
	}
	return false
}

// lines returns the mask of the 64-byte lines of page pn that [addr,
// addr+n) covers.
func lines(pn, addr, n uint64) uint64 {
	lo, hi := pn<<x86.PageShift, (pn+1)<<x86.PageShift
	a, b := max(addr, lo), min(addr+n, hi)
	if a >= b {
		return 0
	}
	first, last := (a-lo)>>reader.LineShift, (b-1-lo)>>reader.LineShift
	if last-first == 63 {
		return ^uint64(0)
	}
	return (uint64(1)<<(last-first+1) - 1) << first
}

// lineBytes returns the mask of the bytes of line i of page pn that
// [addr, addr+n) covers.
func lineBytes(pn uint64, i int, addr, n uint64) uint64 {
	lo := pn<<x86.PageShift + uint64(i)<<reader.LineShift
	a, b := max(addr, lo), min(addr+n, lo+64)
	if a >= b {
		return 0
	}
	if b-a == 64 {
		return ^uint64(0)
	}
	return (uint64(1)<<(b-a) - 1) << (a - lo)
}

// MayAccess reports whether the segment accessed a byte of [addr,
// addr+n) in one of the ways asked (read, written, fetched as code). The
// answer is exact: a segment that wrote the byte next to addr does not
// count.
func (s *Segment) MayAccess(addr, n uint64, read, write, exec bool) bool {
	if n == 0 {
		return false
	}
	for pn := addr >> x86.PageShift; pn <= (addr+n-1)>>x86.PageShift; pn++ {
		p := s.Page(pn)
		if p == nil {
			continue
		}
		var sets [3]*tracefile.ByteSet
		k := 0
		if read {
			sets[k], k = &p.Read, k+1
		}
		if write {
			sets[k], k = &p.Written, k+1
		}
		if exec {
			sets[k], k = &p.Exec, k+1
		}
		ls := lines(pn, addr, n)
		for _, set := range sets[:k] {
			for m := set.Lines & ls; m != 0; m &= m - 1 {
				i := bits.TrailingZeros64(m)
				if set.Line(i)&lineBytes(pn, i, addr, n) != 0 {
					return true
				}
			}
		}
	}
	return false
}

// Touched reports whether the segment read, wrote or fetched the byte at
// addr (so that its end knows the byte's value, unless it unmapped it).
func (s *Segment) Touched(addr uint64) bool {
	return s.MayAccess(addr, 1, true, true, true)
}

// Index is a trace's index, in memory.
type Index struct {
	Checkpoints []reader.Checkpoint
	Segments    []Segment
	// Built is set when the summaries were built by this process
	// (the trace had none).
	Built bool
	// StoredBytes is the size of the trace's chunks of summaries (0
	// when Built).
	StoredBytes int64

	tr *reader.Trace

	mu     sync.Mutex
	deltas map[int]*reader.Delta
	order  []int
	// blobs are the compressed deltas kept from a build (nil otherwise).
	blobs [][]byte
	// others[k] are segment k's summaries of every process of a tree
	// (Segments are the focus's): an execution breakpoint stops in
	// whichever process runs its address, a program another process
	// execs included. execUnknown: a tree whose other processes'
	// summaries are not stored, so no segment can be ruled out for code.
	others      [][]Segment
	execUnknown bool
	// inflight are the deltas Prefetch is computing.
	inflight map[int]chan struct{}
}

// Prefetch starts computing segment k's delta on another goroutine (a
// search that will need it re-simulates another segment meanwhile: the
// two take two cores instead of one after the other).
func (ix *Index) Prefetch(k int) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.blobs != nil || ix.deltas[k] != nil || ix.inflight[k] != nil {
		return
	}
	if ix.inflight == nil {
		ix.inflight = map[int]chan struct{}{}
	}
	ch := make(chan struct{})
	ix.inflight[k] = ch
	go func() {
		d, err := segmentDelta(ix.tr, ix.Checkpoints, k)
		ix.mu.Lock()
		if err == nil {
			if ix.deltas == nil {
				ix.deltas = map[int]*reader.Delta{}
			}
			if len(ix.order) >= maxCachedDeltas {
				delete(ix.deltas, ix.order[0])
				ix.order = ix.order[1:]
			}
			ix.deltas[k] = d
			ix.order = append(ix.order, k)
		}
		delete(ix.inflight, k)
		ix.mu.Unlock()
		close(ch)
	}()
}

// Close releases what the index holds.
func (ix *Index) Close() error { return nil }

// maxCachedDeltas bounds the decoded deltas an Index keeps.
const maxCachedDeltas = 16

// Delta returns what segment k learned about memory: the values at its
// end of the bytes it touched. A segment whose delta was not kept from a
// build is re-simulated (once; the result is cached).
func (ix *Index) Delta(k int) (*reader.Delta, error) {
	ix.mu.Lock()
	if d := ix.deltas[k]; d != nil {
		ix.mu.Unlock()
		return d, nil
	}
	if ch := ix.inflight[k]; ch != nil {
		// Prefetch is computing it.
		ix.mu.Unlock()
		<-ch
		return ix.Delta(k)
	}
	ix.mu.Unlock()
	var d *reader.Delta
	var err error
	if ix.blobs != nil {
		d, err = decodeDelta(ix.blobs[k], &ix.Segments[k])
	} else {
		d, err = segmentDelta(ix.tr, ix.Checkpoints, k)
	}
	if err != nil {
		return nil, fmt.Errorf("index: segment %d: %w", k, err)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.deltas == nil {
		ix.deltas = map[int]*reader.Delta{}
	}
	if len(ix.order) >= maxCachedDeltas {
		delete(ix.deltas, ix.order[0])
		ix.order = ix.order[1:]
	}
	ix.deltas[k] = d
	ix.order = append(ix.order, k)
	return d, nil
}

var (
	zenc     *zstd.Encoder
	zdec     *zstd.Decoder
	zstdOnce sync.Once
)

func zstdCodecs() {
	zstdOnce.Do(func() {
		zenc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		zdec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(1<<31))
	})
}

// encodeDelta compresses the known bytes of a delta, to keep it in
// memory: for each page with known bytes, its number, known mask and
// data (unknown bytes zeroed).
func encodeDelta(d *reader.Delta) []byte {
	var b []byte
	var prev uint64
	n := 0
	for i := range d.Pages {
		if d.Pages[i].Data != nil {
			n++
		}
	}
	b = binary.AppendUvarint(b, uint64(n))
	var page [x86.PageSize]byte
	for i := range d.Pages {
		p := &d.Pages[i]
		if p.Data == nil {
			continue
		}
		b = binary.AppendUvarint(b, p.PN-prev)
		prev = p.PN
		for _, w := range p.Known {
			b = binary.LittleEndian.AppendUint64(b, w)
		}
		for j := range page {
			if p.Known[j>>6]&(1<<(j&63)) != 0 {
				page[j] = p.Data[j]
			} else {
				page[j] = 0
			}
		}
		b = append(b, page[:]...)
	}
	zstdCodecs()
	return zenc.EncodeAll(b, nil)
}

func decodeDelta(comp []byte, sg *Segment) (*reader.Delta, error) {
	zstdCodecs()
	b, err := zdec.DecodeAll(comp, nil)
	if err != nil {
		return nil, err
	}
	d := &reader.Delta{Start: sg.Start, End: sg.End, Resets: sg.Resets}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b))/(x86.PageSize+512) {
		return nil, errors.New("bad delta")
	}
	b = b[k:]
	var pn uint64
	for i := uint64(0); i < n; i++ {
		dpn, k := binary.Uvarint(b)
		if k <= 0 || len(b)-k < 512+x86.PageSize {
			return nil, errors.New("bad delta page")
		}
		b = b[k:]
		pn += dpn
		p := reader.DeltaPage{PN: pn, Data: new([x86.PageSize]byte)}
		for j := range p.Known {
			p.Known[j] = binary.LittleEndian.Uint64(b[8*j:])
		}
		copy(p.Data[:], b[512:512+x86.PageSize])
		b = b[512+x86.PageSize:]
		d.Pages = append(d.Pages, p)
	}
	return d, nil
}

// segmentEnd is where segment k of cps ends.
func segmentEnd(cps []reader.Checkpoint, k int, end uint64) uint64 {
	if k+1 < len(cps) {
		return cps[k+1].Position
	}
	return end
}

// segmentDelta re-simulates segment k with tracking on, in the
// memory of the trace's focus.
func segmentDelta(tr *reader.Trace, cps []reader.Checkpoint, k int) (*reader.Delta, error) {
	return processDelta(tr, cps, k, 0)
}

// processDelta re-simulates segment k with tracking on, in the memory of
// process pid (0: the trace's focus).
func processDelta(tr *reader.Trace, cps []reader.Checkpoint, k, pid int) (*reader.Delta, error) {
	r, err := tr.NewReplayAt(cps[k])
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if pid != 0 {
		if err := r.Refocus(pid); err != nil {
			return nil, err
		}
	}
	r.Track()
	end := segmentEnd(cps, k, tr.End())
	if err := r.RunTo(end); err != nil && err != reader.ErrEnd && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	d := r.Cut()
	d.Start = cps[k].Position
	return d, nil
}

// intervalSummaries re-simulates interval k once, following each of
// pids (0: the first process) as processDelta would, and returns their
// summaries in that order.
func intervalSummaries(tr *reader.Trace, cps []reader.Checkpoint, k int, pids []int) ([]tracefile.AccessSummary, error) {
	r, err := tr.NewReplayAt(cps[k])
	if err != nil {
		return nil, fmt.Errorf("summaries: segment %d (from position %d): %w", k, cps[k].Position, err)
	}
	defer r.Close()
	if err := r.TrackPids(pids); err != nil {
		return nil, err
	}
	end := segmentEnd(cps, k, tr.End())
	if err := r.RunTo(end); err != nil && err != reader.ErrEnd && err != io.ErrUnexpectedEOF {
		return nil, fmt.Errorf("summaries: segment %d (from position %d): %w", k, cps[k].Position, err)
	}
	out := make([]tracefile.AccessSummary, len(pids))
	for i, d := range r.CutPids() {
		d.Start = cps[k].Position
		out[i] = summaryOf(d)
		out[i].Pid = pids[i]
	}
	return out, nil
}

// summaryOf is the access summary of a segment's delta.
func summaryOf(d *reader.Delta) tracefile.AccessSummary {
	s := tracefile.AccessSummary{Start: d.Start, End: d.End}
	for _, r := range d.Resets {
		s.Unmapped = append(s.Unmapped, tracefile.PageRange{Lo: r.Lo, Hi: r.Hi})
	}
	for i := range d.Pages {
		p := &d.Pages[i]
		pa := tracefile.PageAccess{PN: p.PN,
			Read:    tracefile.MakeByteSet((*[64]uint64)(&p.ReadBytes)),
			Written: tracefile.MakeByteSet((*[64]uint64)(&p.WrittenBytes)),
			Exec:    tracefile.MakeByteSet((*[64]uint64)(&p.ExecBytes))}
		if pa.Read.Empty() && pa.Written.Empty() && pa.Exec.Empty() {
			continue
		}
		s.Pages = append(s.Pages, pa)
	}
	if len(d.Replaced) > 0 {
		all := reader.AllBytes()
		full := tracefile.MakeByteSet((*[64]uint64)(&all))
		for _, r := range d.Replaced {
			for pn := r.Lo; pn < r.Hi; pn++ {
				s.Pages = append(s.Pages, tracefile.PageAccess{PN: pn, Read: full, Written: full})
			}
		}
		sort.Slice(s.Pages, func(i, j int) bool { return s.Pages[i].PN < s.Pages[j].PN })
	}
	return s
}

func segmentOf(s *tracefile.AccessSummary) Segment {
	sg := Segment{Start: s.Start, End: s.End, Pages: s.Pages}
	for _, r := range s.Unmapped {
		sg.Resets = append(sg.Resets, reader.Range{Lo: r.Lo, Hi: r.Hi})
	}
	return sg
}

// BuildSummaries re-simulates every segment of tr (workers at a time; 0
// means one per CPU) and returns their access summaries in the memory of
// the trace's focus, in position order. progress, if set, is called
// after each segment.
func BuildSummaries(tr *reader.Trace, workers int, progress func(done, total int)) ([]tracefile.AccessSummary, error) {
	sums, _, err := buildSummaries(tr, workers, progress, false)
	return sums, err
}

func buildSummaries(tr *reader.Trace, workers int, progress func(done, total int), keep bool) ([]tracefile.AccessSummary, [][]byte, error) {
	cps, err := tr.Checkpoints()
	if err != nil {
		return nil, nil, err
	}
	n := len(cps)
	sums := make([]tracefile.AccessSummary, n)
	var blobs [][]byte
	if keep {
		blobs = make([][]byte, n)
	}
	errs := make([]error, n)
	var mu sync.Mutex
	done := 0
	reader.Parallel(n, workers, func(k int) {
		d, err := segmentDelta(tr, cps, k)
		if err != nil {
			errs[k] = err
		} else {
			sums[k] = summaryOf(d)
			if keep {
				blobs[k] = encodeDelta(d)
			}
		}
		mu.Lock()
		done++
		if progress != nil {
			progress(done, n)
		}
		mu.Unlock()
	})
	for k, err := range errs {
		if err != nil {
			return nil, nil, fmt.Errorf("summaries: segment %d (from position %d): %w", k, cps[k].Position, err)
		}
	}
	return sums, blobs, nil
}

// ErrNoSummaries says a trace holds no access summaries.
var ErrNoSummaries = errors.New("the trace holds no access summaries")

// loadIndex reads the trace's summaries, or builds them when it has
// none (or they do not match its checkpoints).
func loadIndex(tr *reader.Trace, workers int, progress func(done, total int)) (*Index, error) {
	cps, err := tr.Checkpoints()
	if err != nil {
		return nil, err
	}
	ix := &Index{Checkpoints: cps, tr: tr}
	stored, err := tr.File().AccessSummaries()
	if err != nil {
		return nil, err
	}
	fromFile := false
	if len(stored) == 0 && tr.Sequential() && tr.Path() != "" {
		valid := func(s []tracefile.AccessSummary) bool { _, ok := focusSegments(tr, cps, s); return ok }
		if stored, ix.Built, err = sidecarSummaries(tr, workers, progress, valid); err != nil {
			return nil, err
		}
		fromFile = !ix.Built
	}
	if segs, ok := focusSegments(tr, cps, stored); ok {
		for _, c := range tr.Chunks() {
			if c.HoldsSummaries() {
				ix.StoredBytes += c.Size
			}
		}
		if fromFile {
			if fi, err := os.Stat(tracefile.SumsPath(tr.Path())); err == nil {
				ix.StoredBytes = fi.Size()
			}
		}
		ix.Segments = segs
		ix.others = otherSegments(tr, cps, stored)
		return ix, nil
	}
	ix.execUnknown = tr.Tree() && len(tr.Processes()) > 1
	sums, blobs, err := buildSummaries(tr, workers, progress, true)
	if err != nil {
		return nil, err
	}
	ix.Built, ix.blobs = true, blobs
	ix.Segments = make([]Segment, len(sums))
	for k := range sums {
		ix.Segments[k] = segmentOf(&sums[k])
	}
	return ix, nil
}

// otherSegments files every stored summary of a process tree under its
// segment, for Index.mayExec (nil for a single process: Segments say
// it all).
func otherSegments(tr *reader.Trace, cps []reader.Checkpoint, stored []tracefile.AccessSummary) [][]Segment {
	if !tr.Tree() || len(tr.Processes()) < 2 {
		return nil
	}
	var out [][]Segment
	for i := range stored {
		s := &stored[i]
		k := reader.CheckpointAt(cps, s.Start)
		if k < 0 || cps[k].Position != s.Start {
			continue
		}
		if out == nil {
			out = make([][]Segment, len(cps))
		}
		out[k] = append(out[k], segmentOf(s))
	}
	return out
}

// mayExec reports whether any process of the trace may have run code at
// pc in segment k: the focus's summary, or any process's of a tree.
func (ix *Index) mayExec(k int, pc uint64) bool {
	if ix.execUnknown || ix.Segments[k].MayAccess(pc, 1, false, false, true) {
		return true
	}
	if ix.others == nil {
		return false
	}
	for i := range ix.others[k] {
		if ix.others[k][i].MayAccess(pc, 1, false, false, true) {
			return true
		}
	}
	return false
}

// matches reports whether sums describe the segments of cps from
// segment k0 on.
func matches(sums []tracefile.AccessSummary, cps []reader.Checkpoint, k0 int, end uint64) bool {
	for i := range sums {
		k := k0 + i
		if k >= len(cps) || sums[i].Start != cps[k].Position || sums[i].End != segmentEnd(cps, k, end) {
			return false
		}
	}
	return true
}

// focusSegments composes the segments of the trace's focus from the
// stored summaries (FORMAT.md, ProcessAccessSummary): the first
// process's everywhere, overridden by each descendant on the focus's
// lineage from the segment it was created in (after its own summaries
// end, it accessed nothing). ok is false when one of them is missing.
func focusSegments(tr *reader.Trace, cps []reader.Checkpoint, stored []tracefile.AccessSummary) (segs []Segment, ok bool) {
	byPid := map[int][]tracefile.AccessSummary{}
	for _, s := range stored {
		byPid[s.Pid] = append(byPid[s.Pid], s)
	}
	first := byPid[0]
	if len(first) != len(cps) || !matches(first, cps, 0, tr.End()) {
		return nil, false
	}
	segs = make([]Segment, len(cps))
	for k := range first {
		segs[k] = segmentOf(&first[k])
	}
	lineage := tr.Lineage()
	for i := 1; i < len(lineage); i++ {
		own := byPid[lineage[i]]
		if len(own) == 0 {
			return nil, false
		}
		k0 := reader.CheckpointAt(cps, own[0].Start)
		if !matches(own, cps, k0, tr.End()) {
			return nil, false
		}
		for k := k0; k < len(cps); k++ {
			if j := k - k0; j < len(own) {
				segs[k] = segmentOf(&own[j])
			} else {
				segs[k] = Segment{Start: cps[k].Position, End: segmentEnd(cps, k, tr.End())}
			}
		}
	}
	return segs, true
}

// processSpan is the segments [first, last] for which the summaries of
// a process other than the first are stored: from its creation to its
// end (a segment more on each side, for events at a checkpoint's
// position), to the trace's end when it never ends or ends sharing its
// parent's memory (CLONE_VM without an exec).
type processSpan struct{ pid, first, last int }

func processSpans(tr *reader.Trace, cps []reader.Checkpoint) ([]processSpan, error) {
	procs := tr.Processes()
	if !tr.Tree() || len(procs) < 2 {
		return nil, nil
	}
	recs, err := tr.File().Processes()
	if err != nil {
		return nil, err
	}
	shared := map[int]bool{}
	for _, p := range recs {
		switch p.Event {
		case tracefile.ProcessStarted:
			shared[p.Pid] = p.Flags&unix.CLONE_VM != 0
		case tracefile.ProcessExeced:
			shared[p.Pid] = false
		}
	}
	var out []processSpan
	for _, p := range procs[1:] {
		sp := processSpan{pid: p.Pid, first: max(reader.CheckpointAt(cps, p.Start)-1, 0), last: len(cps) - 1}
		if p.Exited && !shared[p.Pid] {
			sp.last = min(reader.CheckpointAt(cps, p.End)+1, len(cps)-1)
		}
		out = append(out, sp)
	}
	return out, nil
}

// SummaryBytes is the size of the trace's access summaries (0 when the
// trace has none and they were built on open).
func (s *Session) SummaryBytes() int64 {
	if s.ix == nil {
		return 0 // not loaded yet (LazyIndex)
	}
	return s.ix.StoredBytes
}

// SummarizeTrace opens the trace at path (a recording flushed but not
// yet closed is fine) and builds its access summaries, those of every
// process of a process tree (FORMAT.md, ProcessAccessSummary), all
// segments in parallel; the recorder writes them into the trace
// (recorder.Options.Summaries).
func SummarizeTrace(path string, workers int, progress func(done, total int)) ([]tracefile.AccessSummary, error) {
	tr, err := reader.Open(path)
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	return summarize(tr, workers, progress)
}

// summarize builds the access summaries of tr for SummarizeTrace.
func summarize(tr *reader.Trace, workers int, progress func(done, total int)) ([]tracefile.AccessSummary, error) {
	cps, err := tr.Checkpoints()
	if err != nil {
		return nil, err
	}
	spans, err := processSpans(tr, cps)
	if err != nil {
		return nil, err
	}
	// One replay per interval follows every process the interval needs
	// (reader.TrackPids): the first process, and each process whose
	// span covers it. The summaries are the first process's, interval
	// by interval, then each process's in turn.
	perK := make([][]int, len(cps)) // the pids interval k summarizes, after 0
	for _, sp := range spans {
		for k := sp.first; k <= sp.last; k++ {
			perK[k] = append(perK[k], sp.pid)
		}
	}
	got := make([][]tracefile.AccessSummary, len(cps))
	errs := make([]error, len(cps))
	var mu sync.Mutex
	done := 0
	reader.Parallel(len(cps), workers, func(k int) {
		got[k], errs[k] = intervalSummaries(tr, cps, k, append([]int{0}, perK[k]...))
		mu.Lock()
		done++
		if progress != nil {
			progress(done, len(cps))
		}
		mu.Unlock()
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	sums := make([]tracefile.AccessSummary, 0, len(cps))
	for k := range cps {
		sums = append(sums, got[k][0])
	}
	next := make([]int, len(cps)) // the next of perK[k] to take
	for _, sp := range spans {
		for k := sp.first; k <= sp.last; k++ {
			next[k]++
			sums = append(sums, got[k][next[k]])
		}
	}
	return sums, nil
}
