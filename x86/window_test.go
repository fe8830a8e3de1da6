package x86

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"time"
	"testing"
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
