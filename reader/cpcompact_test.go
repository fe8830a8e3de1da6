package reader

import (
	"bytes"
	"math/rand"
	"testing"

	"ttd/tracefile"
	"ttd/x86"
)

// compactRun drives the index pass's writer (pagesBuilder's checkpoint)
// over one address space, which change(k, write) alters before each
// checkpoint k of ncps, and returns the file, the memory at each
// checkpoint (its pages not zeros) and the builder.
func compactRun(t *testing.T, ncps int, change func(k int, mem *x86.Memory, write func(pn uint64, v byte))) ([]byte, []map[uint64][x86.PageSize]byte, *pagesBuilder) {
	t.Helper()
	var file bytes.Buffer
	pw, err := tracefile.NewPagesWriter(&file, [tracefile.IdentityLen]byte{7})
	if err != nil {
		t.Fatal(err)
	}
	b := &pagesBuilder{pw: pw, prev: map[uint32]*x86.Memory{}, ref: map[spacePage]uint32{}}
	mem := x86.NewMemory()
	// The replay checkpoint hears from: one process, its memory mem.
	r := &Replay{t: &Trace{}, procs: []*process{{pid: 1, as: &addrSpace{mem: mem}}}}
	write := func(pn uint64, v byte) {
		p := x86.NewPage()
		for i := range p.Data {
			p.Data[i] = v + byte(i)
		}
		p.Data[0], p.Data[1] = byte(pn), byte(pn>>8)
		mem.SetPage(pn, p, x86.PermRead|x86.PermWrite)
	}
	var want []map[uint64][x86.PageSize]byte
	for k := 0; k < ncps; k++ {
		change(k, mem, write)
		r.pos = uint64(1000 * (k + 1))
		b.checkpoint(r)
		if b.err != nil {
			t.Fatal(b.err)
		}
		w := map[uint64][x86.PageSize]byte{}
		mem.Pages(0, 1<<52, func(pn uint64, pg *x86.Page) {
			if !zeroPage(pg) {
				w[pn] = *pg.Data
			}
		})
		want = append(want, w)
	}
	if err := b.close(); err != nil {
		t.Fatal(err)
	}
	return file.Bytes(), want, b
}

// checkCompacted reads the file back: at every checkpoint the folded
// entries give exactly the memory there (a page restated with other
// bytes, or a page moved and its old ref still counted, changes it),
// and every frame written whole by then that a restore would read
// holds at least compactBelow of the pages it restores.
func checkCompacted(t *testing.T, file []byte, want []map[uint64][x86.PageSize]byte) {
	t.Helper()
	p, err := tracefile.NewPages(bytes.NewReader(file), int64(len(file)), [tracefile.IdentityLen]byte{7})
	if err != nil {
		t.Fatal(err)
	}
	refs := map[uint64]uint32{}
	var last uint32
	var buf [x86.PageSize]byte
	for k, cp := range p.Checkpoints() {
		for _, e := range cp.Entries {
			if e.Ref == 0 {
				delete(refs, e.PN)
				continue
			}
			refs[e.PN], last = e.Ref, e.Ref
		}
		if len(refs) != len(want[k]) {
			t.Fatalf("checkpoint %d: %d pages, want %d", k, len(refs), len(want[k]))
		}
		perFrame := map[int]int{}
		for pn, ref := range refs {
			if err := p.Page(ref, &buf); err != nil {
				t.Fatal(err)
			}
			if buf != want[k][pn] {
				t.Fatalf("checkpoint %d: page %d (ref %d) is not its contents there", k, pn, ref)
			}
			perFrame[tracefile.FrameOf(ref)]++
		}
		full := int(last) / tracefile.PagesPerFrame
		for f, n := range perFrame {
			if f < full && n < compactBelow {
				t.Errorf("checkpoint %d: frame %d (of %d whole) holds %d pages a restore reads, want %d or more", k, f, full, n, compactBelow)
			}
		}
	}
}

// TestPagesCompact: an address space of 600 pages of which each
// checkpoint rewrites a random fifth, zeroes some and unmaps some (as
// xz's match finder does its tables): without compact most frames end
// up holding a few pages a restore reads.
func TestPagesCompact(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	const npages = 600
	file, want, b := compactRun(t, 30, func(k int, mem *x86.Memory, write func(uint64, byte)) {
		if k == 0 {
			for pn := uint64(0); pn < npages; pn++ {
				write(pn, 1)
			}
			return
		}
		for i := 0; i < npages/5; i++ {
			write(uint64(rng.Intn(npages)), byte(k+1))
		}
		for i := 0; i < 5; i++ {
			pn := uint64(rng.Intn(npages))
			if i%2 == 0 {
				mem.SetPage(pn, nil, 0)
			} else {
				mem.SetPage(pn, x86.NewPage(), x86.PermRead) // zeros
			}
		}
	})
	checkCompacted(t, file, want)
	// Each frame compacted had 49 or more of its 64 pages replaced, so
	// pages restated are at most 15 for 49 stored otherwise (compacting
	// the frame still being filled restates far more).
	if b.st.Restated == 0 || b.st.Restated*49 > (b.st.Pages-b.st.Restated)*15 {
		t.Fatalf("%d pages restated of %d stored", b.st.Restated, b.st.Pages)
	}
}

// TestPagesCompactOnePage: a frame left with one page a restore reads
// (63 of its 64 rewritten) is compacted at that checkpoint.
func TestPagesCompactOnePage(t *testing.T) {
	file, want, b := compactRun(t, 3, func(k int, mem *x86.Memory, write func(uint64, byte)) {
		switch k {
		case 0:
			for pn := uint64(0); pn < 3*tracefile.PagesPerFrame; pn++ {
				write(pn, 1)
			}
		case 1:
			for pn := uint64(1); pn < tracefile.PagesPerFrame; pn++ {
				write(pn, 2)
			}
		}
	})
	checkCompacted(t, file, want)
	if b.st.Restated != 1 {
		t.Fatalf("%d pages restated, want 1 (page 0)", b.st.Restated)
	}
}

// TestPagesCompactBoundary: a frame left with compactBelow pages a
// restore reads stays, beside one with one fewer whose pages move.
func TestPagesCompactBoundary(t *testing.T) {
	const n = tracefile.PagesPerFrame
	file, want, b := compactRun(t, 3, func(k int, mem *x86.Memory, write func(uint64, byte)) {
		switch k {
		case 0:
			for pn := uint64(0); pn < 3*n; pn++ {
				write(pn, 1)
			}
		case 1: // frame 0 keeps compactBelow pages, frame 1 one fewer
			for pn := uint64(compactBelow); pn < n; pn++ {
				write(pn, 2)
			}
			for pn := uint64(n + compactBelow - 1); pn < 2*n; pn++ {
				write(pn, 2)
			}
		case 2: // frame 0 one fewer
			write(0, 3)
		}
	})
	checkCompacted(t, file, want)
	if b.st.Restated != 2*(compactBelow-1) {
		t.Fatalf("%d pages restated, want %d (those left of frame 1 at the second checkpoint, of frame 0 at the third)", b.st.Restated, 2*(compactBelow-1))
	}
}
