package x86

import (
	"encoding/binary"
	"testing"

	"ttd/predict"
)

// TestMarkTableEmptyForgetsTLBMarks: the MarkPages translated code keeps
// in TLB entries (tlbEntry.mark) are forgotten by MarkTable.Empty in
// every Memory the table served, in both TLBs and in every chunk, and an
// entry made afresh (a new page, a fork's child, after FlushTLB) points
// at none.
func TestMarkTableEmptyForgetsTLBMarks(t *testing.T) {
	var tab MarkTable
	tab.Empty()
	pns := []uint64{0, 1, 1<<tlbChunkBits - 1, 1 << tlbChunkBits, tlbMask - 1, tlbMask, 0x5000, 0x7fff0}
	fill := func(m *Memory) {
		for _, pn := range pns {
			m.SetPage(pn, NewPage(), PermRead|PermWrite)
			m.Write64(pn<<PageShift, pn)
			m.Read64(pn << PageShift)
			r, w := &m.rtlb[pn&tlbMask], &m.wtlb[pn&tlbMask]
			if r.tag != pn || w.tag != pn {
				t.Fatalf("page %#x did not enter the TLBs", pn)
			}
			if r.mark != 0 || w.mark != 0 {
				t.Fatalf("page %#x entered the TLBs with a mark page", pn)
			}
			r.mark, w.mark = 0x1000+uintptr(pn), 0x2000+uintptr(pn) // as findMarks does
		}
	}
	marks := func(m *Memory) (n int) {
		for i := range m.rtlb {
			if m.rtlb[i].mark != 0 {
				n++
			}
			if m.wtlb[i].mark != 0 {
				n++
			}
		}
		return n
	}
	a, b, other := NewMemory(), NewMemory(), NewMemory()
	tab.use(a)
	tab.use(b)
	tab.use(a) // once is enough
	tab.use(nil)
	if len(tab.mems) != 2 {
		t.Fatalf("the table serves %d memories, want 2", len(tab.mems))
	}
	for _, m := range []*Memory{a, b, other} {
		fill(m)
	}
	if n := marks(a); n != 2*len(pns) {
		t.Fatalf("%d marks set, want %d", n, 2*len(pns))
	}
	// EnterMarks: the entries of the page, and only those.
	c, i := &CPU{Mem: b}, uint64(0x5000&tlbMask)
	tab.EnterMarks(c, 0x5000+tlbSize, &MarkPage{}) // another page at the same index
	if b.rtlb[i].mark != 0x1000+0x5000 || b.wtlb[i].mark != 0x2000+0x5000 {
		t.Errorf("EnterMarks changed the entries of another page")
	}
	tab.EnterMarks(c, 0x5000, &MarkPage{})
	if b.rtlb[i].mark == 0x1000+0x5000 || b.wtlb[i].mark == 0x2000+0x5000 {
		t.Errorf("EnterMarks left page 0x5000's entries")
	}
	child := a.Fork(nil)
	if n := marks(child); n != 0 {
		t.Errorf("a fork's child has %d mark pages", n)
	}
	tab.Empty()
	if n := marks(a) + marks(b); n != 0 {
		t.Errorf("Empty left %d mark pages in the TLBs it served", n)
	}
	if n := marks(other); n != 2*len(pns) {
		t.Errorf("Empty changed a Memory it did not serve (%d marks left, want %d)", n, 2*len(pns))
	}
	for _, e := range tab.Entries {
		if e.PN != NoMarkPN {
			t.Fatalf("Empty left page %#x in the table", e.PN)
		}
	}
	if len(tab.mems) != 0 {
		t.Errorf("Empty kept %d address spaces (a tree's ended processes and their TLBs)", len(tab.mems))
	}
	fill(a)
	a.FlushTLB()
	if n := marks(a); n != 0 {
		t.Errorf("FlushTLB left %d mark pages", n)
	}
}

// markObserver is a recorder that builds summaries while recording
// (jitModeRecordTrack): it marks the accesses the interpreter makes and
// those translated code logs in its own MarkPages, and with marker (an
// AccessMarker) lets translated code mark the rest in place.
type markObserver struct {
	logObserver
	cache  *predict.Cache
	tab    MarkTable
	pages  map[uint64]*MarkPage
	logged int  // accesses translated code logged
	marker bool // the observer is a markerObserver
}

func (o *markObserver) page(pn uint64) *MarkPage {
	p := o.pages[pn]
	if p == nil {
		p = new(MarkPage)
		o.pages[pn] = p
	}
	return p
}

func (o *markObserver) mark(addr uint64, size int, kind int) {
	for i := uint64(0); i < uint64(size); i++ {
		off := (addr + i) & (PageSize - 1)
		o.page((addr + i) >> PageShift).RW[kind][off>>6] |= 1 << (off & 63)
	}
}

func (o *markObserver) MemRead(c *CPU, addr uint64, size int, val uint64) uint64 {
	o.mark(addr, size, 0)
	return val
}

func (o *markObserver) MemWrite(c *CPU, addr uint64, size int, val uint64) {
	o.mark(addr, size, 1)
}

func (o *markObserver) AccessLogCache(c *CPU) *predict.Cache { return o.cache }

func (o *markObserver) LoggedAccesses(c *CPU, acc []LoggedAccess) {
	for _, a := range acc {
		o.logged++
		o.mark(a.Addr, a.Size(), int(a.WriteBit()))
		if pn := a.Addr >> PageShift; o.marker {
			o.tab.EnterMarks(c, pn, o.page(pn))
		}
	}
}

// markerObserver is markObserver as an AccessMarker.
type markerObserver struct{ markObserver }

func (o *markerObserver) AccessMarks(c *CPU) *MarkTable { return &o.tab }

// TestJITMarksInPlace: translated code marks accesses of 1 to 16 bytes in
// the MarkPages of their TLB entries exactly as the interpreter's
// accesses mark them: across 64-byte lines and 32-byte words, at the
// ends of a page (whose bitmap's last word the mark runs past), reads,
// writes and read-modify-writes; and it marks them in place (few are
// logged), which the test checks so that it tests something.
func TestJITMarksInPlace(t *testing.T) {
	if !jitSupported {
		t.Skip("no block translation on this architecture")
	}
	var code []byte
	op := func(d int, enc ...byte) {
		code = binary.LittleEndian.AppendUint32(append(code, enc...), uint32(d))
	}
	accesses := 0
	at := func(size, d int) {
		switch size {
		case 1:
			op(d, 0x0f, 0xb6, 0x96) // movzbl d(%rsi), %edx
			op(d, 0x88, 0x96)       // mov %dl, d(%rsi)
		case 2:
			op(d, 0x0f, 0xb7, 0x96) // movzwl d(%rsi), %edx
			op(d, 0x66, 0x89, 0x96) // mov %dx, d(%rsi)
		case 4:
			op(d, 0x8b, 0x9e) // mov d(%rsi), %ebx
			op(d, 0x89, 0x9e) // mov %ebx, d(%rsi)
		case 8:
			op(d, 0x48, 0x8b, 0x8e) // mov d(%rsi), %rcx
			op(d, 0x48, 0x01, 0x86) // add %rax, d(%rsi)
			accesses += 2
		case 16:
			op(d, 0x0f, 0x10, 0x86) // movups d(%rsi), %xmm0
			op(d, 0x0f, 0x11, 0x86) // movups %xmm0, d(%rsi)
		}
		accesses += 2
	}
	// Reads only, elsewhere in the page, so that the written bitmap
	// differs from the read one.
	op(2048+63, 0x48, 0x8b, 0x8e) // mov d(%rsi), %rcx: across a line
	op(2048+30, 0x8b, 0x9e)       // mov d(%rsi), %ebx: across 32 bytes
	// Writes only, elsewhere again.
	op(3072+61, 0x48, 0x89, 0x8e) // mov %rcx, d(%rsi)
	op(3072+129, 0x89, 0x9e)      // mov %ebx, d(%rsi)
	accesses += 4
	// Read-modify-writes alone, elsewhere again, one byte further each
	// iteration (d(%rsi,%r8)), so that most are marked in place: their
	// reads are marked with their writes (loadRMW), across lines too.
	for _, a := range []struct {
		d   int
		enc []byte
	}{
		{3300, []byte{0x42, 0x00, 0x84, 0x06}},       // add %al, d(%rsi,%r8)
		{3310, []byte{0x66, 0x42, 0x01, 0x84, 0x06}}, // add %ax, d(%rsi,%r8)
		{3330, []byte{0x42, 0x01, 0x84, 0x06}},       // add %eax, d(%rsi,%r8)
		{3370, []byte{0x4a, 0x01, 0x84, 0x06}},       // add %rax, d(%rsi,%r8)
		{3420, []byte{0x4a, 0xff, 0x84, 0x06}},       // incq d(%rsi,%r8)
		{3480, []byte{0x42, 0xf7, 0x94, 0x06}},       // notl d(%rsi,%r8)
		{3520, []byte{0x66, 0x42, 0xd1, 0xa4, 0x06}}, // shlw $1, d(%rsi,%r8)
		{3560, []byte{0x42, 0x0f, 0xc1, 0x84, 0x06}}, // xadd %eax, d(%rsi,%r8)
		{3892, []byte{0x42, 0x81, 0xb4, 0x06}},       // xorl $imm, d(%rsi,%r8): up to the page's end
	} {
		op(a.d, a.enc...)
		if a.enc[1] == 0x81 {
			code = binary.LittleEndian.AppendUint32(code, 0x5a5a5a5a)
		}
		accesses += 2
	}
	for _, a := range [][2]int{
		{1, 31}, {1, 32}, {1, 127}, {1, 4095},
		{2, 63}, {2, 62}, {2, 4094}, {2, 31},
		{4, 61}, {4, 30}, {4, 4092}, {4, 253},
		{8, 57}, {8, 60}, {8, 31}, {8, 4088}, {8, 1020},
		{16, 56}, {16, 28}, {16, 4080}, {16, 1017},
	} {
		at(a[0], a[1])
	}
	code = append(code, 0x41, 0xff, 0xc8) // dec %r8d
	code = append(code, 0x0f, 0x85)       // jnz to the start
	code = binary.LittleEndian.AppendUint32(code, uint32(-(len(code) + 4)))
	code = append(code, 0x0f, 0x05) // syscall
	const data, iters = 0x600000, 200
	run := func(jit, marker bool) *markObserver {
		defer SetJIT(SetJIT(jit, 0))
		c := newTestCPU(t, code)
		c.Mem.SetPage(data>>PageShift, NewPage(), PermRead|PermWrite)
		mo := &markerObserver{markObserver{cache: predict.New(10), pages: map[uint64]*MarkPage{}}}
		mo.tab.Empty()
		o := &mo.markObserver
		c.Obs = o
		if marker {
			c.Obs, o.marker = mo, true
		}
		c.R[RSI], c.R[R8], c.R[RAX] = data, iters, 0x0101010101010101
		runToSyscallJIT(t, c, 1e6, jit)
		return o
	}
	want := run(false, false)
	if len(want.pages) == 0 {
		t.Fatal("the interpreter marked nothing")
	}
	for _, marker := range []bool{false, true} {
		got := run(true, marker)
		for pn, w := range want.pages {
			g := got.pages[pn]
			if g == nil {
				t.Errorf("marker %v: page %#x not marked", marker, pn)
				continue
			}
			for k := range w.RW {
				for i := range w.RW[k] {
					if g.RW[k][i] != w.RW[k][i] {
						t.Errorf("marker %v: page %#x %s line %d: marked %#x, want %#x", marker, pn, [2]string{"read", "written"}[k], i, g.RW[k][i], w.RW[k][i])
					}
				}
			}
		}
		if len(got.pages) != len(want.pages) {
			t.Errorf("marker %v: %d pages marked, want %d", marker, len(got.pages), len(want.pages))
		}
		if all := accesses * iters; marker && got.logged > all/10 || !marker && got.logged < all/2 {
			t.Errorf("marker %v: %d of %d accesses logged", marker, got.logged, all)
		}
	}
}
