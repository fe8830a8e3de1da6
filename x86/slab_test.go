package x86

import (
	"testing"
	"unsafe"
)

// TestKeepSlabs checks decodeBlock's slabs (keep): each block's copy is
// equal to what it was given, does not alias the scratch buffer it came
// from, cannot grow into the next block's, and blocks share a slab while
// it has room.
func TestKeepSlabs(t *testing.T) {
	var slab []int
	scratch := []int{1, 2}
	a := keep(&slab, scratch, 4)
	scratch[0], scratch[1] = 3, 4
	b := keep(&slab, scratch, 4)
	scratch[0] = 9
	c := keep(&slab, scratch[:1], 4)
	if a[0] != 1 || a[1] != 2 || b[0] != 3 || b[1] != 4 || c[0] != 9 || len(c) != 1 {
		t.Fatalf("kept %v %v %v", a, b, c)
	}
	if cap(a) != len(a) || cap(b) != len(b) {
		t.Errorf("capacities %d, %d: appending to a block would write into the next", cap(a), cap(b))
	}
	if &a[0] == &scratch[0] {
		t.Error("keep returned the scratch buffer")
	}
	if unsafe.Pointer(&b[0]) != unsafe.Add(unsafe.Pointer(&a[0]), 2*unsafe.Sizeof(a[0])) {
		t.Error("a slab with room for the second block was not used")
	}
	if len(slab) != 1 || cap(slab) != 4 {
		t.Errorf("the third block is in a slab of %d of %d: want a new one of 4", len(slab), cap(slab))
	}
	big := keep(&slab, make([]int, 9), 4)
	if len(big) != 9 {
		t.Errorf("a block larger than a slab: kept %d of 9", len(big))
	}
}
