package tracefile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// sampleSums are summaries of two intervals of the first process and one
// of pid 7, with unmapped ranges and byte sets of every shape.
func sampleSums() []AccessSummary {
	var masks [64]uint64
	masks[0], masks[3] = 0xff, ^uint64(0)
	set := MakeByteSet(&masks)
	return []AccessSummary{
		{Start: 0, End: 100, Pages: []PageAccess{{PN: 0x400, Read: set, Exec: set}, {PN: 0x7fff0, Written: set}}},
		{Start: 100, End: 250, Unmapped: []PageRange{{0x500, 0x510}}},
		{Pid: 7, Start: 100, End: 250, Pages: []PageAccess{{PN: 0x401, Written: set}}},
	}
}

func TestSumsRoundTrip(t *testing.T) {
	id := [IdentityLen]byte{1, 2, 3}
	want := sampleSums()
	path := filepath.Join(t.TempDir(), "x.ttd.sums")
	if err := WriteSums(path, id, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSums(path, id)
	if err != nil {
		t.Fatal(err)
	}
	if !sameSums(got, want) {
		t.Fatalf("read back\n%+v\nwant\n%+v", got, want)
	}
	if _, err := os.Stat(path + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary file stayed: %v", err)
	}
	if _, err := ReadSums(path, [IdentityLen]byte{1, 2, 4}); !errors.Is(err, ErrStale) {
		t.Errorf("another trace's: %v, want ErrStale", err)
	}
	if got, err := DecodeSums(EncodeSums(id, nil), id); err != nil || len(got) != 0 {
		t.Errorf("no summaries: %v, %v", got, err)
	}
}

// TestSumsDamaged cuts the file at every length and flips bits in it:
// each is a FormatError, never other summaries.
func TestSumsDamaged(t *testing.T) {
	id := [IdentityLen]byte{9}
	file := EncodeSums(id, sampleSums())
	for n := 0; n < len(file); n++ {
		var fe *FormatError
		if _, err := DecodeSums(file[:n], id); !errors.As(err, &fe) {
			t.Fatalf("cut to %d of %d bytes: %v, want a FormatError", n, len(file), err)
		}
	}
	for i := 0; i < len(file); i++ {
		bad := append([]byte(nil), file...)
		bad[i] ^= 0x10
		if got, err := DecodeSums(bad, id); err == nil && !sameSums(got, sampleSums()) {
			t.Fatalf("byte %d changed: other summaries read", i)
		}
	}
}

// TestSumsResealed: a body with bytes after its last summary, or a
// count larger than it holds, sealed with the right checksums (a
// writer's bug), is refused.
func TestSumsResealed(t *testing.T) {
	id := [IdentityLen]byte{5}
	s := sampleSums()[0]
	one := AppendAccessSummary(nil, &s)
	body := binary.AppendUvarint(nil, 1)
	body = binary.AppendUvarint(body, 0)
	body = binary.AppendUvarint(body, uint64(len(one)))
	body = append(body, one...)
	if got, err := DecodeSums(sealSums(id, body), id); err != nil || !sameSums(got, []AccessSummary{s}) {
		t.Fatalf("the body as EncodeSums makes it: %v, %v", got, err)
	}
	for what, bad := range map[string][]byte{
		"a byte after the last summary": append(append([]byte(nil), body...), 0),
		"a count of 2":                  append([]byte{2}, body[1:]...),
		"a length one short":            append(append(append([]byte(nil), body[:2]...), byte(len(one)-1)), body[3:]...),
		"a length one long":             append(append(append([]byte(nil), body[:2]...), byte(len(one)+1)), body[3:]...),
	} {
		var fe *FormatError
		if _, err := DecodeSums(sealSums(id, bad), id); !errors.As(err, &fe) || !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", what, err)
		}
	}
}

// sameSums compares summaries by their encoding (nil and empty slices
// alike).
func sameSums(a, b []AccessSummary) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Pid != b[i].Pid || !bytes.Equal(AppendAccessSummary(nil, &a[i]), AppendAccessSummary(nil, &b[i])) {
			return false
		}
	}
	return true
}
