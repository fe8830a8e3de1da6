package syscalls

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"ttd/reader"
)

// TestExportDamagedTrace cuts a recording short and flips bytes in it:
// the export must give an error (never panic), after the calls it could
// read.
func TestExportDamagedTrace(t *testing.T) {
	prog := buildC(t, "testdata/fsops.c")
	trace := record(t, prog, t.TempDir())
	good, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		damage func([]byte) []byte
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)*2/3] }},
		{"flipped", func(b []byte) []byte {
			b = append([]byte(nil), b...)
			for i := len(b) / 3; i < len(b)/3+64; i++ {
				b[i] ^= 0x5a
			}
			return b
		}},
	} {
		path := filepath.Join(t.TempDir(), c.name+".ttd")
		if err := os.WriteFile(path, c.damage(good), 0o644); err != nil {
			t.Fatal(err)
		}
		tr, err := reader.Open(path)
		if err != nil {
			t.Logf("%s: open: %v", c.name, err)
			continue
		}
		sink, _ := NewSink("strace", io.Discard)
		_, err = Export(tr, Options{StrSize: 32}, sink)
		tr.Close()
		if err == nil {
			t.Errorf("%s: exported without an error", c.name)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
	}
}
