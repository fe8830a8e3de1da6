package ttd

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sort"
	"sync"

	"github.com/klauspost/compress/zstd"

	"ttd/reader"
	"ttd/x86"
)

// The index (TRACE.idx next to the trace) summarises every checkpoint
// interval ("segment") of a trace: which 64-byte lines of which pages it
// read, wrote and executed, and what it learned about memory (the value at
// its end of every byte it touched). With it, FindPrevWrite re-simulates
// only the segments that wrote the address, and reading memory at any
// position needs no re-simulation of the segments before the current one.
// It is built on first open by re-simulating all segments in parallel
// (each starts at a checkpoint, so they are independent), saved next to
// the trace, and rebuilt when missing or stale. It is never required for
// correctness: it is a cache of facts the trace holds.

// The file: a little-endian u64 length M, then M bytes of metadata, its
// CRC-32 (IEEE), then the segments' compressed deltas, then their CRC.
// The metadata is "TTDINDEX", u32 version, the identity of the trace
// (size, modification time, instructions, creation time, chunks: u64
// each; an index whose identity differs is stale and rebuilt), the
// checkpoints (uvarint count, then position, chunk, control-record index)
// and the segments (uvarint count, then for each: start, end, delta
// offset and length, the unmapped page ranges, and the page summaries:
// page number delta, a known flag byte, read, written and exec line
// masks), all uvarints unless said. A delta is a zstd frame of: uvarint
// page count, then per page a uvarint page-number delta, the 512-byte
// known mask and the 4096 bytes (unknown ones zero).
const (
	indexMagic   = "TTDINDEX"
	indexVersion = 1
)

// PageSummary is what a segment did to one page: line masks (bit i covers
// bytes 64i..64i+63).
type PageSummary struct {
	PN                  uint64
	Read, Written, Exec uint64
	// Known is set when the segment learned the value of some byte of
	// the page (its delta holds the page).
	Known bool
}

// Touched is the mask of lines the segment accessed in any way.
func (p *PageSummary) Touched() uint64 { return p.Read | p.Written | p.Exec }

// Segment is the index entry of one checkpoint interval [Start, End).
type Segment struct {
	Start, End uint64
	Pages      []PageSummary // sorted by PN
	Resets     []reader.Range
	off, n     int64 // compressed delta in the index blob
}

// Page returns the segment's summary of page pn.
func (s *Segment) Page(pn uint64) (*PageSummary, bool) {
	i := sort.Search(len(s.Pages), func(i int) bool { return s.Pages[i].PN >= pn })
	if i < len(s.Pages) && s.Pages[i].PN == pn {
		return &s.Pages[i], true
	}
	return nil, false
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

// lines returns the mask of the lines of page pn that [addr, addr+n)
// covers.
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

// MayAccess reports whether the segment may have accessed [addr,
// addr+n) in the ways of mask (Read, Written or Exec lines).
func (s *Segment) MayAccess(addr, n uint64, read, write, exec bool) bool {
	if n == 0 {
		return false
	}
	for pn := addr >> x86.PageShift; pn <= (addr+n-1)>>x86.PageShift; pn++ {
		p, ok := s.Page(pn)
		if !ok {
			continue
		}
		var m uint64
		if read {
			m |= p.Read
		}
		if write {
			m |= p.Written
		}
		if exec {
			m |= p.Exec
		}
		if m&lines(pn, addr, n) != 0 {
			return true
		}
	}
	return false
}

// Index is a trace's index, in memory; deltas are loaded on demand.
type Index struct {
	Checkpoints []reader.Checkpoint
	Segments    []Segment
	// Built is set when the index was built by this process (not loaded).
	Built bool

	blob   io.ReaderAt
	closer io.Closer

	mu     sync.Mutex
	deltas map[int]*reader.Delta
	order  []int
}

// Close releases the index file.
func (ix *Index) Close() error {
	if ix.closer != nil {
		return ix.closer.Close()
	}
	return nil
}

// maxCachedDeltas bounds the decoded deltas an Index keeps.
const maxCachedDeltas = 16

// Delta returns what segment k learned about memory.
func (ix *Index) Delta(k int) (*reader.Delta, error) {
	ix.mu.Lock()
	if d := ix.deltas[k]; d != nil {
		ix.mu.Unlock()
		return d, nil
	}
	ix.mu.Unlock()
	sg := &ix.Segments[k]
	comp := make([]byte, sg.n)
	if _, err := ix.blob.ReadAt(comp, sg.off); err != nil {
		return nil, fmt.Errorf("index: reading segment %d: %w", k, err)
	}
	d, err := decodeDelta(comp, sg)
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

// encodeDelta compresses the known bytes of a delta: for each page with
// known bytes, its number, known mask and data (unknown bytes zeroed).
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
		if s, ok := sg.Page(pn); ok {
			p.Read, p.Written, p.Exec = s.Read, s.Written, s.Exec
		}
		d.Pages = append(d.Pages, p)
	}
	return d, nil
}

// indexIdentity ties an index to one trace file.
type indexIdentity struct {
	size, mtime, instructions, created int64
	chunks                             int64
}

func identityOf(path string, tr *reader.Trace) (indexIdentity, error) {
	st, err := os.Stat(path)
	if err != nil {
		return indexIdentity{}, err
	}
	return indexIdentity{size: st.Size(), mtime: st.ModTime().UnixNano(), instructions: int64(tr.End()),
		created: tr.Header.Created.UnixNano(), chunks: int64(len(tr.Chunks()))}, nil
}

// BuildIndex re-simulates every segment of tr (workers at a time; 0
// means one per CPU) and returns the index. progress, if set, is called
// after each segment.
func BuildIndex(tr *reader.Trace, workers int, progress func(done, total int)) (*Index, error) {
	cps, err := tr.Checkpoints()
	if err != nil {
		return nil, err
	}
	n := len(cps)
	segs := make([]Segment, n)
	blobs := make([][]byte, n)
	errs := make([]error, n)
	var mu sync.Mutex
	done := 0
	reader.Parallel(n, workers, func(k int) {
		segs[k], blobs[k], errs[k] = buildSegment(tr, cps, k)
		mu.Lock()
		done++
		if progress != nil {
			progress(done, n)
		}
		mu.Unlock()
	})
	for k, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("index: segment %d (from position %d): %w", k, cps[k].Position, err)
		}
	}
	var all []byte
	for k := range segs {
		segs[k].off, segs[k].n = int64(len(all)), int64(len(blobs[k]))
		all = append(all, blobs[k]...)
	}
	return &Index{Checkpoints: cps, Segments: segs, Built: true, blob: bytes.NewReader(all)}, nil
}

// segmentEnd is where segment k of cps ends.
func segmentEnd(cps []reader.Checkpoint, k int, end uint64) uint64 {
	if k+1 < len(cps) {
		return cps[k+1].Position
	}
	return end
}

func buildSegment(tr *reader.Trace, cps []reader.Checkpoint, k int) (Segment, []byte, error) {
	r, err := tr.NewReplayAt(cps[k])
	if err != nil {
		return Segment{}, nil, err
	}
	defer r.Close()
	r.Track()
	end := segmentEnd(cps, k, tr.End())
	if err := r.RunTo(end); err != nil && err != reader.ErrEnd && err != io.ErrUnexpectedEOF {
		return Segment{}, nil, err
	}
	d := r.Cut()
	d.Start = cps[k].Position
	sg := Segment{Start: d.Start, End: d.End, Resets: d.Resets}
	for i := range d.Pages {
		p := &d.Pages[i]
		sg.Pages = append(sg.Pages, PageSummary{PN: p.PN, Read: p.Read, Written: p.Written, Exec: p.Exec, Known: p.Data != nil})
	}
	return sg, encodeDelta(d), nil
}

// Save writes the index next to the trace (atomically: a temporary file
// renamed into place).
func (ix *Index) Save(path string, id indexIdentity) error {
	var b []byte
	b = append(b, indexMagic...)
	b = binary.LittleEndian.AppendUint32(b, indexVersion)
	for _, v := range []int64{id.size, id.mtime, id.instructions, id.created, id.chunks} {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	b = binary.AppendUvarint(b, uint64(len(ix.Checkpoints)))
	for _, cp := range ix.Checkpoints {
		b = binary.AppendUvarint(b, cp.Position)
		b = binary.AppendUvarint(b, uint64(cp.Chunk))
		b = binary.AppendUvarint(b, uint64(cp.Ctrl))
	}
	b = binary.AppendUvarint(b, uint64(len(ix.Segments)))
	for _, sg := range ix.Segments {
		b = binary.AppendUvarint(b, sg.Start)
		b = binary.AppendUvarint(b, sg.End)
		b = binary.AppendUvarint(b, uint64(sg.off))
		b = binary.AppendUvarint(b, uint64(sg.n))
		b = binary.AppendUvarint(b, uint64(len(sg.Resets)))
		for _, r := range sg.Resets {
			b = binary.AppendUvarint(b, r.Lo)
			b = binary.AppendUvarint(b, r.Hi)
		}
		b = binary.AppendUvarint(b, uint64(len(sg.Pages)))
		var prev uint64
		for _, p := range sg.Pages {
			b = binary.AppendUvarint(b, p.PN-prev)
			prev = p.PN
			known := uint64(0)
			if p.Known {
				known = 1
			}
			b = append(b, byte(known))
			b = binary.AppendUvarint(b, p.Read)
			b = binary.AppendUvarint(b, p.Written)
			b = binary.AppendUvarint(b, p.Exec)
		}
	}
	meta := b
	var total int64
	for _, sg := range ix.Segments {
		total = max(total, sg.off+sg.n)
	}
	blob := make([]byte, total)
	if _, err := ix.blob.ReadAt(blob, 0); err != nil && total > 0 {
		return err
	}
	var out []byte
	out = binary.LittleEndian.AppendUint64(out, uint64(len(meta)))
	out = append(out, meta...)
	out = binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(meta))
	out = append(out, blob...)
	out = binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(blob))
	tmp, err := os.CreateTemp(dirOf(path), ".ttdidx-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func dirOf(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[:i+1]
		}
	}
	return "."
}

// errStale says an index file belongs to another trace (or version).
var errStale = errors.New("index: stale or foreign")

// LoadIndex reads an index saved by Save, checking that it belongs to id.
func loadIndex(path string, id indexIdentity) (*Index, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	ix, err := readIndex(f, id)
	if err != nil {
		f.Close()
		return nil, err
	}
	ix.closer = f
	return ix, nil
}

func readIndex(f *os.File, id indexIdentity) (*Index, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var lenb [8]byte
	if _, err := f.ReadAt(lenb[:], 0); err != nil {
		return nil, errStale
	}
	ml := binary.LittleEndian.Uint64(lenb[:])
	if ml > uint64(st.Size()) || ml < 8+4+40 {
		return nil, errStale
	}
	meta := make([]byte, ml+4)
	if _, err := f.ReadAt(meta, 8); err != nil {
		return nil, errStale
	}
	if crc32.ChecksumIEEE(meta[:ml]) != binary.LittleEndian.Uint32(meta[ml:]) {
		return nil, errStale
	}
	meta = meta[:ml]
	if string(meta[:8]) != indexMagic || binary.LittleEndian.Uint32(meta[8:]) != indexVersion {
		return nil, errStale
	}
	p := meta[12:]
	for _, v := range []int64{id.size, id.mtime, id.instructions, id.created, id.chunks} {
		if int64(binary.LittleEndian.Uint64(p)) != v {
			return nil, errStale
		}
		p = p[8:]
	}
	bad := false
	uv := func() uint64 {
		v, k := binary.Uvarint(p)
		if k <= 0 {
			bad = true
			return 0
		}
		p = p[k:]
		return v
	}
	ix := &Index{}
	ncp := uv()
	if ncp > uint64(len(p)) {
		return nil, errStale
	}
	for i := uint64(0); i < ncp && !bad; i++ {
		ix.Checkpoints = append(ix.Checkpoints, reader.Checkpoint{Position: uv(), Chunk: int(uv()), Ctrl: int(uv())})
	}
	nseg := uv()
	if nseg > uint64(len(p)) {
		return nil, errStale
	}
	blobOff := int64(8 + ml + 4)
	blobLen := st.Size() - blobOff - 4
	for i := uint64(0); i < nseg && !bad; i++ {
		sg := Segment{Start: uv(), End: uv(), off: int64(uv()), n: int64(uv())}
		if sg.off < 0 || sg.n < 0 || sg.off+sg.n > blobLen {
			return nil, errStale
		}
		nr := uv()
		if nr > uint64(len(p)) {
			return nil, errStale
		}
		for j := uint64(0); j < nr && !bad; j++ {
			sg.Resets = append(sg.Resets, reader.Range{Lo: uv(), Hi: uv()})
		}
		np := uv()
		if np > uint64(len(p)) {
			return nil, errStale
		}
		var pn uint64
		for j := uint64(0); j < np && !bad; j++ {
			pn += uv()
			if len(p) == 0 {
				return nil, errStale
			}
			known := p[0] == 1
			p = p[1:]
			sg.Pages = append(sg.Pages, PageSummary{PN: pn, Known: known, Read: uv(), Written: uv(), Exec: uv()})
		}
		ix.Segments = append(ix.Segments, sg)
	}
	if bad || len(ix.Segments) != len(ix.Checkpoints) {
		return nil, errStale
	}
	ix.blob = io.NewSectionReader(f, blobOff, blobLen)
	return ix, nil
}
