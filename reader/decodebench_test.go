package reader

import (
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"ttd/tracefile"
)

// TestDecodeCost measures, in thread CPU time (least of 3), what
// decoding every chunk of the trace TTD_BENCH_TRACE names costs (skipped
// without it): zstd alone, parsing (Next, reads in blocks) beyond zstd,
// and decodeChunk beyond zstd. It is the D of `ttd probe --jobs 2`,
// which `--jobs 1` hides on the second core:
//
//	TTD_BENCH_TRACE=perl.ttd go test ./reader -run DecodeCost -v
func TestDecodeCost(t *testing.T) {
	path := benchTrace(t)
	tr, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var ulen int64
	for _, c := range tr.chunks {
		ulen += int64(c.Len)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	it := tr.f.Records(0)
	buf := make([]tracefile.ReadLog, 0, 1<<16)
	var best [3]time.Duration
	for rep := 0; rep < 3; rep++ {
		t0 := threadCPU()
		for i := range tr.chunks {
			it.Reset(i)
			if _, err := it.Next(); err != nil {
				t.Fatal(err)
			}
		}
		t1 := threadCPU()
		for i := range tr.chunks {
			it.Reset(i)
			for {
				r, err := it.Next()
				if err != nil {
					break
				}
				if r.Kind == tracefile.KindMemRead {
					for more := true; more; {
						_, more = it.FillMemReads(buf)
					}
				}
			}
		}
		t2 := threadCPU()
		for i := range tr.chunks {
			ch, err := tr.decodeChunk(it, i)
			if err != nil {
				t.Fatal(err)
			}
			tr.cache.mu.Lock()
			for _, b := range ch.reads {
				if cap(b) == tr.cache.block && len(tr.cache.free) < maxFreeBlocks {
					tr.cache.free = append(tr.cache.free, b[:0])
				}
			}
			tr.cache.mu.Unlock()
		}
		t3 := threadCPU()
		d := [3]time.Duration{t1 - t0, t2 - t1 - (t1 - t0), t3 - t2 - (t1 - t0)}
		for k := range d {
			if rep == 0 || d[k] < best[k] {
				best[k] = d[k]
			}
		}
	}
	mb := float64(ulen) / 1e6
	t.Logf("%s: %d chunks, %.1f MB, %d records: zstd %.3fs (%.0f MB/s), parse %.3fs, decodeChunk-zstd %.3fs",
		path, len(tr.chunks), mb, tr.Summary.Records, best[0].Seconds(), mb/best[0].Seconds(), best[1].Seconds(), best[2].Seconds())
}

// threadCPU is the calling thread's CPU time.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(1, &ru) // RUSAGE_THREAD
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchTrace is the trace TTD_BENCH_TRACE names; t is skipped without it.
func benchTrace(t *testing.T) string {
	path := os.Getenv("TTD_BENCH_TRACE")
	if path == "" {
		t.Skip("TTD_BENCH_TRACE not set")
	}
	return path
}
