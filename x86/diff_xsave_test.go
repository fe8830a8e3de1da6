package x86

import (
	"testing"
)

// XSAVEOPT, XSAVEC and XRSTOR of the compacted format for the
// differential test against the host (diff_test.go). The XSAVE area
// (832 bytes) is at rbx = 320 bytes below the compared memory, so that
// its header, the upper XMM registers and the AVX component are
// compared. The random inputs have every component in use (as the host
// sees them after loading them), so the init optimization writes them
// all; rax picks the components.

func TestDiffXSAVE(t *testing.T) {
	h := HostXSaveFeatures()
	if !diffYMM || !h.Has(FeatXSAVEOPT|FeatXSAVEC) {
		t.Skip("SKIPPING the XSAVEOPT/XSAVEC differential test: the host CPU lacks AVX, XSAVEOPT or XSAVEC")
	}
	gen := func(g *diffGen, s *diffState) {
		genIntY(g, s)
		s.R[RBX] = diffMemAddr - 320
		// (Only ttd's components: the host's XCR0 may have more.)
		s.R[RAX], s.R[RDX] = uint64(g.Intn(8)), 0
		s.MXCSR = 0x1f80 | uint32(g.Intn(64)) // exception flags, to see whether it is loaded
		if g.I < 8 {
			s.R[RAX] = uint64(g.I)
		}
	}
	var tb diffTable
	// XSAVEOPT with every component: with fewer, this AMD host also
	// sets XSTATE_BV bits outside RFBM, which the SDM leaves as they
	// were (and ttd does).
	all := func(g *diffGen, s *diffState) {
		gen(g, s)
		s.R[RAX] = 7
	}
	tb.add("xsaveopt (%rbx)", 40, all)
	tb.add("xsaveopt64 (%rbx)", 10, all)
	tb.add("xsavec (%rbx)", 40, gen)
	tb.add("xsavec64 (%rbx)", 10, gen)
	tb.add("xsavec 8(%rbx)", 5, gen) // #GP: misaligned
	// A compacted save, the registers zeroed, and the restore (the
	// header's bytes 16-63, which XSAVEC leaves, zero).
	round := func(g *diffGen, s *diffState) {
		gen(g, s)
		clear(s.Mem[192+16 : 256])
	}
	tb.add("xsavec (%rbx); vzeroall; xrstor (%rbx)", 40, round)
	tb.add("xsavec (%rbx); vzeroall; xrstor64 (%rbx)", 10, round)
	tb.add("xsavec (%rbx); vzeroall; xrstor (%rbx)", 5, gen) // #GP: bytes 16-63 of the header
	// XRSTOR of compacted areas made by hand (the header is at
	// rbx+512, the compared memory's byte 192): valid ones, and the
	// #GP of XSTATE_BV outside XCOMP_BV, of XCOMP_BV outside XCR0 and
	// of a header whose bytes 16-63 are not zero.
	for kind := 0; kind < 4; kind++ {
		tb.add("xrstor (%rbx)", 40, func(g *diffGen, s *diffState) {
			gen(g, s)
			comp := uint64(g.Intn(8))
			bv := comp & uint64(g.Intn(8))
			clear(s.Mem[192:256])
			switch kind {
			case 1:
				bv |= ^comp & 7
				if bv == comp {
					bv = 7
					comp = 3
				}
			case 2:
				comp |= 8
			case 3:
				s.Mem[208+g.Intn(48)] = byte(1 + g.Intn(255))
			}
			putLE64(s.Mem[192:], bv)
			putLE64(s.Mem[200:], comp|1<<63)
		})
	}
	runDiff(t, 9, tb)
}
