package x86

// XSAVE, XRSTOR and XGETBV with the state components ttd implements:
// x87 (bit 0), SSE (bit 1) and, on a CPU with AVX, the upper halves of
// the YMM registers (bit 2, 256 bytes at offset 576 of the standard
// format). Only the standard (non-compacted) format exists: CPUID does
// not report XSAVEOPT, XSAVEC or XSAVES.

import "encoding/binary"

// XSaveSize is the size of the standard XSAVE area with the AVX
// component.
const XSaveSize = 576 + 256

// XCR0 returns the state components the CPU's features enable (what
// xgetbv reports for XCR0).
func (c *CPU) XCR0() uint64 {
	if c.cache.Features.Has(FeatAVX) {
		return 7
	}
	return 3
}

// XSave writes the components in rfbm (already masked by XCR0) to b in
// the standard format (b is at least XSaveSize bytes; the parts of
// components not in rfbm are left as they are). XSTATE_BV gets a bit for
// every component saved.
func (c *CPU) XSave(b []byte, rfbm uint64) {
	var fx [512]byte
	c.FXSave(fx[:])
	if rfbm&1 != 0 {
		copy(b[0:24], fx[0:24])
		copy(b[32:160], fx[32:160])
	}
	if rfbm&6 != 0 {
		copy(b[24:32], fx[24:32]) // MXCSR, MXCSR_MASK
	}
	if rfbm&2 != 0 {
		copy(b[160:416], fx[160:416])
	}
	if rfbm&4 != 0 {
		for i, x := range c.YH {
			binary.LittleEndian.PutUint64(b[576+16*i:], x[0])
			binary.LittleEndian.PutUint64(b[584+16*i:], x[1])
		}
	}
	bv := binary.LittleEndian.Uint64(b[512:])
	binary.LittleEndian.PutUint64(b[512:], bv&^7|rfbm&7)
}

// XRstor loads the components in rfbm from the standard-format area b:
// those whose XSTATE_BV bit is clear get their initial state. It reports
// false for the cases that raise #GP (a compacted or bad header, reserved
// MXCSR bits).
func (c *CPU) XRstor(b []byte, rfbm uint64) bool {
	bv := binary.LittleEndian.Uint64(b[512:])
	comp := binary.LittleEndian.Uint64(b[520:])
	if comp != 0 || bv&^c.XCR0() != 0 {
		return false
	}
	for _, v := range b[528:576] {
		if v != 0 {
			return false
		}
	}
	mx := uint32(binary.LittleEndian.Uint32(b[24:]))
	if rfbm&6 != 0 && mx&^MXCSRMask != 0 {
		return false
	}
	var fx [512]byte
	c.FXSave(fx[:])
	if rfbm&1 != 0 {
		if bv&1 != 0 {
			copy(fx[0:24], b[0:24])
			copy(fx[32:160], b[32:160])
		} else {
			clear(fx[0:24])
			clear(fx[32:160])
			binary.LittleEndian.PutUint16(fx[0:], 0x37f)
		}
	}
	if rfbm&6 != 0 {
		copy(fx[24:28], b[24:28])
	}
	if rfbm&2 != 0 {
		if bv&2 != 0 {
			copy(fx[160:416], b[160:416])
		} else {
			clear(fx[160:416])
		}
	}
	c.FXRstor(fx[:])
	if rfbm&4 != 0 {
		for i := range c.YH {
			if bv&4 != 0 {
				c.YH[i] = XMM{binary.LittleEndian.Uint64(b[576+16*i:]), binary.LittleEndian.Uint64(b[584+16*i:])}
			} else {
				c.YH[i] = XMM{}
			}
		}
	}
	return true
}

func (c *CPU) rfbm() uint64 { return c.XCR0() & (c.R[RDX]<<32 | c.R[RAX]&0xffffffff) }

func opXsave(c *CPU, in *Inst) {
	a := c.ea(&in.Args[0])
	if a&63 != 0 {
		c.gp()
	}
	var b [XSaveSize]byte
	c.LoadBytes(a, b[:]) // the parts not saved keep their bytes
	c.foldHostFP()
	c.XSave(b[:], c.rfbm())
	c.StoreBytes(a, b[:])
}

func opXrstor(c *CPU, in *Inst) {
	a := c.ea(&in.Args[0])
	if a&63 != 0 {
		c.gp()
	}
	var b [XSaveSize]byte
	n := 576
	if c.XCR0()&4 != 0 {
		n = XSaveSize
	}
	c.LoadBytes(a, b[:n])
	c.foldHostFP()
	if !c.XRstor(b[:], c.rfbm()) {
		c.gp()
	}
}
