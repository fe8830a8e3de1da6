package x86

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"
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
	// And with translated reads' host faults (winfault_linux.go): none,
	// from the start, after a few instructions of each address space
	// (toFault while it runs).
	for _, env := range []string{"TTD_WINFAULT=0", "TTD_WINFAULT=1", "TTD_WINFAULT_AFTER=300"} {
		cmd := exec.Command(os.Args[0], "-test.run", "^(TestDiffJITMem|TestDiffInt.*|TestWindow.*)$")
		cmd.Env = append(os.Environ(), "TTD_WINDOW=1", env)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("with the window (%s): %v\n%s", env, err, out)
		}
		t.Logf("%s", out)
	}
}

// winByte is the byte at guest address a of m's window, read through
// /proc/self/mem: with winFault the place may be inaccessible.
func winByte(m *Memory, a uint64) byte {
	f, err := os.Open("/proc/self/mem")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	var b [1]byte
	if _, err := f.ReadAt(b[:], int64(m.win+uintptr(a))); err != nil {
		panic(err)
	}
	return b[0]
}

func needWindow(t *testing.T) {
	if !winOn {
		t.Skip("the host window is off (TestWindowDiff runs this with it on)")
	}
}

// inWindow reports whether p's data is at page pn's place in m's window.
func inWindow(m *Memory, pn uint64, p *Page) bool {
	return uintptr(unsafe.Pointer(p.Data)) == m.win+uintptr(pn)<<PageShift
}

// TestWindowPages: a private page is at its place in the window, which
// no mmap shows; a page from outside (shared memory) is shown over it
// with an mmap of its slot, and a private page there again is anonymous
// memory, zero; pages moved (mremap) leave the window for slots, shown
// as one run.
func TestWindowPages(t *testing.T) {
	needWindow(t)
	m := NewMemory()
	const lo, n = 0x100, 600 // regions 0 and 1
	for pn := uint64(lo); pn < lo+n; pn++ {
		p := m.NewPage(pn)
		if !inWindow(m, pn, p) || p.slot != 0 {
			t.Fatalf("page %#x is not in the window", pn)
		}
		p.Data[5] = byte(pn)
		m.SetPage(pn, p, PermRead|PermWrite)
	}
	for pn := uint64(lo); pn < lo+n; pn++ {
		if got := m.Read8(pn<<PageShift + 5); got != byte(pn) {
			t.Fatalf("page %#x reads %#x", pn, got)
		}
		m.Write8(pn<<PageShift+6, 9)
		if got := winByte(m, pn<<PageShift+5); got != byte(pn) || !tlbMatches(m.wtlb, pn<<PageShift, 1) {
			t.Fatalf("page %#x shows %#x in the window", pn, got)
		}
	}
	w := m.winState
	if w.singleMaps != 0 || w.res.regions != 2 {
		t.Errorf("%d mmaps and %d regions, want 0 and 2", w.singleMaps, w.res.regions)
	}
	// A page from outside (shared memory) over a private one.
	q := NewPage()
	q.Data[5] = 0xab
	m.SetPage(lo+7, q, PermRead|PermWrite)
	if m.Read8((lo+7)<<PageShift+5) != 0xab || winByte(m, (lo+7)<<PageShift+5) != 0xab || w.singleMaps != 1 {
		t.Errorf("a slot's page is not shown")
	}
	// A private page there again: anonymous memory, zero, and the
	// slot's page keeps its bytes.
	r := m.NewPage(lo + 7)
	m.SetPage(lo+7, r, PermRead|PermWrite)
	m.Write8((lo+7)<<PageShift+6, 1)
	if m.Read8((lo+7)<<PageShift+5) != 0 || winByte(m, (lo+7)<<PageShift+6) != 1 || q.Data[6] != 0 || q.Data[5] != 0xab {
		t.Errorf("a private page over a slot's place is not anonymous memory")
	}
	if _, ok := w.over[lo+7]; ok {
		t.Errorf("the slot is still counted as shown")
	}
	// Pages moved (mremap) to another region: copied to their new
	// place in the window, which no mmap shows; a new page where they
	// were is zero. A slot's page moved stays the same page.
	before := w.singleMaps
	for k := uint64(0); k < 16; k++ {
		m.MovePage(lo+0x20+k, 0x5000+k)
	}
	m.SetPage(0x4ff0, q, PermRead)
	m.MovePage(0x4ff0, 0x4ff1)
	for k := uint64(0); k < 16; k++ {
		pn := 0x5000 + k
		if p := m.Lookup(pn); p == nil || !inWindow(m, pn, p) || m.Lookup(lo+0x20+k) != nil {
			t.Fatalf("moved page %#x is not at its new place", pn)
		}
		if m.Read8(pn<<PageShift+5) != byte(lo+0x20+k) || winByte(m, pn<<PageShift+5) != byte(lo+0x20+k) {
			t.Fatalf("moved page %#x does not show its bytes", pn)
		}
	}
	if m.Lookup(0x4ff1) != q || m.Lookup(0x4ff0) != nil || m.Read8(0x4ff1<<PageShift+5) != 0xab {
		t.Errorf("a slot's page moved is not the same page")
	}
	if w.singleMaps != before+1 {
		t.Errorf("16 moved pages and a slot's took %d mmaps, want 1", w.singleMaps-before)
	}
	if p := m.NewPage(lo + 0x21); p.Data[5] != 0 || p.Data[6] != 0 {
		t.Errorf("a new page where a page was moved from is not zero")
	}
	// Pages at or above the window's end stay out of the TLBs.
	top := uint64(winPages)
	m.SetPage(top, m.NewPage(top), PermRead)
	m.Read8(top << PageShift)
	if tlbMatches(m.rtlb, top<<PageShift, 1) {
		t.Errorf("a page above the window entered the TLB")
	}
}

// TestWindowFork: a fork copies its parent's private pages into its own
// window, each side's writes its own; a page from outside is shared
// copy-on-write as before, the writer's copy in its window.
func TestWindowFork(t *testing.T) {
	needWindow(t)
	m := NewMemory()
	for pn := uint64(0x200); pn < 0x210; pn++ {
		p := m.NewPage(pn)
		p.Data[0] = 1
		m.SetPage(pn, p, PermRead|PermWrite)
		m.Read8(pn << PageShift)
	}
	s := NewPage()
	s.Data[0] = 1
	m.SetPage(0x210, s, PermRead|PermWrite)
	c := m.Fork(nil)
	if p := c.Lookup(0x203); !inWindow(c, 0x203, p) || p.cow != 0 || m.Lookup(0x203).cow != 0 {
		t.Fatalf("a fork's private page is not its own, in its window")
	}
	if s.cow != 1 || c.Lookup(0x210) != s {
		t.Fatalf("a slot's page is not shared copy-on-write")
	}
	c.Write8(0x203<<PageShift, 2)
	m.Write8(0x204<<PageShift, 3)
	c.Write8(0x210<<PageShift, 4)
	for _, x := range []struct {
		m    *Memory
		pn   uint64
		want byte
	}{{c, 0x203, 2}, {m, 0x203, 1}, {c, 0x204, 1}, {m, 0x204, 3}, {c, 0x205, 1}, {c, 0x210, 4}, {m, 0x210, 1}} {
		if got := x.m.Read8(x.pn << PageShift); got != x.want {
			t.Errorf("page %#x reads %d, want %d", x.pn, got, x.want)
		}
		if got := winByte(x.m, x.pn<<PageShift); got != x.want {
			t.Errorf("page %#x shows %d, want %d", x.pn, got, x.want)
		}
	}
	if p := c.Lookup(0x210); !inWindow(c, 0x210, p) || s.cow != 0 {
		t.Errorf("the copy-on-write copy is not the child's own")
	}
}

// TestWindowSlotFreed: a page's slot is given back, zeroed, once the
// page is unreachable.
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
		free := slices.Contains(arena.free, s)
		arena.Unlock()
		if free {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slot of an unreachable page was not given back")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if arena.mem[uintptr(s)<<PageShift+9] != 0 {
		t.Errorf("a freed slot is not zero")
	}
}

// TestWindowRelease: a released address space loses its window and its
// pages stay out of the TLBs; a fork made before keeps its own.
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
	q := NewPage()
	q.Data[0] = 4
	m.SetPage(0x300, q, PermRead)
	if m.Read8(0x300<<PageShift) != 4 || tlbMatches(m.rtlb, 0x300<<PageShift, 1) {
		t.Errorf("a released address space's page entered its TLB")
	}
	if c.Read8(0x300<<PageShift) != 4 || winByte(c, 0x300<<PageShift) != 4 {
		t.Errorf("the fork lost its window")
	}
}

// TestWindowReuse: the next address space takes a released window with
// its memory (a small one); its new pages there are zero, a slot shown
// there before is anonymous memory again, and a large window is made a
// fresh reservation.
func TestWindowReuse(t *testing.T) {
	needWindow(t)
	arena.Lock()
	saved := arena.pool
	arena.pool = nil
	arena.Unlock()
	defer func() {
		arena.Lock()
		arena.pool = saved
		arena.Unlock()
	}()
	m := NewMemory()
	for pn := uint64(0x400); pn < 0x410; pn++ {
		p := m.NewPage(pn)
		p.Data[3] = 0x77
		m.SetPage(pn, p, PermRead|PermWrite)
	}
	s := NewPage()
	s.Data[3] = 0x66
	m.SetPage(0x420, s, PermRead|PermWrite)
	m.Read8(0x420 << PageShift) // shown over the window
	win := m.win
	m.Release()
	n := NewMemory()
	if n.win != win || n.winState.res.regions != 1 {
		t.Fatalf("the released window was not taken with its memory (%d regions)", n.winState.res.regions)
	}
	if winByte(n, 0x405<<PageShift+3) != 0x77 {
		t.Errorf("the released window's memory was given back")
	}
	p := n.NewPage(0x405)
	if p.Data[3] != 0 {
		t.Errorf("a new page in a reused window is not zero")
	}
	q := n.NewPage(0x420)
	n.SetPage(0x420, q, PermRead|PermWrite)
	n.Write8(0x420<<PageShift+3, 1)
	if s.Data[3] != 0x66 || q.Data[3] != 1 {
		t.Errorf("a slot shown before is not anonymous memory again")
	}
	// A window of more than winKeep regions is made afresh.
	for r := uint64(0); r <= winKeep; r++ {
		pn := (0x1000 + r) << regionBits
		n.SetPage(pn, n.NewPage(pn), PermRead|PermWrite)
	}
	n.Release()
	o := NewMemory()
	if o.win != win || o.winState.res.regions != 0 || o.winState.res.rw[0] != 0 {
		t.Errorf("a large released window was kept with its memory")
	}
	o.Release()
}

// TestWindowDiscard: unmapping many private pages gives their memory
// back (Discard); a few are left for the next page there to clear.
func TestWindowDiscard(t *testing.T) {
	needWindow(t)
	m := NewMemory()
	fill := func(lo, n uint64) {
		for pn := lo; pn < lo+n; pn++ {
			p := m.NewPage(pn)
			p.Data[1] = 0x55
			m.SetPage(pn, p, PermRead|PermWrite)
		}
	}
	drop := func(lo, n uint64) {
		for pn := lo; pn < lo+n; pn++ {
			m.SetPage(pn, nil, 0)
		}
		m.Discard(lo, lo+n)
	}
	fill(0x600, discardMin)
	drop(0x600, discardMin)
	if winByte(m, 0x600<<PageShift+1) != 0 || winByte(m, (0x600+discardMin-1)<<PageShift+1) != 0 {
		t.Errorf("%d pages unmapped kept their memory", discardMin)
	}
	fill(0x700, discardMin-1)
	drop(0x700, discardMin-1)
	if winByte(m, 0x700<<PageShift+1) != 0x55 {
		t.Errorf("%d pages unmapped were given back", discardMin-1)
	}
	if p := m.NewPage(0x700); p.Data[1] != 0 {
		t.Errorf("a new page where one was unmapped is not zero")
	}
	m.Release()
}

// TestWindowKeepBound: at most winKeepMax released windows keep their
// memory; the others are fresh reservations.
func TestWindowKeepBound(t *testing.T) {
	needWindow(t)
	arena.Lock()
	saved := arena.pool
	arena.pool = nil
	arena.Unlock()
	defer func() {
		arena.Lock()
		arena.pool = append(saved, arena.pool...)
		arena.Unlock()
	}()
	var ms []*Memory
	for range winKeepMax + 2 {
		m := NewMemory()
		m.SetPage(0x800, m.NewPage(0x800), PermRead|PermWrite)
		ms = append(ms, m)
	}
	for _, m := range ms {
		m.Release()
	}
	arena.Lock()
	kept := 0
	for _, r := range arena.pool {
		if r.regions > 0 {
			kept++
		}
	}
	n := len(arena.pool)
	arena.Unlock()
	if kept != winKeepMax || n != winKeepMax+2 {
		t.Errorf("%d of %d released windows kept their memory, want %d of %d", kept, n, winKeepMax, winKeepMax+2)
	}
}

// TestWindowGoFault: with translated reads' faults handled (winfault),
// a nil dereference in Go still panics with a runtime error, which
// recover sees, and an unrecovered one still crashes the process as Go
// crashes it.
func TestWindowGoFault(t *testing.T) {
	needWindow(t)
	if !winFault {
		t.Skip("no host faults for translated reads")
	}
	var p *[1 << 20]byte
	err := func() (err any) {
		defer func() { err = recover() }()
		return p[12345]
	}()
	if re, ok := err.(runtime.Error); !ok || !strings.Contains(re.Error(), "nil pointer dereference") {
		t.Fatalf("nil dereference: recovered %v", err)
	}
	if os.Getenv("TTD_WINFAULT_CRASH") == "1" {
		_ = p[54321]
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestWindowGoFault$")
	cmd.Env = append(os.Environ(), "TTD_WINFAULT_CRASH=1")
	out, err2 := cmd.CombinedOutput()
	if err2 == nil || !strings.Contains(string(out), "panic: runtime error: invalid memory address or nil pointer dereference") ||
		!strings.Contains(string(out), "[signal SIGSEGV") {
		t.Fatalf("unrecovered nil dereference: %v\n%s", err2, out)
	}
}
