package tracefile

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// memFile is an in-memory io.Writer for traces.
type memFile struct{ bytes.Buffer }

func testHeader() Header {
	return Header{
		ProgramPath: "/bin/true",
		Args:        []string{"true", "--version", ""},
		Env:         []string{"HOME=/root", "LANG=C"},
		Cwd:         "/tmp",
		Created:     time.Unix(1700000000, 123456789),
		Recorder:    "ttd test",
		Params:      map[string]string{"cache.bits": "16", "empty": ""},
	}
}

// randBytes returns n random bytes, or nil for n == 0.
func randBytes(rng *rand.Rand, n int) []byte {
	if n == 0 {
		return nil
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// randU64 returns values of every magnitude, small ones most often.
func randU64(rng *rand.Rand) uint64 {
	switch rng.IntN(4) {
	case 0:
		return uint64(rng.IntN(16))
	case 1:
		return uint64(rng.IntN(1 << 14))
	case 2:
		return rng.Uint64() >> rng.IntN(64)
	}
	return rng.Uint64()
}

func randInt(rng *rand.Rand) int {
	if rng.IntN(8) == 0 {
		return int(rng.Uint64())
	}
	return rng.IntN(1<<22) - 5
}

func randRanges(rng *rand.Rand) []MemRange {
	n := rng.IntN(4)
	if n == 0 {
		return nil
	}
	rs := make([]MemRange, n)
	for i := range rs {
		rs[i] = MemRange{Addr: randU64(rng), Bytes: randBytes(rng, rng.IntN(300))}
	}
	return rs
}

func randSpans(rng *rand.Rand) []Span {
	var ss []Span
	for range rng.IntN(3) {
		ss = append(ss, Span{Addr: randU64(rng), Len: randU64(rng)})
	}
	return ss
}

// randRecord returns a random record of kind k (every field random).
func randRecord(rng *rand.Rand, k Kind) Record {
	r := Record{Kind: k}
	switch k {
	case KindMemRead:
		size := uint8(1 + rng.IntN(8))
		v := rng.Uint64()
		if size < 8 {
			v &= 1<<(8*size) - 1
		}
		r.MemRead = MemRead{ReadDelta: randU64(rng), Value: v, Size: size}
	case KindKeyFrame:
		r.KeyFrame = KeyFrame{Kind: KeyFrameKind(rng.IntN(16)), Tid: randInt(rng), Seq: randU64(rng), Position: randU64(rng)}
	case KindThreadStart:
		r.ThreadStart = ThreadStart{Tid: randInt(rng), ParentTid: randInt(rng)}
	case KindThreadExit:
		r.ThreadExit = ThreadExit{Tid: randInt(rng), Status: randInt(rng)}
	case KindCodeBytes:
		r.CodeBytes = CodeBytes{Addr: randU64(rng), Bytes: randBytes(rng, rng.IntN(200))}
	case KindSyscall:
		s := Syscall{Tid: randInt(rng), Nr: randInt(rng), Result: int64(rng.Uint64()), Writes: randRanges(rng), Predicted: randSpans(rng)}
		for i := range s.Args {
			s.Args[i] = randU64(rng)
		}
		r.Syscall = s
	case KindNonDet:
		var vs []uint64
		for range rng.IntN(5) {
			vs = append(vs, randU64(rng))
		}
		r.NonDet = NonDet{Tid: randInt(rng), Kind: NonDetKind(rng.Uint32()), Values: vs}
	case KindSignal:
		r.Signal = Signal{Tid: randInt(rng), Signo: randInt(rng), Code: randInt(rng), Addr: randU64(rng),
			FrameAddr: randU64(rng), Writes: randRanges(rng), Regs: randBytes(rng, rng.IntN(200)), Predicted: randSpans(rng)}
	case KindMmap:
		r.Mmap = Mmap{Addr: randU64(rng), Len: randU64(rng), Prot: randInt(rng), Flags: randInt(rng),
			Offset: randU64(rng), FileLen: randU64(rng), Path: randBytes(rng, rng.IntN(40)), Object: randU64(rng) * uint64(rng.IntN(2))}
	case KindMunmap:
		r.Munmap = Munmap{Addr: randU64(rng), Len: randU64(rng)}
	case KindMprotect:
		r.Mprotect = Mprotect{Addr: randU64(rng), Len: randU64(rng), Prot: randInt(rng)}
	case KindModule:
		r.Module = Module{Path: randBytes(rng, rng.IntN(40)), BuildID: randBytes(rng, rng.IntN(21)),
			LoadAddr: randU64(rng), Size: randU64(rng), Embedded: randBytes(rng, rng.IntN(3)*rng.IntN(1000))}
	case KindCheckpoint:
		c := Checkpoint{Position: randU64(rng), Seq: randU64(rng), CurrentTid: randInt(rng)}
		for range rng.IntN(4) {
			c.Threads = append(c.Threads, ThreadState{Tid: randInt(rng), ICount: randU64(rng), Regs: randBytes(rng, rng.IntN(600))})
		}
		r.Checkpoint = c
	case KindExit:
		r.Exit = Exit{Kind: ExitKind(rng.Uint32()), Code: randInt(rng), Signo: randInt(rng), FaultAddr: randU64(rng), Position: randU64(rng)}
	case KindOpaque:
		r.Opaque = Opaque{Tag: randU64(rng), Bytes: randBytes(rng, rng.IntN(100))}
	case KindUnknown:
		tags := []uint64{0x0e, 0x0f, 0x20, 0x55, 0x7f}
		r.Opaque = Opaque{Tag: tags[rng.IntN(len(tags))], Bytes: randBytes(rng, rng.IntN(100))}
	}
	return r
}

// nilIfEmpty normalises the empty slices a decoder returns.
func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return bytes.Clone(b)
}

func cloneRanges(rs []MemRange) []MemRange {
	if len(rs) == 0 {
		return nil
	}
	out := make([]MemRange, len(rs))
	for i, r := range rs {
		out[i] = MemRange{Addr: r.Addr, Bytes: nilIfEmpty(r.Bytes)}
	}
	return out
}

func cloneSpans(ss []Span) []Span {
	if len(ss) == 0 {
		return nil
	}
	return append([]Span(nil), ss...)
}

// canon returns a deep copy of r holding only the field its Kind names,
// with empty slices as nil, so two records compare with reflect.DeepEqual.
func canon(r *Record) Record {
	c := Record{Kind: r.Kind}
	switch r.Kind {
	case KindMemRead:
		c.MemRead = r.MemRead
	case KindKeyFrame:
		c.KeyFrame = r.KeyFrame
	case KindThreadStart:
		c.ThreadStart = r.ThreadStart
	case KindThreadExit:
		c.ThreadExit = r.ThreadExit
	case KindCodeBytes:
		c.CodeBytes = CodeBytes{Addr: r.CodeBytes.Addr, Bytes: nilIfEmpty(r.CodeBytes.Bytes)}
	case KindSyscall:
		c.Syscall = r.Syscall
		c.Syscall.Writes = cloneRanges(r.Syscall.Writes)
		c.Syscall.Predicted = cloneSpans(r.Syscall.Predicted)
	case KindNonDet:
		c.NonDet = r.NonDet
		c.NonDet.Values = nil
		if len(r.NonDet.Values) > 0 {
			c.NonDet.Values = append([]uint64(nil), r.NonDet.Values...)
		}
	case KindSignal:
		c.Signal = r.Signal
		c.Signal.Writes = cloneRanges(r.Signal.Writes)
		c.Signal.Regs = nilIfEmpty(r.Signal.Regs)
		c.Signal.Predicted = cloneSpans(r.Signal.Predicted)
	case KindMmap:
		c.Mmap = r.Mmap
		c.Mmap.Path = nilIfEmpty(r.Mmap.Path)
	case KindMunmap:
		c.Munmap = r.Munmap
	case KindMprotect:
		c.Mprotect = r.Mprotect
	case KindModule:
		c.Module = Module{Path: nilIfEmpty(r.Module.Path), BuildID: nilIfEmpty(r.Module.BuildID),
			LoadAddr: r.Module.LoadAddr, Size: r.Module.Size, Embedded: nilIfEmpty(r.Module.Embedded)}
	case KindCheckpoint:
		c.Checkpoint = r.Checkpoint
		c.Checkpoint.Threads = nil
		for _, t := range r.Checkpoint.Threads {
			c.Checkpoint.Threads = append(c.Checkpoint.Threads, ThreadState{Tid: t.Tid, ICount: t.ICount, Regs: nilIfEmpty(t.Regs)})
		}
	case KindExit:
		c.Exit = r.Exit
	case KindOpaque, KindUnknown:
		c.Opaque = Opaque{Tag: r.Opaque.Tag, Bytes: nilIfEmpty(r.Opaque.Bytes)}
	}
	return c
}

// writeTrace writes recs to a new trace file and returns its path.
func writeTrace(t testing.TB, opts Options, recs []Record) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.ttd")
	w, err := Create(path, testHeader(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		w.Append(&recs[i])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeTraceBytes is writeTrace into memory.
func writeTraceBytes(t testing.TB, opts Options, recs []Record) []byte {
	t.Helper()
	var f memFile
	w, err := NewWriter(&f, testHeader(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		w.Append(&recs[i])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return f.Bytes()
}

// readAll returns the canonical records of every chunk, stopping at the
// first error, which it returns.
func readAll(r *Reader) ([]Record, error) {
	var out []Record
	if len(r.Chunks()) == 0 {
		return nil, nil
	}
	it := r.RecordsFrom(0)
	for {
		rec, err := it.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		out = append(out, canon(rec))
	}
}

func compareRecords(t *testing.T, got, want []Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %d records, want %d", len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		w := canon(&want[i])
		if !reflect.DeepEqual(got[i], w) {
			t.Fatalf("record %d:\n got %+v\nwant %+v", i, got[i], w)
		}
	}
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
