package tracefile

import (
	"encoding/binary"
	"io"
	"slices"
)

// recordError is a problem in a chunk's payload; the iterator turns it
// into a FormatError with the chunk's file offset.
type recordError struct {
	off int // record offset in the payload
	msg string
	err error
}

func (e *recordError) Error() string { return e.msg }

// decoder walks the records of one decompressed chunk payload.
type decoder struct {
	data     []byte
	off      int
	pos, seq uint64 // delta base for key frames
	records  int    // records decoded so far
}

func (d *decoder) reset(data []byte, pos, seq uint64) {
	*d = decoder{data: data, pos: pos, seq: seq}
}

// ReadLog is a MemRead record as a replay keeps it: how many reads of
// its thread since the previous logged one (MemRead.ReadDelta), and the
// value.
type ReadLog struct{ Delta, Value uint64 }

// memReadsUpTo appends the MemRead records from d.off on to dst, up to the
// first record of another kind or the end of the payload; it leaves a
// record it cannot take whole in this loop (a malformed one, or one
// within 8 bytes of the end) to next.
// It takes no more than lim reads in all in dst, and reports whether it
// stopped there with a read next.
//
// The reads go into dst's spare capacity by index, not append: the loop
// is most of what parsing a chunk costs beyond zstd (a replay's chunk
// of a million reads), and append's capacity check and length update
// per read cost 3-10% of it (BenchmarkParseTrace, thread CPU: sort -n
// 2.87 -> 2.58 ns a record, perl 3.05 -> 2.92, bzip2 2.58 -> 2.51).
func (d *decoder) memReadsUpTo(dst []ReadLog, lim int) ([]ReadLog, bool) {
	data := d.data
	p, k, k0 := d.off, len(dst), len(dst)
	for {
		out := dst[:min(lim, cap(dst))]
		for k < len(out) && p < len(data) {
			tag := data[p]
			if tag < tagMemRead {
				break
			}
			delta, q := uint64(tag&0xf), p+1
			if delta == memReadInlineDelta {
				var m int
				if delta, q, m = memReadLong(data, q); m <= 0 {
					break
				}
			}
			if len(data)-q < 8 {
				break
			}
			size := int(tag>>4&7) + 1
			out[k] = ReadLog{delta, binary.LittleEndian.Uint64(data[q:]) & sizeMask(size)}
			k++
			p = q + size
		}
		dst = out[:k]
		// Out of room, short of lim, with a read next: grow (as
		// append would) and go on.
		if k == len(out) && k < lim && p < len(data) && data[p] >= tagMemRead {
			dst = slices.Grow(dst, 1)
			continue
		}
		break
	}
	d.off = p
	d.records += k - k0
	return dst, k >= lim && p < len(data) && data[p] >= tagMemRead
}

// memReadLong decodes the read delta of a MemRead record whose tag holds
// memReadInlineDelta, from the uvarint at data[p:] after the tag: the
// delta, where the value starts, and binary.Uvarint's count (<= 0:
// truncated or bad). (A tag's own delta is read inline by the loops.)
func memReadLong(data []byte, p int) (uint64, int, int) {
	v, n := binary.Uvarint(data[p:])
	if n <= 0 {
		return 0, p, n
	}
	return memReadInlineDelta + v, p + n, n
}

// memReadSize is the size of a MemRead record's value, from its tag.
func memReadSize(tag byte) int { return int(tag>>4&7) + 1 }

// sizeMask keeps the low size bytes of a little-endian load of 8.
func sizeMask(size int) uint64 { return ^uint64(0) >> (64 - 8*size) }

// next decodes the record at d.off into rec. It returns io.EOF at the end
// of the payload and a *recordError for a malformed record.
func (d *decoder) next(rec *Record) error {
	data := d.data
	start := d.off
	if start >= len(data) {
		return io.EOF
	}
	tag := data[start]
	rec.Off = int64(start)
	p := start + 1
	switch {
	case tag >= tagMemRead:
		size := memReadSize(tag)
		delta, q, n := uint64(tag&0xf), p, 1
		if delta == memReadInlineDelta {
			delta, q, n = memReadLong(data, p)
		}
		if n <= 0 {
			return d.bad(start, "bad MemRead delta", n)
		}
		p = q
		var v uint64
		if len(data)-p >= 8 {
			v = binary.LittleEndian.Uint64(data[p:]) & sizeMask(size)
		} else {
			if len(data)-p < size {
				return &recordError{start, "MemRead value", ErrTruncated}
			}
			for i := size - 1; i >= 0; i-- {
				v = v<<8 | uint64(data[p+i])
			}
		}
		rec.Kind = KindMemRead
		rec.MemRead = MemRead{ReadDelta: delta, Value: v, Size: uint8(size)}
		d.off = p + size
	case tag >= tagKeyFrame && tag < tagKeyFrame+16:
		var f [3]uint64
		for i := range f {
			v, n := binary.Uvarint(data[p:])
			if n <= 0 {
				return d.bad(start, "bad KeyFrame field", n)
			}
			f[i] = v
			p += n
		}
		d.seq += f[0]
		d.pos += f[1]
		rec.Kind = KindKeyFrame
		rec.KeyFrame = KeyFrame{Kind: KeyFrameKind(tag & 0xf), Tid: int(f[2]), Seq: d.seq, Position: d.pos}
		d.off = p
	case tag == 0:
		return &recordError{start, "record tag 0x00", ErrCorrupt}
	default:
		l, n := binary.Uvarint(data[p:])
		if n <= 0 {
			return d.bad(start, "bad record length", n)
		}
		p += n
		if l > uint64(len(data)-p) {
			return &recordError{start, "record body", ErrTruncated}
		}
		body := body{b: data[p : p+int(l)]}
		if msg := d.decodeBody(tag, &body, rec); msg != "" {
			return &recordError{start, msg, ErrCorrupt}
		}
		if body.bad {
			return &recordError{start, "malformed " + rec.Kind.String() + " record", ErrCorrupt}
		}
		if body.p != len(body.b) {
			return &recordError{start, "trailing bytes in " + rec.Kind.String() + " record", ErrCorrupt}
		}
		d.off = p + int(l)
	}
	d.records++
	return nil
}

// bad reports a varint problem: n == 0 means the input ended.
func (d *decoder) bad(start int, msg string, n int) error {
	if n == 0 {
		return &recordError{start, msg, ErrTruncated}
	}
	return &recordError{start, msg, ErrCorrupt}
}

// body reads the fields of a length-prefixed record. A read past the end
// sets bad and returns zero values, so a decoder checks once at the end.
type body struct {
	b   []byte
	p   int
	bad bool
}

func (r *body) uvarint() uint64 {
	v, n := binary.Uvarint(r.b[r.p:])
	if n <= 0 {
		r.bad = true
		r.p = len(r.b)
		return 0
	}
	r.p += n
	return v
}

func (r *body) int() int { return int(r.uvarint()) }

func (r *body) varint() int64 {
	v, n := binary.Varint(r.b[r.p:])
	if n <= 0 {
		r.bad = true
		r.p = len(r.b)
		return 0
	}
	r.p += n
	return v
}

func (r *body) byte() byte {
	if r.p >= len(r.b) {
		r.bad = true
		return 0
	}
	r.p++
	return r.b[r.p-1]
}

// bytes reads a uvarint length and that many bytes (aliasing the payload).
func (r *body) bytes() []byte {
	l := r.uvarint()
	if l > uint64(len(r.b)-r.p) {
		r.bad = true
		r.p = len(r.b)
		return nil
	}
	s := r.b[r.p : r.p+int(l) : r.p+int(l)]
	r.p += int(l)
	return s
}

// rest returns the bytes left in the body.
func (r *body) rest() []byte {
	s := r.b[r.p:len(r.b):len(r.b)]
	r.p = len(r.b)
	return s
}

// count reads an element count, refusing one that cannot fit in the rest
// of the body at minSize bytes per element.
func (r *body) count(minSize int) int {
	n := r.uvarint()
	if n > uint64((len(r.b)-r.p)/minSize) {
		r.bad = true
		r.p = len(r.b)
		return 0
	}
	return int(n)
}

func (r *body) ranges(rs []MemRange) []MemRange {
	n := r.count(2)
	rs = rs[:0]
	for i := 0; i < n && !r.bad; i++ {
		addr := r.uvarint()
		rs = append(rs, MemRange{Addr: addr, Bytes: r.bytes()})
	}
	return rs
}

// spans reads a trailing list of spans, empty when the body has ended.
func (r *body) spans(ss []Span) []Span {
	ss = ss[:0]
	if r.p == len(r.b) {
		return ss
	}
	n := r.count(2)
	for i := 0; i < n && !r.bad; i++ {
		ss = append(ss, Span{Addr: r.uvarint(), Len: r.uvarint()})
	}
	return ss
}

// decodeBody fills rec from the body of a length-prefixed record. It
// returns a message for a semantic problem; field overruns set b.bad.
func (d *decoder) decodeBody(tag byte, b *body, rec *Record) string {
	switch tag {
	case tagThreadStart:
		rec.Kind = KindThreadStart
		rec.ThreadStart = ThreadStart{Tid: b.int(), ParentTid: b.int()}
	case tagThreadExit:
		rec.Kind = KindThreadExit
		rec.ThreadExit = ThreadExit{Tid: b.int(), Status: int(b.varint())}
	case tagCodeBytes:
		rec.Kind = KindCodeBytes
		rec.CodeBytes = CodeBytes{Addr: b.uvarint(), Bytes: b.rest()}
	case tagSyscall:
		rec.Kind = KindSyscall
		s := &rec.Syscall
		s.Tid = b.int()
		s.Nr = b.int()
		for i := range s.Args {
			s.Args[i] = b.uvarint()
		}
		s.Result = b.varint()
		s.Writes = b.ranges(s.Writes)
		s.Predicted = b.spans(s.Predicted)
	case tagNonDet:
		rec.Kind = KindNonDet
		nd := &rec.NonDet
		nd.Tid = b.int()
		nd.Kind = NonDetKind(b.byte())
		n := b.count(1)
		nd.Values = nd.Values[:0]
		for i := 0; i < n && !b.bad; i++ {
			nd.Values = append(nd.Values, b.uvarint())
		}
	case tagSignal:
		rec.Kind = KindSignal
		s := &rec.Signal
		s.Tid = b.int()
		s.Signo = b.int()
		s.Code = int(b.varint())
		s.Addr = b.uvarint()
		s.FrameAddr = b.uvarint()
		s.Writes = b.ranges(s.Writes)
		s.Regs = b.bytes()
		s.Predicted = b.spans(s.Predicted)
	case tagMmap, tagSharedMmap:
		rec.Kind = KindMmap
		m := &rec.Mmap
		m.Object = 0
		if tag == tagSharedMmap {
			m.Object = b.uvarint()
		}
		m.Addr = b.uvarint()
		m.Len = b.uvarint()
		m.Prot = b.int()
		m.Flags = b.int()
		m.Offset = b.uvarint()
		m.FileLen = b.uvarint()
		m.Path = b.rest()
	case tagMunmap:
		rec.Kind = KindMunmap
		rec.Munmap = Munmap{Addr: b.uvarint(), Len: b.uvarint()}
	case tagMprotect:
		rec.Kind = KindMprotect
		rec.Mprotect = Mprotect{Addr: b.uvarint(), Len: b.uvarint(), Prot: b.int()}
	case tagModule:
		rec.Kind = KindModule
		m := &rec.Module
		m.Path = b.bytes()
		m.BuildID = b.bytes()
		m.LoadAddr = b.uvarint()
		m.Size = b.uvarint()
		m.Embedded = b.rest()
	case tagCheckpoint:
		rec.Kind = KindCheckpoint
		c := &rec.Checkpoint
		c.Position = b.uvarint()
		c.Seq = b.uvarint()
		c.CurrentTid = b.int()
		n := b.count(3)
		c.Threads = c.Threads[:0]
		for i := 0; i < n && !b.bad; i++ {
			tid := b.int()
			icount := b.uvarint()
			c.Threads = append(c.Threads, ThreadState{Tid: tid, ICount: icount, Regs: b.bytes()})
		}
		d.pos, d.seq = c.Position, c.Seq
	case tagExit:
		rec.Kind = KindExit
		decodeExitBody(b, &rec.Exit)
	case tagOpaque:
		rec.Kind = KindOpaque
		rec.Opaque = Opaque{Tag: b.uvarint(), Bytes: b.rest()}
	default:
		if !unknownTag(uint64(tag)) {
			return "bad record tag"
		}
		rec.Kind = KindUnknown
		rec.Opaque = Opaque{Tag: uint64(tag), Bytes: b.rest()}
	}
	return ""
}

func decodeExitBody(b *body, e *Exit) {
	e.Kind = ExitKind(b.byte())
	e.Code = int(b.varint())
	e.Signo = b.int()
	e.FaultAddr = b.uvarint()
	e.Position = b.uvarint()
}
