package x86

import (
	"runtime"
	"testing"
	"time"
)

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

// TestJITDiscardFreesArena: Discard gives the cache's translations'
// chunks back at once (an address space that goes away runs none of them
// again), not when the GC collects the cache, and the cache, still
// usable, translates into an arena of its own again. (Other tests' caches
// may give chunks back meanwhile, through the GC.)
func TestJITDiscardFreesArena(t *testing.T) {
	if !jitSupported {
		t.Skip("no translator")
	}
	defer SetJIT(SetJIT(true, 0))
	kept := func(m *byte) (n int) {
		jitFree.mu.Lock()
		defer jitFree.mu.Unlock()
		for _, k := range jitFree.chunks {
			if &k[0] == m {
				n++
			}
		}
		return n
	}
	c := newTestCPU(t, storeCode)
	runCode(t, "first", c)
	if c.cache.jit == nil || len(c.cache.jit.chunks) != 1 {
		t.Fatal("nothing was translated")
	}
	first := &c.cache.jit.chunks[0][0]
	c.cache.Discard()
	if kept(first) != 1 {
		t.Fatal("Discard did not keep the cache's chunk")
	}
	other := newTestCPU(t, []byte{0xb8, 2, 0, 0, 0, 0x0f, 0x05}) // mov eax, 2; syscall
	if got := runCode(t, "other", other); got != 2 {
		t.Fatalf("the next cache returned %d", got)
	}
	c.R[RAX] = 0
	if got := runCode(t, "again", c); got != 1 || c.cache.Translated < 2 || c.cache.jit == nil {
		t.Fatalf("after Discard the cache returned %d, translated %d blocks", got, c.cache.Translated)
	}
	mine, its := &c.cache.jit.chunks[0][0], &other.cache.jit.chunks[0][0]
	if mine == its {
		t.Fatal("two caches translate into one chunk")
	}
	if got := runCode(t, "other again", other); got != 2 {
		t.Errorf("the other cache returned %d after the first translated again", got)
	}
	if kept(mine) != 0 || kept(its) != 0 {
		t.Errorf("chunks in use kept: %d and %d", kept(mine), kept(its))
	}
	// The GC's cleanup of the first cache gives its discarded arena's
	// chunk back no second time.
	c = nil
	for range 5 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if kept(its) != 0 || kept(first) > 1 {
		t.Errorf("the other cache's chunk kept %d times, the discarded one %d times", kept(its), kept(first))
	}
	runtime.KeepAlive(other)
}
