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

// TestKeepZero: keepZero's slices are zeroed, as long as asked, with no
// room past their end (an append must not reach the next one's), and
// consecutive ones share a slab until it is full.
func TestKeepZero(t *testing.T) {
	var slab []uintptr
	a := keepZero(&slab, 3, 16)
	for i := range a {
		a[i] = ^uintptr(0)
	}
	b := keepZero(&slab, 4, 16)
	if len(a) != 3 || cap(a) != 3 || len(b) != 4 || cap(b) != 4 {
		t.Fatalf("len/cap %d/%d and %d/%d, want 3/3 and 4/4", len(a), cap(a), len(b), cap(b))
	}
	if &slab[0] != &a[0] || &slab[3] != &b[0] {
		t.Errorf("not consecutive in one slab")
	}
	for i, v := range b {
		if v != 0 {
			t.Errorf("b[%d] = %#x, want 0", i, v)
		}
	}
	_ = append(a, 7)
	if b[0] != 0 {
		t.Errorf("an append to a wrote b[0]")
	}
	// 7 taken, 8 more fit the 16, the next 4 do not: a new slab.
	keepZero(&slab, 4, 16)
	keepZero(&slab, 4, 16)
	if len(slab) != 15 {
		t.Fatalf("slab len %d after 15 taken, want 15", len(slab))
	}
	keepZero(&slab, 4, 16)
	if len(slab) != 4 || cap(slab) != 16 {
		t.Errorf("slab len/cap %d/%d after 4 that did not fit, want a new one: 4/16", len(slab), cap(slab))
	}
	// Larger than a quarter of the slab: its own.
	e := keepZero(&slab, 5, 16)
	if len(e) != 5 || len(slab) != 4 {
		t.Errorf("a slice of 5 of a slab of 16 came from the slab (slab len %d)", len(slab))
	}
}
