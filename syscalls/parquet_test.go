package syscalls

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/parquet-go/parquet-go"

	"ttd/reader"
)

// TestParquetRoundTrip exports testdata/fsops.c's recording as Parquet
// and reads it back: every call, its strace text, its arguments and its
// buffers must be what the strace format and the decoder give.
func TestParquetRoundTrip(t *testing.T) {
	prog := buildC(t, "testdata/fsops.c")
	trace := record(t, prog, t.TempDir())
	tr, err := reader.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var calls []Call
	var pq bytes.Buffer
	sink, err := NewSink("parquet", &pq)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Export(tr, Options{StrSize: -1}, teeSink{sink, &calls}); err != nil {
		t.Fatal(err)
	}
	rd := parquet.NewGenericReader[parquetRow](bytes.NewReader(pq.Bytes()))
	rows := make([]parquetRow, len(calls)+1)
	n, err := rd.Read(rows)
	if err != nil && err != io.EOF {
		t.Fatal(err)
	}
	if n != len(calls) || n < 100 {
		t.Fatalf("%d rows for %d calls", n, len(calls))
	}
	sawWrite := false
	for i, c := range calls {
		r := rows[i]
		if r.Pos != int64(c.Pos) || r.Name != c.Name || r.Ret != c.Ret || r.Strace != string(c.Text)+" = "+string(c.RetText) || len(r.Args) != len(c.Args) || len(r.Buffers) != len(c.Buffers) {
			t.Fatalf("row %d: %+v\ncall: %s = %s", i, r, c.Text, c.RetText)
		}
		for k, b := range c.Buffers {
			if !bytes.Equal(r.Buffers[k].Data, b.Data) || r.Buffers[k].Out != b.Out {
				t.Fatalf("row %d buffer %d differs", i, k)
			}
		}
		if c.Name == "write" && string(c.Buffers[0].Data) == "hello, world\n" {
			sawWrite = true
		}
	}
	if !sawWrite {
		t.Errorf("the write of \"hello, world\\n\" is not in the table")
	}
	os.Remove(trace)
}

// teeSink copies the calls it passes on.
type teeSink struct {
	Sink
	calls *[]Call
}

func (s teeSink) Call(c *Call) error {
	cp := *c
	cp.Text = append([]byte(nil), c.Text...)
	cp.RetText = append([]byte(nil), c.RetText...)
	cp.Args = append([]Arg(nil), c.Args...)
	cp.Buffers = nil
	for _, b := range c.Buffers {
		b.Data = append([]byte(nil), b.Data...)
		cp.Buffers = append(cp.Buffers, b)
	}
	*s.calls = append(*s.calls, cp)
	return s.Sink.Call(c)
}
