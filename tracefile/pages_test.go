package tracefile

import (
	"bytes"
	"errors"
	"testing"
)

// pagesFile writes a checkpoint memory file of three checkpoints, with
// more pages than one frame holds, and returns it and its pages.
func pagesFile(t *testing.T, id [IdentityLen]byte) ([]byte, map[uint32]*[PageSize]byte) {
	t.Helper()
	var b bytes.Buffer
	pw, err := NewPagesWriter(&b, id)
	if err != nil {
		t.Fatal(err)
	}
	pages := map[uint32]*[PageSize]byte{}
	ref := uint32(0)
	for k, pos := range []uint64{0, 1000, 5000} {
		if err := pw.Checkpoint(pos); err != nil {
			t.Fatal(err)
		}
		for pn := uint64(0); pn < PagesPerFrame+7; pn++ {
			if pn%5 == 4 {
				pw.Page(uint32(k), pn, nil)
				continue
			}
			d := new([PageSize]byte)
			for i := range d {
				d[i] = byte(uint64(i)*pn + uint64(k))
			}
			pw.Page(uint32(k), pn, d)
			ref++
			pages[ref] = d
		}
	}
	if err := pw.Checkpoint(5000); err == nil {
		t.Error("a checkpoint at the position of the one before was taken")
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), pages
}

// TestPagesRoundTrip writes a checkpoint memory file and reads every
// page back, by its entries.
func TestPagesRoundTrip(t *testing.T) {
	id := [IdentityLen]byte{1, 2, 3}
	file, pages := pagesFile(t, id)
	p, err := NewPages(bytes.NewReader(file), int64(len(file)), id)
	if err != nil {
		t.Fatal(err)
	}
	cps := p.Checkpoints()
	if len(cps) != 3 || cps[1].Position != 1000 || cps[2].Position != 5000 {
		t.Fatalf("checkpoints %v", cps)
	}
	n := 0
	for _, cp := range cps {
		for _, e := range cp.Entries {
			if e.PN%5 == 4 {
				if e.Ref != 0 {
					t.Errorf("page %d of space %d: ref %d, want zeros", e.PN, e.Space, e.Ref)
				}
				continue
			}
			var got [PageSize]byte
			if err := p.Page(e.Ref, &got); err != nil {
				t.Fatal(err)
			}
			if got != *pages[e.Ref] {
				t.Fatalf("page %d of space %d (ref %d) differs", e.PN, e.Space, e.Ref)
			}
			n++
		}
	}
	if n != len(pages) {
		t.Errorf("read %d pages, wrote %d", n, len(pages))
	}
	if err := p.Page(uint32(len(pages)+1), new([PageSize]byte)); err == nil {
		t.Error("a page past the last was read")
	}
}

// TestPagesDamaged cuts the file at every length and changes one byte
// at a time in it: the file is refused with a FormatError on open, or,
// for a byte of the pages, when the frame is read; never a panic, never
// a page with other contents.
func TestPagesDamaged(t *testing.T) {
	id := [IdentityLen]byte{9}
	file, pages := pagesFile(t, id)
	for n := 0; n < len(file); n++ {
		_, err := NewPages(bytes.NewReader(file[:n]), int64(n), id)
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("cut to %d of %d bytes: %v, want a FormatError", n, len(file), err)
		}
	}
	if _, err := NewPages(bytes.NewReader(file), int64(len(file)), [IdentityLen]byte{8}); !errors.Is(err, ErrStale) {
		t.Errorf("another trace's: %v, want ErrStale", err)
	}
	for i := 0; i < len(file); i += 53 {
		bad := bytes.Clone(file)
		bad[i] ^= 0x10
		p, err := NewPages(bytes.NewReader(bad), int64(len(bad)), id)
		if err != nil {
			continue
		}
		for ref, want := range pages {
			var got [PageSize]byte
			if err := p.Page(ref, &got); err == nil && got != *want {
				t.Fatalf("byte %d changed: page %d read with other contents", i, ref)
			}
		}
	}
}
