package x86

import (
	"fmt"
	"testing"
)

// TestFetchAcrossPages checks decodeBlock's page fetcher: a block whose
// instructions run from one page into the next reads each byte from its
// own page (the fetcher keeps one page at a time), and an instruction cut
// by a page without execute permission ends the block before it.
func TestFetchAcrossPages(t *testing.T) {
	const pn = testCode >> PageShift
	for _, next := range []Perm{PermRead | PermExec, PermRead} {
		mem := NewMemory()
		a, b := NewPage(), NewPage()
		for i := range a.Data {
			a.Data[i] = 0x90 // nop
		}
		// mov eax, imm32 at the last 3 bytes of the first page: its
		// immediate ends on the next, which holds 0x11 0x22 then nops.
		copy(a.Data[PageSize-3:], []byte{0xb8, 0x44, 0x33})
		copy(b.Data[:], []byte{0x22, 0x11, 0x90, 0xc3}) // ... nop; ret
		mem.SetPage(pn, a, PermRead|PermExec)
		mem.SetPage(pn+1, b, next)
		cc := NewCodeCache(mem)
		start := uint64(testCode + PageSize - 8)
		blk := cc.decodeBlock(start)
		if next&PermExec == 0 {
			if blk.End != testCode+PageSize-3 || !blk.truncated {
				t.Errorf("next page not executable: block ends at %#x (truncated %v), want %#x", blk.End, blk.truncated, testCode+PageSize-3)
			}
			continue
		}
		last := blk.Insts[len(blk.Insts)-1]
		if last.Op.String() != "MOV" || last.Args[1].Imm != 0x11223344 {
			t.Fatalf("instruction across the pages: %v %#x, want MOV of 0x11223344", last.Op, last.Args[1].Imm)
		}
		if blk.End != testCode+PageSize+2 {
			t.Errorf("block ends at %#x, want %#x (after the first instruction ending on the next page)", blk.End, testCode+PageSize+2)
		}
		if got, want := string(blk.Bytes[len(blk.Bytes)-5:]), "\xb8\x44\x33\x22\x11"; got != want {
			t.Errorf("block's last bytes %x, want %x", got, want)
		}
	}
}

// TestBlockPages checks the pages a block is filed under (insert, by
// firstPage and lastPage), whose writes drop it: a block whose last
// byte is the first of the next page is under both pages, one that
// ends at a page's end under that page alone.
func TestBlockPages(t *testing.T) {
	const pn uint64 = testCode >> PageShift
	for _, tc := range []struct {
		name  string
		start uint64
		code  []byte // at the end of the first page
		end   uint64
		pages []uint64
	}{
		// mov eax, imm32 with its last byte on the next page.
		{"last byte on the next page", testCode + PageSize - 4, []byte{0xb8, 0x44, 0x33, 0x22}, testCode + PageSize + 1, []uint64{pn, pn + 1}},
		// nop; ret, the ret the page's last byte.
		{"ends at the page's end", testCode + PageSize - 2, []byte{0x90, 0xc3}, testCode + PageSize, []uint64{pn}},
	} {
		mem := NewMemory()
		a, b := NewPage(), NewPage()
		copy(a.Data[PageSize-len(tc.code):], tc.code)
		copy(b.Data[:], []byte{0x11, 0xc3})
		mem.SetPage(pn, a, PermRead|PermExec)
		mem.SetPage(pn+1, b, PermRead|PermExec)
		cc := NewCodeCache(mem)
		blk := cc.decodeBlock(tc.start)
		if blk.End != tc.end {
			t.Fatalf("%s: block ends at %#x, want %#x", tc.name, blk.End, tc.end)
		}
		cc.insert(blk)
		var got []uint64
		for p := pn - 1; p <= pn+2; p++ {
			for _, x := range cc.byPage[p] {
				if x == blk {
					got = append(got, p)
				}
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.pages) {
			t.Errorf("%s: filed under pages %#x, want %#x", tc.name, got, tc.pages)
		}
	}
}
