package reader

import (
	"bytes"
	"math/rand"
	"testing"

	"ttd/tracefile"
	"ttd/x86"
)

// TestPagesCompact drives the index pass's writer (pagesBuilder.space
// and compact, as checkpoint calls them) over an address space of 600
// pages of which each checkpoint rewrites a random fifth, zeroes some
// and unmaps some, and reads the file back: at every checkpoint the
// folded entries give exactly the memory there (a page restated with
// other bytes, or a page moved and its old ref still counted, changes
// it), and every frame written whole by then that a restore would read
// holds at least compactBelow of the pages it restores (without compact
// most frames end up with a few).
func TestPagesCompact(t *testing.T) {
	var id [tracefile.IdentityLen]byte
	id[0] = 7
	var file bytes.Buffer
	pw, err := tracefile.NewPagesWriter(&file, id)
	if err != nil {
		t.Fatal(err)
	}
	b := &pagesBuilder{pw: pw, prev: map[uint32]*x86.Memory{}, ref: map[spacePage]uint32{}}
	mem := x86.NewMemory()
	rng := rand.New(rand.NewSource(1))
	const npages, ncps = 600, 30
	write := func(pn uint64, v byte) {
		p := x86.NewPage()
		for i := range p.Data {
			p.Data[i] = v + byte(i)
		}
		p.Data[0], p.Data[1] = byte(pn), byte(pn>>8)
		mem.SetPage(pn, p, x86.PermRead|x86.PermWrite)
	}
	for pn := uint64(0); pn < npages; pn++ {
		write(pn, 1)
	}
	var want []map[uint64][x86.PageSize]byte
	for k := 0; k < ncps; k++ {
		if k > 0 {
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
		}
		if err := pw.Checkpoint(uint64(1000 * (k + 1))); err != nil {
			t.Fatal(err)
		}
		b.space(0, mem)
		b.compact()
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
	if b.st.Restated == 0 {
		t.Fatal("no page restated")
	}
	p, err := tracefile.NewPages(bytes.NewReader(file.Bytes()), int64(file.Len()), id)
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
	t.Logf("%d pages stored, %d restated, %d frames", b.st.Pages, b.st.Restated, int(last+63)/64)
}
