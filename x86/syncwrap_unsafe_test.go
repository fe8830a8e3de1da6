package x86

import (
	"testing"
	"unsafe"
)

// syncInner returns the handler the syncWrap closure h wraps, or nil if h
// is not one: tests compare the handlers two decodings chose. The closure
// is its code pointer followed by the one value it captured.
func syncInner(h Handler) Handler {
	if h == nil || funcPC(h) != syncWrapPC {
		return nil
	}
	clo := *(*unsafe.Pointer)(unsafe.Pointer(&h))
	return (*struct {
		fn uintptr
		h  Handler
	})(clo).h
}

var syncWrapPC = funcPC(syncWrap(illegal))

func TestSyncInner(t *testing.T) {
	if got := syncInner(syncWrap(opNop)); got == nil || funcPC(got) != funcPC(opNop) {
		t.Fatal("syncInner does not find the wrapped handler")
	}
	if syncInner(opNop) != nil {
		t.Fatal("syncInner finds a wrapped handler in one that wraps none")
	}
}

// TestInstSize keeps Inst at instSize bytes.
func TestInstSize(t *testing.T) {
	if n := unsafe.Sizeof(Inst{}); n != instSize {
		t.Fatalf("Inst is %d bytes, want %d", n, instSize)
	}
}
