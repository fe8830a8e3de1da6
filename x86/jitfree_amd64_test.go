package x86

import "testing"

// TestJITChunksRecycled: a freed arena's chunks serve the next arena
// (no fresh mapping to zero), and at most jitFreeMax are kept.
func TestJITChunksRecycled(t *testing.T) {
	for jitFree.take() != nil {
	}
	code := []byte{0xc3}
	ar := &jitArena{}
	if e, _ := ar.alloc(code); e == 0 {
		t.Fatal("no chunk")
	}
	first := &ar.chunks[0][0]
	ar.free()
	next := &jitArena{}
	if e, _ := next.alloc(code); e == 0 || &next.chunks[0][0] != first {
		t.Errorf("the next arena did not take the freed chunk")
	}
	next.free()
	var arenas []*jitArena
	for range jitFreeMax + 2 {
		a := &jitArena{}
		a.alloc(code)
		arenas = append(arenas, a)
	}
	for _, a := range arenas {
		a.free()
	}
	if n := len(jitFree.chunks); n > jitFreeMax {
		t.Errorf("%d chunks kept, want at most %d", n, jitFreeMax)
	}
}
