package tracefile

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/sys/unix"
)

// Options tune a Writer. The zero value gives the defaults.
type Options struct {
	// ChunkSize is the target size of a chunk's uncompressed records: at
	// the first Checkpoint once the current chunk holds this much, a new
	// chunk begins with that checkpoint. Default 1 MiB.
	ChunkSize int
	// MaxChunkSize ends a chunk without waiting for a checkpoint once it
	// holds this much (the next chunk then does not begin with a
	// checkpoint). It bounds the writer's memory when checkpoints are
	// rare. Default 4 × ChunkSize; at most MaxChunkLen/2.
	MaxChunkSize int
	// Buffers is the number of chunk buffers shared by the recording
	// goroutine and the compressor (at least 2). Default 3.
	Buffers int
	// Level is the zstd level. Default zstd.SpeedFastest.
	Level zstd.EncoderLevel
	// NoCompression stores chunks uncompressed (for debugging the format).
	NoCompression bool
	// Sync makes Flush and Close fsync the file, so flushed chunks also
	// survive a crash of the machine; without it they survive a crash of
	// the recording process.
	Sync bool
	// Ring, when positive, makes a ring-buffer trace: only the last Ring
	// bytes of chunks are kept, from a chunk that begins with a
	// checkpoint, in memory; Flush and Close write them (ring.go). The
	// destination must be a file (Create).
	Ring int64
}

// WriterStats counts what a Writer has produced so far.
type WriterStats struct {
	Chunks       int64 // chunks written to the file
	Records      int64 // records in those chunks
	Uncompressed int64 // their payload bytes before compression
	FileBytes    int64 // bytes written to the file, header included
}

// chunkStats accumulates the chunk header fields of the chunk being filled.
type chunkStats struct {
	flags                                          uint16
	firstPos, firstSeq, lastPos, lastSeq           uint64
	keyFrames, checkpoints, syscalls, threadStarts uint32
}

// job is one unit of work for the background goroutine: a part of the
// current chunk's records to compress (part), the end of a chunk to
// compress and write (buf is the whole chunk, of which the first from
// bytes came as parts), or (flush != nil) a request to report when all
// previous chunks are written.
type job struct {
	buf     []byte
	from    int
	part    bool
	records uint32
	st      chunkStats
	flush   chan error
}

// partSize is how much of a chunk the recording goroutine hands the
// compressor at a time, so that the chunk is compressed while it fills
// and ending it (above all, the last one, which the recording waits for)
// leaves little to do. streamBlock is the size of the zstd blocks the
// compressor then emits (klauspost's largest is 128 KiB): smaller blocks
// would cost ratio, larger ones a longer wait at the end.
const (
	partSize    = 16 << 10
	streamBlock = 64 << 10
)

// Writer writes a trace. Its record methods (MemRead, KeyFrame, …),
// CheckpointDue, Err, Flush and Close must be called from one goroutine
// (Stats from any). The record methods append to an in-memory chunk
// buffer and report errors later, through Err, Flush and Close, like
// bufio.Writer.
// After an error, records are dropped and Close leaves the file without an
// index, so a reader sees a trace truncated at the last good chunk.
type Writer struct {
	// The recording goroutine's state. buf, nrec and the delta base are
	// first, for MemRead.
	buf         []byte // records of the current chunk
	sent        int    // bytes of buf handed to the compressor as parts
	nrec        uint32 // records in buf
	pos, seq    uint64 // last position and sequence number (delta base)
	cur         chunkStats
	target      int // Options.ChunkSize
	limit       int // Options.MaxChunkSize
	bufCap      int // largest capacity a buffer keeps
	err         error
	closed      bool
	closeResult error
	flushReply  chan error
	syncOnFlush bool
	file        *os.File // closed by Close when Create opened it
	arena       []byte   // the chunk buffers' memory (allocArena)
	outArena    []byte   // the compressor's output buffer (allocArena), w.out's home
	sumBuf      []byte   // an AccessSummary's body (summary.go)
	ring        *ring    // Options.Ring (ring.go); used by the background goroutine

	// Shared with the background goroutine.
	jobs  chan job
	free  chan []byte
	done  chan struct{}
	bgErr atomic.Pointer[error]
	// exit is the Exit record, which the index repeats (indexSection:
	// a ring writes its index on the background goroutine).
	exit  atomic.Pointer[Exit]
	stats [4]atomic.Int64 // chunks, records, uncompressed bytes, file bytes

	// The background goroutine's state (Close uses it after the
	// goroutine has ended).
	dst          io.Writer
	enc          *zstd.Encoder
	out          frameSink // compressor output: chunk header, then payload
	streaming    bool      // a chunk's zstd frame is open in enc
	outOpen      bool      // w.out holds the start of a chunk (its header, frames)
	unflushed    int       // bytes written to enc since its last block
	maxOutRetain int
	off          int64  // file offset of the next chunk
	nchunks      uint32 // chunks written
	index        []byte // index entries

	cuts uint32         // chunks handed to the background goroutine
	cps  []cpIndexEntry // the checkpoints, for the index (index_writer.go)
}

// Create creates (or truncates) the file at path and starts a trace in it.
func Create(path string, hdr Header, opts Options) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w, err := NewWriter(f, hdr, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	w.file = f
	if w.ring != nil {
		w.ring.path = path // written by rename (ring.go)
	}
	return w, nil
}

// NewWriter starts a trace on dst: it writes the file header at once and
// starts the compressing goroutine. If dst has a Sync() error method and
// opts.Sync is set, Flush and Close call it.
func NewWriter(dst io.Writer, hdr Header, opts Options) (*Writer, error) {
	if opts.ChunkSize <= 0 {
		opts.ChunkSize = 1 << 20
	}
	if opts.MaxChunkSize <= 0 {
		opts.MaxChunkSize = 4 * opts.ChunkSize
	}
	if opts.MaxChunkSize > MaxChunkLen/2 {
		opts.MaxChunkSize = MaxChunkLen / 2
	}
	if opts.ChunkSize > opts.MaxChunkSize {
		opts.ChunkSize = opts.MaxChunkSize
	}
	if opts.Buffers < 2 {
		opts.Buffers = 3
	}
	if opts.Level == 0 {
		opts.Level = zstd.SpeedFastest
	}
	w := &Writer{
		target:      opts.ChunkSize,
		limit:       opts.MaxChunkSize,
		bufCap:      opts.MaxChunkSize + 64<<10,
		flushReply:  make(chan error, 1),
		syncOnFlush: opts.Sync,
		jobs:        make(chan job, 64),
		free:        make(chan []byte, opts.Buffers),
		done:        make(chan struct{}),
		dst:         dst,
	}
	w.maxOutRetain = 2 * w.bufCap
	if !opts.NoCompression {
		enc, err := zstd.NewWriter(nil,
			zstd.WithEncoderLevel(opts.Level),
			zstd.WithEncoderConcurrency(1),
			zstd.WithEncoderCRC(false),
			// Not WithLowerEncoderMem: its history holds the window
			// and one block, so every 128 KiB block moved the 1 MiB
			// window down (8 bytes copied per byte compressed; 13% of
			// recording md5sum's CPU, which writes 16 MiB of reads).
			zstd.WithLowerEncoderMem(false),
			zstd.WithWindowSize(1<<20))
		if err != nil {
			return nil, fmt.Errorf("tracefile: zstd: %w", err)
		}
		w.enc = enc
		// The compressed chunk goes to a buffer outside the heap that
		// holds the largest chunk uncompressed (incompressible data,
		// stored: md5sum's 16 MiB of random input): grown by append
		// from 64 KiB it was some 20 MiB of fresh heap per recording
		// that the kernel and the runtime both zeroed, 28% of the CPU
		// of recording md5sum.
		w.outArena = allocArena(chunkHeaderLen + outBound(w.bufCap))
		w.out = w.outArena[:0]
	}
	h := encodeHeader(&hdr)
	if len(h)-fileHeaderFixedLen > maxHeaderLen {
		return nil, fmt.Errorf("tracefile: header of %d bytes: %w", len(h), ErrTooLarge)
	}
	if _, err := dst.Write(h); err != nil {
		return nil, err
	}
	w.off = int64(len(h))
	w.stats[3].Store(w.off)
	if opts.Ring > 0 {
		r, err := newRing(dst, opts.Ring, h)
		if err != nil {
			return nil, err
		}
		w.ring = r
	}
	// Buffers are allocated at the hard limit: a chunk that outgrows the
	// target while a checkpoint is late (signal frames, big reads) would
	// otherwise copy itself as it grows, which costs more than the memory
	// it saves. Pages the recording never touches are never faulted in.
	// They live outside the Go heap: 12 MiB of heap at start-up made
	// the garbage collector run during every short recording (a third of
	// ttd record's fixed cost).
	w.arena = allocArena(opts.Buffers * w.bufCap)
	for i := 0; i < opts.Buffers; i++ {
		b := w.arena[i*w.bufCap : i*w.bufCap : (i+1)*w.bufCap]
		if i == 0 {
			w.buf = b
		} else {
			w.free <- b
		}
	}
	go w.run()
	return w, nil
}

// CheckpointDue reports whether the current chunk has reached the target
// size, so that a Checkpoint now would begin a new chunk. A recorder can
// poll it at key frames to checkpoint about once per chunk.
func (w *Writer) CheckpointDue() bool { return len(w.buf) >= w.target }

// Err returns the first error met so far, if any.
func (w *Writer) Err() error {
	if w.err != nil {
		return w.err
	}
	if p := w.bgErr.Load(); p != nil {
		return *p
	}
	return nil
}

// Stats returns counters of what has been written to the file so far.
func (w *Writer) Stats() WriterStats {
	return WriterStats{
		Chunks:       w.stats[0].Load(),
		Records:      w.stats[1].Load(),
		Uncompressed: w.stats[2].Load(),
		FileBytes:    w.stats[3].Load(),
	}
}

// fail records the first error of the recording side.
func (w *Writer) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// cut ends the current chunk: it hands its buffer to the background
// goroutine and takes a free one. It blocks while all buffers are in use,
// which bounds memory when compression falls behind.
func (w *Writer) cut() {
	if w.nrec == 0 && len(w.buf) == 0 {
		return
	}
	if w.closed || w.Err() != nil {
		// Nothing more reaches the file; keep the buffer for reuse.
		w.buf = w.buf[:0]
	} else {
		w.jobs <- job{buf: w.buf, from: w.sent, records: w.nrec, st: w.cur}
		w.buf = <-w.free
		w.cuts++
	}
	w.sent = 0
	w.nrec = 0
	w.cur = chunkStats{firstPos: w.pos, firstSeq: w.seq, lastPos: w.pos, lastSeq: w.seq}
}

// sendPart hands the records appended since the last part to the
// compressor once there are partSize of them. It runs between records:
// a part never splits one.
func (w *Writer) sendPart() {
	if len(w.buf)-w.sent >= partSize && w.enc != nil && !w.closed && w.Err() == nil {
		w.jobs <- job{buf: w.buf[w.sent:len(w.buf):len(w.buf)], part: true}
		w.sent = len(w.buf)
	}
}

// makeRoom ends the chunk if it has reached the hard limit and makes sure
// n more bytes fit in the buffer.
func (w *Writer) makeRoom(n int) {
	if len(w.buf) >= w.limit {
		w.cut()
	}
	w.sendPart()
	if cap(w.buf)-len(w.buf) < n {
		nb := make([]byte, len(w.buf), min(2*cap(w.buf), w.bufCap)+n)
		copy(nb, w.buf)
		w.buf = nb
	}
}

// Flush ends the current chunk, even in the middle of a checkpoint
// interval, and returns once every record appended so far is in the file
// as complete chunks (and, with Options.Sync, synced).
func (w *Writer) Flush() error {
	if w.closed {
		return ErrClosed
	}
	w.cut()
	if err := w.Err(); err != nil {
		return err
	}
	w.jobs <- job{flush: w.flushReply}
	if err := <-w.flushReply; err != nil {
		return err
	}
	return w.Err()
}

// Close writes the last chunk, the index and the footer, and closes the
// file if Create opened it. After an error it leaves the file without an
// index (a truncated trace) and returns the error.
func (w *Writer) Close() error {
	if w.closed {
		return w.closeResult
	}
	w.cut()
	w.closed = true
	close(w.jobs)
	<-w.done
	err := w.Err()
	if err == nil {
		err = w.writeIndex()
	}
	if err == nil && w.syncOnFlush {
		err = w.sync()
	}
	if w.enc != nil {
		w.enc.Close()
	}
	// Nothing refers to the buffers any more: the goroutine has ended and
	// records appended after Close go to a heap buffer.
	w.buf = nil
	for len(w.free) > 0 {
		<-w.free
	}
	freeArena(w.arena)
	w.arena = nil
	w.out = nil
	freeArena(w.outArena)
	w.outArena = nil
	if w.file != nil {
		if cerr := w.file.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		w.err = ErrClosed
	}
	w.closeResult = err
	return err
}

func (w *Writer) sync() error {
	if s, ok := w.dst.(interface{ Sync() error }); ok {
		return s.Sync()
	}
	return nil
}

// run is the background goroutine: it compresses and writes chunks in
// order and answers flush requests.
func (w *Writer) run() {
	defer close(w.done)
	w.warmUp()
	for j := range w.jobs {
		if j.part {
			if w.bgErr.Load() == nil {
				if err := w.writePart(j.buf); err != nil {
					w.bgErr.Store(&err)
				}
			}
			continue
		}
		if j.flush != nil {
			var err error
			if p := w.bgErr.Load(); p != nil {
				err = *p
			} else if w.ring != nil {
				// The recording goroutine waits for the reply: its
				// Exit fields are stable.
				if err = w.writeRing(); err != nil {
					w.bgErr.Store(&err)
				}
			}
			if err == nil && w.syncOnFlush {
				if err = w.sync(); err != nil {
					w.bgErr.Store(&err)
				}
			}
			j.flush <- err
			continue
		}
		if w.bgErr.Load() == nil {
			if err := w.writeChunk(&j); err != nil {
				w.bgErr.Store(&err)
			}
		}
		buf := j.buf[:0]
		if cap(buf) > 2*w.bufCap {
			buf = make([]byte, 0, w.target) // a huge record grew it: let it go
		}
		w.free <- buf
	}
}

// warmUp runs the encoder once on a little data. Its first use allocates
// and faults in its tables and history (about 0.6 ms), which would
// otherwise delay the end of every short recording; here it overlaps
// with the start of the program.
func (w *Writer) warmUp() {
	if w.enc == nil {
		return
	}
	var warm [4 << 10]byte
	for i := range warm {
		warm[i] = byte(i * i >> 3)
	}
	w.enc.Reset(io.Discard)
	w.enc.Write(warm[:])
	w.enc.Close()
}

// frameSink collects the encoder's output.
type frameSink []byte

func (s *frameSink) Write(p []byte) (int, error) {
	*s = append(*s, p...)
	return len(p), nil
}

// startChunk makes w.out the (provisional) header of a new chunk.
func (w *Writer) startChunk() {
	if cap(w.out) < chunkHeaderLen {
		w.out = make([]byte, 0, 64<<10) // grows to fit, and is kept
	}
	w.out = w.out[:chunkHeaderLen]
}

// writePart compresses part of the current chunk into its open frame,
// opening it first if need be, or stores it as a frame of its own if it
// does not compress (stored.go).
func (w *Writer) writePart(p []byte) error {
	if !w.outOpen {
		w.startChunk()
		w.outOpen = true
	}
	if incompressible(p) {
		if err := w.endFrame(); err != nil {
			return err
		}
		w.out = appendStoredFrame(w.out, p)
		return nil
	}
	if !w.streaming {
		w.enc.Reset(&w.out)
		w.streaming = true
		w.unflushed = 0
	}
	if _, err := w.enc.Write(p); err != nil {
		return err
	}
	if w.unflushed += len(p); w.unflushed >= streamBlock {
		w.unflushed = 0
		return w.enc.Flush()
	}
	return nil
}

// endFrame completes the chunk's open zstd frame, if there is one.
func (w *Writer) endFrame() error {
	if !w.streaming {
		return nil
	}
	w.streaming = false
	return w.enc.Close()
}

// writeChunk compresses the rest of a chunk, completing its frame, and
// writes header and payload with a single write call.
func (w *Writer) writeChunk(j *job) error {
	flags := j.st.flags
	if w.enc != nil {
		// (A chunk whose parts were all stored needs no empty frame
		// after them.)
		if rest := j.buf[j.from:]; len(rest) > 0 || !w.outOpen {
			if err := w.writePart(rest); err != nil {
				return err
			}
		}
		w.outOpen = false
		if err := w.endFrame(); err != nil {
			return err
		}
	} else {
		w.startChunk()
	}
	out := []byte(w.out)
	if w.enc == nil || len(out)-chunkHeaderLen >= len(j.buf) {
		out = append(out[:chunkHeaderLen], j.buf...)
		flags |= compressNone
	}
	switch {
	case w.outArena != nil:
		w.out = w.outArena[:0] // a huge chunk's heap buffer is let go
	case cap(out) <= w.maxOutRetain:
		w.out = out
	default:
		w.out = nil
	}
	payload := out[chunkHeaderLen:]
	if len(payload) > MaxChunkLen || len(j.buf) > MaxChunkLen {
		return fmt.Errorf("tracefile: chunk of %d bytes: %w", len(j.buf), ErrTooLarge)
	}
	h := chunkHeader{
		flags:        flags,
		index:        w.nchunks,
		clen:         uint32(len(payload)),
		ulen:         uint32(len(j.buf)),
		payloadCRC:   crc(payload),
		firstPos:     j.st.firstPos,
		firstSeq:     j.st.firstSeq,
		lastPos:      j.st.lastPos,
		lastSeq:      j.st.lastSeq,
		records:      j.records,
		keyFrames:    j.st.keyFrames,
		checkpoints:  j.st.checkpoints,
		syscalls:     j.st.syscalls,
		threadStarts: j.st.threadStarts,
	}
	h.put(out)
	if w.ring != nil {
		w.ring.add(out, flags)
		w.nchunks++
		w.stats[0].Add(1)
		w.stats[1].Add(int64(j.records))
		w.stats[2].Add(int64(len(j.buf)))
		if w.ring.due() {
			return w.writeRing() // survives a kill (ring.go)
		}
		return nil
	}
	if _, err := w.dst.Write(out); err != nil {
		return err
	}
	w.index = binary.LittleEndian.AppendUint64(w.index, uint64(w.off))
	w.index = append(w.index, out[:chunkHeaderLen]...)
	w.off += int64(len(out))
	w.nchunks++
	w.stats[0].Add(1)
	w.stats[1].Add(int64(j.records))
	w.stats[2].Add(int64(len(j.buf)))
	w.stats[3].Store(w.off)
	return nil
}

// writeIndex writes the index section and the footer in one write call.
// It runs after the background goroutine has stopped.
func (w *Writer) writeIndex() error {
	if w.ring != nil {
		return w.writeRing()
	}
	b := w.appendCheckpointIndex(w.indexSection(w.nchunks, w.index))
	n := len(b)
	b = append(b, make([]byte, footerLen)...)
	putFooter(b[n:], w.off, int64(n), crc(b[:n]))
	if _, err := w.dst.Write(b); err != nil {
		return err
	}
	w.off += int64(len(b))
	w.stats[3].Store(w.off)
	return nil
}

// allocArena maps n bytes of zeroed memory outside the Go heap (the
// garbage collector neither counts nor scans it), or falls back to the
// heap if the kernel refuses.
func allocArena(n int) []byte {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return make([]byte, n)
	}
	return b
}

// outBound is the most a zstd frame of n bytes takes when the writer
// feeds it: each block adds a 3-byte header to at most its input, and
// the writer's flushes (streamBlock) and its parts (partSize) end a
// block at least every partSize bytes; the frame header and the last
// block add a few bytes more. A larger frame still fits: the buffer then
// grows on the heap.
func outBound(n int) int { return n + 3*(n/partSize+2) + 64 }

// freeArena unmaps an arena from allocArena; a heap fallback is left to
// the collector.
func freeArena(b []byte) {
	if len(b) > 0 {
		unix.Munmap(b)
	}
}

// indexSection returns the index section for n chunks whose entries are
// idx.
func (w *Writer) indexSection(n uint32, idx []byte) []byte {
	b := make([]byte, 0, 8+len(idx)+64+footerLen)
	b = append(b, indexMagic...)
	b = binary.LittleEndian.AppendUint32(b, n)
	b = append(b, idx...)
	if e := w.exit.Load(); e != nil {
		body := appendExitBody(nil, e)
		b = append(b, 1)
		b = binary.AppendUvarint(b, uint64(len(body)))
		b = append(b, body...)
	} else {
		b = append(b, 0)
	}
	return b
}
