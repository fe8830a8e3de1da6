package x86

import "testing"

// TestDiscardEmptiesTheCache: after Discard no block is valid or found,
// no table of translations leads into the old code, the pages lose their
// code mark, and the same code runs again from a fresh decoding with the
// same result.
func TestDiscardEmptiesTheCache(t *testing.T) {
	defer SetJIT(SetJIT(true, 0))
	c := newTestCPU(t, chainCode)
	if e := c.Run(1 << 30); e.Reason != ExitSyscall {
		t.Fatalf("exit %v, want a syscall", e.Reason)
	}
	cc := c.cache
	want := c.R
	if cc.Translated == 0 {
		t.Fatal("nothing was translated: the test tests nothing")
	}
	var old []*Block
	for _, b := range cc.blocks {
		old = append(old, b)
	}
	pn := uint64(testCode >> PageShift)
	if !c.Mem.Lookup(pn).code {
		t.Fatal("the code page has no code mark before Discard")
	}
	cc.Discard()
	for _, b := range old {
		if b.valid {
			t.Errorf("block at %#x still valid", b.PC)
		}
		if cc.lookup(b.PC) != nil {
			t.Errorf("block at %#x still found", b.PC)
		}
	}
	for m, tab := range cc.jitTab {
		if tab == nil {
			continue
		}
		for i, e := range tab {
			if e != (jitTabEntry{}) {
				t.Fatalf("table of mode %d, entry %d: %#x still leads to a translation", m, i, e.pc)
			}
		}
	}
	if len(cc.byPage) != 0 || c.Mem.Lookup(pn).code {
		t.Errorf("byPage has %d pages, code mark %v after Discard", len(cc.byPage), c.Mem.Lookup(pn).code)
	}
	decodes := cc.Decodes
	c.RIP, c.R = testCode, [16]uint64{RSP: testStack - 64}
	if e := c.Run(1 << 30); e.Reason != ExitSyscall || c.R != want {
		t.Fatalf("after Discard: exit %v, registers %x, want a syscall and %x", e.Reason, c.R, want)
	}
	if cc.Decodes == decodes {
		t.Error("nothing was decoded again after Discard")
	}
}
