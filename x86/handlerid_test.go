package x86

import "testing"

// TestHandlerID: every handler of directHandlers is found at its index
// (the last, if it is listed twice), and handlers not listed are 0.
func TestHandlerID(t *testing.T) {
	last := map[uintptr]int{}
	for i, h := range directHandlers {
		if h != nil {
			last[funcPC(h)] = i
		}
	}
	if len(last) < 100 {
		t.Fatalf("only %d direct handlers: the test tests little", len(last))
	}
	for i, h := range directHandlers {
		if h == nil {
			continue
		}
		if got, want := handlerID(h), last[funcPC(h)]; int(got) != want {
			t.Errorf("handlerID(directHandlers[%d]) = %d, want %d", i, got, want)
		}
	}
	for _, h := range []Handler{unimplemented, syncWrap(opNop), illegalFeature} {
		if _, listed := last[funcPC(h)]; !listed && handlerID(h) != 0 {
			t.Errorf("handlerID of a handler not in directHandlers = %d, want 0", handlerID(h))
		}
	}
	// Probes run on past collisions: slots are full enough here that
	// some lookups must probe (else the wrap-around is untested).
	probed := 0
	for pc := range last {
		if handlerIDs.pc[handlerSlot(pc)] != pc {
			probed++
		}
	}
	if probed == 0 {
		t.Log("no handler collided with another: the probe loop ran no further than its first slot")
	}
}
