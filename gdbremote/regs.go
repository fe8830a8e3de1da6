package gdbremote

import (
	"fmt"
	"strings"
	"sync"

	"ttd/ttd"
)

// The registers as target.xml numbers them (gdb's amd64 order): the
// general registers, rip, eflags, the segment selectors, the x87 stack
// and control registers, the SSE registers and mxcsr, orig_rax, and
// fs_base and gs_base.
const (
	regRIP     = 16
	regEFLAGS  = 17
	regCS      = 18
	regST0     = 24
	regFCTRL   = 32
	regXMM0    = 40
	regMXCSR   = 56
	regOrigRAX = 57
	regFSBase  = 58
	regGSBase  = 59
	// NumRegs is the number of registers target.xml describes.
	NumRegs = 60
)

// gprIndex maps gdb's order of the first 16 registers (rax, rbx, rcx,
// rdx, rsi, rdi, rbp, rsp, r8-r15) to the hardware order of
// ttd.Registers.GPR (rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8-r15).
var gprIndex = [16]int{0, 3, 1, 2, 6, 7, 5, 4, 8, 9, 10, 11, 12, 13, 14, 15}

var gprNames = [16]string{"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"}

// Segment selectors: Linux gives every 64-bit user process these (the
// emulator has no segments but fs and gs bases).
var segSelectors = [6]uint64{0x33, 0x2b, 0, 0, 0, 0} // cs ss ds es fs gs

// appendReg appends register n of r in target byte order, in hex;
// orig_rax, which the recording does not keep, is unavailable ('x').
func appendReg(dst []byte, r *ttd.Registers, n int) []byte {
	switch {
	case n < 16:
		return HexUint(dst, r.GPR[gprIndex[n]], 8)
	case n == regRIP:
		return HexUint(dst, r.RIP, 8)
	case n == regEFLAGS:
		return HexUint(dst, r.RFLAGS, 4)
	case n < regST0:
		return HexUint(dst, segSelectors[n-regCS], 4)
	case n < regFCTRL:
		b, _ := r.ST(n - regST0)
		return HexBytes(dst, b[:])
	case n < regXMM0:
		return HexUint(dst, uint64(x87Control(r, n-regFCTRL)), 4)
	case n < regMXCSR:
		x := r.XMM[n-regXMM0]
		return HexUint(HexUint(dst, x[0], 8), x[1], 8)
	case n == regMXCSR:
		return HexUint(dst, uint64(r.MXCSR), 4)
	case n == regOrigRAX:
		return Unavailable(dst, 8)
	case n == regFSBase:
		return HexUint(dst, r.FSBase, 8)
	case n == regGSBase:
		return HexUint(dst, r.GSBase, 8)
	}
	return dst
}

// x87Control is fctrl, fstat, ftag, fiseg, fioff, foseg, fooff or fop
// (i = 0..7).
func x87Control(r *ttd.Registers, i int) uint32 {
	f := &r.FPU
	switch i {
	case 0:
		return uint32(f.CW)
	case 1:
		return uint32(r.FSW())
	case 2:
		return uint32(fullTag(r))
	case 3:
		return uint32(f.FIP >> 32)
	case 4:
		return uint32(f.FIP)
	case 5:
		return uint32(f.FDP >> 32)
	case 6:
		return uint32(f.FDP)
	}
	return uint32(f.FOP)
}

// fullTag expands the abridged tag (a bit per valid physical register)
// into the x87 tag word: 00 valid, 01 zero, 10 special, 11 empty.
func fullTag(r *ttd.Registers) uint16 {
	var tw uint16
	for phys := 0; phys < 8; phys++ {
		t := uint16(3)
		if r.FPU.Tag&(1<<phys) != 0 {
			var b [10]byte
			r.FPU.Regs[phys].Bytes(b[:])
			exp := uint16(b[9]&0x7f)<<8 | uint16(b[8])
			var mant uint64
			for i := 7; i >= 0; i-- {
				mant = mant<<8 | uint64(b[i])
			}
			switch {
			case exp == 0 && mant == 0:
				t = 1
			case exp == 0x7fff || exp == 0 || mant>>63 == 0:
				t = 2
			default:
				t = 0
			}
		}
		tw |= t << (2 * phys)
	}
	return tw
}

// targetXML describes the registers to gdb: the amd64 core, SSE, Linux
// and segment-base features. It is built on first use, not at package
// initialisation, which every ttd command pays.
var targetXML = sync.OnceValue(func() string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0"?>
<!DOCTYPE target SYSTEM "gdb-target.dtd">
<target version="1.0">
<architecture>i386:x86-64</architecture>
<osabi>GNU/Linux</osabi>
<feature name="org.gnu.gdb.i386.core">
<flags id="i386_eflags" size="4">
<field name="CF" start="0" end="0"/><field name="" start="1" end="1"/><field name="PF" start="2" end="2"/>
<field name="AF" start="4" end="4"/><field name="ZF" start="6" end="6"/><field name="SF" start="7" end="7"/>
<field name="TF" start="8" end="8"/><field name="IF" start="9" end="9"/><field name="DF" start="10" end="10"/>
<field name="OF" start="11" end="11"/><field name="NT" start="14" end="14"/><field name="RF" start="16" end="16"/>
<field name="VM" start="17" end="17"/><field name="AC" start="18" end="18"/><field name="VIF" start="19" end="19"/>
<field name="VIP" start="20" end="20"/><field name="ID" start="21" end="21"/>
</flags>
`)
	for i, n := range gprNames {
		typ := "int64"
		switch n {
		case "rbp", "rsp":
			typ = "data_ptr"
		}
		fmt.Fprintf(&b, "<reg name=%q bitsize=\"64\" type=%q regnum=\"%d\"/>\n", n, typ, i)
	}
	fmt.Fprintf(&b, "<reg name=\"rip\" bitsize=\"64\" type=\"code_ptr\" regnum=\"%d\"/>\n", regRIP)
	fmt.Fprintf(&b, "<reg name=\"eflags\" bitsize=\"32\" type=\"i386_eflags\" regnum=\"%d\"/>\n", regEFLAGS)
	for i, n := range []string{"cs", "ss", "ds", "es", "fs", "gs"} {
		fmt.Fprintf(&b, "<reg name=%q bitsize=\"32\" type=\"int32\" regnum=\"%d\"/>\n", n, regCS+i)
	}
	for i := 0; i < 8; i++ {
		fmt.Fprintf(&b, "<reg name=\"st%d\" bitsize=\"80\" type=\"i387_ext\" regnum=\"%d\"/>\n", i, regST0+i)
	}
	for i, n := range []string{"fctrl", "fstat", "ftag", "fiseg", "fioff", "foseg", "fooff", "fop"} {
		fmt.Fprintf(&b, "<reg name=%q bitsize=\"32\" type=\"int\" group=\"float\" regnum=\"%d\"/>\n", n, regFCTRL+i)
	}
	b.WriteString(`</feature>
<feature name="org.gnu.gdb.i386.sse">
<vector id="v4f" type="ieee_single" count="4"/>
<vector id="v2d" type="ieee_double" count="2"/>
<vector id="v16i8" type="int8" count="16"/>
<vector id="v8i16" type="int16" count="8"/>
<vector id="v4i32" type="int32" count="4"/>
<vector id="v2i64" type="int64" count="2"/>
<union id="vec128">
<field name="v4_float" type="v4f"/><field name="v2_double" type="v2d"/><field name="v16_int8" type="v16i8"/>
<field name="v8_int16" type="v8i16"/><field name="v4_int32" type="v4i32"/><field name="v2_int64" type="v2i64"/>
<field name="uint128" type="uint128"/>
</union>
<flags id="i386_mxcsr" size="4">
<field name="IE" start="0" end="0"/><field name="DE" start="1" end="1"/><field name="ZE" start="2" end="2"/>
<field name="OE" start="3" end="3"/><field name="UE" start="4" end="4"/><field name="PE" start="5" end="5"/>
<field name="DAZ" start="6" end="6"/><field name="IM" start="7" end="7"/><field name="DM" start="8" end="8"/>
<field name="ZM" start="9" end="9"/><field name="OM" start="10" end="10"/><field name="UM" start="11" end="11"/>
<field name="PM" start="12" end="12"/><field name="FZ" start="15" end="15"/>
</flags>
`)
	for i := 0; i < 16; i++ {
		fmt.Fprintf(&b, "<reg name=\"xmm%d\" bitsize=\"128\" type=\"vec128\" regnum=\"%d\"/>\n", i, regXMM0+i)
	}
	fmt.Fprintf(&b, "<reg name=\"mxcsr\" bitsize=\"32\" type=\"i386_mxcsr\" group=\"vector\" regnum=\"%d\"/>\n", regMXCSR)
	fmt.Fprintf(&b, "</feature>\n<feature name=\"org.gnu.gdb.i386.linux\">\n<reg name=\"orig_rax\" bitsize=\"64\" type=\"int\" regnum=\"%d\"/>\n</feature>\n", regOrigRAX)
	fmt.Fprintf(&b, "<feature name=\"org.gnu.gdb.i386.segments\">\n<reg name=\"fs_base\" bitsize=\"64\" type=\"int\" regnum=\"%d\"/>\n<reg name=\"gs_base\" bitsize=\"64\" type=\"int\" regnum=\"%d\"/>\n</feature>\n</target>\n", regFSBase, regGSBase)
	return b.String()
})
