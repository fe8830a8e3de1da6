package x86

import "testing"

// TestMissTLBNeverHits checks the TLB the handlers use while an observer
// must see every access: made once, on first use, with every entry
// empty; a new CPU starts on its memory's own TLBs, and Run's syncTLB
// moves it to the missing one when an observer is attached.
func TestMissTLBNeverHits(t *testing.T) {
	c := newTestCPU(t, loopCode)
	if c.rtlb != c.Mem.rtlb || c.wtlb != c.Mem.wtlb {
		t.Error("a new CPU does not start on its memory's TLBs")
	}
	tlb := missTLB()
	if missTLB() != tlb {
		t.Error("missTLB made a second table")
	}
	for i, e := range tlb {
		if e.tag != noTag {
			t.Fatalf("entry %d has tag %#x, want none (noTag)", i, e.tag)
		}
	}
	c.Obs = &logObserver{}
	c.syncTLB()
	if c.rtlb != tlb || c.wtlb != tlb {
		t.Error("with an observer and no prediction cache, the handlers do not use the missing TLB")
	}
}
