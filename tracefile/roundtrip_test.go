package tracefile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"
)

var allKinds = []Kind{KindMemRead, KindKeyFrame, KindThreadStart, KindThreadExit, KindCodeBytes,
	KindSyscall, KindNonDet, KindSignal, KindMmap, KindMunmap, KindMprotect, KindModule,
	KindCheckpoint, KindExit, KindOpaque, KindUnknown}

func TestRoundTripEveryKind(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range allKinds {
		for _, noComp := range []bool{false, true} {
			var recs []Record
			for range 50 {
				recs = append(recs, randRecord(rng, k))
			}
			// Edge values.
			switch k {
			case KindMemRead:
				recs = append(recs,
					Record{Kind: k, MemRead: MemRead{ReadDelta: 14, Value: 0xff, Size: 1}},
					Record{Kind: k, MemRead: MemRead{ReadDelta: 15, Value: 0xffff, Size: 2}},
					Record{Kind: k, MemRead: MemRead{ReadDelta: ^uint64(0), Value: ^uint64(0), Size: 8}},
					Record{Kind: k, MemRead: MemRead{ReadDelta: 0, Value: 0, Size: 3}})
			case KindKeyFrame:
				recs = append(recs, Record{Kind: k, KeyFrame: KeyFrame{Kind: 15, Tid: -1, Seq: ^uint64(0), Position: 0}})
			case KindSyscall:
				recs = append(recs, Record{Kind: k, Syscall: Syscall{Tid: 1, Nr: 60, Result: -38,
					Writes: []MemRange{{Addr: 1, Bytes: bytes.Repeat([]byte{7}, 70000)}}}})
			}
			path := writeTrace(t, Options{NoCompression: noComp}, recs)
			r, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readAll(r)
			if err != nil {
				t.Fatalf("%v: %v", k, err)
			}
			compareRecords(t, got, recs)
			if r.Truncated() {
				t.Errorf("%v: complete trace reported truncated: %v", k, r.TailError())
			}
			if !reflect.DeepEqual(r.Header().Args, testHeader().Args) {
				t.Errorf("header args %q", r.Header().Args)
			}
			r.Close()
		}
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	for _, h := range []Header{{}, testHeader()} {
		var f memFile
		w, err := NewWriter(&f, h, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(bytes.NewReader(f.Bytes()), int64(f.Len()))
		if err != nil {
			t.Fatal(err)
		}
		got := r.Header()
		if !got.Created.Equal(h.Created) {
			t.Errorf("Created %v, want %v", got.Created, h.Created)
		}
		got.Created = h.Created
		if !reflect.DeepEqual(got, h) {
			t.Errorf("header\n got %+v\nwant %+v", got, h)
		}
		if maj, min := r.Version(); maj != VersionMajor || min != VersionMinor {
			t.Errorf("version %d.%d", maj, min)
		}
		if len(r.Chunks()) != 0 || r.Truncated() || r.ChunkAt(0) != -1 {
			t.Errorf("empty trace: %d chunks, truncated %v", len(r.Chunks()), r.Truncated())
		}
	}
}

// traceGen streams a plausible recording: mostly memory reads and key
// frames with increasing positions, a checkpoint every so often.
type traceGen struct {
	rng      *rand.Rand
	pos, seq uint64
}

func newTraceGen(seed uint64) *traceGen {
	return &traceGen{rng: rand.New(rand.NewPCG(seed, 7))}
}

func (g *traceGen) next() Record {
	rng := g.rng
	switch x := rng.IntN(100); {
	case x < 60:
		return randRecord(rng, KindMemRead)
	case x < 80:
		g.pos += uint64(rng.IntN(1000))
		g.seq++
		return Record{Kind: KindKeyFrame, KeyFrame: KeyFrame{Kind: KeyFrameKind(1 + rng.IntN(8)), Tid: 100 + rng.IntN(3), Seq: g.seq, Position: g.pos}}
	case x < 83:
		g.pos += uint64(rng.IntN(1000))
		g.seq++
		c := randRecord(rng, KindCheckpoint)
		c.Checkpoint.Position, c.Checkpoint.Seq = g.pos, g.seq
		return c
	}
	k := allKinds[rng.IntN(len(allKinds))]
	if k == KindExit || k == KindCheckpoint || k == KindKeyFrame {
		k = KindSyscall
	}
	return randRecord(rng, k)
}

// randomTrace returns n records of a traceGen and an Exit.
func randomTrace(rng *rand.Rand, n int) []Record {
	g := &traceGen{rng: rng}
	var recs []Record
	for len(recs) < n {
		recs = append(recs, g.next())
	}
	recs = append(recs, Record{Kind: KindExit, Exit: Exit{Kind: ExitExited, Code: 3, Position: g.pos + 5}})
	return recs
}

func TestRandomRecords(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 99))
		var recs []Record
		if seed%2 == 0 {
			recs = randomTrace(rng, 1+rng.IntN(3000))
		} else {
			// Any kind, any values, in any order.
			for range rng.IntN(2000) {
				recs = append(recs, randRecord(rng, allKinds[rng.IntN(len(allKinds))]))
			}
		}
		opts := Options{ChunkSize: 16 + rng.IntN(8192), NoCompression: rng.IntN(3) == 0, Buffers: 2 + rng.IntN(3)}
		if rng.IntN(2) == 0 {
			opts.MaxChunkSize = opts.ChunkSize + rng.IntN(20000)
		}
		t.Logf("seed %d", seed)
		roundTrip(t, opts, recs)
	}
}

// roundTrip writes recs, reads them back and compares them, and checks
// the chunk headers; it returns the file and its reader.
func roundTrip(t *testing.T, opts Options, recs []Record) ([]byte, *Reader) {
	t.Helper()
	data := writeTraceBytes(t, opts, recs)
	r, err := NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAll(r)
	if err != nil {
		t.Fatal(err)
	}
	compareRecords(t, got, recs)
	checkChunks(t, r)
	return data, r
}

// checkChunks checks the chunk headers against the records.
func checkChunks(t *testing.T, r *Reader) {
	t.Helper()
	total := 0
	for i, c := range r.Chunks() {
		it := r.Records(i)
		n, ckpt, sys, kf, ts := 0, 0, 0, 0, 0
		for {
			rec, err := it.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				if (rec.Kind == KindCheckpoint) != c.BeginsWithCheckpoint {
					t.Errorf("chunk %d: first record %v, BeginsWithCheckpoint %v", i, rec.Kind, c.BeginsWithCheckpoint)
				}
				if rec.Kind == KindCheckpoint && (rec.Checkpoint.Position != c.FirstPosition || rec.Checkpoint.Seq != c.FirstSeq) {
					t.Errorf("chunk %d: first position %d/%d, checkpoint at %d/%d", i, c.FirstPosition, c.FirstSeq, rec.Checkpoint.Position, rec.Checkpoint.Seq)
				}
			}
			n++
			switch rec.Kind {
			case KindCheckpoint:
				ckpt++
			case KindSyscall:
				sys++
			case KindKeyFrame:
				kf++
			case KindThreadStart:
				ts++
			}
		}
		if n != c.Records || ckpt != c.Checkpoints || sys != c.Syscalls || kf != c.KeyFrames || ts != c.ThreadStarts {
			t.Errorf("chunk %d: counts %d/%d/%d/%d/%d, header %+v", i, n, ckpt, sys, kf, ts, c)
		}
		total += n
	}
	if s := r.Summary(); s.Records != total {
		t.Errorf("summary has %d records, chunks %d", s.Records, total)
	}
}

// TestChunksAlignToCheckpoints: with checkpoints more frequent than the
// chunk size and no hard cuts, every chunk but the first begins with a
// checkpoint and holds at least ChunkSize bytes of records.
func TestChunksAlignToCheckpoints(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	recs := randomTrace(rng, 20000)
	const target = 4096
	data := writeTraceBytes(t, Options{ChunkSize: target, MaxChunkSize: 1 << 20}, recs)
	r, err := NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	cs := r.Chunks()
	if len(cs) < 10 {
		t.Fatalf("only %d chunks", len(cs))
	}
	for i, c := range cs {
		if i > 0 && !c.BeginsWithCheckpoint {
			t.Errorf("chunk %d does not begin with a checkpoint", i)
		}
		if i < len(cs)-1 && c.Len < target {
			t.Errorf("chunk %d: %d bytes, target %d", i, c.Len, target)
		}
	}
	checkChunks(t, r)

	// ChunkAt: the last chunk whose checkpoint is at or before the position.
	for i, c := range cs {
		if i == 0 {
			continue
		}
		if got := r.ChunkAt(c.FirstPosition); cs[got].FirstPosition != c.FirstPosition {
			t.Errorf("ChunkAt(%d) = %d (at %d)", c.FirstPosition, got, cs[got].FirstPosition)
		}
		if c.FirstPosition > cs[i-1].FirstPosition {
			if got := r.ChunkAt(c.FirstPosition - 1); got != i-1 && cs[got].FirstPosition != cs[i-1].FirstPosition {
				t.Errorf("ChunkAt(%d) = %d, want %d", c.FirstPosition-1, got, i-1)
			}
		}
	}
	if got := r.ChunkAt(0); got != 0 {
		t.Errorf("ChunkAt(0) = %d", got)
	}
	if got := r.ChunkAt(^uint64(0)); got != len(cs)-1 {
		t.Errorf("ChunkAt(max) = %d, want %d", got, len(cs)-1)
	}

	s := r.Summary()
	exit := recs[len(recs)-1].Exit
	if !s.HasExit || s.Exit != exit || s.Instructions != exit.Position || s.Truncated {
		t.Errorf("summary %+v", s)
	}
	if s.FileSize != int64(len(data)) || s.Chunks != len(cs) || s.BitsPerInstruction != float64(len(data))*8/float64(exit.Position) {
		t.Errorf("summary %+v", s)
	}
	ckpts := 0
	for _, rec := range recs {
		if rec.Kind == KindCheckpoint {
			ckpts++
		}
	}
	if s.Checkpoints != ckpts {
		t.Errorf("summary: %d checkpoints, want %d", s.Checkpoints, ckpts)
	}
}

// TestFlushMidChunk: a Flush ends a chunk without a checkpoint; the key
// frames after it still decode to the right positions.
func TestFlushMidChunk(t *testing.T) {
	var f memFile
	w, err := NewWriter(&f, Header{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.KeyFrame(KeyFrameSyscall, 7, 10, 1000)
	w.MemRead(3, 42, 4)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.Chunks != 1 || st.Records != 2 || st.FileBytes != int64(f.Len()) {
		t.Errorf("stats %+v, file %d bytes", st, f.Len())
	}
	w.KeyFrame(KeyFrameSyscall, 7, 11, 1500)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil { // nothing new: no empty chunk
		t.Fatal(err)
	}
	w.Checkpoint(&Checkpoint{Position: 2000, Seq: 12, CurrentTid: 7, Threads: []ThreadState{{Tid: 7, ICount: 2000, Regs: []byte{1, 2}}}})
	w.KeyFrame(KeyFrameThreadSwitch, 8, 13, 2100)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := w.Flush(); !errors.Is(err, ErrClosed) {
		t.Errorf("Flush after Close: %v", err)
	}
	w.MemRead(1, 2, 3) // dropped, no panic
	r, err := NewReader(bytes.NewReader(f.Bytes()), int64(f.Len()))
	if err != nil {
		t.Fatal(err)
	}
	cs := r.Chunks()
	if len(cs) != 3 {
		t.Fatalf("%d chunks, want 3", len(cs))
	}
	if cs[1].BeginsWithCheckpoint || cs[1].FirstPosition != 1000 || cs[1].FirstSeq != 10 || cs[1].LastPosition != 1500 {
		t.Errorf("chunk 1: %+v", cs[1])
	}
	if !cs[2].BeginsWithCheckpoint || cs[2].FirstPosition != 2000 || cs[2].LastPosition != 2100 {
		t.Errorf("chunk 2: %+v", cs[2])
	}
	it := r.Records(1)
	rec, err := it.Next()
	if err != nil || rec.Kind != KindKeyFrame || rec.KeyFrame.Position != 1500 || rec.KeyFrame.Seq != 11 {
		t.Errorf("chunk 1 record: %+v, %v", rec, err)
	}
	if _, err := it.Next(); err != io.EOF {
		t.Errorf("after the last record: %v", err)
	}
	if got := r.ChunkAt(1800); got != 0 {
		t.Errorf("ChunkAt(1800) = %d, want 0 (chunk 1 has no checkpoint)", got)
	}
	if got := r.ChunkAt(2050); got != 2 {
		t.Errorf("ChunkAt(2050) = %d, want 2", got)
	}
	s := r.Summary()
	if s.HasExit || s.Instructions != 2100 || s.Checkpoints != 1 || s.KeyFrames != 3 {
		t.Errorf("summary %+v", s)
	}
	if _, err := r.Records(3).Next(); err == nil {
		t.Error("Records(3) of a 3-chunk trace: no error")
	}
}

// TestWriterInvalid: a bad record makes the writer fail; the file then
// reads as a trace truncated before the failure.
func TestWriterInvalid(t *testing.T) {
	for _, bad := range []func(w *Writer){
		func(w *Writer) { w.MemRead(0, 0, 0) },
		func(w *Writer) { w.MemRead(0, 0, 9) },
		func(w *Writer) { w.KeyFrame(16, 1, 1, 1) },
		func(w *Writer) { w.Append(&Record{Kind: KindUnknown, Opaque: Opaque{Tag: 0x01}}) },
		func(w *Writer) { w.Append(&Record{Kind: KindInvalid}) },
	} {
		path := t.TempDir() + "/t.ttd"
		w, err := Create(path, Header{}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		w.MemRead(1, 2, 1)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		bad(w)
		if !errors.Is(w.Err(), ErrInvalid) {
			t.Errorf("Err() = %v", w.Err())
		}
		w.MemRead(1, 2, 1)
		if err := w.Flush(); !errors.Is(err, ErrInvalid) {
			t.Errorf("Flush: %v", err)
		}
		if err := w.Close(); !errors.Is(err, ErrInvalid) {
			t.Errorf("Close: %v", err)
		}
		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Truncated() || len(r.Chunks()) != 1 || r.Summary().Records != 1 {
			t.Errorf("truncated %v, %d chunks, summary %+v", r.Truncated(), len(r.Chunks()), r.Summary())
		}
		r.Close()
	}
}

// TestHugeRecords: records far larger than the chunk size go in a chunk
// of their own making, and the buffers that grew for them are released.
func TestHugeRecords(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<17) // 2 MiB
	recs := []Record{
		{Kind: KindMemRead, MemRead: MemRead{ReadDelta: 1, Value: 1, Size: 1}},
		{Kind: KindModule, Module: Module{Path: []byte("/bin/x"), Embedded: big}},
		{Kind: KindCodeBytes, CodeBytes: CodeBytes{Addr: 0x1000, Bytes: big[:1<<20]}},
		{Kind: KindMemRead, MemRead: MemRead{ReadDelta: 1, Value: 1, Size: 1}},
	}
	data, _ := roundTrip(t, Options{ChunkSize: 1024}, recs)
	if len(data) > 1<<20 {
		t.Errorf("%d bytes: repetitive data not compressed", len(data))
	}
}

// TestMemoryBounded: recording far more than the buffers hold keeps the
// heap small.
func TestMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 256 MiB of records")
	}
	runtime.GC()
	w, err := NewWriter(io.Discard, Header{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ms runtime.MemStats
	peak := uint64(0)
	rng := rand.New(rand.NewPCG(1, 1))
	pos := uint64(0)
	for i := range 1 << 25 {
		w.MemRead(uint64(i&63), rng.Uint64(), 8)
		if i%4096 == 0 {
			pos += 10000
			w.KeyFrame(KeyFrameSyscall, 1, uint64(i), pos)
			if w.CheckpointDue() {
				w.Checkpoint(&Checkpoint{Position: pos, Seq: uint64(i), Threads: []ThreadState{{Tid: 1, Regs: make([]byte, 512)}}})
			}
		}
		if i%(1<<21) == 0 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st := w.Stats()
	t.Logf("%d chunks, %d MiB uncompressed, peak live heap %d MiB", st.Chunks, st.Uncompressed>>20, peak>>20)
	if peak > 32<<20 {
		t.Errorf("peak heap %d MiB", peak>>20)
	}
}

// TestChunkCompressedWhileFilling: a chunk of many parts (partSize) is
// compressed as it fills, into one frame of several blocks without its
// content size, and reads back record for record.
func TestChunkCompressedWhileFilling(t *testing.T) {
	var recs []Record // compressible, as real traces are
	for i := range 200000 {
		if i%40 == 0 {
			recs = append(recs, Record{Kind: KindKeyFrame, KeyFrame: KeyFrame{Kind: 1, Tid: 1, Seq: uint64(i), Position: uint64(i) * 100}})
			continue
		}
		recs = append(recs, Record{Kind: KindMemRead, MemRead: MemRead{ReadDelta: uint64(i % 7), Value: uint64(i % 1000), Size: 4}})
	}
	data, r := roundTrip(t, Options{ChunkSize: 8 << 20, MaxChunkSize: 16 << 20}, recs)
	streamed := 0
	for _, c := range r.Chunks() {
		if c.Len < 4*partSize {
			continue
		}
		p := data[c.Offset+chunkHeaderLen:]
		if !bytes.HasPrefix(p, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
			t.Fatalf("chunk %d of %d bytes is not compressed", c.Index, c.Len)
		}
		if p[4]&0x20 == 0 { // Single_Segment_flag clear: written in parts
			streamed++
		}
	}
	if streamed == 0 {
		t.Fatalf("no chunk was compressed in parts (%d chunks)", len(r.Chunks()))
	}
}

// TestNoReadsMajorVersion checks that a trace without reads is major
// version 2 (which readers of version 1 refuse), that both majors read
// back, and that a file whose major version and reads parameter
// disagree is refused with the header's offset.
func TestNoReadsMajorVersion(t *testing.T) {
	write := func(params map[string]string) []byte {
		var f memFile
		w, err := NewWriter(&f, Header{Params: params}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return f.Bytes()
	}
	for _, c := range []struct {
		params       map[string]string
		major, minor int
	}{{nil, VersionMajor, VersionMinor}, {map[string]string{"reads": "none"}, VersionMajorNoReads, VersionMinorNoReads}} {
		b := write(c.params)
		r, err := NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		if maj, min := r.Version(); maj != c.major || min != c.minor {
			t.Errorf("params %v: version %d.%d, want %d.%d", c.params, maj, min, c.major, c.minor)
		}
	}
	// The other major version with each header: the fixed header's
	// checksum made anew.
	for _, c := range []struct {
		params map[string]string
		major  uint16
	}{{nil, VersionMajorNoReads}, {map[string]string{"reads": "none"}, VersionMajor}} {
		b := write(c.params)
		binary.LittleEndian.PutUint16(b[8:], c.major)
		binary.LittleEndian.PutUint32(b[20:], crc(b[:20]))
		_, err := NewReader(bytes.NewReader(b), int64(len(b)))
		var fe *FormatError
		if !errors.Is(err, ErrVersion) || !errors.As(err, &fe) || fe.Off != 8 {
			t.Errorf("major %d with params %v: %v, want ErrVersion at offset 8", c.major, c.params, err)
		}
	}
}
