package x86

import (
	"reflect"
	"testing"
	"unsafe"
)

// TestJITStateOnlyWhenTranslated checks that a block has a jitBlock only
// once it is translated (issue 24: most blocks of a start-up never are,
// and the state cost each of them 200 bytes): the loop of twoBlockLoop is
// translated, the block before it runs once and has none; with
// translation off none has one. The read-only state of the others stays
// zero.
func TestJITStateOnlyWhenTranslated(t *testing.T) {
	for _, jit := range []bool{false, true} {
		if jit && !jitSupported {
			continue
		}
		func() {
			defer SetJIT(SetJIT(jit, 50))
			c := newTestCPU(t, twoBlockLoop)
			c.Run(1 << 40)
			if len(c.cache.blocks) != 3 {
				t.Fatalf("jit %v: %d blocks, want 3 (the start, the loop's 2)", jit, len(c.cache.blocks))
			}
			with := 0
			for pc, b := range c.cache.blocks {
				hot := b.heat >= 50
				if b.jit != nil {
					with++
					if !jit || !hot || b.jit.entry == 0 {
						t.Errorf("jit %v: block %#x (heat %d) has a jitBlock, entry %#x", jit, pc, b.heat, b.jit.entry)
					}
				} else if jit && hot {
					t.Errorf("block %#x ran %d times but has no jitBlock", pc, b.heat)
				}
			}
			if want := map[bool]int{false: 0, true: 2}[jit]; with != want {
				t.Errorf("jit %v: %d blocks with a jitBlock, want %d", jit, with, want)
			}
			if !reflect.ValueOf(noJIT).IsZero() {
				t.Errorf("noJIT was written: %+v", noJIT)
			}
		}()
	}
}

// TestBlockSize keeps Block small: a start-up decodes tens of thousands
// of blocks (python3 -c pass: 19,600) and runs most of them a few times.
func TestBlockSize(t *testing.T) {
	if n := unsafe.Sizeof(Block{}); n > 128 {
		t.Errorf("Block is %d bytes, want at most 128", n)
	}
}

// TestVerdictWithoutJITState checks that a filter's verdict is kept
// apart from the translation state: with translation off, a filtered
// Run asks the verdict of each of twoBlockLoop's blocks once and keeps
// it (blockVerdict) without making a jitBlock (the bash x40 + python3
// tree made 281,000 of 208 bytes to hold verdicts); noVerdict stays zero.
func TestVerdictWithoutJITState(t *testing.T) {
	defer SetJIT(SetJIT(false, 50))
	c := newTestCPU(t, twoBlockLoop)
	o := &filterObserver{name: "a", want: []uint64{testCode + 12}} // B
	c.Obs = o
	c.Run(1 << 40)
	if len(c.cache.blocks) != 3 {
		t.Fatalf("%d blocks, want 3", len(c.cache.blocks))
	}
	for pc, b := range c.cache.blocks {
		if b.jit != nil {
			t.Errorf("block %#x has a jitBlock with translation off", pc)
		}
		v := b.verdict
		if v == nil || v.fgen != c.cache.filter.gen {
			t.Fatalf("block %#x: verdict %+v, want one of generation %d", pc, v, c.cache.filter.gen)
		}
		if want := b.PC <= o.want[0] && o.want[0] < b.End; (v.fmask != 0) != want {
			t.Errorf("block %#x: mask %#x, want observed %v", pc, v.fmask, want)
		}
	}
	if !reflect.ValueOf(noVerdict).IsZero() {
		t.Errorf("noVerdict was written: %+v", noVerdict)
	}
}
