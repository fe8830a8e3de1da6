package syscalls

import (
	"io"
	"testing"

	"ttd/reader"
)

// BenchmarkExport1e6 exports a recording of 10^6 syscalls (testdata/
// many.c: write(-1, ...) and getppid in a loop) in the strace format
// and reports syscalls per second.
func BenchmarkExport1e6(b *testing.B) {
	prog := buildC(b, "testdata/many.c")
	dir := b.TempDir()
	trace := record(b, prog, dir, "500000")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
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
	}
}
