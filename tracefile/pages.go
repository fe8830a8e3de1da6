package tracefile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Checkpoint memory files (FORMAT.md, "Checkpoint memory files"): the pages
// each address space holds at each checkpoint of a trace that logs no
// reads, as the versions written since the checkpoint before, so that a
// re-simulation can start at any checkpoint with its memory. The file
// sits next to its trace (PagesPath) and names it by its size, its
// header's CRC and its last 32 bytes (TraceIdentity): a file made for
// another trace, or for this one before it changed, is refused
// (ErrStale).

// PageSize is the size of a page in a checkpoint memory file.
const PageSize = 4096

// Sizes and magics of a checkpoint memory file.
const (
	pagesMagic      = "TTDPAGES"
	pagesTrail      = "TTDPTRAL"
	pagesIndexMagic = "TTDP"
	pagesMajor      = 1
	pagesMinor      = 0
	pagesHdrLen     = 8 + 2 + 2 + IdentityLen + 4
	pagesFooterLen  = 32
	// PagesPerFrame is how many pages one zstd frame holds (the last
	// frame may hold fewer): 256 KiB, where zstd's ratio on xz's pages
	// levels off, and what a re-simulation decompresses for one page.
	PagesPerFrame = 64
	// IdentityLen is the length of a TraceIdentity.
	IdentityLen = 8 + 4 + 32
)

// ErrStale is the error of a checkpoint memory file made for another
// trace, or for an earlier state of this one.
var ErrStale = errors.New("checkpoint memory file is not this trace's (rebuild it with `ttd index`)")

// PagesPath is where the checkpoint memory file of the trace at path is.
func PagesPath(trace string) string { return trace + ".pages" }

// TraceIdentity names a trace file by its size, the CRC of its header's
// body (which holds the time of the recording) and its last 32 bytes (a
// closed trace's footer, which holds the CRC of an index that holds
// every chunk header's, and each header its payload's CRC).
func TraceIdentity(ra io.ReaderAt, size int64) ([IdentityLen]byte, error) {
	var id [IdentityLen]byte
	binary.LittleEndian.PutUint64(id[:], uint64(size))
	if size < 24 {
		return id, &FormatError{Chunk: -1, InChunk: -1, Msg: "no file header", Err: ErrTruncated}
	}
	if _, err := ra.ReadAt(id[8:12], 16); err != nil {
		return id, err
	}
	n := min(size, 32)
	if _, err := ra.ReadAt(id[12+32-n:], size-n); err != nil {
		return id, err
	}
	return id, nil
}

// Identity is the TraceIdentity of r's file.
func (r *Reader) Identity() ([IdentityLen]byte, error) { return TraceIdentity(r.ra, r.size) }

// PageEntry is one page of an address space as of a checkpoint: Ref 0
// is a page of zeros (or none: the same to a re-simulation), otherwise
// the page is number Ref-1 of the file's pages.
type PageEntry struct {
	Space uint32 // the address space (a pid)
	PN    uint64 // page number (address >> 12)
	Ref   uint32
}

// PagesCheckpoint is what changed in memory at one checkpoint since the
// one before it in the file.
type PagesCheckpoint struct {
	Position uint64
	Entries  []PageEntry
}

// PagesWriter writes a checkpoint memory file.
type PagesWriter struct {
	w      *bufio.Writer
	off    int64
	enc    *zstd.Encoder
	buf    []byte // the pages of the frame being filled
	frames []pagesFrame
	npages uint32
	cps    []PagesCheckpoint
	err    error
	// Stored counts the bytes of the frames written so far (known after
	// Close).
	Stored int64
	// Frames are compressed and written by a goroutine of their own, in
	// order (compress): zstd took a third of the CPU of an index pass
	// riding along a replay (sort -n), which then fits on another core.
	// mu guards err, off, frames and Stored while it runs.
	mu     sync.Mutex
	work   chan []byte // full frames, to compress
	free   chan []byte // their buffers, back
	wdone  chan struct{}
	waited bool
}

type pagesFrame struct {
	off   int64
	n     int64
	pages int
}

// NewPagesWriter starts a checkpoint memory file for the trace of
// identity id on dst.
func NewPagesWriter(dst io.Writer, id [IdentityLen]byte) (*PagesWriter, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	pw := &PagesWriter{w: bufio.NewWriterSize(dst, 1<<20), enc: enc}
	pw.write(identityHeader(pagesMagic, pagesMajor, pagesMinor, id))
	return pw, pw.err
}

func (pw *PagesWriter) write(b []byte) {
	if pw.err != nil {
		return
	}
	_, pw.err = pw.w.Write(b)
	pw.off += int64(len(b))
}

// Checkpoint starts the entries of the checkpoint at position pos; the
// positions must increase.
func (pw *PagesWriter) Checkpoint(pos uint64) error {
	if n := len(pw.cps); n > 0 && pw.cps[n-1].Position >= pos {
		return fmt.Errorf("checkpoint memory: checkpoint at %d after one at %d", pos, pw.cps[n-1].Position)
	}
	pw.cps = append(pw.cps, PagesCheckpoint{Position: pos})
	pw.mu.Lock()
	defer pw.mu.Unlock()
	return pw.err
}

// Page adds page pn of address space space to the current checkpoint:
// data, or zeros when data is nil.
func (pw *PagesWriter) Page(space uint32, pn uint64, data *[PageSize]byte) {
	cp := &pw.cps[len(pw.cps)-1]
	if data == nil {
		cp.Entries = append(cp.Entries, PageEntry{Space: space, PN: pn})
		return
	}
	pw.npages++
	cp.Entries = append(cp.Entries, PageEntry{Space: space, PN: pn, Ref: pw.npages})
	pw.buf = append(pw.buf, data[:]...)
	if len(pw.buf) == PagesPerFrame*PageSize {
		pw.flushFrame()
	}
}

// flushFrame hands the frame being filled to compress.
func (pw *PagesWriter) flushFrame() {
	if len(pw.buf) == 0 {
		return
	}
	if pw.waited {
		pw.mu.Lock()
		pw.err = errors.New("checkpoint memory: a page after Abort")
		pw.mu.Unlock()
		return
	}
	if pw.work == nil {
		pw.work, pw.free, pw.wdone = make(chan []byte, 4), make(chan []byte, 6), make(chan struct{})
		go pw.compress()
	}
	pw.work <- pw.buf
	select {
	case b := <-pw.free:
		pw.buf = b[:0]
	default:
		pw.buf = make([]byte, 0, PagesPerFrame*PageSize)
	}
}

// compress compresses and writes the frames flushFrame hands it, in
// order, until wait.
func (pw *PagesWriter) compress() {
	defer close(pw.wdone)
	var z []byte
	for buf := range pw.work {
		z = pw.enc.EncodeAll(buf, z[:0])
		pw.mu.Lock()
		pw.frames = append(pw.frames, pagesFrame{off: pw.off, n: int64(len(z)), pages: len(buf) / PageSize})
		pw.write(z)
		pw.Stored += int64(len(z))
		pw.mu.Unlock()
		select {
		case pw.free <- buf:
		default:
		}
	}
}

// wait lets compress finish the frames handed to it and end.
func (pw *PagesWriter) wait() {
	if pw.work != nil && !pw.waited {
		pw.waited = true
		close(pw.work)
		<-pw.wdone
	}
}

// Abort ends a writer that will not be closed (its frames are written,
// not its index).
func (pw *PagesWriter) Abort() { pw.wait() }

// Close writes the last frame, the index and the footer.
func (pw *PagesWriter) Close() error {
	pw.flushFrame()
	pw.wait()
	idx := []byte(pagesIndexMagic)
	idx = binary.AppendUvarint(idx, uint64(len(pw.frames)))
	for _, f := range pw.frames {
		idx = binary.AppendUvarint(idx, uint64(f.n))
		idx = binary.AppendUvarint(idx, uint64(f.pages))
	}
	idx = binary.AppendUvarint(idx, uint64(len(pw.cps)))
	for _, cp := range pw.cps {
		idx = binary.AppendUvarint(idx, cp.Position)
		idx = binary.AppendUvarint(idx, uint64(len(cp.Entries)))
		for _, e := range cp.Entries {
			idx = binary.AppendUvarint(idx, uint64(e.Space))
			idx = binary.AppendUvarint(idx, e.PN)
			idx = binary.AppendUvarint(idx, uint64(e.Ref))
		}
	}
	ioff := pw.off
	pw.write(idx)
	foot := binary.LittleEndian.AppendUint64(nil, uint64(ioff))
	foot = binary.LittleEndian.AppendUint64(foot, uint64(len(idx)))
	foot = binary.LittleEndian.AppendUint32(foot, crc(idx))
	foot = binary.LittleEndian.AppendUint32(foot, crc(foot))
	foot = append(foot, pagesTrail...)
	pw.write(foot)
	if pw.err == nil {
		pw.err = pw.w.Flush()
	}
	return pw.err
}

// Pages reads a checkpoint memory file. Its methods may be called from
// several goroutines.
type Pages struct {
	ra     io.ReaderAt
	closer io.Closer
	frames []pagesFrame
	cps    []PagesCheckpoint
	npages uint32
	// a few decompressed frames, the last used last
	mu          sync.Mutex
	cache       []*pagesCached
	cacheFrames int      // its size (pagesCacheFrames)
	decoded     []uint64 // frames decompressed once, a bit each
	// decodes counts the frames decompressed, redecodes those that had
	// been before.
	decodes, redecodes int
	// free holds the buffers of frames that left the cache with no
	// reader: the next decompression reuses one rather than allocating
	// (and the Go runtime zeroing) 256 KiB it then overwrites — as much
	// CPU as zstd's decoding took when perl's segments restored their
	// heaps (session 31).
	free [][]byte
}

type pagesCached struct {
	frame int
	data  []byte
	// readers counts the Frames not yet released; evicted, that the
	// frame left the cache while they read (the last returns data).
	readers int
	evicted bool
}

// FrameData is a frame's pages, which stay valid until Release.
type FrameData struct {
	// First is the Ref of the frame's first page.
	First uint32
	Data  []byte
	p     *Pages
	c     *pagesCached
}

// Page is the data of page ref of the frame.
func (f FrameData) Page(ref uint32) []byte {
	return f.Data[(ref-f.First)*PageSize : (ref-f.First+1)*PageSize]
}

// Release ends the reading of f: its buffer may then be reused.
func (f FrameData) Release() {
	p := f.p
	p.mu.Lock()
	f.c.readers--
	if f.c.evicted && f.c.readers == 0 {
		p.recycle(f.c)
	}
	p.mu.Unlock()
}

// recycle makes c's buffer free (p.mu held). The list holds at most a
// cache's worth: a buffer beyond that goes to the garbage collector.
func (p *Pages) recycle(c *pagesCached) {
	if len(p.free) < p.cacheFrames && cap(c.data) == PagesPerFrame*PageSize {
		p.free = append(p.free, c.data[:0])
	}
	c.data = nil
}

// pagesCacheFrames is how many decompressed frames Pages keeps at most
// (64 MiB): consecutive segments restore mostly the same frames. With
// 16 (4 MiB), `replay --verify --segments` of the corpus's go_gc (1,652
// intervals, each hashing its whole memory at its end) took 67.6 s of
// CPU, 12.8 s with 256 (xz -6: 3.00 -> 2.59 s; sort -n unchanged), for
// 60-110 MB more resident memory.
//
// It starts at pagesCacheStart and doubles each time a frame is
// decompressed again (it was in the cache once) while such frames are a
// quarter or more of those decompressed: the jobs of `ttd probe --jobs
// 2` restore each frame about once (xz -6: 23-33 of 687-716 again, where
// one job's steal restores what the other's start did), and a cache of
// 256 only made them fault in 64 MiB of fresh buffers, huge pages the
// kernel zeroes (perl's CPU 0.997 -> 0.927 s with 16, session 31).
const (
	pagesCacheFrames = 256
	pagesCacheStart  = 16
)

// OpenPages opens the checkpoint memory file at path for the trace of
// identity id.
func OpenPages(path string, id [IdentityLen]byte) (*Pages, error) {
	f, size, err := openSized(path)
	if err != nil {
		return nil, err
	}
	p, err := NewPages(f, size, id)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	p.closer = f
	return p, nil
}

// Close closes the file OpenPages opened.
func (p *Pages) Close() error {
	if p.closer != nil {
		return p.closer.Close()
	}
	return nil
}

func pagesErr(off int64, err error, format string, args ...any) error {
	return &FormatError{Off: off, Chunk: -1, InChunk: -1, Msg: "checkpoint memory: " + fmt.Sprintf(format, args...), Err: err}
}

// NewPages reads a checkpoint memory file of size bytes from ra, made
// for the trace of identity id: it checks the header, the footer and the
// index (every error a *FormatError with the offset, or ErrStale), and
// each frame's checksum when it is read.
func NewPages(ra io.ReaderAt, size int64, id [IdentityLen]byte) (*Pages, error) {
	if size < pagesHdrLen+pagesFooterLen {
		return nil, pagesErr(0, ErrTruncated, "file of %d bytes", size)
	}
	hdr := make([]byte, pagesHdrLen)
	if _, err := ra.ReadAt(hdr, 0); err != nil {
		return nil, pagesErr(0, ErrTruncated, "header: %v", err)
	}
	if off, err, msg := checkIdentityHeader(hdr, pagesMagic, pagesMajor, id); err != nil {
		return nil, pagesErr(int64(off), err, "%s", msg)
	}
	foot := make([]byte, pagesFooterLen)
	footOff := size - pagesFooterLen
	if _, err := ra.ReadAt(foot, footOff); err != nil {
		return nil, pagesErr(footOff, ErrTruncated, "footer: %v", err)
	}
	if string(foot[24:]) != pagesTrail {
		return nil, pagesErr(footOff, ErrTruncated, "no footer (a file cut short)")
	}
	if crc(foot[:20]) != binary.LittleEndian.Uint32(foot[20:]) {
		return nil, pagesErr(footOff, ErrCorrupt, "footer checksum mismatch")
	}
	ioff, ilen := int64(binary.LittleEndian.Uint64(foot)), int64(binary.LittleEndian.Uint64(foot[8:]))
	if ioff < pagesHdrLen || ilen < 4 || ioff > footOff || ilen != footOff-ioff {
		return nil, pagesErr(footOff, ErrCorrupt, "index at %d, %d bytes, in a file of %d", ioff, ilen, size)
	}
	idx := make([]byte, ilen)
	if _, err := ra.ReadAt(idx, ioff); err != nil {
		return nil, pagesErr(ioff, ErrTruncated, "index: %v", err)
	}
	if crc(idx) != binary.LittleEndian.Uint32(foot[16:]) {
		return nil, pagesErr(ioff, ErrCorrupt, "index checksum mismatch")
	}
	if string(idx[:4]) != pagesIndexMagic {
		return nil, pagesErr(ioff, ErrBadMagic, "no %s", pagesIndexMagic)
	}
	p := &Pages{ra: ra, cacheFrames: pagesCacheStart}
	b := idx[4:]
	bad := func(what string) error {
		return pagesErr(ioff+int64(len(idx)-len(b)), ErrCorrupt, "index: %s", what)
	}
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	nf, ok := next()
	if !ok || nf > uint64(len(b)) {
		return nil, bad("frame count")
	}
	off := int64(pagesHdrLen)
	for i := uint64(0); i < nf; i++ {
		n, ok1 := next()
		pg, ok2 := next()
		if !ok1 || !ok2 || n == 0 || pg == 0 || pg > PagesPerFrame || n > uint64(ioff-off) || i+1 < nf && pg != PagesPerFrame {
			return nil, bad(fmt.Sprintf("frame %d", i))
		}
		p.frames = append(p.frames, pagesFrame{off: off, n: int64(n), pages: int(pg)})
		off += int64(n)
		p.npages += uint32(pg)
	}
	if off != ioff {
		return nil, bad(fmt.Sprintf("frames end at %d, the index starts at %d", off, ioff))
	}
	ncp, ok := next()
	if !ok || ncp > uint64(len(b)) {
		return nil, bad("checkpoint count")
	}
	last := uint32(0)
	for i := uint64(0); i < ncp; i++ {
		pos, ok1 := next()
		ne, ok2 := next()
		if !ok1 || !ok2 || ne > uint64(len(b)) || i > 0 && pos <= p.cps[i-1].Position {
			return nil, bad(fmt.Sprintf("checkpoint %d", i))
		}
		cp := PagesCheckpoint{Position: pos, Entries: make([]PageEntry, ne)}
		for k := range cp.Entries {
			sp, ok1 := next()
			pn, ok2 := next()
			ref, ok3 := next()
			// Pages are numbered in the order the entries name them.
			if !ok1 || !ok2 || !ok3 || sp > 1<<32-1 || pn >= 1<<52 || ref != 0 && ref != uint64(last)+1 {
				return nil, bad(fmt.Sprintf("entry %d of checkpoint %d", k, i))
			}
			if ref != 0 {
				last++
			}
			cp.Entries[k] = PageEntry{Space: uint32(sp), PN: pn, Ref: uint32(ref)}
		}
		p.cps = append(p.cps, cp)
	}
	if last != p.npages || len(b) != 0 {
		return nil, bad(fmt.Sprintf("%d pages named, %d stored, %d bytes left", last, p.npages, len(b)))
	}
	return p, nil
}

// Decodes is how many frames p decompressed so far.
func (p *Pages) Decodes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.decodes
}

// Checkpoints lists the checkpoints the file holds, in order. The
// caller must not change them.
func (p *Pages) Checkpoints() []PagesCheckpoint { return p.cps }

// Page copies page ref (a PageEntry's Ref, not 0) into dst.
func (p *Pages) Page(ref uint32, dst *[PageSize]byte) error {
	f, err := p.Frame(ref)
	if err != nil {
		return err
	}
	copy(dst[:], f.Page(ref))
	f.Release()
	return nil
}

// FrameOf is the number of the frame that holds page ref.
func FrameOf(ref uint32) int { return int(ref-1) / PagesPerFrame }

// Frame returns the pages of the frame that holds page ref (not 0),
// which stay valid until the caller releases them (read them only).
func (p *Pages) Frame(ref uint32) (FrameData, error) {
	if ref == 0 || ref > p.npages {
		return FrameData{}, fmt.Errorf("checkpoint memory: no page %d", ref)
	}
	fi := FrameOf(ref)
	first := uint32(fi*PagesPerFrame) + 1
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, c := range p.cache {
		if c.frame == fi {
			if i != len(p.cache)-1 {
				copy(p.cache[i:], p.cache[i+1:])
				p.cache[len(p.cache)-1] = c
			}
			c.readers++
			return FrameData{First: first, Data: c.data, p: p, c: c}, nil
		}
	}
	if p.decoded == nil {
		p.decoded = make([]uint64, (len(p.frames)+63)/64)
	}
	p.decodes++
	if w, b := fi/64, uint64(1)<<(fi%64); p.decoded[w]&b == 0 {
		p.decoded[w] |= b
	} else if p.redecodes++; 4*p.redecodes >= p.decodes && p.cacheFrames < pagesCacheFrames {
		p.cacheFrames = min(2*p.cacheFrames, pagesCacheFrames)
	}
	var buf []byte
	if n := len(p.free); n > 0 {
		buf, p.free = p.free[n-1], p.free[:n-1]
	}
	p.mu.Unlock()
	// (Decompressed outside the lock: the jobs of ttd probe restore
	// their segments' pages at the same time.)
	data, err := p.decode(fi, buf)
	p.mu.Lock()
	if err != nil {
		return FrameData{}, err
	}
	if len(p.cache) >= p.cacheFrames {
		old := p.cache[0]
		copy(p.cache, p.cache[1:])
		p.cache = p.cache[:len(p.cache)-1]
		if old.readers == 0 {
			p.recycle(old)
		} else {
			old.evicted = true
		}
	}
	c := &pagesCached{frame: fi, data: data, readers: 1}
	p.cache = append(p.cache, c)
	return FrameData{First: first, Data: data, p: p, c: c}, nil
}

// decode reads and decompresses frame fi into buf (nil: a new one).
func (p *Pages) decode(fi int, buf []byte) ([]byte, error) {
	f := p.frames[fi]
	z := make([]byte, f.n)
	if _, err := p.ra.ReadAt(z, f.off); err != nil {
		return nil, pagesErr(f.off, ErrTruncated, "frame %d: %v", fi, err)
	}
	dec, err := zstdDecoder()
	if err != nil {
		return nil, err
	}
	if buf == nil {
		buf = make([]byte, 0, PagesPerFrame*PageSize)
	}
	data, err := dec.DecodeAll(z, buf[:0])
	if err != nil {
		return nil, pagesErr(f.off, ErrCorrupt, "frame %d: zstd: %v", fi, err)
	}
	if len(data) != f.pages*PageSize {
		return nil, pagesErr(f.off, ErrCorrupt, "frame %d decompresses to %d bytes, not %d pages", fi, len(data), f.pages)
	}
	return data, nil
}
