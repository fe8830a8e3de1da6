package x86

// SSE2 packed-integer instructions on XMM registers. The MMX forms of the
// same opcodes (64-bit mm registers) are not implemented: x86-64 code
// does not use them.

import (
	"encoding/binary"

	"golang.org/x/arch/x86/x86asm"
)

// Lane views of an XMM value.

func bytesOf(x XMM) (b [16]uint8) {
	binary.LittleEndian.PutUint64(b[:8], x[0])
	binary.LittleEndian.PutUint64(b[8:], x[1])
	return
}

func fromBytes(b [16]uint8) XMM {
	return XMM{binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])}
}

func wordsOf(x XMM) (w [8]uint16) {
	for i := range w {
		w[i] = uint16(x[i>>2] >> (16 * uint(i&3)))
	}
	return
}

func fromWords(w [8]uint16) (x XMM) {
	for i, v := range w {
		x[i>>2] |= uint64(v) << (16 * uint(i&3))
	}
	return
}

func dwordsOf(x XMM) [4]uint32 {
	return [4]uint32{uint32(x[0]), uint32(x[0] >> 32), uint32(x[1]), uint32(x[1] >> 32)}
}

func fromDwords(d [4]uint32) XMM {
	return XMM{uint64(d[0]) | uint64(d[1])<<32, uint64(d[2]) | uint64(d[3])<<32}
}

// SWAR helpers: h has the top bit of each lane set.
const (
	hiB = 0x8080808080808080
	hiW = 0x8000800080008000
	hiD = 0x8000000080000000
)

func swarAdd(a, b, h uint64) uint64 { return (a&^h + b&^h) ^ (a^b)&h }
func swarSub(a, b, h uint64) uint64 { return (a | h - b&^h) ^ (a^^b)&h }

// swarEq returns all ones in each lane (of top bit h, lane width w) where
// a and b are equal.
func swarEq(a, b, h uint64, w uint) uint64 {
	x := a ^ b
	t := (x&^h + ^h) | x // top bit of a lane set iff the lane is nonzero
	m := ^t & h
	return (m >> (w - 1)) * (1<<w - 1)
}

func lanesAdd(h uint64) xfn {
	return func(c *CPU, in *Inst, d *XMM, s XMM) { d[0], d[1] = swarAdd(d[0], s[0], h), swarAdd(d[1], s[1], h) }
}

func lanesSub(h uint64) xfn {
	return func(c *CPU, in *Inst, d *XMM, s XMM) { d[0], d[1] = swarSub(d[0], s[0], h), swarSub(d[1], s[1], h) }
}

func lanesEq(h uint64, w uint) xfn {
	return func(c *CPU, in *Inst, d *XMM, s XMM) { d[0], d[1] = swarEq(d[0], s[0], h, w), swarEq(d[1], s[1], h, w) }
}

func pcmpeqbXX(c *CPU, in *Inst) {
	d, s := &c.X[in.Args[0].Reg&15], &c.X[in.Args[1].Reg&15]
	d[0], d[1] = swarEq(d[0], s[0], hiB, 8), swarEq(d[1], s[1], hiB, 8)
}

// byteOp and wordOp apply f to each byte (word) lane pair.
func byteOp(f func(a, b uint8) uint8) xfn {
	return func(c *CPU, in *Inst, d *XMM, s XMM) {
		x, y := bytesOf(*d), bytesOf(s)
		for i := range x {
			x[i] = f(x[i], y[i])
		}
		*d = fromBytes(x)
	}
}

func wordOp(f func(a, b uint16) uint16) xfn {
	return func(c *CPU, in *Inst, d *XMM, s XMM) {
		x, y := wordsOf(*d), wordsOf(s)
		for i := range x {
			x[i] = f(x[i], y[i])
		}
		*d = fromWords(x)
	}
}

func dwordOp(f func(a, b uint32) uint32) xfn {
	return func(c *CPU, in *Inst, d *XMM, s XMM) {
		x, y := dwordsOf(*d), dwordsOf(s)
		for i := range x {
			x[i] = f(x[i], y[i])
		}
		*d = fromDwords(x)
	}
}

func satS8(v int) uint8 {
	if v > 127 {
		return 0x7f
	}
	if v < -128 {
		return 0x80
	}
	return uint8(v)
}

func satU8(v int) uint8 {
	if v > 255 {
		return 0xff
	}
	if v < 0 {
		return 0
	}
	return uint8(v)
}

func satS16(v int) uint16 {
	if v > 32767 {
		return 0x7fff
	}
	if v < -32768 {
		return 0x8000
	}
	return uint16(v)
}

func satU16(v int) uint16 {
	if v > 65535 {
		return 0xffff
	}
	if v < 0 {
		return 0
	}
	return uint16(v)
}

func boolMask8(b bool) uint8 {
	if b {
		return 0xff
	}
	return 0
}

func boolMask16(b bool) uint16 {
	if b {
		return 0xffff
	}
	return 0
}

func boolMask32(b bool) uint32 {
	if b {
		return 0xffffffff
	}
	return 0
}

// buildShift picks psllw and friends: by an immediate, or by the low 64
// bits of an XMM register or aligned m128. f shifts one 64-bit half by a
// count that is already known to be below the lane width; big handles
// counts at or above it (zero, or the sign for psraw/psrad).
func buildShift(op x86asm.Op, w uint, f func(x uint64, n uint) uint64, big func(x uint64) uint64) Builder {
	apply := func(d *XMM, n uint64) {
		if n >= uint64(w) {
			d[0], d[1] = big(d[0]), big(d[1])
			return
		}
		d[0], d[1] = f(d[0], uint(n)), f(d[1], uint(n))
	}
	// Static handlers (shiftImm, buildSSE's) that find apply by the op:
	// a code file keeps only blocks whose handlers are static.
	shiftApply[op] = apply
	sseBody[op] = func(c *CPU, in *Inst, d *XMM, s XMM) { apply(d, s[0]) }
	return func(in *Inst) Handler {
		if !isX(&in.Args[0]) {
			return nil
		}
		if in.Args[1].Kind == KImm {
			return xmmShiftImm
		}
		return buildSSE(in)
	}
}

// shiftApply is the shift of each op buildShift registered.
var shiftApply [x86asm.Op(4096)]func(d *XMM, n uint64)

func xmmShiftImm(c *CPU, in *Inst) {
	shiftApply[in.Op&4095](&c.X[in.Args[0].Reg&15], in.Args[1].Imm&0xff)
}

// Per-lane shifts of a 64-bit half (lanes of w bits, mask m of the lane's
// low bits).
func shlLanes(x uint64, n uint, w uint, lowMask uint64) uint64 {
	// Shift the whole word and clear the bits that crossed into the next
	// lane: the low n bits of each lane.
	keep := lowMask << n & lowMask // bits of one lane that survive, shifted
	var m uint64
	for i := uint(0); i < 64; i += w {
		m |= keep << i
	}
	return x << n & m
}

func shrLanes(x uint64, n uint, w uint, lowMask uint64) uint64 {
	keep := lowMask >> n
	var m uint64
	for i := uint(0); i < 64; i += w {
		m |= keep << i
	}
	return x >> n & m
}

func sarLanes(x uint64, n uint, w uint) uint64 {
	var r uint64
	mask := uint64(1)<<w - 1
	for i := uint(0); i < 64; i += w {
		v := int64(x>>i&mask) << (64 - w) >> (64 - w)
		r |= uint64(v>>n) & mask << i
	}
	return r
}

func signFill(x uint64, w uint) uint64 { return sarLanes(x, w-1, w) }

func init() {
	sse(lanesAdd(hiB), x86asm.PADDB)
	sse(lanesAdd(hiW), x86asm.PADDW)
	sse(lanesAdd(hiD), x86asm.PADDD)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) { d[0], d[1] = d[0]+s[0], d[1]+s[1] }, x86asm.PADDQ)
	sse(lanesSub(hiB), x86asm.PSUBB)
	sse(lanesSub(hiW), x86asm.PSUBW)
	sse(lanesSub(hiD), x86asm.PSUBD)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) { d[0], d[1] = d[0]-s[0], d[1]-s[1] }, x86asm.PSUBQ)

	sse(byteOp(func(a, b uint8) uint8 { return satS8(int(int8(a)) + int(int8(b))) }), x86asm.PADDSB)
	sse(wordOp(func(a, b uint16) uint16 { return satS16(int(int16(a)) + int(int16(b))) }), x86asm.PADDSW)
	sse(byteOp(func(a, b uint8) uint8 { return satU8(int(a) + int(b)) }), x86asm.PADDUSB)
	sse(wordOp(func(a, b uint16) uint16 { return satU16(int(a) + int(b)) }), x86asm.PADDUSW)
	sse(byteOp(func(a, b uint8) uint8 { return satS8(int(int8(a)) - int(int8(b))) }), x86asm.PSUBSB)
	sse(wordOp(func(a, b uint16) uint16 { return satS16(int(int16(a)) - int(int16(b))) }), x86asm.PSUBSW)
	sse(byteOp(func(a, b uint8) uint8 { return satU8(int(a) - int(b)) }), x86asm.PSUBUSB)
	sse(wordOp(func(a, b uint16) uint16 { return satU16(int(a) - int(b)) }), x86asm.PSUBUSW)

	sse(wordOp(func(a, b uint16) uint16 { return a * b }), x86asm.PMULLW)
	sse(wordOp(func(a, b uint16) uint16 { return uint16(int32(int16(a)) * int32(int16(b)) >> 16) }), x86asm.PMULHW)
	sse(wordOp(func(a, b uint16) uint16 { return uint16(uint32(a) * uint32(b) >> 16) }), x86asm.PMULHUW)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		d[0], d[1] = d[0]&0xffffffff*(s[0]&0xffffffff), d[1]&0xffffffff*(s[1]&0xffffffff)
	}, x86asm.PMULUDQ)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		x, y := wordsOf(*d), wordsOf(s)
		var r [4]uint32
		for i := range r {
			r[i] = uint32(int32(int16(x[2*i]))*int32(int16(y[2*i])) + int32(int16(x[2*i+1]))*int32(int16(y[2*i+1])))
		}
		*d = fromDwords(r)
	}, x86asm.PMADDWD)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		x, y := bytesOf(*d), bytesOf(s)
		var r XMM
		for h := 0; h < 2; h++ {
			var sum uint64
			for i := 8 * h; i < 8*h+8; i++ {
				if x[i] > y[i] {
					sum += uint64(x[i] - y[i])
				} else {
					sum += uint64(y[i] - x[i])
				}
			}
			r[h] = sum
		}
		*d = r
	}, x86asm.PSADBW)
	sse(byteOp(func(a, b uint8) uint8 { return uint8((uint(a) + uint(b) + 1) >> 1) }), x86asm.PAVGB)
	sse(wordOp(func(a, b uint16) uint16 { return uint16((uint(a) + uint(b) + 1) >> 1) }), x86asm.PAVGW)
	sse(byteOp(func(a, b uint8) uint8 { return min(a, b) }), x86asm.PMINUB)
	sse(byteOp(func(a, b uint8) uint8 { return max(a, b) }), x86asm.PMAXUB)
	sse(wordOp(func(a, b uint16) uint16 { return uint16(min(int16(a), int16(b))) }), x86asm.PMINSW)
	sse(wordOp(func(a, b uint16) uint16 { return uint16(max(int16(a), int16(b))) }), x86asm.PMAXSW)

	sseBody[x86asm.PCMPEQB] = lanesEq(hiB, 8)
	register(x86asm.PCMPEQB, func(in *Inst) Handler {
		if isX(&in.Args[0]) && isX(&in.Args[1]) {
			return pcmpeqbXX
		}
		return buildSSE(in)
	})
	sse(lanesEq(hiW, 16), x86asm.PCMPEQW)
	sse(lanesEq(hiD, 32), x86asm.PCMPEQD)
	sse(byteOp(func(a, b uint8) uint8 { return boolMask8(int8(a) > int8(b)) }), x86asm.PCMPGTB)
	sse(wordOp(func(a, b uint16) uint16 { return boolMask16(int16(a) > int16(b)) }), x86asm.PCMPGTW)
	sse(dwordOp(func(a, b uint32) uint32 { return boolMask32(int32(a) > int32(b)) }), x86asm.PCMPGTD)

	zero := func(uint64) uint64 { return 0 }
	register(x86asm.PSLLW, buildShift(x86asm.PSLLW, 16, func(x uint64, n uint) uint64 { return shlLanes(x, n, 16, 0xffff) }, zero))
	register(x86asm.PSLLD, buildShift(x86asm.PSLLD, 32, func(x uint64, n uint) uint64 { return shlLanes(x, n, 32, 0xffffffff) }, zero))
	register(x86asm.PSLLQ, buildShift(x86asm.PSLLQ, 64, func(x uint64, n uint) uint64 { return x << n }, zero))
	register(x86asm.PSRLW, buildShift(x86asm.PSRLW, 16, func(x uint64, n uint) uint64 { return shrLanes(x, n, 16, 0xffff) }, zero))
	register(x86asm.PSRLD, buildShift(x86asm.PSRLD, 32, func(x uint64, n uint) uint64 { return shrLanes(x, n, 32, 0xffffffff) }, zero))
	register(x86asm.PSRLQ, buildShift(x86asm.PSRLQ, 64, func(x uint64, n uint) uint64 { return x >> n }, zero))
	register(x86asm.PSRAW, buildShift(x86asm.PSRAW, 16, func(x uint64, n uint) uint64 { return sarLanes(x, n, 16) },
		func(x uint64) uint64 { return signFill(x, 16) }))
	register(x86asm.PSRAD, buildShift(x86asm.PSRAD, 32, func(x uint64, n uint) uint64 { return sarLanes(x, n, 32) },
		func(x uint64) uint64 { return signFill(x, 32) }))
	// Static handlers (the count from the immediate at each run): a
	// code file keeps only blocks whose handlers are static.
	byteShift := func(h Handler) Builder {
		return func(in *Inst) Handler {
			if !isX(&in.Args[0]) || in.Args[1].Kind != KImm {
				return nil
			}
			return h
		}
	}
	register(x86asm.PSLLDQ, byteShift(pslldq))
	register(x86asm.PSRLDQ, byteShift(psrldq))

	// Interleaves.
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		x, y := bytesOf(*d), bytesOf(s)
		var r [16]uint8
		for i := 0; i < 8; i++ {
			r[2*i], r[2*i+1] = x[i], y[i]
		}
		*d = fromBytes(r)
	}, x86asm.PUNPCKLBW)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		x, y := bytesOf(*d), bytesOf(s)
		var r [16]uint8
		for i := 0; i < 8; i++ {
			r[2*i], r[2*i+1] = x[8+i], y[8+i]
		}
		*d = fromBytes(r)
	}, x86asm.PUNPCKHBW)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		x, y := wordsOf(*d), wordsOf(s)
		*d = fromWords([8]uint16{x[0], y[0], x[1], y[1], x[2], y[2], x[3], y[3]})
	}, x86asm.PUNPCKLWD)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		x, y := wordsOf(*d), wordsOf(s)
		*d = fromWords([8]uint16{x[4], y[4], x[5], y[5], x[6], y[6], x[7], y[7]})
	}, x86asm.PUNPCKHWD)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		d[0], d[1] = d[0]&0xffffffff|s[0]<<32, d[0]>>32|s[0]&^0xffffffff
	}, x86asm.PUNPCKLDQ)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		d[0], d[1] = d[1]&0xffffffff|s[1]<<32, d[1]>>32|s[1]&^0xffffffff
	}, x86asm.PUNPCKHDQ)

	// Packs with saturation: the destination's lanes go to the low half.
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		x, y := wordsOf(*d), wordsOf(s)
		var r [16]uint8
		for i := 0; i < 8; i++ {
			r[i], r[8+i] = satS8(int(int16(x[i]))), satS8(int(int16(y[i])))
		}
		*d = fromBytes(r)
	}, x86asm.PACKSSWB)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		x, y := wordsOf(*d), wordsOf(s)
		var r [16]uint8
		for i := 0; i < 8; i++ {
			r[i], r[8+i] = satU8(int(int16(x[i]))), satU8(int(int16(y[i])))
		}
		*d = fromBytes(r)
	}, x86asm.PACKUSWB)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		x, y := dwordsOf(*d), dwordsOf(s)
		var r [8]uint16
		for i := 0; i < 4; i++ {
			r[i], r[4+i] = satS16(int(int32(x[i]))), satS16(int(int32(y[i])))
		}
		*d = fromWords(r)
	}, x86asm.PACKSSDW)

	// Shuffles with an immediate.
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		imm := in.Args[2].Imm
		v := dwordsOf(s)
		*d = fromDwords([4]uint32{v[imm&3], v[imm>>2&3], v[imm>>4&3], v[imm>>6&3]})
	}, x86asm.PSHUFD)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		imm := in.Args[2].Imm
		w := wordsOf(s)
		d[0] = uint64(w[imm&3]) | uint64(w[imm>>2&3])<<16 | uint64(w[imm>>4&3])<<32 | uint64(w[imm>>6&3])<<48
		d[1] = s[1]
	}, x86asm.PSHUFLW)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		imm := in.Args[2].Imm
		w := wordsOf(s)
		d[0] = s[0]
		d[1] = uint64(w[4+imm&3]) | uint64(w[4+imm>>2&3])<<16 | uint64(w[4+imm>>4&3])<<32 | uint64(w[4+imm>>6&3])<<48
	}, x86asm.PSHUFHW)

	register(x86asm.PEXTRW, func(in *Inst) Handler {
		if isMem(&in.Args[0]) {
			return pextrwMem(in) // SSE4.1
		}
		if in.Args[0].Kind != KReg || !isX(&in.Args[1]) || in.Args[2].Kind != KImm {
			return nil
		}
		return func(c *CPU, in *Inst) {
			n := in.Args[2].Imm & 7
			c.R[in.Args[0].Reg] = c.X[in.Args[1].Reg&15][n>>2] >> (16 * (n & 3)) & 0xffff
		}
	})
	register(x86asm.PINSRW, func(in *Inst) Handler {
		if !isX(&in.Args[0]) || in.Args[1].Kind != KReg && !isMem(&in.Args[1]) || in.Args[2].Kind != KImm {
			return nil
		}
		return func(c *CPU, in *Inst) {
			var v uint64
			if o := &in.Args[1]; o.Kind == KReg {
				v = c.R[o.Reg] & 0xffff
			} else {
				v = c.load16(c.ea(o))
			}
			n := in.Args[2].Imm & 7
			sh := 16 * (n & 3)
			x := &c.X[in.Args[0].Reg&15][n>>2]
			*x = *x&^(0xffff<<sh) | v<<sh
		}
	})
}

// shiftBytes shifts a 128-bit value left or right by n bytes.
func pslldq(c *CPU, in *Inst) {
	d := &c.X[in.Args[0].Reg&15]
	*d = shiftBytes(*d, uint(in.Args[1].Imm&0xff), true)
}

func psrldq(c *CPU, in *Inst) {
	d := &c.X[in.Args[0].Reg&15]
	*d = shiftBytes(*d, uint(in.Args[1].Imm&0xff), false)
}

func shiftBytes(x XMM, n uint, left bool) XMM {
	if n > 15 {
		return XMM{}
	}
	b := bytesOf(x)
	var r [16]uint8
	if left {
		copy(r[n:], b[:16-n])
	} else {
		copy(r[:16-n], b[n:])
	}
	return fromBytes(r)
}
