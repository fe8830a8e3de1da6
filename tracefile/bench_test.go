package tracefile

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"syscall"
	"testing"
)

// BenchmarkMemRead appends unpredicted 8-byte reads: the recorder's hot
// path. Compression runs on the background goroutine.
func BenchmarkMemRead(b *testing.B) {
	w, err := NewWriter(io.Discard, Header{}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		w.MemRead(uint64(i&31), uint64(i)*0x9e3779b97f4a7c15>>20, 8)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkMemReadNoIO measures the append alone: the chunk is dropped
// whenever it is full (as after an error), so no compression competes.
func BenchmarkMemReadNoIO(b *testing.B) {
	w, err := NewWriter(io.Discard, Header{}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	w.closed = true // cut() now only resets the buffer
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		w.MemRead(uint64(i&31), uint64(i)*0x9e3779b97f4a7c15>>20, 8)
	}
}

func BenchmarkKeyFrame(b *testing.B) {
	w, err := NewWriter(io.Discard, Header{}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		w.KeyFrame(KeyFrameSyscall, 1000+i&3, uint64(i), uint64(i)*37)
	}
	w.Close()
}

// BenchmarkSyscall appends a read(2) of 64 bytes.
func BenchmarkSyscall(b *testing.B) {
	w, err := NewWriter(io.Discard, Header{}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	s := Syscall{Tid: 1000, Nr: 0, Args: [6]uint64{3, 0x7ffc0000, 64}, Result: 64,
		Writes: []MemRange{{Addr: 0x7ffc0000, Bytes: make([]byte, 64)}}}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		w.Syscall(&s)
	}
	w.Close()
}

// benchTrace is a recording-like stream of n records.
func benchTrace(b *testing.B, n int) ([]byte, []Record) {
	g := newTraceGen(1)
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = g.next()
	}
	return writeTraceBytes(b, Options{}, recs), recs
}

// BenchmarkWriteStream is the writer's end-to-end throughput on a
// recording-like stream, compression included.
func BenchmarkWriteStream(b *testing.B) {
	_, recs := benchTrace(b, 100000)
	size := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		var f memFile
		w, _ := NewWriter(&f, Header{}, Options{})
		for j := range recs {
			w.Append(&recs[j])
		}
		w.Close()
		if i == 0 {
			size = int(w.Stats().Uncompressed)
		}
	}
	b.SetBytes(int64(size))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
}

// BenchmarkDecodeRecords decodes an already decompressed payload.
func BenchmarkDecodeRecords(b *testing.B) {
	data, _ := benchTrace(b, 200000)
	r, err := NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		b.Fatal(err)
	}
	it := r.Records(0)
	if _, err := it.Next(); err != nil {
		b.Fatal(err)
	}
	payload := it.dec.data
	var d decoder
	var rec Record
	d.reset(payload, 0, 0)
	b.SetBytes(int64(len(payload)) / int64(r.Chunks()[0].Records))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := d.next(&rec); err != nil {
			d.reset(payload, 0, 0)
		}
	}
}

// BenchmarkReadTrace iterates every record of a trace from the file:
// reads, checksums, zstd decompression and decoding; one op is one record.
func BenchmarkReadTrace(b *testing.B) {
	data, recs := benchTrace(b, 200000)
	r, err := NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(r.Summary().Uncompressed / int64(len(recs)))
	it := r.RecordsFrom(0)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := it.Next(); err != nil {
			if err != io.EOF {
				b.Fatal(err)
			}
			it.ResetFrom(0)
		}
	}
}

// BenchmarkMemReadSize reports the bytes per unpredicted read, raw and
// compressed, for reads with small deltas and pointer-like values.
func BenchmarkMemReadSize(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	var f memFile
	w, _ := NewWriter(&f, Header{}, Options{})
	const n = 1 << 20
	for range n {
		w.MemRead(uint64(rng.IntN(40)), 0x7ffc_0000_0000+uint64(rng.IntN(1<<16))*8, 8)
	}
	w.Close()
	st := w.Stats()
	b.ReportMetric(float64(st.Uncompressed)/n, "raw-B/read")
	b.ReportMetric(float64(f.Len())/n, "file-B/read")
	for range b.N {
	}
}

// BenchmarkDecodeMemRead decodes a payload of unpredicted reads only.
func BenchmarkDecodeMemRead(b *testing.B) {
	var w Writer
	w.limit, w.bufCap = 1<<30, 1<<30
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		w.MemRead(uint64(rng.IntN(40)), rng.Uint64(), uint8(1+rng.IntN(8)))
	}
	payload := w.buf
	var d decoder
	var rec Record
	d.reset(payload, 0, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := d.next(&rec); err != nil {
			d.reset(payload, 0, 0)
		}
	}
}

// BenchmarkFillMemReads takes a payload of unpredicted reads (deltas of
// a real trace's kind: mostly inline, a few long) into blocks of 64k,
// as a replay's chunk decoding does.
func BenchmarkFillMemReads(b *testing.B) {
	var w Writer
	w.limit, w.bufCap = 1<<30, 1<<30
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 1 << 20
	for range n {
		delta := uint64(rng.IntN(12))
		if rng.IntN(16) == 0 {
			delta = uint64(rng.IntN(1000))
		}
		w.MemRead(delta, rng.Uint64(), uint8(1+rng.IntN(8)))
	}
	payload := w.buf
	var d decoder
	dst := make([]ReadLog, 0, 1<<16)
	b.SetBytes(int64(len(payload)))
	cpu := startCPU(b)
	defer runtime.UnlockOSThread()
	for range b.N {
		d.reset(payload, 0, 0)
		for {
			var full bool
			dst, full = d.memReadsUpTo(dst[:0], cap(dst))
			if !full {
				break
			}
		}
	}
	b.ReportMetric(float64(cpu())/float64(b.N)/n, "cpu-ns/read")
}

// BenchmarkParseTrace parses the decompressed chunks of the trace
// TTD_BENCH_TRACE names (skipped without it) as a replay's chunk
// decoding does: Next, and runs of reads in blocks of 64k.
func BenchmarkParseTrace(b *testing.B) {
	path := os.Getenv("TTD_BENCH_TRACE")
	if path == "" {
		b.Skip("TTD_BENCH_TRACE not set")
	}
	r, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	var payloads [][]byte
	var records int
	it := r.Records(0)
	for i, ci := range r.chunks {
		it.Reset(i)
		if _, err := it.Next(); err != nil {
			b.Fatal(err)
		}
		payloads = append(payloads, append([]byte(nil), it.dec.data...))
		records += ci.Records
	}
	dst := make([]ReadLog, 0, 1<<16)
	var rec Record
	var d decoder
	cpu := startCPU(b)
	defer runtime.UnlockOSThread()
	for range b.N {
		for _, p := range payloads {
			d.reset(p, 0, 0)
			for d.next(&rec) == nil {
				if rec.Kind == KindMemRead {
					for full := true; full; {
						dst, full = d.memReadsUpTo(dst[:0], cap(dst))
					}
				}
			}
		}
	}
	b.ReportMetric(float64(cpu())/float64(b.N)/float64(records), "cpu-ns/record")
}

// startCPU locks the benchmark's goroutine to its thread (the caller
// unlocks it), resets the timer and returns what gives the thread's CPU
// time since, in ns: under the load of a shared machine, wall time says
// little.
func startCPU(b *testing.B) func() int64 {
	runtime.LockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := threadCPU()
	return func() int64 { return threadCPU() - cpu0 }
}

// threadCPU is the CPU time of the calling thread.
func threadCPU() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(1, &ru) // RUSAGE_THREAD
	return ru.Utime.Nano() + ru.Stime.Nano()
}
