package tracefile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
)

// Access summaries (FORMAT.md, "AccessSummary"): for every checkpoint
// interval of a trace, exactly which bytes it read, wrote and fetched as
// code, stored after the Exit record in chunks of their own (chunk flag
// bit 2). tracefile stores the byte sets; what they mean for a search
// (which interval may hold a hit) is package ttd's business.

const (
	// tagAccessSummary is the record tag of an AccessSummary, one of the
	// tags version 1.0 reserved: a 1.0 reader skips it.
	tagAccessSummary = 0x0e
	// tagProcessAccessSummary is an AccessSummary of a process other
	// than the first of a process tree: uvarint pid, then the body of
	// an AccessSummary (minor version 3).
	tagProcessAccessSummary = 0x0f
	// flagSummaries marks a chunk that holds AccessSummary records only.
	flagSummaries = 1 << 2
)

// ByteSet is a set of the bytes of one 4096-byte page, by 64-byte line:
// Lines has bit i set when the set holds a byte of line i (bytes
// 64i..64i+63), Full when it holds all of them, and Masks holds, for
// each line of Lines&^Full in increasing order, the line's bytes (bit b:
// byte 64i+b).
type ByteSet struct {
	Lines, Full uint64
	Masks       []uint64
}

// Empty reports whether the set holds no byte.
func (s *ByteSet) Empty() bool { return s.Lines == 0 }

// Line returns the mask of the bytes of line i (0..63) in the set.
func (s *ByteSet) Line(i int) uint64 {
	bit := uint64(1) << uint(i)
	switch {
	case s.Lines&bit == 0:
		return 0
	case s.Full&bit != 0:
		return ^uint64(0)
	}
	partial := s.Lines &^ s.Full
	return s.Masks[bits.OnesCount64(partial&(bit-1))]
}

// LineMask returns the bits of line w of a page (bit b: byte 64w+b)
// that its bytes [lo, hi) cover.
func LineMask(lo, hi, w int) uint64 {
	a, b := max(lo, w<<6), min(hi, (w+1)<<6)
	if b-a >= 64 {
		return ^uint64(0)
	}
	return (uint64(1)<<uint(b-a) - 1) << uint(a&63)
}

// MakeByteSet returns the set of the bytes of a page given as 64 line
// masks (masks[i] bit b: byte 64i+b).
func MakeByteSet(masks *[64]uint64) ByteSet {
	s, _ := AppendByteSet(nil, masks)
	return s
}

// AppendByteSet is MakeByteSet with the set's masks appended to slab,
// which it returns: a writer of many sets (the recorder's summaries)
// gives them one allocation. The set's Masks is nil when it has none,
// and has no spare capacity (appending to it never writes into slab).
func AppendByteSet(slab []uint64, masks *[64]uint64) (ByteSet, []uint64) {
	start := len(slab)
	var s ByteSet
	for i, m := range masks {
		switch m {
		case 0:
		case ^uint64(0):
			s.Lines |= 1 << uint(i)
			s.Full |= 1 << uint(i)
		default:
			s.Lines |= 1 << uint(i)
			slab = append(slab, m)
		}
	}
	if len(slab) > start {
		s.Masks = slab[start:len(slab):len(slab)]
	}
	return s, slab
}

// PageAccess is what an interval did to one page.
type PageAccess struct {
	PN                  uint64 // page number (address >> 12)
	Read, Written, Exec ByteSet
}

// PageRange is the half-open range [Lo, Hi) of page numbers.
type PageRange struct{ Lo, Hi uint64 }

// AccessSummary is what the execution between positions Start and End (a
// checkpoint interval) did to memory: the bytes it read, wrote (the
// program, the kernel for a syscall, signal delivery) and fetched as
// code, by page in increasing page-number order, and the page ranges it
// unmapped.
//
// Pid is the process whose memory the summary describes, in a trace of a
// process tree: 0 for the first process (or the only one), the pid of
// another. Such a process has summaries only for the intervals from the
// one it was created in; see FORMAT.md for what the others mean.
type AccessSummary struct {
	Pid        int
	Start, End uint64
	Unmapped   []PageRange
	Pages      []PageAccess
}

func appendByteSet(b []byte, s *ByteSet) []byte {
	b = binary.AppendUvarint(b, s.Lines)
	b = binary.AppendUvarint(b, s.Full)
	for _, m := range s.Masks {
		b = binary.LittleEndian.AppendUint64(b, m)
	}
	return b
}

// AppendAccessSummary appends the body of s's record to b.
func AppendAccessSummary(b []byte, s *AccessSummary) []byte {
	b = binary.AppendUvarint(b, s.Start)
	b = binary.AppendUvarint(b, s.End-s.Start)
	b = binary.AppendUvarint(b, uint64(len(s.Unmapped)))
	for _, r := range s.Unmapped {
		b = binary.AppendUvarint(b, r.Lo)
		b = binary.AppendUvarint(b, r.Hi-r.Lo)
	}
	b = binary.AppendUvarint(b, uint64(len(s.Pages)))
	var prev uint64
	for i := range s.Pages {
		p := &s.Pages[i]
		b = binary.AppendUvarint(b, p.PN-prev)
		prev = p.PN
		b = appendByteSet(b, &p.Read)
		b = appendByteSet(b, &p.Written)
		b = appendByteSet(b, &p.Exec)
	}
	return b
}

// AccessSummary appends s as a record. Summaries come after the Exit
// record, in chunks that hold nothing else: the first one ends the chunk
// being filled.
func (w *Writer) AccessSummary(s *AccessSummary) {
	e, err := EncodeAccessSummary(w.sumBuf[:0], s)
	w.sumBuf = e.body[:0]
	if err != nil {
		w.fail(err)
		return
	}
	w.EncodedAccessSummary(e)
}

// EncodedSummary is an AccessSummary encoded as its record's body
// (EncodeAccessSummary): a recorder that builds the summaries while it
// records keeps them so until it writes them, in a fraction of the
// memory.
type EncodedSummary struct {
	tag  byte
	body []byte
}

// Body is the record's body, which EncodeAccessSummary appended to its
// dst (for reuse).
func (e EncodedSummary) Body() []byte { return e.body }

// Clone returns a copy of e that owns its body, at its exact size.
func (e EncodedSummary) Clone() EncodedSummary {
	return EncodedSummary{tag: e.tag, body: append([]byte(nil), e.body...)}
}

// EncodeAccessSummary checks s and appends its record's body to dst.
func EncodeAccessSummary(dst []byte, s *AccessSummary) (EncodedSummary, error) {
	e := EncodedSummary{tag: tagAccessSummary, body: dst}
	if s.End < s.Start {
		return e, fmt.Errorf("tracefile: AccessSummary from %d to %d: %w", s.Start, s.End, ErrInvalid)
	}
	for i := range s.Pages {
		p := &s.Pages[i]
		if i > 0 && p.PN <= s.Pages[i-1].PN {
			return e, fmt.Errorf("tracefile: AccessSummary pages out of order: %w", ErrInvalid)
		}
		for _, bs := range []*ByteSet{&p.Read, &p.Written, &p.Exec} {
			if bs.Full&^bs.Lines != 0 || len(bs.Masks) != bits.OnesCount64(bs.Lines&^bs.Full) {
				return e, fmt.Errorf("tracefile: AccessSummary page %#x: inconsistent byte set: %w", p.PN, ErrInvalid)
			}
		}
	}
	if s.Pid < 0 {
		return e, fmt.Errorf("tracefile: AccessSummary of pid %d: %w", s.Pid, ErrInvalid)
	}
	if s.Pid != 0 {
		e.tag = tagProcessAccessSummary
		e.body = binary.AppendUvarint(e.body, uint64(s.Pid))
	}
	e.body = AppendAccessSummary(e.body, s)
	return e, nil
}

// EncodedAccessSummary appends an encoded summary as a record, as
// AccessSummary does.
func (w *Writer) EncodedAccessSummary(e EncodedSummary) {
	est := len(e.body) + 16
	if w.cur.flags&flagSummaries == 0 || (len(w.buf) > 0 && len(w.buf)+est > MaxChunkLen) {
		w.cut()
		w.cur.flags |= flagSummaries
	}
	m, ok := w.begin(e.tag, est)
	if !ok {
		return
	}
	w.buf = append(w.buf, e.body...)
	w.end(m)
	if len(w.buf) == 0 {
		// end cut the chunk: the next summary starts a flagged one.
		w.cur.flags |= flagSummaries
	}
}

// HoldsSummaries reports whether the chunk holds AccessSummary records.
func (c *ChunkInfo) HoldsSummaries() bool { return c.hdr.flags&flagSummaries != 0 }

// HasAccessSummaries reports whether the trace holds access summaries.
func (r *Reader) HasAccessSummaries() bool {
	for i := range r.chunks {
		if r.chunks[i].HoldsSummaries() {
			return true
		}
	}
	return false
}

// AccessSummaries returns the trace's access summaries, in the order
// they were written (nil when it has none). A damaged one is a
// *FormatError giving the chunk and the record's payload offset.
func (r *Reader) AccessSummaries() ([]AccessSummary, error) {
	var out []AccessSummary
	var it *RecordIter
	for i := range r.chunks {
		ci := &r.chunks[i]
		if !ci.HoldsSummaries() {
			continue
		}
		if it == nil {
			it = r.Records(i)
		} else {
			it.Reset(i)
		}
		for {
			rec, err := it.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			if rec.Kind != KindUnknown || (rec.Opaque.Tag != tagAccessSummary && rec.Opaque.Tag != tagProcessAccessSummary) {
				return nil, &FormatError{Off: ci.Offset, Chunk: ci.Index, InChunk: rec.Off,
					Msg: fmt.Sprintf("a %s record in a chunk of access summaries", rec.Kind), Err: ErrCorrupt}
			}
			// The body starts after the tag and its length.
			body := rec.Off + 1 + int64(uvarintLen(uint64(len(rec.Opaque.Bytes))))
			b, pid := rec.Opaque.Bytes, uint64(0)
			if rec.Opaque.Tag == tagProcessAccessSummary {
				var k int
				pid, k = binary.Uvarint(b)
				if k <= 0 || pid == 0 || pid > 1<<31-1 {
					return nil, &FormatError{Off: ci.Offset, Chunk: ci.Index, InChunk: body,
						Msg: "access summary: bad pid", Err: ErrCorrupt}
				}
				b, body = b[k:], body+int64(k)
			}
			s, k, err := DecodeAccessSummary(b)
			if err != nil {
				return nil, &FormatError{Off: ci.Offset, Chunk: ci.Index, InChunk: body + int64(k),
					Msg: "access summary: " + err.Error(), Err: ErrCorrupt}
			}
			s.Pid = int(pid)
			out = append(out, s)
		}
	}
	return out, nil
}

// errSummary is the cause DecodeAccessSummary reports.
var errSummary = errors.New("bad access summary")

// DecodeAccessSummary decodes the body of an AccessSummary record. On
// error, off is the offset in b of the field that is wrong.
func DecodeAccessSummary(b []byte) (s AccessSummary, off int, err error) {
	p := 0
	fail := func(msg string) (AccessSummary, int, error) {
		return AccessSummary{}, p, fmt.Errorf("%s: %w", msg, errSummary)
	}
	uv := func() (uint64, bool) {
		v, k := binary.Uvarint(b[p:])
		if k <= 0 {
			return 0, false
		}
		p += k
		return v, true
	}
	var ok bool
	var n uint64
	if s.Start, ok = uv(); !ok {
		return fail("start")
	}
	if n, ok = uv(); !ok || s.Start+n < s.Start {
		return fail("length")
	}
	s.End = s.Start + n
	if n, ok = uv(); !ok || n > uint64(len(b)-p)/2 {
		return fail("unmapped count")
	}
	s.Unmapped = make([]PageRange, 0, n)
	for i := uint64(0); i < n; i++ {
		lo, ok1 := uv()
		l, ok2 := uv()
		if !ok1 || !ok2 || lo+l < lo {
			return fail("unmapped range")
		}
		s.Unmapped = append(s.Unmapped, PageRange{lo, lo + l})
	}
	if n, ok = uv(); !ok || n > uint64(len(b)-p)/7 {
		return fail("page count")
	}
	s.Pages = make([]PageAccess, n)
	var pn uint64
	for i := range s.Pages {
		d, ok := uv()
		if !ok || (i > 0 && d == 0) || pn+d < pn {
			return fail("page number")
		}
		pn += d
		pg := &s.Pages[i]
		pg.PN = pn
		for _, bs := range []*ByteSet{&pg.Read, &pg.Written, &pg.Exec} {
			at := p
			l, ok1 := uv()
			f, ok2 := uv()
			if !ok1 || !ok2 || f&^l != 0 {
				p = at
				return fail("byte set lines")
			}
			bs.Lines, bs.Full = l, f
			k := bits.OnesCount64(l &^ f)
			if len(b)-p < 8*k {
				return fail("byte set masks")
			}
			if k > 0 {
				bs.Masks = make([]uint64, k)
				for j := range bs.Masks {
					m := binary.LittleEndian.Uint64(b[p:])
					if m == 0 || m == ^uint64(0) {
						return fail("byte set mask")
					}
					bs.Masks[j] = m
					p += 8
				}
			}
		}
	}
	if p != len(b) {
		return fail("trailing bytes")
	}
	return s, 0, nil
}
