package tracefile

import (
	"encoding/binary"
	"fmt"
)

// Record tags: the first byte of every record (FORMAT.md, "Records").
// Tags 0x01..0x0f and 0x20..0x7f are followed by a uvarint body length and
// the body; 0x10..0x1f (key frames) and 0x80..0xff (memory reads) are
// compact records without a length.
const (
	tagThreadStart = 0x01
	tagThreadExit  = 0x02
	tagCodeBytes   = 0x03
	tagSyscall     = 0x04
	tagNonDet      = 0x05
	tagSignal      = 0x06
	tagMmap        = 0x07
	tagMunmap      = 0x08
	tagMprotect    = 0x09
	tagModule      = 0x0a
	tagCheckpoint  = 0x0b
	tagExit        = 0x0c
	tagOpaque      = 0x0d
	tagKeyFrame    = 0x10 // | kind
	tagMemRead     = 0x80 // | (size-1)<<4 | min(delta, 15)

	memReadInlineDelta = 15
	maxMemReadLen      = 1 + binary.MaxVarintLen64 + 8
	maxKeyFrameLen     = 1 + 3*binary.MaxVarintLen64
)

var zeros [binary.MaxVarintLen64]byte

// MemRead appends a memory read the prediction cache did not predict:
// readDelta reads of the current thread since its previous logged read,
// size bytes (1..8) whose value is the low bytes of value. It is the hot
// path of recording: a few stores into the chunk buffer, no allocation;
// the common case (readDelta < 15) is small enough to be inlined.
func (w *Writer) MemRead(readDelta, value uint64, size uint8) {
	n := len(w.buf)
	if readDelta < memReadInlineDelta && size-1 <= 7 && cap(w.buf)-n >= maxMemReadLen {
		b := w.buf[n : n+9]
		b[0] = tagMemRead | (size-1)<<4 | byte(readDelta)
		binary.LittleEndian.PutUint64(b[1:], value)
		w.buf = w.buf[:n+1+int(size)]
		w.nrec++
		return
	}
	w.memRead(readDelta, value, size)
}

// memRead is MemRead's general case.
func (w *Writer) memRead(readDelta, value uint64, size uint8) {
	if size-1 > 7 {
		w.fail(fmt.Errorf("tracefile: MemRead of %d bytes: %w", size, ErrInvalid))
		return
	}
	w.makeRoom(maxMemReadLen)
	n := len(w.buf)
	b := w.buf[:n+maxMemReadLen]
	tag := tagMemRead | (size-1)<<4
	if readDelta < memReadInlineDelta {
		b[n] = tag | byte(readDelta)
		n++
	} else {
		b[n] = tag | memReadInlineDelta
		n++
		v := readDelta - memReadInlineDelta
		for v >= 0x80 {
			b[n] = byte(v) | 0x80
			v >>= 7
			n++
		}
		b[n] = byte(v)
		n++
	}
	binary.LittleEndian.PutUint64(b[n:n+8], value)
	w.buf = b[:n+int(size)]
	w.nrec++
}

// KeyFrame appends a key frame: the global sequence number seq and
// position, and the thread tid that runs from here on. kind is 0..15.
func (w *Writer) KeyFrame(kind KeyFrameKind, tid int, seq, position uint64) {
	// The common case, one-byte deltas and tid, in four stores (threads
	// that synchronise often log a key frame every few dozen
	// instructions).
	n := len(w.buf)
	ds, dp := seq-w.seq, position-w.pos
	if kind <= MaxKeyFrameKind && ds|dp|uint64(tid) < 0x80 && cap(w.buf)-n >= maxKeyFrameLen &&
		n < w.limit && n-w.sent < partSize {
		b := w.buf[n : n+4]
		b[0] = tagKeyFrame | byte(kind)
		b[1], b[2], b[3] = byte(ds), byte(dp), byte(tid)
		w.buf = w.buf[:n+4]
	} else if !w.appendKeyFrame(kind, tid, ds, dp) {
		return
	}
	w.nrec++
	w.seq, w.pos = seq, position
	w.cur.keyFrames++
	w.cur.lastPos = max(w.cur.lastPos, position)
	w.cur.lastSeq = max(w.cur.lastSeq, seq)
}

// appendKeyFrame is KeyFrame's general encoding; it reports false for a
// kind out of range.
func (w *Writer) appendKeyFrame(kind KeyFrameKind, tid int, ds, dp uint64) bool {
	if kind > MaxKeyFrameKind {
		w.fail(fmt.Errorf("tracefile: key frame kind %d: %w", kind, ErrInvalid))
		return false
	}
	w.makeRoom(maxKeyFrameLen)
	b := append(w.buf, tagKeyFrame|byte(kind))
	b = binary.AppendUvarint(b, ds)
	b = binary.AppendUvarint(b, dp)
	w.buf = binary.AppendUvarint(b, uint64(tid))
	return true
}

// begin starts a length-prefixed record whose encoding takes at most est
// bytes; it returns the offset of the (provisional one-byte) length.
func (w *Writer) begin(tag byte, est int) (mark int, ok bool) {
	if est > MaxChunkLen-64 {
		w.fail(fmt.Errorf("tracefile: record of %d bytes: %w", est, ErrTooLarge))
		return 0, false
	}
	if len(w.buf) > 0 && len(w.buf)+est > MaxChunkLen {
		w.cut()
	}
	w.buf = append(w.buf, tag, 0)
	return len(w.buf) - 1, true
}

// end completes the record begun at mark: it stores the body length,
// moving the body if the length needs more than one byte, and ends the
// chunk if it has reached the hard limit.
func (w *Writer) end(mark int) {
	body := len(w.buf) - mark - 1
	if body < 0x80 {
		w.buf[mark] = byte(body)
	} else {
		k := uvarintLen(uint64(body))
		w.buf = append(w.buf, zeros[:k-1]...)
		copy(w.buf[mark+k:], w.buf[mark+1:mark+1+body])
		binary.PutUvarint(w.buf[mark:], uint64(body))
	}
	w.nrec++
	if len(w.buf) >= w.limit {
		w.cut()
	}
	w.sendPart()
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

func appendBytes(b, data []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(data)))
	return append(b, data...)
}

func appendRanges(b []byte, rs []MemRange) []byte {
	b = binary.AppendUvarint(b, uint64(len(rs)))
	for i := range rs {
		b = binary.AppendUvarint(b, rs[i].Addr)
		b = appendBytes(b, rs[i].Bytes)
	}
	return b
}

// appendSpans appends a trailing list of spans, if there are any (a
// record without it has none).
func appendSpans(b []byte, ss []Span) []byte {
	if len(ss) == 0 {
		return b
	}
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = binary.AppendUvarint(b, s.Addr)
		b = binary.AppendUvarint(b, s.Len)
	}
	return b
}

func spansLen(ss []Span) int { return binary.MaxVarintLen64 * (1 + 2*len(ss)) }

func rangesLen(rs []MemRange) int {
	n := binary.MaxVarintLen64
	for i := range rs {
		n += 2*binary.MaxVarintLen64 + len(rs[i].Bytes)
	}
	return n
}

// ThreadStart appends the start of thread tid, created by parentTid (0
// for the first thread).
func (w *Writer) ThreadStart(tid, parentTid int) {
	m, ok := w.begin(tagThreadStart, 24)
	if !ok {
		return
	}
	b := binary.AppendUvarint(w.buf, uint64(tid))
	w.buf = binary.AppendUvarint(b, uint64(parentTid))
	w.cur.threadStarts++
	w.end(m)
}

// ThreadExit appends the end of thread tid with its exit status.
func (w *Writer) ThreadExit(tid, status int) {
	m, ok := w.begin(tagThreadExit, 24)
	if !ok {
		return
	}
	b := binary.AppendUvarint(w.buf, uint64(tid))
	w.buf = binary.AppendVarint(b, int64(status))
	w.end(m)
}

// CodeBytes appends guest code bytes found at addr.
func (w *Writer) CodeBytes(addr uint64, code []byte) {
	m, ok := w.begin(tagCodeBytes, 16+len(code))
	if !ok {
		return
	}
	b := binary.AppendUvarint(w.buf, addr)
	w.buf = append(b, code...)
	w.end(m)
}

// Syscall appends a completed syscall. The Writer copies what it needs:
// s and the slices it points to may be reused at once.
func (w *Writer) Syscall(s *Syscall) {
	m, ok := w.begin(tagSyscall, 96+rangesLen(s.Writes)+spansLen(s.Predicted))
	if !ok {
		return
	}
	b := binary.AppendUvarint(w.buf, uint64(s.Tid))
	b = binary.AppendUvarint(b, uint64(s.Nr))
	for _, a := range s.Args {
		b = binary.AppendUvarint(b, a)
	}
	b = binary.AppendVarint(b, s.Result)
	b = appendRanges(b, s.Writes)
	w.buf = appendSpans(b, s.Predicted)
	w.cur.syscalls++
	w.end(m)
}

// NonDet appends the results of a non-deterministic instruction.
func (w *Writer) NonDet(tid int, kind NonDetKind, values []uint64) {
	m, ok := w.begin(tagNonDet, 24+binary.MaxVarintLen64*len(values))
	if !ok {
		return
	}
	b := binary.AppendUvarint(w.buf, uint64(tid))
	b = append(b, byte(kind))
	b = binary.AppendUvarint(b, uint64(len(values)))
	for _, v := range values {
		b = binary.AppendUvarint(b, v)
	}
	w.buf = b
	w.end(m)
}

// Signal appends a signal delivery.
func (w *Writer) Signal(s *Signal) {
	m, ok := w.begin(tagSignal, 64+rangesLen(s.Writes)+len(s.Regs)+spansLen(s.Predicted))
	if !ok {
		return
	}
	b := binary.AppendUvarint(w.buf, uint64(s.Tid))
	b = binary.AppendUvarint(b, uint64(s.Signo))
	b = binary.AppendVarint(b, int64(s.Code))
	b = binary.AppendUvarint(b, s.Addr)
	b = binary.AppendUvarint(b, s.FrameAddr)
	b = appendRanges(b, s.Writes)
	b = appendBytes(b, s.Regs)
	w.buf = appendSpans(b, s.Predicted)
	w.end(m)
}

// Mmap appends a new mapping.
func (w *Writer) Mmap(mm *Mmap) {
	tag := byte(tagMmap)
	if mm.Object != 0 {
		tag = tagSharedMmap
	}
	m, ok := w.begin(tag, 74+len(mm.Path))
	if !ok {
		return
	}
	b := w.buf
	if mm.Object != 0 {
		b = binary.AppendUvarint(b, mm.Object)
	}
	b = binary.AppendUvarint(b, mm.Addr)
	b = binary.AppendUvarint(b, mm.Len)
	b = binary.AppendUvarint(b, uint64(mm.Prot))
	b = binary.AppendUvarint(b, uint64(mm.Flags))
	b = binary.AppendUvarint(b, mm.Offset)
	b = binary.AppendUvarint(b, mm.FileLen)
	w.buf = append(b, mm.Path...)
	w.end(m)
}

// Munmap appends the removal of mappings.
func (w *Writer) Munmap(addr, length uint64) {
	m, ok := w.begin(tagMunmap, 24)
	if !ok {
		return
	}
	b := binary.AppendUvarint(w.buf, addr)
	w.buf = binary.AppendUvarint(b, length)
	w.end(m)
}

// Mprotect appends a change of protection.
func (w *Writer) Mprotect(addr, length uint64, prot int) {
	m, ok := w.begin(tagMprotect, 32)
	if !ok {
		return
	}
	b := binary.AppendUvarint(w.buf, addr)
	b = binary.AppendUvarint(b, length)
	w.buf = binary.AppendUvarint(b, uint64(prot))
	w.end(m)
}

// Module appends a loaded module.
func (w *Writer) Module(mod *Module) {
	m, ok := w.begin(tagModule, 48+len(mod.Path)+len(mod.BuildID)+len(mod.Embedded))
	if !ok {
		return
	}
	w.flagRecord(tagModule)
	b := appendBytes(w.buf, mod.Path)
	b = appendBytes(b, mod.BuildID)
	b = binary.AppendUvarint(b, mod.LoadAddr)
	b = binary.AppendUvarint(b, mod.Size)
	w.buf = append(b, mod.Embedded...)
	w.end(m)
}

// Checkpoint appends a checkpoint. If the current chunk has reached
// Options.ChunkSize, a new chunk begins with this record.
func (w *Writer) Checkpoint(c *Checkpoint) { w.checkpoint(c, w.target) }

// CheckpointInChunk writes c as Checkpoint does, but in the current
// chunk, whatever its size (it ends at MaxChunkSize as usual): for the
// checkpoints a recorder brings forward (after execs), which may come a
// few hundred KB apart. Chunks compress independently: a tree of 40
// bash start-ups with 6 such checkpoints took 3.2 MiB when they began a
// chunk once it held 2 MiB, 3.0 MiB when none did (2.3 MiB without
// them).
func (w *Writer) CheckpointInChunk(c *Checkpoint) { w.checkpoint(c, w.limit) }

func (w *Writer) checkpoint(c *Checkpoint, cutAt int) {
	est := 48
	for i := range c.Threads {
		est += 3*binary.MaxVarintLen64 + len(c.Threads[i].Regs)
	}
	if w.nrec > 0 && len(w.buf) >= cutAt {
		w.cut()
	}
	m, ok := w.begin(tagCheckpoint, est)
	if !ok {
		return
	}
	w.noteCheckpoint(c.Position)
	if w.nrec == 0 {
		w.cur.flags |= flagCheckpoint
		w.cur.firstPos, w.cur.firstSeq = c.Position, c.Seq
		w.cur.lastPos, w.cur.lastSeq = c.Position, c.Seq
	}
	b := binary.AppendUvarint(w.buf, c.Position)
	b = binary.AppendUvarint(b, c.Seq)
	b = binary.AppendUvarint(b, uint64(c.CurrentTid))
	b = binary.AppendUvarint(b, uint64(len(c.Threads)))
	for i := range c.Threads {
		t := &c.Threads[i]
		b = binary.AppendUvarint(b, uint64(t.Tid))
		b = binary.AppendUvarint(b, t.ICount)
		b = appendBytes(b, t.Regs)
	}
	w.buf = b
	w.pos, w.seq = c.Position, c.Seq
	w.cur.checkpoints++
	w.cur.lastPos = max(w.cur.lastPos, c.Position)
	w.cur.lastSeq = max(w.cur.lastSeq, c.Seq)
	w.end(m)
}

func appendExitBody(b []byte, e *Exit) []byte {
	b = append(b, byte(e.Kind))
	b = binary.AppendVarint(b, int64(e.Code))
	b = binary.AppendUvarint(b, uint64(e.Signo))
	b = binary.AppendUvarint(b, e.FaultAddr)
	return binary.AppendUvarint(b, e.Position)
}

// Exit appends how the process ended; the index repeats it.
func (w *Writer) Exit(e *Exit) {
	m, ok := w.begin(tagExit, 48)
	if !ok {
		return
	}
	w.buf = appendExitBody(w.buf, e)
	x := *e
	w.exit.Store(&x)
	w.cur.flags |= flagExit
	w.cur.lastPos = max(w.cur.lastPos, e.Position)
	w.end(m)
}

// Opaque appends an extension record with the producer's tag.
func (w *Writer) Opaque(tag uint64, data []byte) {
	m, ok := w.begin(tagOpaque, 16+len(data))
	if !ok {
		return
	}
	b := binary.AppendUvarint(w.buf, tag)
	w.buf = append(b, data...)
	w.end(m)
}

// Append appends r (the field its Kind names). A KindUnknown record is
// written back with its original tag, which must be a length-prefixed
// one that this version does not use.
func (w *Writer) Append(r *Record) {
	switch r.Kind {
	case KindMemRead:
		w.MemRead(r.MemRead.ReadDelta, r.MemRead.Value, r.MemRead.Size)
	case KindKeyFrame:
		k := &r.KeyFrame
		w.KeyFrame(k.Kind, k.Tid, k.Seq, k.Position)
	case KindThreadStart:
		w.ThreadStart(r.ThreadStart.Tid, r.ThreadStart.ParentTid)
	case KindThreadExit:
		w.ThreadExit(r.ThreadExit.Tid, r.ThreadExit.Status)
	case KindCodeBytes:
		w.CodeBytes(r.CodeBytes.Addr, r.CodeBytes.Bytes)
	case KindSyscall:
		w.Syscall(&r.Syscall)
	case KindNonDet:
		w.NonDet(r.NonDet.Tid, r.NonDet.Kind, r.NonDet.Values)
	case KindSignal:
		w.Signal(&r.Signal)
	case KindMmap:
		w.Mmap(&r.Mmap)
	case KindMunmap:
		w.Munmap(r.Munmap.Addr, r.Munmap.Len)
	case KindMprotect:
		w.Mprotect(r.Mprotect.Addr, r.Mprotect.Len, r.Mprotect.Prot)
	case KindModule:
		w.Module(&r.Module)
	case KindCheckpoint:
		w.Checkpoint(&r.Checkpoint)
	case KindExit:
		w.Exit(&r.Exit)
	case KindOpaque:
		w.Opaque(r.Opaque.Tag, r.Opaque.Bytes)
	case KindUnknown:
		t := r.Opaque.Tag
		if !unknownTag(t) {
			w.fail(fmt.Errorf("tracefile: unknown record with tag %#x: %w", t, ErrInvalid))
			return
		}
		m, ok := w.begin(byte(t), len(r.Opaque.Bytes))
		if !ok {
			return
		}
		w.buf = append(w.buf, r.Opaque.Bytes...)
		if t == tagProcess || t == tagProcessState {
			w.cur.flags |= flagProcesses
		}
		w.flagRecord(byte(t))
		w.end(m)
	default:
		w.fail(fmt.Errorf("tracefile: record kind %v: %w", r.Kind, ErrInvalid))
	}
}

// unknownTag reports whether t is a length-prefixed tag this version
// gives no meaning.
func unknownTag(t uint64) bool {
	return t == 0x0e || t == 0x0f || (t >= 0x20 && t < 0x80) // (0x20: Process, 0x21: ProcessState, process.go)
}
