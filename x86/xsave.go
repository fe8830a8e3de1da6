package x86

// XSAVE, XSAVEOPT, XSAVEC, XRSTOR and XGETBV with the state components
// ttd implements: x87 (bit 0), SSE (bit 1) and, on a CPU with AVX, the
// upper halves of the YMM registers (bit 2, 256 bytes at offset 576 of
// the standard format, and at 576 of the compacted format too, AVX being
// the only extended component). XSAVEOPT and XSAVEC use the init
// optimization (a component not in use is not written and its XSTATE_BV
// bit is 0), XSAVEC the compacted format, which XRSTOR restores (Intel
// SDM vol. 1, 13.8-13.10); XSAVEOPT's modified optimization only skips
// writing what memory already holds, so it is not modelled. XINUSE, the
// processor's record of the components in use, is approximated as "not in
// the initial configuration", which the SDM allows. XSAVES is not
// implemented (CPUID does not report it).

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

// xinuse is the XINUSE bitmap: the components (x87, SSE, AVX) that are
// not in their initial configuration, from the fxsave image fx.
func (c *CPU) xinuse(fx []byte) uint64 {
	var u uint64
	if binary.LittleEndian.Uint16(fx) != 0x37f || !allZero(fx[2:24]) || !allZero(fx[32:160]) {
		u |= 1
	}
	if !allZero(fx[160:416]) {
		u |= 2
	}
	if c.YH != ([16]XMM{}) {
		u |= 4
	}
	return u & c.XCR0()
}

func allZero(b []byte) bool {
	for _, v := range b {
		if v != 0 {
			return false
		}
	}
	return true
}

// XSaveOpt is XSave with the init optimization: the components in rfbm
// that are in use are written, and XSTATE_BV says which (the
// bits outside rfbm keep theirs).
func (c *CPU) XSaveOpt(b []byte, rfbm uint64) {
	var fx [512]byte
	c.FXSave(fx[:])
	save := rfbm & c.xinuse(fx[:])
	c.XSave(b, save)
	if rfbm&6 != 0 {
		copy(b[24:32], fx[24:32]) // MXCSR, MXCSR_MASK: no optimization
	}
	bv := binary.LittleEndian.Uint64(b[512:])
	binary.LittleEndian.PutUint64(b[512:], bv&^rfbm|save)
}

// XSaveC writes the components in rfbm that are in use to b in the
// compacted format (b holds 576 bytes, and 256 more for AVX with rfbm
// bit 2): XSTATE_BV says which were written, XCOMP_BV is rfbm with bit
// 63; the rest of the header keeps its bytes (as the host's does: an
// XRSTOR of the area then needs them zero).
func (c *CPU) XSaveC(b []byte, rfbm uint64) {
	var fx [512]byte
	c.FXSave(fx[:])
	save := rfbm & c.xinuse(fx[:])
	if save&1 != 0 {
		copy(b[0:24], fx[0:24])
		copy(b[32:160], fx[32:160])
	}
	if rfbm&6 != 0 {
		copy(b[24:32], fx[24:32])
	}
	if save&2 != 0 {
		copy(b[160:416], fx[160:416])
	}
	if save&4 != 0 {
		for i, x := range c.YH {
			binary.LittleEndian.PutUint64(b[576+16*i:], x[0])
			binary.LittleEndian.PutUint64(b[584+16*i:], x[1])
		}
	}
	binary.LittleEndian.PutUint64(b[512:], save)
	binary.LittleEndian.PutUint64(b[520:], rfbm|1<<63)
}

// XRstor loads the components in rfbm from the standard-format area b:
// those whose XSTATE_BV bit is clear get their initial state. It reports
// false for the cases that raise #GP (a compacted or bad header, reserved
// MXCSR bits).
func (c *CPU) XRstor(b []byte, rfbm uint64) bool {
	bv := binary.LittleEndian.Uint64(b[512:])
	comp := binary.LittleEndian.Uint64(b[520:])
	if comp&(1<<63) != 0 {
		// The compacted format: its components are where the
		// standard format has them (AVX, the only extended one, is
		// first), those not in XCOMP_BV absent.
		if comp&^(1<<63)&^c.XCR0() != 0 || bv&^comp != 0 {
			return false
		}
	} else if comp != 0 || bv&^c.XCR0() != 0 {
		return false
	}
	for _, v := range b[528:576] {
		if v != 0 {
			return false
		}
	}
	// MXCSR comes from memory when rfbm has SSE or AVX; in the
	// compacted format only with SSE's bits of rfbm and XSTATE_BV, and
	// it gets its initial value with rfbm's alone.
	mx := uint32(binary.LittleEndian.Uint32(b[24:]))
	loadMX := rfbm&6 != 0
	if comp&(1<<63) != 0 && loadMX && bv&rfbm&2 == 0 {
		loadMX = false
		if rfbm&2 != 0 {
			mx = 0x1f80
		} else {
			mx = c.MXCSR
		}
		binary.LittleEndian.PutUint32(b[24:], mx)
	}
	if loadMX && mx&^MXCSRMask != 0 {
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

func opXsaveopt(c *CPU, in *Inst) {
	a := c.ea(&in.Args[0])
	if a&63 != 0 {
		c.gp()
	}
	var b [XSaveSize]byte
	c.LoadBytes(a, b[:])
	c.foldHostFP()
	c.XSaveOpt(b[:], c.rfbm())
	c.StoreBytes(a, b[:])
}

func opXsavec(c *CPU, in *Inst) {
	a := c.ea(&in.Args[0])
	if a&63 != 0 {
		c.gp()
	}
	rfbm := c.rfbm()
	n := 576
	if rfbm&4 != 0 {
		n = XSaveSize
	}
	var b [XSaveSize]byte
	c.LoadBytes(a, b[:n]) // the parts not saved keep their bytes
	c.foldHostFP()
	c.XSaveC(b[:n], rfbm)
	c.StoreBytes(a, b[:n])
}

func opXrstor(c *CPU, in *Inst) {
	a := c.ea(&in.Args[0])
	if a&63 != 0 {
		c.gp()
	}
	var b [XSaveSize]byte
	c.LoadBytes(a, b[:576])
	// The AVX component: in the standard format with XCR0's bit 2, in
	// the compacted one with XCOMP_BV's.
	if comp := binary.LittleEndian.Uint64(b[520:]); comp&(1<<63) == 0 && c.XCR0()&4 != 0 || comp&(1<<63|4) == 1<<63|4 {
		c.LoadBytes(a+576, b[576:])
	}
	c.foldHostFP()
	if !c.XRstor(b[:], c.rfbm()) {
		c.gp()
	}
}
