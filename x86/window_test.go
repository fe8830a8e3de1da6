package x86

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	if os.Getenv("TTD_WINDOW") == "1" {
		EnableWindow()
	}
	os.Exit(m.Run())
}

// TestWindowDiff runs the differential tests of translated code again
// with the host window on (TTD_WINDOW=1: `ttd run`'s translations take
// host addresses from the window), in a child test process, since the
// window is on or off for a whole process.
func TestWindowDiff(t *testing.T) {
	if os.Getenv("TTD_WINDOW") != "" {
		t.Skip("already in a window child")
	}
	if !jitSupported || runtime.GOOS != "linux" {
		t.Skip("no host window here")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^(TestDiffJITMem|TestDiffInt.*|TestWindow.*)$")
	cmd.Env = append(os.Environ(), "TTD_WINDOW=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("with the window: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// winByte is the byte at guest address a of m's window.
func winByte(m *Memory, a uint64) byte {
	return m.winState.mem[winOffset+a]
}

func needWindow(t *testing.T) {
	if !winOn {
		t.Skip("the host window is off (TestWindowDiff runs this with it on)")
	}
}

// TestWindowRegions: pages made in address order take consecutive slots,
// and the first fill in each 2 MiB region shows all of it with one mmap;
// a page outside its natural slot is shown alone, and shown again when
// replaced.
func TestWindowRegions(t *testing.T) {
	needWindow(t)
	m := NewMemory()
	const lo, n = 0x100, 600 // regions 0 and 1
	for pn := uint64(lo); pn < lo+n; pn++ {
		p := m.NewPage(pn)
		p.Data[5] = byte(pn)
		m.SetPage(pn, p, PermRead|PermWrite)
	}
	for pn := uint64(lo); pn < lo+n; pn++ {
		if got := m.Read8(pn<<PageShift + 5); got != byte(pn) {
			t.Fatalf("page %#x reads %#x", pn, got)
		}
		if got := winByte(m, pn<<PageShift+5); got != byte(pn) {
			t.Fatalf("page %#x shows %#x in the window", pn, got)
		}
	}
	w := m.winState
	if w.regionMaps != 2 || w.singleMaps != 0 {
		t.Errorf("%d region maps and %d single ones, want 2 and 0", w.regionMaps, w.singleMaps)
	}
	// A page from outside (shared memory) at a place whose region is shown.
	q := NewPage()
	q.Data[5] = 0xab
	m.SetPage(lo+7, q, PermRead|PermWrite)
	if m.Read8((lo+7)<<PageShift+5) != 0xab || winByte(m, (lo+7)<<PageShift+5) != 0xab {
		t.Errorf("a single page is not shown")
	}
	// Back to a page in its natural slot (freed by the replacement above,
	// or another slot once taken): shown again.
	r := m.NewPage(lo + 7)
	r.Data[5] = 0xcd
	m.SetPage(lo+7, r, PermRead|PermWrite)
	m.Write8((lo+7)<<PageShift+6, 1)
	if m.Read8((lo+7)<<PageShift+5) != 0xcd || winByte(m, (lo+7)<<PageShift+5) != 0xcd || winByte(m, (lo+7)<<PageShift+6) != 1 {
		t.Errorf("a page back in its region is not shown")
	}
	// A region first shown through a single page, then through a
	// natural one: the single page stays shown.
	s := NewPage()
	s.Data[0] = 0x11
	m.SetPage(0x1000, s, PermRead)
	p := m.NewPage(0x1001)
	p.Data[0] = 0x22
	m.SetPage(0x1001, p, PermRead)
	if m.Read8(0x1000<<PageShift) != 0x11 || m.Read8(0x1001<<PageShift) != 0x22 {
		t.Fatal("reads")
	}
	if m.Read8(0x1000<<PageShift) != 0x11 || winByte(m, 0x1000<<PageShift) != 0x11 {
		t.Errorf("a region's mapping hid a single page with a TLB entry")
	}
	// Pages moved in order (mremap) to another region: shown as one
	// run of slots, with one mmap.
	before := w.singleMaps
	for k := uint64(0); k < 16; k++ {
		p, perm := m.TakePage(lo + 0x20 + k)
		m.SetPage(0x5000+k, p, perm)
	}
	for k := uint64(0); k < 16; k++ {
		if m.Read8((0x5000+k)<<PageShift+5) != byte(lo+0x20+k) || winByte(m, (0x5000+k)<<PageShift+5) != byte(lo+0x20+k) {
			t.Fatalf("moved page %#x is not shown", 0x5000+k)
		}
	}
	if w.singleMaps != before+1 {
		t.Errorf("16 moved pages took %d mmaps, want 1", w.singleMaps-before)
	}
	// Pages at or above the window's end stay out of the TLBs.
	top := uint64(winPages)
	m.SetPage(top, m.NewPage(top), PermRead)
	m.Read8(top << PageShift)
	if tlbMatches(m.rtlb, top<<PageShift, 1) {
		t.Errorf("a page above the window entered the TLB")
	}
}

// TestWindowFork: after a fork, each side's write takes a private copy
// that its own window shows, and the other side's window keeps the
// shared page.
func TestWindowFork(t *testing.T) {
	needWindow(t)
	m := NewMemory()
	for pn := uint64(0x200); pn < 0x210; pn++ {
		p := m.NewPage(pn)
		p.Data[0] = 1
		m.SetPage(pn, p, PermRead|PermWrite)
		m.Read8(pn << PageShift)
	}
	c := m.Fork(nil)
	c.Write8(0x203<<PageShift, 2)
	m.Write8(0x204<<PageShift, 3)
	for _, x := range []struct {
		m    *Memory
		pn   uint64
		want byte
	}{{c, 0x203, 2}, {m, 0x203, 1}, {c, 0x204, 1}, {m, 0x204, 3}, {c, 0x205, 1}} {
		if got := x.m.Read8(x.pn << PageShift); got != x.want {
			t.Errorf("page %#x reads %d, want %d", x.pn, got, x.want)
		}
		if got := winByte(x.m, x.pn<<PageShift); got != x.want {
			t.Errorf("page %#x shows %d, want %d", x.pn, got, x.want)
		}
	}
	// A new page of the child in a region it shares takes a free
	// natural slot.
	p := c.NewPage(0x2ff)
	if p.slot == 0 || (p.slot-1)%extPages != 0x2ff%extPages {
		t.Errorf("a child's new page in a shared region took slot %d", p.slot)
	}
}

// TestWindowSlotFreed: a page's slot is given back, zeroed, once the
// page is unreachable, and taken again by the next page.
func TestWindowSlotFreed(t *testing.T) {
	needWindow(t)
	p := NewPage()
	p.Data[9] = 7
	s := p.slot - 1
	p = nil
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		arena.Lock()
		used := arena.used[s/64]&(1<<(s%64)) != 0
		arena.Unlock()
		if !used {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slot of an unreachable page was not given back")
		}
		time.Sleep(10 * time.Millisecond)
	}
	arena.Lock()
	free := slices.Contains(arena.free, s)
	arena.Unlock()
	if !free {
		t.Errorf("the freed slot %d is not on the free list", s)
	}
	if arena.mem[uintptr(s)<<PageShift+9] != 0 {
		t.Errorf("a freed slot is not zero")
	}
}

// TestWindowRelease: a released address space's window is unmapped and
// its pages stay out of the TLBs; a fork made before keeps its own.
func TestWindowRelease(t *testing.T) {
	needWindow(t)
	m := NewMemory()
	p := m.NewPage(0x300)
	p.Data[0] = 4
	m.SetPage(0x300, p, PermRead|PermWrite)
	c := m.Fork(nil)
	m.Release()
	if m.winState != nil || m.win != 0 {
		t.Fatal("the window outlived Release")
	}
	m.SetPage(0x300, p, PermRead)
	if m.Read8(0x300<<PageShift) != 4 || tlbMatches(m.rtlb, 0x300<<PageShift, 1) {
		t.Errorf("a released address space's page entered its TLB")
	}
	if c.Read8(0x300<<PageShift) != 4 || winByte(c, 0x300<<PageShift) != 4 {
		t.Errorf("the fork lost its window")
	}
}

// TestWindowExtentReused: a region's extent is spare once no address
// space holds it (a fork holds its parent's), and the next address
// space's new region takes it when its slots are free but a few: its
// pages there are zero, in their natural slots but where a page still
// lives (it keeps its bytes; the new page gets a single slot).
func TestWindowExtentReused(t *testing.T) {
	needWindow(t)
	const base = 0x7000 << extBits // a region of its own
	m := NewMemory()
	for pn := uint64(base); pn < base+8; pn++ {
		p := m.NewPage(pn)
		p.Data[1] = 0x5c
		m.SetPage(pn, p, PermRead|PermWrite)
		m.Write8(pn<<PageShift, 1) // shown in the window
	}
	kept := m.Lookup(base + 3)
	b := m.winState.ext[base>>extBits]
	spare := func() bool {
		arena.Lock()
		defer arena.Unlock()
		return slices.Contains(arena.spare, b)
	}
	c := m.Fork(nil)
	m.Release()
	if spare() {
		t.Fatal("an extent a fork holds is spare")
	}
	c.Release()
	if !spare() {
		t.Fatal("an extent no address space holds is not spare")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		arena.Lock()
		n := extUsed(b)
		arena.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d slots of the extent still used, want 1 (the kept page's)", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// New regions until one takes the extent (others may be spare).
	n := NewMemory()
	var r uint64
	for r = 0x100; ; r++ {
		arena.Lock()
		left := len(arena.spare)
		arena.Unlock()
		n.SetPage(r<<extBits, n.NewPage(r<<extBits), PermRead|PermWrite)
		if n.winState.ext[r] == b {
			break
		}
		if left == 0 || r > 0x200 {
			t.Fatal("the spare extent was not taken")
		}
	}
	for k := uint64(0); k < 8; k++ {
		pn := r<<extBits + k
		p := n.Lookup(pn)
		if p == nil {
			p = n.NewPage(pn)
			n.SetPage(pn, p, PermRead|PermWrite)
		}
		if natural := p.slot-1 == b+uint32(k); natural == (k == 3) {
			t.Errorf("page %d of the reused extent: natural slot %v", k, natural)
		}
		if n.Read8(pn<<PageShift+1) != 0 || winByte(n, pn<<PageShift+1) != 0 {
			t.Errorf("page %d of the reused extent is not zero", k)
		}
	}
	if kept.Data[1] != 0x5c {
		t.Errorf("the page that still lives lost its bytes")
	}
	runtime.KeepAlive(kept)

	// An extent with more than spareUsed slots used (at its end) is
	// not taken.
	o := NewMemory()
	var live []*Page
	for pn := uint64(base + extPages - 40); pn < base+extPages; pn++ {
		p := o.NewPage(pn)
		o.SetPage(pn, p, PermRead|PermWrite)
		live = append(live, p)
	}
	b2 := o.winState.ext[base>>extBits]
	o.Release()
	arena.Lock()
	used := extUsed(b2)
	saved := arena.spare
	arena.spare = []uint32{b2}
	got, _ := newExtent(true)
	arena.spare = saved
	arena.Unlock()
	if used != 40 || got == b2 {
		t.Errorf("an extent with %d slots used (want 40) was taken: %v", used, got == b2)
	}
	runtime.KeepAlive(live)
}
