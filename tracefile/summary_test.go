package tracefile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func randByteSet(rng *rand.Rand) ByteSet {
	var masks [64]uint64
	for i := range masks {
		switch rng.IntN(4) {
		case 1:
			masks[i] = ^uint64(0)
		case 2:
			masks[i] = rng.Uint64() | 1
		}
	}
	return MakeByteSet(&masks)
}

func randSummaries(rng *rand.Rand, n int) []AccessSummary {
	var out []AccessSummary
	var pos uint64
	for i := 0; i < n; i++ {
		s := AccessSummary{Start: pos, End: pos + uint64(rng.IntN(1000))}
		if i%3 == 2 {
			// Another process of a tree (ProcessAccessSummary).
			s.Pid = 1000 + rng.IntN(1<<20)
		}
		pos = s.End
		for j := rng.IntN(3); j > 0; j-- {
			lo := rng.Uint64() >> 20
			s.Unmapped = append(s.Unmapped, PageRange{lo, lo + uint64(rng.IntN(100))})
		}
		pn := uint64(rng.IntN(1 << 30))
		for j := rng.IntN(20); j > 0; j-- {
			s.Pages = append(s.Pages, PageAccess{PN: pn, Read: randByteSet(rng), Written: randByteSet(rng), Exec: randByteSet(rng)})
			pn += 1 + uint64(rng.IntN(1000))
		}
		out = append(out, s)
	}
	return out
}

// summaryTrace writes the records of a small trace, then summaries.
func summaryTrace(t *testing.T, sums []AccessSummary) ([]byte, []Record) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	recs := randomTrace(rng, 60)
	var f memFile
	w, err := NewWriter(&f, testHeader(), Options{ChunkSize: 400, MaxChunkSize: 2000})
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		w.Append(&recs[i])
	}
	for i := range sums {
		w.AccessSummary(&sums[i])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return f.Bytes(), recs
}

// TestAccessSummaryRoundTrip writes summaries after a trace's records and
// reads them back; the records read as before (the summaries' chunks
// hold only summaries, which a reader that does not know them skips).
func TestAccessSummaryRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	want := randSummaries(rng, 40)
	data, recs := summaryTrace(t, want)
	r, err := NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if r.Truncated() {
		t.Fatalf("truncated: %v", r.TailError())
	}
	got, err := r.AccessSummaries()
	if err != nil {
		t.Fatal(err)
	}
	norm := func(ss []AccessSummary) {
		for i := range ss {
			if len(ss[i].Unmapped) == 0 {
				ss[i].Unmapped = nil
			}
			if len(ss[i].Pages) == 0 {
				ss[i].Pages = nil
			}
		}
	}
	norm(got)
	norm(want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("summaries differ:\n got %+v\nwant %+v", got, want)
	}
	flagged := 0
	for _, c := range r.Chunks() {
		if c.HoldsSummaries() {
			flagged++
		}
	}
	if flagged < 2 {
		t.Fatalf("%d chunks of summaries: the test wants several", flagged)
	}
	// The other records are all there, and the summaries come after them
	// as records of a reserved tag.
	all, err := readAll(r)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, rec := range all {
		if rec.Kind == KindUnknown && (rec.Opaque.Tag == tagAccessSummary || rec.Opaque.Tag == tagProcessAccessSummary) {
			n++
			continue
		}
		if n > 0 {
			t.Fatalf("a %s record after the summaries", rec.Kind)
		}
	}
	if n != len(want) || len(all)-n != len(recs) {
		t.Fatalf("%d summaries and %d records, want %d and %d", n, len(all)-n, len(want), len(recs))
	}
	// The set's accessor gives each line's bytes.
	for _, s := range got {
		for _, p := range s.Pages {
			for i := 0; i < 64; i++ {
				m := p.Written.Line(i)
				if (m != 0) != (p.Written.Lines&(1<<i) != 0) {
					t.Fatalf("Line(%d) = %#x with Lines %#x", i, m, p.Written.Lines)
				}
			}
		}
	}
}

func TestAccessSummaryWriterChecks(t *testing.T) {
	var f memFile
	w, err := NewWriter(&f, testHeader(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.AccessSummary(&AccessSummary{Start: 10, End: 20, Pages: []PageAccess{{PN: 5}, {PN: 5}}})
	if err := w.Close(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("pages out of order: %v, want ErrInvalid", err)
	}
	f = memFile{}
	if w, err = NewWriter(&f, testHeader(), Options{}); err != nil {
		t.Fatal(err)
	}
	w.AccessSummary(&AccessSummary{Pid: -1, Start: 10, End: 20})
	if err := w.Close(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("negative pid: %v, want ErrInvalid", err)
	}
}

// TestProcessAccessSummaryPid checks that a ProcessAccessSummary with a
// pid of 0 is refused with the offset of the pid.
func TestProcessAccessSummaryPid(t *testing.T) {
	var f memFile
	w, err := NewWriter(&f, testHeader(), Options{NoCompression: true})
	if err != nil {
		t.Fatal(err)
	}
	w.Exit(&Exit{Kind: ExitExited, Position: 100})
	w.AccessSummary(&AccessSummary{Pid: 77, Start: 0, End: 100})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	d := f.Bytes()
	r, err := NewReader(bytes.NewReader(d), int64(len(d)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.AccessSummaries()
	if err != nil || len(got) != 1 || got[0].Pid != 77 || got[0].End != 100 {
		t.Fatalf("read back %+v %v", got, err)
	}
	var ci ChunkInfo
	for _, c := range r.Chunks() {
		if c.HoldsSummaries() {
			ci = c
		}
	}
	// The payload is tag 0x0f, length, pid 77: make the pid 0.
	payload := d[ci.Offset+int64(chunkHeaderLen):]
	if payload[0] != tagProcessAccessSummary || payload[2] != 77 {
		t.Fatalf("payload % x", payload[:4])
	}
	payload[2] = 0
	fixPayloadCRC(t, d, ci)
	r, err = NewReader(bytes.NewReader(d), int64(len(d)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.AccessSummaries()
	fe := checkFormatError(t, "pid 0", err, len(d))
	if fe.InChunk != 2 || !strings.Contains(err.Error(), "pid") {
		t.Fatalf("pid 0: %v (offset %d), want the pid's offset 2", err, fe.InChunk)
	}
}

// TestAccessSummaryCorrupt damages summary bodies: every damage is a
// *FormatError that names the chunk and a payload offset inside the
// record, never a panic.
func TestAccessSummaryCorrupt(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	sums := randSummaries(rng, 3)
	good := AppendAccessSummary(nil, &sums[1])
	if _, _, err := DecodeAccessSummary(good); err != nil {
		t.Fatal(err)
	}
	// Every truncation of a body fails, at an offset within it.
	for n := 0; n < len(good); n++ {
		_, off, err := DecodeAccessSummary(good[:n])
		if err == nil {
			t.Fatalf("a body cut to %d of %d bytes decodes", n, len(good))
		}
		if off < 0 || off > n {
			t.Fatalf("cut to %d: offset %d outside the body", n, off)
		}
	}
	// A full line listed as partial, a partial mask of zero, pages out
	// of order, a full line outside the lines.
	bad := [][]byte{
		binary.AppendUvarint(binary.AppendUvarint(nil, 0), 1), // no unmapped count
		{0, 1, 0, 1, 0, 1, 2, 0, 0, 0, 0},                     // Full not in Lines
		append([]byte{0, 1, 0, 1, 0, 1, 0, 0, 0, 0}, 0, 0, 0, 0, 0, 0, 0, 0, 0),
		{0, 1, 0, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, // second page number delta 0
	}
	for i, b := range bad {
		if _, _, err := DecodeAccessSummary(b); err == nil {
			t.Errorf("bad body %d (% x) decodes", i, b)
		}
	}
	// In a file: flip bytes of the summary chunks' payloads (stored
	// uncompressed) and fix their checksums, so that the damage reaches
	// the decoder.
	var f memFile
	w, err := NewWriter(&f, testHeader(), Options{NoCompression: true})
	if err != nil {
		t.Fatal(err)
	}
	w.Exit(&Exit{Kind: ExitExited, Position: 100})
	for i := range sums {
		w.AccessSummary(&sums[i])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := f.Bytes()
	r, err := NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var ci ChunkInfo
	for _, c := range r.Chunks() {
		if c.HoldsSummaries() {
			ci = c
		}
	}
	hl := int64(chunkHeaderLen)
	failures := 0
	for k := 0; k < 200; k++ {
		d := append([]byte(nil), data...)
		at := ci.Offset + hl + 2 + rng.Int64N(ci.Size-hl-2)
		d[at] ^= byte(1 + rng.IntN(255))
		// Recompute the payload CRC in the header and in the index's
		// copy, so the damage is only in the body.
		fixPayloadCRC(t, d, ci)
		r, err := NewReader(bytes.NewReader(d), int64(len(d)))
		if err != nil {
			continue
		}
		got, err := r.AccessSummaries()
		if err == nil {
			if len(got) != len(sums) {
				t.Fatalf("flip at %d: %d summaries, want %d", at, len(got), len(sums))
			}
			continue
		}
		failures++
		fe := checkFormatError(t, "summary flip", err, len(d))
		if fe.Chunk != ci.Index || fe.InChunk < 0 || fe.InChunk >= int64(ci.Len) {
			t.Fatalf("flip at %d: error %v: want chunk %d and an offset in its %d payload bytes", at, err, ci.Index, ci.Len)
		}
	}
	if failures == 0 {
		t.Fatal("no flip was noticed: the test checks nothing")
	}
}

// fixPayloadCRC recomputes chunk ci's payload checksum in its header, in
// the index's copy of it, and the index and footer checksums.
func fixPayloadCRC(t *testing.T, d []byte, ci ChunkInfo) {
	t.Helper()
	hl := int64(chunkHeaderLen)
	payload := d[ci.Offset+hl : ci.Offset+ci.Size]
	hdr := d[ci.Offset : ci.Offset+hl]
	binary.LittleEndian.PutUint32(hdr[20:], crc(payload))
	binary.LittleEndian.PutUint32(hdr[hl-4:], crc(hdr[:hl-4]))
	foot := d[len(d)-footerLen:]
	ioff, ilen := int64(binary.LittleEndian.Uint64(foot)), int64(binary.LittleEndian.Uint64(foot[8:]))
	idx := d[ioff : ioff+ilen]
	n := int64(binary.LittleEndian.Uint32(idx[4:]))
	for i := int64(0); i < n; i++ {
		e := idx[8+i*(8+hl):]
		if int64(binary.LittleEndian.Uint64(e)) == ci.Offset {
			copy(e[8:8+hl], hdr)
		}
	}
	binary.LittleEndian.PutUint32(foot[16:], crc(idx))
	binary.LittleEndian.PutUint32(foot[20:], crc(foot[:20]))
}
