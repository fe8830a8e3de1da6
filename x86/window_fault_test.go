//go:build linux && amd64

package x86

import (
	"runtime/debug"
	"testing"
)

// hostReadable reports whether the host may read guest address a's
// place in m's window.
func hostReadable(m *Memory, a uint64) (ok bool) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	hostSink = m.winState.res.mem[winOffset+uintptr(a)]
	return true
}

var hostSink byte

// TestWindowToFault: an address space going over to host faults
// (toFault, TTD_WINFAULT_AFTER > 0: TestWindowDiff's child) keeps its
// readable pages readable in the window, with their bytes, a slot's
// readable page shown; the places of pages the guest may not read, of
// slots' pages it may not read and of pages not materialised become
// inaccessible, and a private page it may not read leaves the window
// for a slot with its bytes (Go reads it through Page.Data).
func TestWindowToFault(t *testing.T) {
	needWindow(t)
	m := NewMemory()
	if !winFault || m.winState == nil || m.winState.fault {
		t.Skip("no address space in TLB mode here (TTD_WINFAULT_AFTER > 0 wants one)")
	}
	const a, b, c, d, e = 0x200, 0x201, 0x203, 0x204, 0x202 // one region
	pa := m.NewPage(a)
	pa.Data[1] = 11
	m.SetPage(a, pa, PermRead|PermWrite)
	pb := m.NewPage(b)
	pb.Data[1] = 22
	m.SetPage(b, pb, PermWrite)
	pc := NewPage()
	pc.Data[1] = 33
	m.SetPage(c, pc, PermRead)
	pd := NewPage()
	pd.Data[1] = 44
	m.SetPage(d, pd, PermRead)
	if m.Read8(a<<PageShift+1) != 11 || m.Read8(c<<PageShift+1) != 33 || m.Read8(d<<PageShift+1) != 44 {
		t.Fatal("pages do not read their bytes")
	}
	m.Protect(d, d+1, 0, nil) // a slot's page shown, made unreadable
	if !hostReadable(m, e<<PageShift) || !hostReadable(m, b<<PageShift) {
		t.Fatal("the region is not readable before (TLB mode)")
	}
	if !m.toFault() || !m.winState.fault || !m.winFaulting() {
		t.Fatal("the window did not go over to host faults")
	}
	if !hostReadable(m, a<<PageShift) || winByte(m, a<<PageShift+1) != 11 || m.Read8(a<<PageShift+1) != 11 {
		t.Error("a readable private page is not readable with its bytes")
	}
	if !hostReadable(m, c<<PageShift) || winByte(m, c<<PageShift+1) != 33 {
		t.Error("a slot's readable page is not shown")
	}
	for _, pn := range []uint64{b, d, e} {
		if hostReadable(m, pn<<PageShift) {
			t.Errorf("page %#x's place is readable", pn)
		}
	}
	if _, ok := m.winState.over[d]; ok {
		t.Error("an unreadable slot's page is still counted as shown")
	}
	if q := m.Lookup(b); q == nil || q.slot == 0 || q.Data[1] != 22 {
		t.Error("a private page the guest may not read did not leave the window with its bytes")
	}
	// Pages entering now are opened one by one (winPage).
	pe := m.NewPage(e)
	m.SetPage(e, pe, PermRead)
	if !hostReadable(m, e<<PageShift) || m.Read8(e<<PageShift) != 0 {
		t.Error("a page entering after is not readable, zero")
	}
	m.Release()
}

// TestWindowPoolMemory: a new address space takes a released
// reservation kept with its memory before one that went over to host
// faults, which is not kept so (releaseWindow), whatever their order.
func TestWindowPoolMemory(t *testing.T) {
	needWindow(t)
	m2, m3 := NewMemory(), NewMemory()
	if !winFault || m2.winState == nil || m2.winState.fault {
		t.Skip("no address space in TLB mode here (TTD_WINFAULT_AFTER > 0 wants one)")
	}
	m2.SetPage(0x300, m2.NewPage(0x300), PermRead|PermWrite)
	m3.SetPage(0x300, m3.NewPage(0x300), PermRead|PermWrite)
	if !m3.toFault() {
		t.Fatal("no host faults")
	}
	r2, r3 := m2.winState.res, m3.winState.res
	m2.Release()
	m3.Release()
	if r2.regions == 0 || r3.regions != 0 {
		t.Skipf("pool full (%d, %d regions kept)", r2.regions, r3.regions)
	}
	m4 := NewMemory()
	defer m4.Release()
	if m4.winState.res != r2 {
		t.Error("a new address space did not take the reservation kept with its memory")
	}
}

// TestWinSettled: a process's code counts as settled at a check
// (2^22 instructions, then each doubling) from the second on, when the
// code cache made, translated or adopted, fewer than winSettleXlats
// translations since the check before; between checks it never does.
func TestWinSettled(t *testing.T) {
	if !winSettleOn {
		t.Skip("TTD_WINFAULT_AFTER is set: no early switch")
	}
	if winSettleXlats != 32 {
		t.Fatal("the steps' counts assume winSettleXlats 32")
	}
	c := &CPU{cache: &CodeCache{}}
	c.ranCheck = winSettleFirst
	steps := []struct {
		ran, translated, adopted uint64
		want                     bool
	}{
		{winSettleFirst - 1, 0, 0, false},     // before the first check
		{winSettleFirst, 20, 5, false},        // the first check only counts
		{2*winSettleFirst - 1, 30, 5, false},  // between checks
		{2 * winSettleFirst, 47, 10, false},   // winSettleXlats more
		{4 * winSettleFirst, 57, 31, true},    // one less
		{8*winSettleFirst + 5, 57, 63, false}, // winSettleXlats more adopted
	}
	for i, s := range steps {
		c.cache.Translated, c.cache.Adopted = s.translated, s.adopted
		if got := c.winSettled(s.ran); got != s.want {
			t.Fatalf("step %d (ran %d, %d translated, %d adopted): settled %v, want %v", i, s.ran, s.translated, s.adopted, got, s.want)
		}
	}
}
