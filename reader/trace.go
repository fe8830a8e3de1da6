package reader

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"

	"ttd/predict"
	"ttd/tracefile"
	"ttd/x86"
)

// Opaque record tags shared with the recorder (see recorder.TagRegs).
const (
	tagRegs   = 1
	tagOutput = 2
)

// Trace is an opened trace file.
type Trace struct {
	f         *tracefile.Reader
	chunks    []tracefile.ChunkInfo
	cacheBits uint
	// Summary holds totals and how the program ended.
	Summary tracefile.Summary
	Header  tracefile.Header
}

// Open opens a trace for re-simulation.
func Open(path string) (*Trace, error) {
	f, err := tracefile.Open(path)
	if err != nil {
		return nil, err
	}
	return newTrace(f)
}

func newTrace(f *tracefile.Reader) (*Trace, error) {
	t := &Trace{f: f, chunks: f.Chunks(), Header: f.Header()}
	t.Summary = f.Summary()
	t.cacheBits = predict.DefaultBits
	if v, ok := t.Header.Params["cachebits"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 4 || n > 28 {
			return nil, fmt.Errorf("trace: bad prediction cache size %q", v)
		}
		t.cacheBits = uint(n)
	}
	if len(t.chunks) == 0 {
		return nil, errors.New("trace: no chunks (the recording wrote nothing)")
	}
	return t, nil
}

// Close releases the trace file.
func (t *Trace) Close() error { return t.f.Close() }

// Chunks describes the trace's chunks.
func (t *Trace) Chunks() []tracefile.ChunkInfo { return t.chunks }

// ctrl is a control record: one that the re-simulation acts on at a
// point of the execution (everything but memory reads and non-det
// results, which the CPU hooks consume in order).
type ctrl struct {
	rec tracefile.Record
	// code are the code bytes logged since the previous control record.
	code []tracefile.CodeBytes
	// reads and nondets are how many logged reads and non-det results
	// of the chunk come before this record: the CPU consumes no more
	// than that before the record takes effect.
	reads, nondets int
}

// chunk is one decoded chunk in compact form.
type chunk struct {
	index   int
	ctrls   []ctrl
	reads   []tracefile.MemRead
	nondets [][]uint64
}

// loadChunk decodes chunk i.
func (t *Trace) loadChunk(i int) (*chunk, error) {
	it := t.f.Records(i)
	ch := &chunk{index: i}
	var code []tracefile.CodeBytes
	for {
		r, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch r.Kind {
		case tracefile.KindMemRead:
			ch.reads = append(ch.reads, r.MemRead)
		case tracefile.KindNonDet:
			ch.nondets = append(ch.nondets, append([]uint64(nil), r.NonDet.Values...))
		case tracefile.KindCodeBytes:
			code = append(code, tracefile.CodeBytes{Addr: r.CodeBytes.Addr, Bytes: append([]byte(nil), r.CodeBytes.Bytes...)})
		case tracefile.KindModule, tracefile.KindUnknown:
			// Metadata: not needed to re-simulate.
		default:
			ch.ctrls = append(ch.ctrls, ctrl{rec: cloneRecord(r), code: code, reads: len(ch.reads), nondets: len(ch.nondets)})
			code = nil
		}
	}
	if len(code) > 0 {
		ch.ctrls = append(ch.ctrls, ctrl{code: code, reads: len(ch.reads), nondets: len(ch.nondets)})
	}
	return ch, nil
}

// cloneRecord copies the parts of a control record that alias the
// iterator's buffers.
func cloneRecord(r *tracefile.Record) tracefile.Record {
	c := tracefile.Record{Kind: r.Kind, Off: r.Off}
	switch r.Kind {
	case tracefile.KindKeyFrame:
		c.KeyFrame = r.KeyFrame
	case tracefile.KindThreadStart:
		c.ThreadStart = r.ThreadStart
	case tracefile.KindThreadExit:
		c.ThreadExit = r.ThreadExit
	case tracefile.KindSyscall:
		c.Syscall = r.Syscall
		c.Syscall.Writes = cloneRanges(r.Syscall.Writes)
	case tracefile.KindSignal:
		c.Signal = r.Signal
		c.Signal.Writes = cloneRanges(r.Signal.Writes)
		c.Signal.Regs = append([]byte(nil), r.Signal.Regs...)
	case tracefile.KindMmap:
		c.Mmap = r.Mmap
		c.Mmap.Path = append([]byte(nil), r.Mmap.Path...)
	case tracefile.KindMunmap:
		c.Munmap = r.Munmap
	case tracefile.KindMprotect:
		c.Mprotect = r.Mprotect
	case tracefile.KindCheckpoint:
		c.Checkpoint = r.Checkpoint
		c.Checkpoint.Threads = make([]tracefile.ThreadState, len(r.Checkpoint.Threads))
		for i, th := range r.Checkpoint.Threads {
			th.Regs = append([]byte(nil), th.Regs...)
			c.Checkpoint.Threads[i] = th
		}
	case tracefile.KindExit:
		c.Exit = r.Exit
	case tracefile.KindOpaque:
		c.Opaque = r.Opaque
		c.Opaque.Bytes = append([]byte(nil), r.Opaque.Bytes...)
	}
	return c
}

func cloneRanges(rs []tracefile.MemRange) []tracefile.MemRange {
	out := make([]tracefile.MemRange, len(rs))
	for i, r := range rs {
		out[i] = tracefile.MemRange{Addr: r.Addr, Bytes: append([]byte(nil), r.Bytes...)}
	}
	return out
}

// regsBlob splits a TagRegs/TagOutput payload.
func splitTagged(b []byte) (int, []byte, bool) {
	if len(b) < 4 {
		return 0, nil, false
	}
	return int(binary.LittleEndian.Uint32(b)), b[4:], true
}

var _ = x86.StateSize
