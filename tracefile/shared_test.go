package tracefile

import (
	"bytes"
	"io"
	"testing"
)

// TestSharedMmap: an Mmap of shared memory is a SharedMmap record (tag
// 0x22, in a trace of version 2.1) that reads back as an Mmap with its
// Object and Offset; the private Mmaps around it are tag 0x07 records
// and read back with no Object (the iterator reuses its record).
func TestSharedMmap(t *testing.T) {
	var f memFile
	w, err := NewWriter(&f, Header{Params: map[string]string{"reads": "none"}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Mmap{
		{Addr: 0x1000, Len: 0x2000, Prot: 3, Path: []byte("[heap]")},
		{Addr: 0x7000_0000, Len: 0x3000, Prot: 3, Flags: 1, Offset: 0x1000, Object: 7, Path: []byte("/dev/shm/x")},
		{Addr: 0x8000_0000, Len: 0x1000, Prot: 1},
	}
	for i := range want {
		w.Mmap(&want[i])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b := f.Bytes()
	if !bytes.Contains(b, []byte{tagSharedMmap}) {
		t.Error("no SharedMmap tag in the file")
	}
	r, err := NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if maj, min := r.Version(); maj != 2 || min < 1 {
		t.Errorf("version %d.%d, want 2.1 or later", maj, min)
	}
	it := r.RecordsFrom(0)
	var got []Mmap
	for {
		rec, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind == KindMmap {
			m := rec.Mmap
			m.Path = bytes.Clone(m.Path)
			got = append(got, m)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d Mmap records, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Addr != w.Addr || g.Len != w.Len || g.Prot != w.Prot || g.Flags != w.Flags || g.Offset != w.Offset ||
			g.Object != w.Object || !bytes.Equal(g.Path, w.Path) {
			t.Errorf("record %d: %+v, want %+v", i, g, w)
		}
	}
}
