package tracefile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// ChunkInfo describes one chunk, from its header.
type ChunkInfo struct {
	Index  int
	Offset int64 // file offset of the chunk header
	Size   int64 // header and payload bytes in the file
	Len    int   // decompressed payload bytes
	// FirstPosition and FirstSeq are the position and key-frame
	// sequence number at the chunk's start: those of its first record
	// when it is a Checkpoint, else the last ones before the chunk (the
	// base of its key frames' deltas).
	FirstPosition, FirstSeq uint64
	// LastPosition and LastSeq are the highest ones a record of the
	// chunk carries (FirstPosition and FirstSeq if none does).
	LastPosition, LastSeq uint64
	Records               int
	KeyFrames             int
	Checkpoints           int
	Syscalls              int
	ThreadStarts          int
	// BeginsWithCheckpoint: the first record is a Checkpoint, so
	// re-simulation can start here.
	BeginsWithCheckpoint bool
	// HasExit: the chunk holds the Exit record.
	HasExit bool

	hdr    chunkHeader
	hdrCRC uint32
}

// Summary gives the totals of a trace.
type Summary struct {
	// Instructions is the number of instructions recorded: the Exit's
	// position, or the highest position recorded if there is no Exit.
	Instructions uint64
	Threads      int // ThreadStart records
	Checkpoints  int
	KeyFrames    int
	Syscalls     int
	Records      int
	Chunks       int
	// FileSize is the size of the file; Uncompressed the total size of
	// the chunks' payloads before compression.
	FileSize     int64
	Uncompressed int64
	// BitsPerInstruction is FileSize*8 / Instructions (0 without any).
	BitsPerInstruction float64
	// Exit is how the process ended, when HasExit.
	Exit    Exit
	HasExit bool
	// Truncated: the trace was not closed (see Reader.Truncated).
	Truncated bool
}

// Reader reads a trace. Its methods may be called from several
// goroutines; each RecordIter must be used by one goroutine at a time.
type Reader struct {
	ra        io.ReaderAt
	size      int64
	closer    io.Closer
	hdr       Header
	major     int
	minor     int
	dataOff   int64
	chunks    []ChunkInfo
	starts    []int // chunks re-simulation can start from
	truncated bool
	tailErr   error
	summary   Summary
	cpIndex   []IndexedCheckpoint // the index's checkpoint list (minor 6)
}

// Open opens the trace at path. A trace whose recording did not finish
// (no valid index) opens too: see Truncated.
func Open(path string) (*Reader, error) {
	f, size, err := openSized(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(f, size)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// openSized opens the file at path and returns its size.
func openSized(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// NewReader reads a trace of size bytes from ra.
func NewReader(ra io.ReaderAt, size int64) (*Reader, error) {
	r := &Reader{ra: ra, size: size}
	if err := r.readHeader(); err != nil {
		return nil, err
	}
	exit, hasExit, err := r.readIndex()
	if err != nil {
		r.truncated = true
		r.tailErr = err
		r.chunks = r.chunks[:0]
		exit, hasExit = r.scanChunks()
	}
	r.finish(exit, hasExit)
	return r, nil
}

// Close closes the file opened by Open.
func (r *Reader) Close() error {
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

// Header returns the trace's creation information.
func (r *Reader) Header() Header { return r.hdr }

// Version returns the file's format version.
func (r *Reader) Version() (major, minor int) { return r.major, r.minor }

// Truncated reports that the trace has no valid index: the recording
// process died (or the file was cut). Its chunks were then found by
// scanning from the start, and a torn or damaged tail was ignored.
func (r *Reader) Truncated() bool { return r.truncated }

// TailError says, for a truncated trace, why the index could not be used
// and where the scan for chunks stopped. It is nil otherwise.
func (r *Reader) TailError() error { return r.tailErr }

// Chunks returns the chunks in file order. The slice must not be modified.
func (r *Reader) Chunks() []ChunkInfo { return r.chunks }

// Summary returns the trace's totals.
func (r *Reader) Summary() Summary { return r.summary }

// ChunkAt returns the index of the chunk to start re-simulation from to
// reach position: the last chunk that begins with a Checkpoint at or
// before position, or chunk 0 (which starts at the initial state). It
// returns -1 for a trace without chunks.
func (r *Reader) ChunkAt(position uint64) int {
	if len(r.starts) == 0 {
		return -1
	}
	i := sort.Search(len(r.starts), func(k int) bool {
		return r.chunks[r.starts[k]].FirstPosition > position
	})
	if i == 0 {
		return r.starts[0]
	}
	return r.starts[i-1]
}

func (r *Reader) readAt(b []byte, off int64, what string) error {
	if off < 0 || off > r.size || int64(len(b)) > r.size-off {
		return fileErr(off, ErrTruncated, "%s", what)
	}
	n, err := r.ra.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		return fileErr(off+int64(n), ErrTruncated, "%s", what)
	}
	return fileErr(off, err, "reading %s", what)
}

func (r *Reader) readHeader() error {
	var fixed [fileHeaderFixedLen]byte
	n, err := r.ra.ReadAt(fixed[:min(int64(len(fixed)), max(r.size, 0))], 0)
	if n < len(FileMagic) || string(fixed[:len(FileMagic)]) != FileMagic {
		if n < len(FileMagic) && string(fixed[:n]) == FileMagic[:n] && (err == nil || err == io.EOF) {
			return fileErr(int64(n), ErrTruncated, "file header")
		}
		if err != nil && err != io.EOF {
			return fileErr(0, err, "reading file header")
		}
		return fileErr(0, ErrBadMagic, "not a ttd trace")
	}
	if n < len(fixed) {
		if err != nil && err != io.EOF {
			return fileErr(0, err, "reading file header")
		}
		return fileErr(int64(n), ErrTruncated, "file header")
	}
	le := binary.LittleEndian
	if crc(fixed[:20]) != le.Uint32(fixed[20:]) {
		return fileErr(0, ErrCorrupt, "file header checksum mismatch")
	}
	major := le.Uint16(fixed[8:])
	if major != VersionMajor && major != VersionMajorNoReads {
		return fileErr(8, ErrVersion, "format version %d.%d (this reader reads %d.x and %d.x)", major, le.Uint16(fixed[10:]),
			VersionMajor, VersionMajorNoReads)
	}
	r.major, r.minor = int(major), int(le.Uint16(fixed[10:]))
	blen := int64(le.Uint32(fixed[12:]))
	if blen > maxHeaderLen {
		return fileErr(12, ErrCorrupt, "header body of %d bytes", blen)
	}
	body := make([]byte, min(blen, max(r.size-fileHeaderFixedLen, 0)))
	if err := r.readAt(body, fileHeaderFixedLen, "file header body"); err != nil {
		return err
	}
	if int64(len(body)) < blen {
		return fileErr(r.size, ErrTruncated, "file header body")
	}
	if crc(body) != le.Uint32(fixed[16:]) {
		return fileErr(fileHeaderFixedLen, ErrCorrupt, "file header body checksum mismatch")
	}
	h, err := decodeHeaderBody(body, fileHeaderFixedLen)
	if err != nil {
		return err
	}
	if (major == VersionMajorNoReads) != (h.Params["reads"] == "none") {
		return fileErr(8, ErrVersion, "format version %d.%d with header parameter reads=%q: version %d is the one of traces without reads",
			major, r.minor, h.Params["reads"], VersionMajorNoReads)
	}
	r.hdr = h
	r.dataOff = fileHeaderFixedLen + blen
	return nil
}

// chunkFromHeader checks a parsed chunk header against where it was found.
func (r *Reader) chunkFromHeader(b []byte, off int64, index int) (ChunkInfo, error) {
	h, msg := parseChunkHeader(b)
	if msg != "" {
		return ChunkInfo{}, fileErr(off, ErrCorrupt, "chunk %d: %s", index, msg)
	}
	if int(h.index) != index {
		return ChunkInfo{}, fileErr(off, ErrCorrupt, "chunk %d: header says chunk %d", index, h.index)
	}
	return ChunkInfo{
		Index:                index,
		Offset:               off,
		Size:                 int64(h.size) + int64(h.clen),
		Len:                  int(h.ulen),
		FirstPosition:        h.firstPos,
		FirstSeq:             h.firstSeq,
		LastPosition:         h.lastPos,
		LastSeq:              h.lastSeq,
		Records:              int(h.records),
		KeyFrames:            int(h.keyFrames),
		Checkpoints:          int(h.checkpoints),
		Syscalls:             int(h.syscalls),
		ThreadStarts:         int(h.threadStarts),
		BeginsWithCheckpoint: h.flags&flagCheckpoint != 0,
		HasExit:              h.flags&flagExit != 0,
		hdr:                  h,
		hdrCRC:               binary.LittleEndian.Uint32(b[len(b)-4:]),
	}, nil
}

// readIndex reads the footer and the index. Any problem is returned as
// an error, and the caller falls back to scanning.
func (r *Reader) readIndex() (Exit, bool, error) {
	var exit Exit
	if r.size-r.dataOff < footerLen {
		return exit, false, fileErr(r.size, ErrTruncated, "no index: the recording did not finish")
	}
	var f [footerLen]byte
	foff := r.size - footerLen
	if err := r.readAt(f[:], foff, "footer"); err != nil {
		return exit, false, err
	}
	le := binary.LittleEndian
	if string(f[24:]) != footerMagic {
		return exit, false, fileErr(r.size, ErrTruncated, "no index: the recording did not finish")
	}
	if crc(f[:20]) != le.Uint32(f[20:]) {
		return exit, false, fileErr(foff, ErrCorrupt, "footer checksum mismatch")
	}
	ioff, ilen := le.Uint64(f[0:]), le.Uint64(f[8:])
	if ioff < uint64(r.dataOff) || ioff > uint64(foff) || ilen != uint64(foff)-ioff || ilen < 9 {
		return exit, false, fileErr(foff, ErrCorrupt, "footer points outside the file")
	}
	idx := make([]byte, ilen)
	if err := r.readAt(idx, int64(ioff), "index"); err != nil {
		return exit, false, err
	}
	if crc(idx) != le.Uint32(f[16:]) {
		return exit, false, fileErr(int64(ioff), ErrCorrupt, "index checksum mismatch")
	}
	if string(idx[:4]) != indexMagic {
		return exit, false, fileErr(int64(ioff), ErrBadMagic, "index")
	}
	n := int(le.Uint32(idx[4:]))
	if n > len(idx)/(8+chunkHeaderLen) {
		return exit, false, fileErr(int64(ioff)+4, ErrCorrupt, "index of %d chunks", n)
	}
	r.chunks = make([]ChunkInfo, 0, n)
	p := 8
	next := r.dataOff
	for i := 0; i < n; i++ {
		eoff := int64(ioff) + int64(p)
		if len(idx)-p < 8+6 {
			return exit, false, fileErr(eoff, ErrCorrupt, "index entry %d", i)
		}
		coff := int64(le.Uint64(idx[p:]))
		hl := chunkHeaderSize(idx[p+8:])
		if hl == 0 || len(idx)-p-8 < hl {
			return exit, false, fileErr(eoff, ErrCorrupt, "index entry %d", i)
		}
		if coff != next {
			return exit, false, fileErr(eoff, ErrCorrupt, "index entry %d: chunk offset %d, want %d", i, coff, next)
		}
		ci, err := r.chunkFromHeader(idx[p+8:p+8+hl], coff, i)
		if err != nil {
			return exit, false, err
		}
		next = coff + ci.Size
		if next > int64(ioff) {
			return exit, false, fileErr(eoff, ErrCorrupt, "index entry %d: chunk runs into the index", i)
		}
		r.chunks = append(r.chunks, ci)
		p += 8 + hl
	}
	if next != int64(ioff) {
		return exit, false, fileErr(int64(ioff), ErrCorrupt, "index does not cover the chunks")
	}
	if p >= len(idx) {
		return exit, false, fileErr(int64(ioff)+int64(p), ErrCorrupt, "index: no exit field")
	}
	hasExit := idx[p] == 1
	rest := idx[p+1:]
	if hasExit {
		b := body{b: idx[p+1:]}
		eb := body{b: b.bytes()}
		decodeExitBody(&eb, &exit)
		if b.bad || eb.bad || eb.p != len(eb.b) {
			return exit, false, fileErr(int64(ioff)+int64(p), ErrCorrupt, "index: bad exit field")
		}
		rest = b.rest()
	}
	// Bytes after the exit field belong to newer minor versions: the
	// checkpoint list of minor version 6 (index_reader.go).
	r.readCheckpointIndex(rest)
	return exit, hasExit, nil
}

// scanChunks finds the chunks by scanning from the first one, checking each
// header and payload checksum, and stops at the first that is torn or
// damaged. It sets r.tailErr to describe where and why it stopped.
func (r *Reader) scanChunks() (Exit, bool) {
	var exit Exit
	off := r.dataOff
	var hb [maxChunkHeaderLen]byte
	var payload []byte
	for i := 0; ; i++ {
		if off == r.size {
			break
		}
		if err := r.readAt(hb[:6], off, "chunk header"); err != nil {
			r.tailErr = fmt.Errorf("%w (scan stopped: %w)", r.tailErr, err)
			break
		}
		hl := chunkHeaderSize(hb[:6])
		if hl == 0 {
			r.tailErr = fmt.Errorf("%w (scan stopped: %w)", r.tailErr, fileErr(off, ErrCorrupt, "no chunk %d here", i))
			break
		}
		if err := r.readAt(hb[:hl], off, "chunk header"); err != nil {
			r.tailErr = fmt.Errorf("%w (scan stopped: %w)", r.tailErr, err)
			break
		}
		ci, err := r.chunkFromHeader(hb[:hl], off, i)
		if err == nil && ci.Size > r.size-off {
			err = fileErr(off, ErrTruncated, "chunk %d: torn (%d of %d bytes)", i, r.size-off, ci.Size)
		}
		if err == nil {
			clen := int(ci.hdr.clen)
			if cap(payload) < clen {
				payload = make([]byte, clen)
			}
			payload = payload[:clen]
			err = r.readAt(payload, off+int64(hl), "chunk payload")
			if err == nil && crc(payload) != ci.hdr.payloadCRC {
				err = fileErr(off, ErrCorrupt, "chunk %d: payload checksum mismatch", i)
			}
		}
		if err != nil {
			r.tailErr = fmt.Errorf("%w (scan stopped: %w)", r.tailErr, err)
			break
		}
		r.chunks = append(r.chunks, ci)
		off += ci.Size
	}
	// The Exit record, if the last chunk has it.
	if n := len(r.chunks); n > 0 && r.chunks[n-1].HasExit {
		it := r.Records(n - 1)
		hasExit := false
		for {
			rec, err := it.Next()
			if err != nil {
				break
			}
			if rec.Kind == KindExit {
				exit, hasExit = rec.Exit, true
			}
		}
		return exit, hasExit
	}
	return exit, false
}

func (r *Reader) finish(exit Exit, hasExit bool) {
	s := &r.summary
	for i := range r.chunks {
		c := &r.chunks[i]
		if i == 0 || c.BeginsWithCheckpoint {
			r.starts = append(r.starts, i)
		}
		s.Threads += c.ThreadStarts
		s.Checkpoints += c.Checkpoints
		s.KeyFrames += c.KeyFrames
		s.Syscalls += c.Syscalls
		s.Records += c.Records
		s.Uncompressed += int64(c.Len)
		s.Instructions = max(s.Instructions, c.LastPosition)
	}
	s.Chunks = len(r.chunks)
	s.FileSize = r.size
	s.Exit, s.HasExit = exit, hasExit
	if hasExit {
		s.Instructions = exit.Position
	}
	if s.Instructions > 0 {
		s.BitsPerInstruction = float64(s.FileSize) * 8 / float64(s.Instructions)
	}
	s.Truncated = r.truncated
}

// zstdDecoder is shared by all Readers: its DecodeAll is safe for
// concurrent use, with up to GOMAXPROCS decodes at once.
var zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(0),
		zstd.WithDecoderMaxMemory(MaxChunkLen),
		zstd.WithDecodeAllCapLimit(true))
})

// RecordIter iterates over records. Next returns a Record that stays
// valid until the following call; the iterator reuses its buffers, so
// iterating a whole trace allocates only when a chunk is larger than all
// before it.
type RecordIter struct {
	r      *Reader
	chunk  int // chunk being decoded (or to load)
	end    int // chunks before end are iterated
	loaded bool
	raw    []byte // chunk as read from the file
	data   []byte // decompressed payload buffer
	dec    decoder
	rec    Record
	err    error
}

// Records returns an iterator over the records of chunk i.
func (r *Reader) Records(i int) *RecordIter {
	it := &RecordIter{r: r}
	it.Reset(i)
	return it
}

// RecordsFrom returns an iterator over the records of chunk i and of all
// the chunks after it, to the end of the trace.
func (r *Reader) RecordsFrom(i int) *RecordIter {
	it := &RecordIter{r: r}
	it.ResetFrom(i)
	return it
}

// Reset makes it iterate over chunk i, keeping its buffers.
func (it *RecordIter) Reset(i int) { it.reset(i, i+1) }

// ResetFrom makes it iterate from chunk i to the end, keeping its buffers.
func (it *RecordIter) ResetFrom(i int) { it.reset(i, len(it.r.chunks)) }

func (it *RecordIter) reset(i, end int) {
	it.chunk, it.end, it.loaded, it.err = i, end, false, nil
	if i < 0 || i >= len(it.r.chunks) {
		it.err = fmt.Errorf("tracefile: chunk %d out of range (trace has %d)", i, len(it.r.chunks))
	}
}

// Chunk returns the chunk of the last record returned.
func (it *RecordIter) Chunk() int { return it.chunk }

// Next returns the next record, or io.EOF after the last one. Any other
// error is a *FormatError (or an I/O error) and is returned again by
// every later call.
func (it *RecordIter) Next() (*Record, error) {
	for it.err == nil {
		if !it.loaded {
			if it.chunk >= it.end {
				it.err = io.EOF
				break
			}
			if err := it.load(); err != nil {
				it.err = err
				break
			}
		}
		err := it.dec.next(&it.rec)
		if err == nil {
			return &it.rec, nil
		}
		ci := &it.r.chunks[it.chunk]
		if err == io.EOF {
			if it.dec.records != ci.Records {
				it.err = &FormatError{Off: ci.Offset, Chunk: ci.Index, InChunk: int64(it.dec.off),
					Msg: fmt.Sprintf("%d records, header says %d", it.dec.records, ci.Records), Err: ErrCorrupt}
				break
			}
			it.loaded = false
			if it.chunk+1 >= it.end {
				it.err = io.EOF
				break
			}
			it.chunk++
			continue
		}
		fe := &FormatError{Off: ci.Offset, Chunk: ci.Index, InChunk: int64(it.dec.off), Msg: err.Error(), Err: ErrCorrupt}
		if re, ok := err.(*recordError); ok {
			fe.InChunk, fe.Err = int64(re.off), re.err
		}
		it.err = fe
	}
	return nil, it.err
}

// AppendMemReads appends to dst the MemRead records that Next would
// return next, up to the first record of another kind or the end of the
// chunk Next returned a record of last, and moves past them: the next
// Next returns the record after them. A replay takes a chunk of a
// million reads this way without a Record for each (on bzip2 -9's
// trace, decoding chunks took 1.3 s of a 4.2 s replay, most of it
// going through Next one read at a time).
func (it *RecordIter) AppendMemReads(dst []ReadLog) []ReadLog {
	if it.err != nil || !it.loaded {
		return dst
	}
	dst, _ = it.dec.memReadsUpTo(dst, math.MaxInt)
	return dst
}

// FillMemReads is AppendMemReads up to cap(dst): it appends no more
// reads than dst has room for, and reports whether it stopped for lack
// of room with a read next (to take into a new dst), so that a caller
// fills blocks of a fixed size.
func (it *RecordIter) FillMemReads(dst []ReadLog) ([]ReadLog, bool) {
	if it.err != nil || !it.loaded {
		return dst, false
	}
	return it.dec.memReadsUpTo(dst, cap(dst))
}

// load reads, checks and decompresses it.chunk.
func (it *RecordIter) load() error {
	ci := &it.r.chunks[it.chunk]
	hl := int(ci.hdr.size)
	n := hl + int(ci.hdr.clen)
	if cap(it.raw) < n {
		it.raw = make([]byte, n)
	}
	raw := it.raw[:n]
	chunkErr := func(sentinel error, format string, args ...any) error {
		return &FormatError{Off: ci.Offset, Chunk: ci.Index, InChunk: -1, Msg: fmt.Sprintf(format, args...), Err: sentinel}
	}
	if err := it.r.readAt(raw, ci.Offset, "chunk"); err != nil {
		var fe *FormatError
		if errors.As(err, &fe) {
			fe.Chunk = ci.Index
		}
		return err
	}
	if h, msg := parseChunkHeader(raw[:hl]); msg != "" || binary.LittleEndian.Uint32(raw[hl-4:hl]) != ci.hdrCRC || h != ci.hdr {
		return chunkErr(ErrCorrupt, "chunk header differs from the index")
	}
	payload := raw[hl:]
	if crc(payload) != ci.hdr.payloadCRC {
		return chunkErr(ErrCorrupt, "payload checksum mismatch")
	}
	data := payload
	if ci.hdr.flags&flagCompressMask == compressZstd {
		dec, err := zstdDecoder()
		if err != nil {
			return err
		}
		ulen := int(ci.hdr.ulen)
		if cap(it.data) < ulen {
			it.data = make([]byte, 0, ulen)
		}
		data, err = dec.DecodeAll(payload, it.data[:0:ulen])
		if err != nil {
			return chunkErr(ErrCorrupt, "zstd: %v", err)
		}
		if len(data) != ulen {
			return chunkErr(ErrCorrupt, "payload decompresses to %d bytes, header says %d", len(data), ulen)
		}
	}
	it.dec.reset(data, ci.FirstPosition, ci.FirstSeq)
	it.loaded = true
	return nil
}
