package tracefile

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"time"
)

// Ring-buffer recording (Options.Ring), as iDNA's default mode and WinDbg
// TTD's -ring: the writer keeps the chunks in memory and only the last
// Ring bytes of them, dropping the oldest chunks from the front while
// what remains still begins with a chunk that begins with a checkpoint
// (so re-simulation can start at the window's first position). Flush and
// Close write the window as a complete trace: the file header, the kept
// chunks numbered from 0, the index and the footer. A window's chunk 0
// then starts at its checkpoint's position instead of 0 (FORMAT.md,
// "Ring-buffer traces"). Chunks of AccessSummary records are never
// dropped: they describe the window.
//
// The window is also written while the recording runs (ring.due): a
// recording killed with SIGKILL leaves the window of its last write, a
// complete trace whose recording was cut short. For a file Create
// opened, each write goes to a temporary file renamed over the trace, so
// a kill in the middle of one leaves the previous window whole.

// ringFile is what a ring-buffer writer needs of its destination: it
// rewrites the file at every Flush.
type ringFile interface {
	io.WriterAt
	Truncate(size int64) error
}

type ringChunk struct {
	data  []byte // header and stored payload
	flags uint16
}

type ring struct {
	limit   int64
	hdrLen  int64
	f       ringFile
	chunks  []ringChunk
	bytes   int64
	dropped int // chunks dropped from the front
	// path is the trace's file (Create), hdr its file header: each
	// write of the window goes to path+".tmp", renamed over path.
	path string
	hdr  []byte
	// fresh counts the bytes added since the window was last written,
	// at time written.
	fresh   int64
	written time.Time
}

// ringWriteEvery is how often, at most, the window is written while the
// recording runs, unless a quarter of the ring is new: a killed
// recording loses at most that much.
const ringWriteEvery = time.Second

// due reports whether the window should be written now (after a chunk
// was added).
func (r *ring) due() bool {
	return r.fresh >= r.limit/4 || time.Since(r.written) >= ringWriteEvery
}

// add keeps chunk out (its header already encoded) and drops the oldest
// chunks beyond the limit.
func (r *ring) add(out []byte, flags uint16) {
	r.chunks = append(r.chunks, ringChunk{data: append([]byte(nil), out...), flags: flags})
	r.bytes += int64(len(out))
	r.fresh += int64(len(out))
	if flags&flagSummaries != 0 {
		return
	}
	for r.bytes > r.limit {
		j := -1
		for i := 1; i < len(r.chunks); i++ {
			if r.chunks[i].flags&flagCheckpoint != 0 {
				j = i
				break
			}
		}
		if j < 0 {
			return // no later checkpoint: the window cannot start later yet
		}
		for _, c := range r.chunks[:j] {
			r.bytes -= int64(len(c.data))
		}
		r.dropped += j
		r.chunks = append([]ringChunk(nil), r.chunks[j:]...)
	}
}

// writeRing writes the window as a complete trace: through a temporary
// file renamed over the trace when the writer knows its path, else in
// place after the file header.
func (w *Writer) writeRing() error {
	r := w.ring
	r.fresh, r.written = 0, time.Now()
	if r.path == "" {
		return w.writeRingTo(r.f)
	}
	tmp := r.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(r.hdr)
	if err == nil {
		err = w.writeRingTo(f)
	}
	if err == nil && w.syncOnFlush {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, r.path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// writeRingTo writes the window into f after the file header.
func (w *Writer) writeRingTo(f ringFile) error {
	r := w.ring
	if err := f.Truncate(r.hdrLen); err != nil {
		return err
	}
	off := r.hdrLen
	var idx []byte
	for i, c := range r.chunks {
		// Renumber the chunk and fix its header's CRC.
		hl := int(binary.LittleEndian.Uint16(c.data[4:]))
		binary.LittleEndian.PutUint32(c.data[8:], uint32(i))
		binary.LittleEndian.PutUint32(c.data[hl-4:], crc(c.data[:hl-4]))
		if _, err := f.WriteAt(c.data, off); err != nil {
			return err
		}
		idx = binary.LittleEndian.AppendUint64(idx, uint64(off))
		idx = append(idx, c.data[:hl]...)
		off += int64(len(c.data))
	}
	b := w.indexSection(uint32(len(r.chunks)), idx)
	n := len(b)
	b = append(b, make([]byte, footerLen)...)
	putFooter(b[n:], off, int64(n), crc(b[:n]))
	if _, err := f.WriteAt(b, off); err != nil {
		return err
	}
	w.stats[3].Store(off + int64(len(b)))
	return nil
}

// RingDropped reports how many chunks a ring-buffer writer has dropped
// from the front so far (for tests and statistics; 0 without Ring).
func (w *Writer) RingDropped() int {
	if w.ring == nil {
		return 0
	}
	return w.ring.dropped
}

func newRing(dst io.Writer, limit int64, hdr []byte) (*ring, error) {
	f, ok := dst.(ringFile)
	if !ok {
		return nil, fmt.Errorf("tracefile: a ring-buffer trace needs a file it can rewrite (%T is not one)", dst)
	}
	return &ring{limit: limit, hdrLen: int64(len(hdr)), f: f, hdr: append([]byte(nil), hdr...), written: time.Now()}, nil
}
