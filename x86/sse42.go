package x86

// SSE4.2 (x86-64-v2): the string compares pcmpestri, pcmpestrm,
// pcmpistri and pcmpistrm, and crc32 (pcmpgtq is in sse41.go with the
// other compares). The string compares follow the Intel SDM's
// description (vol. 2, 4.1 "Imm8 control byte operation for PCMPESTRI,
// PCMPESTRM, PCMPISTRI and PCMPISTRM"); their memory operand needs no
// alignment.

import (
	"golang.org/x/arch/x86/x86asm"
)

// strElems returns the n elements (16 bytes or 8 words, by imm bits 0-1)
// of x, as signed or unsigned integers.
func strElems(x XMM, imm uint64) (e [16]int, n int) {
	signed := imm&2 != 0
	if imm&1 == 0 {
		for i, b := range bytesOf(x) {
			e[i] = int(b)
			if signed {
				e[i] = int(int8(b))
			}
		}
		return e, 16
	}
	for i, w := range wordsOf(x) {
		e[i] = int(w)
		if signed {
			e[i] = int(int16(w))
		}
	}
	return e, 8
}

// implicitLen is the index of the first zero element (n if none).
func implicitLen(e *[16]int, n int) int {
	for i := 0; i < n; i++ {
		if e[i] == 0 {
			return i
		}
	}
	return n
}

// explicitLen is the absolute value of a length register, saturated to n.
func explicitLen(v uint64, wide bool, n int) int {
	var l int64
	if wide {
		l = int64(v)
	} else {
		l = int64(int32(v))
	}
	if l < 0 {
		l = -l
		if l < 0 { // the most negative value
			return n
		}
	}
	return int(min(l, int64(n)))
}

// pcmpstr computes IntRes2 of the string compare with control imm of a
// (length la) and b (length lb).
func pcmpstr(a, b *[16]int, la, lb, n int, imm uint64) uint32 {
	var r uint32
	switch imm >> 2 & 3 {
	case 0: // equal any: b[j] is in a's set
		for j := 0; j < lb; j++ {
			for i := 0; i < la; i++ {
				if a[i] == b[j] {
					r |= 1 << j
					break
				}
			}
		}
	case 1: // ranges: a holds (lo, hi) pairs
		for j := 0; j < lb; j++ {
			for i := 0; i+1 < la; i += 2 {
				if a[i] <= b[j] && b[j] <= a[i+1] {
					r |= 1 << j
					break
				}
			}
		}
	case 2: // equal each
		for i := 0; i < n; i++ {
			va, vb := i < la, i < lb
			if va && vb && a[i] == b[i] || !va && !vb {
				r |= 1 << i
			}
		}
	case 3: // equal ordered: a occurs in b at j
		for j := 0; j < n; j++ {
			ok := true
			for k := 0; j+k < n && ok; k++ {
				switch {
				case k >= la: // the needle ended: a match so far
					k = n
				case j+k >= lb:
					ok = false
				default:
					ok = a[k] == b[j+k]
				}
			}
			if ok {
				r |= 1 << j
			}
		}
	}
	all := uint32(1)<<n - 1
	switch imm >> 4 & 3 {
	case 1:
		r ^= all
	case 3:
		r ^= uint32(1)<<lb - 1
	}
	return r
}

// pcmpstrOp runs one of the four string compares: explicit lengths (rax,
// rdx) or implicit (zero-terminated), an index in ecx or a mask in xmm0.
func pcmpstrOp(explicit, index bool) Builder {
	h := pcmpstrHandlers[b2i(explicit)*2+b2i(index)]
	return func(in *Inst) Handler {
		if !isX(&in.Args[0]) || !isX(&in.Args[1]) && !isMem(&in.Args[1]) || in.Args[2].Kind != KImm {
			return nil
		}
		return h
	}
}

// pcmpstrHandlers are the four forms' handlers, static functions (a code
// file keeps only blocks whose handlers are), by explicit*2+index.
var pcmpstrHandlers = [4]Handler{
	func(c *CPU, in *Inst) { pcmpstr1(c, in, false, false) },
	func(c *CPU, in *Inst) { pcmpstr1(c, in, false, true) },
	func(c *CPU, in *Inst) { pcmpstr1(c, in, true, false) },
	func(c *CPU, in *Inst) { pcmpstr1(c, in, true, true) },
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pcmpstr1 runs one of the four: the immediate and REX.W read at each run.
func pcmpstr1(c *CPU, in *Inst, explicit, index bool) {
	imm := in.Args[2].Imm & 0xff
	wide := in.OpSize == 8 // REX.W: 64-bit lengths
	s := c.srcX(in, &in.Args[1], false)
	a, n := strElems(c.X[in.Args[0].Reg&15], imm)
	b, _ := strElems(s, imm)
	var la, lb int
	if explicit {
		la, lb = explicitLen(c.R[RAX], wide, n), explicitLen(c.R[RDX], wide, n)
	} else {
		la, lb = implicitLen(&a, n), implicitLen(&b, n)
	}
	r := pcmpstr(&a, &b, la, lb, n, imm)
	if index {
		i := n
		if r != 0 {
			if imm&0x40 == 0 {
				i = trailingZeros32(r)
			} else {
				i = 63 - leadingZeros(uint64(r))
			}
		}
		c.R[RCX] = uint64(i)
	} else if imm&0x40 == 0 {
		c.X[0] = XMM{uint64(r)}
	} else if n == 16 {
		var m [16]uint8
		for i := range m {
			m[i] = boolMask8(r>>i&1 != 0)
		}
		c.X[0] = fromBytes(m)
	} else {
		var m [8]uint16
		for i := range m {
			m[i] = boolMask16(r>>i&1 != 0)
		}
		c.X[0] = fromWords(m)
	}
	fl := b2u(r != 0)*FlagCF | b2u(lb < n)*FlagZF | b2u(la < n)*FlagSF | (uint64(r)&1)*FlagOF
	c.setArith(ArithFlags, fl)
}

func trailingZeros32(v uint32) int {
	n := 0
	for v&1 == 0 {
		v >>= 1
		n++
	}
	return n
}

// crc32cTable is the byte table of CRC-32C (Castagnoli, reflected
// polynomial 0x82f63b78), the CRC the crc32 instruction computes.
var crc32cTable = func() (t [256]uint32) {
	for i := range t {
		v := uint32(i)
		for k := 0; k < 8; k++ {
			if v&1 != 0 {
				v = v>>1 ^ 0x82f63b78
			} else {
				v >>= 1
			}
		}
		t[i] = v
	}
	return
}()

// opCrc32 accumulates the source's bytes into the low 32 bits of the
// destination (no inversion before or after, unlike most CRC-32C
// libraries); the result is zero-extended.
func opCrc32(c *CPU, in *Inst) {
	s := &in.Args[1]
	n := int(s.Size)
	if s.Kind == KMem {
		n = int(in.MemSize)
	}
	v := c.get(s)
	crc := uint32(c.R[in.Args[0].Reg])
	for i := 0; i < n; i++ {
		crc = crc>>8 ^ crc32cTable[byte(crc)^byte(v)]
		v >>= 8
	}
	c.R[in.Args[0].Reg] = uint64(crc)
}

func init() {
	register(x86asm.PCMPESTRI, pcmpstrOp(true, true))
	register(x86asm.PCMPESTRM, pcmpstrOp(true, false))
	register(x86asm.PCMPISTRI, pcmpstrOp(false, true))
	register(x86asm.PCMPISTRM, pcmpstrOp(false, false))
	register(x86asm.CRC32, func(in *Inst) Handler {
		if in.Args[0].Kind != KReg || in.Args[1].Kind != KReg && in.Args[1].Kind != KReg8H && !isMem(&in.Args[1]) {
			return nil
		}
		return opCrc32
	})
}
