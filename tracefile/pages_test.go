package tracefile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
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
	good, err := NewPages(bytes.NewReader(file), int64(len(file)), id)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(file); i += 53 {
		bad := bytes.Clone(file)
		bad[i] ^= 0x10
		p, err := NewPages(bytes.NewReader(bad), int64(len(bad)), id)
		if err != nil {
			continue
		}
		if !reflect.DeepEqual(p.Checkpoints(), good.Checkpoints()) {
			t.Fatalf("byte %d changed: the file names other pages", i)
		}
		for ref, want := range pages {
			var got [PageSize]byte
			if err := p.Page(ref, &got); err == nil && got != *want {
				t.Fatalf("byte %d changed: page %d read with other contents", i, ref)
			}
		}
	}
}

// TestPagesResealed changes the index and seals it again with the right
// checksums (a writer's bug, not damage): an index that names pages the
// file does not hold, or has bytes left, is refused.
func TestPagesResealed(t *testing.T) {
	id := [IdentityLen]byte{7}
	file, _ := pagesFile(t, id)
	foot := file[len(file)-pagesFooterLen:]
	ioff := int(binary.LittleEndian.Uint64(foot))
	idx := file[ioff : len(file)-pagesFooterLen]
	reseal := func(idx []byte) []byte { return reseal(file, ioff, idx) }
	if _, err := NewPages(bytes.NewReader(reseal(idx)), int64(len(file)), id); err != nil {
		t.Fatalf("resealed as it was: %v", err)
	}
	for name, b := range map[string][]byte{
		"a byte more":        append(bytes.Clone(idx), 0),
		"the last entry cut": idx[:len(idx)-3],
	} {
		if _, err := NewPages(bytes.NewReader(reseal(b)), int64(len(file)+len(b)-len(idx)), id); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

// TestPagesRefsInOrder: pages are numbered in the order the entries name
// them, so an index that names them in another order (which would give
// each page the other's contents) is refused.
func TestPagesRefsInOrder(t *testing.T) {
	id := [IdentityLen]byte{5}
	var b bytes.Buffer
	pw, err := NewPagesWriter(&b, id)
	if err != nil {
		t.Fatal(err)
	}
	pw.Checkpoint(0)
	pw.Page(1, 10, &[PageSize]byte{1})
	pw.Page(1, 11, &[PageSize]byte{2})
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	file := b.Bytes()
	ioff := int(binary.LittleEndian.Uint64(file[len(file)-pagesFooterLen:]))
	for name, refs := range map[string][2]uint64{"in order": {1, 2}, "swapped": {2, 1}} {
		idx := []byte(pagesIndexMagic)
		idx = binary.AppendUvarint(idx, 1)
		idx = binary.AppendUvarint(idx, uint64(ioff-pagesHdrLen))
		idx = binary.AppendUvarint(idx, 2)
		idx = binary.AppendUvarint(idx, 1)
		idx = binary.AppendUvarint(idx, 0)
		idx = binary.AppendUvarint(idx, 2)
		for i, r := range refs {
			idx = binary.AppendUvarint(idx, 1)
			idx = binary.AppendUvarint(idx, uint64(10+i))
			idx = binary.AppendUvarint(idx, r)
		}
		out := reseal(file, ioff, idx)
		_, err := NewPages(bytes.NewReader(out), int64(len(out)), id)
		if (err == nil) != (name == "in order") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// reseal is file with its index, at ioff, replaced by idx, and a footer
// with the right checksums.
func reseal(file []byte, ioff int, idx []byte) []byte {
	out := append(bytes.Clone(file[:ioff]), idx...)
	f := binary.LittleEndian.AppendUint64(nil, uint64(ioff))
	f = binary.LittleEndian.AppendUint64(f, uint64(len(idx)))
	f = binary.LittleEndian.AppendUint32(f, crc(idx))
	f = binary.LittleEndian.AppendUint32(f, crc(f))
	return append(append(out, f...), pagesTrail...)
}

// TestPagesFrameReuse: a frame that leaves the cache while a reader
// holds it keeps its pages until released, and only then lends its
// buffer to the next frame decompressed.
func TestPagesFrameReuse(t *testing.T) {
	id := [IdentityLen]byte{4, 5, 6}
	file, pages := pagesFile(t, id)
	p, err := NewPages(bytes.NewReader(file), int64(len(file)), id)
	if err != nil {
		t.Fatal(err)
	}
	p.cacheFrames = 1
	refA, refB, refC := uint32(1), uint32(1+PagesPerFrame), uint32(1+2*PagesPerFrame)
	a, err := p.Frame(refA)
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []uint32{refB, refC} { // each evicts the one before
		f, err := p.Frame(ref)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(f.Page(ref), pages[ref][:]) {
			t.Fatalf("page %d differs", ref)
		}
		f.Release()
		if !bytes.Equal(a.Page(refA), pages[refA][:]) {
			t.Fatalf("page %d changed while its frame was held, after frame of %d", refA, ref)
		}
	}
	if len(p.free) != 1 {
		t.Fatalf("%d free buffers while one frame is held, want 1", len(p.free))
	}
	p.free = nil
	held := &a.Data[:1][0]
	a.Release()
	if len(p.free) != 1 {
		t.Fatalf("%d free buffers after the held frame's release, want 1", len(p.free))
	}
	if f, err := p.Frame(refA); err != nil || &f.Data[:1][0] != held || !bytes.Equal(f.Page(refA), pages[refA][:]) {
		t.Fatalf("the released buffer was not reused for the next frame (err %v)", err)
	}
	// A frame decompressed again doubles the cache, up to its bound.
	if p.cacheFrames != 2 {
		t.Errorf("cache of %d frames after one was decompressed twice, want 2", p.cacheFrames)
	}
	p.cacheFrames = pagesCacheFrames - 1
	p.cache = p.cache[:0]
	if _, err := p.Frame(refB); err != nil || p.cacheFrames != pagesCacheFrames {
		t.Errorf("cache of %d frames, want at most %d (err %v)", p.cacheFrames, pagesCacheFrames, err)
	}
	// A frame decompressed again among many decompressed once (two
	// jobs that restore some of the same frames) does not grow it.
	p.cacheFrames, p.cache, p.decodes = 1, p.cache[:0], 100
	if _, err := p.Frame(refC); err != nil || p.cacheFrames != 1 {
		t.Errorf("cache of %d frames after 1 frame of 101 decompressed again, want 1 (err %v)", p.cacheFrames, err)
	}
}
