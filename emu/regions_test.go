package emu

import (
	"slices"
	"testing"
)

// TestDroppedMerges checks that the discarded ranges stay sorted and
// merged (an unrecorded process never takes them: the list must not
// grow with the number of munmaps) and that Dropped empties the list.
func TestDroppedMerges(t *testing.T) {
	mm := NewMM()
	for _, r := range []Range{{0x5000, 0x6000}, {0x1000, 0x2000}, {0x2000, 0x3000}, {0x8000, 0x9000}, {0x5800, 0x8000}, {0x1000, 0x1000}} {
		mm.noteDropped(r.Start, r.End)
	}
	want := []Range{{0x1000, 0x3000}, {0x5000, 0x9000}}
	if got := mm.Dropped(nil); !slices.Equal(got, want) {
		t.Fatalf("got %x, want %x", got, want)
	}
	if got := mm.Dropped(nil); len(got) != 0 {
		t.Fatalf("second call: got %x, want nothing", got)
	}
}
