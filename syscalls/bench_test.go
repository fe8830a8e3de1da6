package syscalls

import (
	"bytes"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"testing"

	"ttd/reader"
)

// BenchmarkExport1e6 exports a recording of 10^6 syscalls (testdata/
// many.c: write(-1, ...) and getppid in a loop) in the strace format
// and reports syscalls per second and the process's peak RSS during the
// export (VmHWM, reset after the recording through /proc/self/
// clear_refs).
func BenchmarkExport1e6(b *testing.B) {
	prog := buildC(b, "testdata/many.c")
	dir := b.TempDir()
	trace := record(b, prog, dir, "500000")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		debug.FreeOSMemory()
		resetPeakRSS()
		tr, err := reader.Open(trace)
		if err != nil {
			b.Fatal(err)
		}
		sink, _ := NewSink("strace", io.Discard)
		st, err := Export(tr, Options{StrSize: 32}, sink)
		tr.Close()
		if err != nil {
			b.Fatal(err)
		}
		if st.Calls < 1000000 {
			b.Fatalf("only %d calls", st.Calls)
		}
		b.ReportMetric(float64(st.Calls)/b.Elapsed().Seconds()*float64(i+1), "calls/s")
		if kb := peakRSSKB(); kb > 0 {
			b.ReportMetric(float64(kb)/1024, "peak-RSS-MB")
		}
	}
}

// resetPeakRSS resets the kernel's peak RSS of this process (VmHWM).
func resetPeakRSS() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSSKB is VmHWM from /proc/self/status (0 if unknown).
func peakRSSKB() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	i := bytes.Index(b, []byte("VmHWM:"))
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+len("VmHWM:"):])
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(string(f[0]))
	return n
}
