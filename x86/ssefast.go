package x86

import (
	"math"
	"unsafe"

	"golang.org/x/arch/x86/x86asm"
)

// Fast paths for the hottest scalar double-precision arithmetic. When
// MXCSR is the default (all exceptions masked, round to nearest, no DAZ or
// FTZ) with the sticky precision flag already set — the state almost every
// program runs in — and the operands and result are ordinary numbers, the
// only flag the instruction could raise is PE, already set: the result is
// Go's IEEE arithmetic and MXCSR does not change. Everything else goes to
// the exact handler built by sse_fp.go (kept in Inst.inner).
//
// When a fast path with a memory operand gives up, the exact handler
// reads the operand again: the read is observed twice, identically when
// recording and replaying.
//
// This file's name sorts after sse*.go so its init wraps their builders.

const mxFastPE = mxDefault | MxPE

func fastPE(c *CPU) bool { return c.MXCSR&0xffe0 == mxFastPE }

func init() {
	type fast struct{ xx, xm Handler }
	table := map[x86asm.Op]fast{
		x86asm.ADDSD:   {addsdXX, addsdXM},
		x86asm.SUBSD:   {subsdXX, subsdXM},
		x86asm.MULSD:   {mulsdXX, mulsdXM},
		x86asm.DIVSD:   {divsdXX, divsdXM},
		x86asm.SQRTSD:  {sqrtsdXX, sqrtsdXM},
		x86asm.UCOMISD: {comisdXX, comisdXM},
		x86asm.COMISD:  {comisdXX, comisdXM},
		x86asm.ADDPD:   {addpdXX, addpdXM},
		x86asm.SUBPD:   {subpdXX, subpdXM},
		x86asm.MULPD:   {mulpdXX, mulpdXM},
	}
	for op, f := range table {
		orig, f := builders[op], f
		builders[op] = func(in *Inst) Handler {
			h := orig(in)
			if h == nil || in.Lock || in.Args[0].Kind != KXMM {
				return h
			}
			switch in.Args[1].Kind {
			case KXMM:
				in.inner = h
				return f.xx
			case KMem:
				in.inner = h
				return f.xm
			}
			return h
		}
	}
}

// ordinary reports a normal or zero double.
func ordinary(x uint64) bool { return (x>>52&0x7ff)-1 < 0x7fe || x<<1 == 0 }

// normalResult reports a result that is normal and not in the lowest
// binade (where rounding may have hidden an underflow).
func normalResult(x uint64) bool { return (x>>52&0x7ff)-2 < 0x7fd }

// noDenormal reports that neither a nor b is a denormal: x<<1 drops the
// sign, and a denormal's is in [2, 2^53). With both operands free of
// denormals (no DE), a finite sum or difference raises at most PE: NaN and
// infinite operands give a NaN or infinite result, and a tiny sum of
// normals is exact. Products and quotients need a normal result as well.
func noDenormal(a, b uint64) bool { return min(a<<1-2, b<<1-2) >= 1<<53-2 }

// xf views the XMM registers as float64 lanes, so that the compiler loads
// and stores the operands of the register forms with MOVSD and folds a load
// into the arithmetic, with no round trip through a general register.
func (c *CPU) xf() *[16][2]float64 { return (*[16][2]float64)(unsafe.Pointer(&c.X)) }

// finite reports a result that is neither infinite nor a NaN.
func finite(r uint64) bool { return r<<1 < 0x7ff<<53 }

func addsdXX(c *CPU, in *Inst) {
	x, d, b := c.xf(), in.Args[0].Reg&15, in.Args[1].Reg&15
	if r := x[d][0] + x[b][0]; fastPE(c) && noDenormal(c.X[d][0], c.X[b][0]) && finite(math.Float64bits(r)) {
		x[d][0] = r
		return
	}
	in.inner(c, in)
}

func addsdXM(c *CPU, in *Inst) {
	if fastPE(c) {
		d := &c.X[in.Args[0].Reg&15]
		ea := c.ea(&in.Args[1])
		b, ok := c.tryLoad64(ea)
		if !ok || c.Pred != nil && !c.Pred.Hit(ea, 8, b) {
			b = c.loadSlow(ea, 8)
		}
		if r := c.xf()[in.Args[0].Reg&15][0] + f64(b); noDenormal(d[0], b) && finite(math.Float64bits(r)) {
			c.xf()[in.Args[0].Reg&15][0] = r
			return
		}
	}
	in.inner(c, in)
}

func subsdXX(c *CPU, in *Inst) {
	x, d, b := c.xf(), in.Args[0].Reg&15, in.Args[1].Reg&15
	if r := x[d][0] - x[b][0]; fastPE(c) && noDenormal(c.X[d][0], c.X[b][0]) && finite(math.Float64bits(r)) {
		x[d][0] = r
		return
	}
	in.inner(c, in)
}

func subsdXM(c *CPU, in *Inst) {
	if fastPE(c) {
		d := &c.X[in.Args[0].Reg&15]
		ea := c.ea(&in.Args[1])
		b, ok := c.tryLoad64(ea)
		if !ok || c.Pred != nil && !c.Pred.Hit(ea, 8, b) {
			b = c.loadSlow(ea, 8)
		}
		if r := c.xf()[in.Args[0].Reg&15][0] - f64(b); noDenormal(d[0], b) && finite(math.Float64bits(r)) {
			c.xf()[in.Args[0].Reg&15][0] = r
			return
		}
	}
	in.inner(c, in)
}

func mulsdXX(c *CPU, in *Inst) {
	x, d, b := c.xf(), in.Args[0].Reg&15, in.Args[1].Reg&15
	if r := x[d][0] * x[b][0]; fastPE(c) && noDenormal(c.X[d][0], c.X[b][0]) && normalResult(math.Float64bits(r)) {
		x[d][0] = r
		return
	}
	in.inner(c, in)
}

func mulsdXM(c *CPU, in *Inst) {
	if fastPE(c) {
		d := &c.X[in.Args[0].Reg&15]
		ea := c.ea(&in.Args[1])
		b, ok := c.tryLoad64(ea)
		if !ok || c.Pred != nil && !c.Pred.Hit(ea, 8, b) {
			b = c.loadSlow(ea, 8)
		}
		if r := c.xf()[in.Args[0].Reg&15][0] * f64(b); noDenormal(d[0], b) && normalResult(math.Float64bits(r)) {
			c.xf()[in.Args[0].Reg&15][0] = r
			return
		}
	}
	in.inner(c, in)
}

func divsdXX(c *CPU, in *Inst) {
	x, d, b := c.xf(), in.Args[0].Reg&15, in.Args[1].Reg&15
	if r := x[d][0] / x[b][0]; fastPE(c) && noDenormal(c.X[d][0], c.X[b][0]) && normalResult(math.Float64bits(r)) {
		x[d][0] = r
		return
	}
	in.inner(c, in)
}

func divsdXM(c *CPU, in *Inst) {
	if fastPE(c) {
		d := &c.X[in.Args[0].Reg&15]
		ea := c.ea(&in.Args[1])
		b, ok := c.tryLoad64(ea)
		if !ok || c.Pred != nil && !c.Pred.Hit(ea, 8, b) {
			b = c.loadSlow(ea, 8)
		}
		if r := c.xf()[in.Args[0].Reg&15][0] / f64(b); noDenormal(d[0], b) && normalResult(math.Float64bits(r)) {
			c.xf()[in.Args[0].Reg&15][0] = r
			return
		}
	}
	in.inner(c, in)
}

// sqrtsd of a positive normal number or a zero raises at most PE.
func sqrtsdXX(c *CPU, in *Inst) {
	x, s := c.xf(), in.Args[1].Reg&15
	if b := c.X[s][0]; fastPE(c) && ordinary(b) && (b>>63 == 0 || b<<1 == 0) {
		x[in.Args[0].Reg&15][0] = math.Sqrt(x[s][0])
		return
	}
	in.inner(c, in)
}

func sqrtsdXM(c *CPU, in *Inst) {
	if fastPE(c) {
		if b := c.load64(c.ea(&in.Args[1])); ordinary(b) && (b>>63 == 0 || b<<1 == 0) {
			c.X[in.Args[0].Reg&15][0] = math.Float64bits(math.Sqrt(f64(b)))
			return
		}
	}
	in.inner(c, in)
}

// comisd and ucomisd of numbers that are neither denormals nor NaNs raise
// nothing, whatever MXCSR says: only ZF, PF and CF change (OF, SF and AF
// are cleared).
func comisdFlags(c *CPU, a, b uint64) {
	var f uint64
	switch x, y := f64(a), f64(b); {
	case x < y:
		f = FlagCF
	case x == y:
		f = FlagZF
	}
	// All six arithmetic flags are written: nothing of the lazy state
	// survives.
	c.flags = c.flags&^ArithFlags | f
	c.cc.op = ccEager
}

func comisdXX(c *CPU, in *Inst) {
	a, b := c.X[in.Args[0].Reg&15][0], c.X[in.Args[1].Reg&15][0]
	if noDenormal(a, b) && max(a<<1, b<<1) <= 0x7ff<<53 {
		comisdFlags(c, a, b)
		return
	}
	in.inner(c, in)
}

func comisdXM(c *CPU, in *Inst) {
	a, b := c.X[in.Args[0].Reg&15][0], c.load64(c.ea(&in.Args[1]))
	if noDenormal(a, b) && max(a<<1, b<<1) <= 0x7ff<<53 {
		comisdFlags(c, a, b)
		return
	}
	in.inner(c, in)
}

// Packed doubles: each lane as the scalar forms, MXCSR's flags being the OR
// over the lanes. A memory operand must be 16-byte aligned; an unaligned
// one goes to the exact handler, which raises #GP.

func addpdXX(c *CPU, in *Inst) {
	if !packedAdd(c, in, c.X[in.Args[1].Reg&15], 1) {
		in.inner(c, in)
	}
}

func addpdXM(c *CPU, in *Inst) {
	if a := c.ea(&in.Args[1]); a&15 != 0 || !packedAdd(c, in, c.load128(a), 1) {
		in.inner(c, in)
	}
}

func subpdXX(c *CPU, in *Inst) {
	if !packedAdd(c, in, c.X[in.Args[1].Reg&15], -1) {
		in.inner(c, in)
	}
}

func subpdXM(c *CPU, in *Inst) {
	if a := c.ea(&in.Args[1]); a&15 != 0 || !packedAdd(c, in, c.load128(a), -1) {
		in.inner(c, in)
	}
}

// packedAdd adds (sign 1) or subtracts (sign -1) b's lanes from the
// destination's if that raises at most PE, and reports whether it did.
// Negating an operand that is not a NaN is exact, and the fast path takes
// no NaN.
func packedAdd(c *CPU, in *Inst, b XMM, sign float64) bool {
	d := &c.X[in.Args[0].Reg&15]
	r0, r1 := f64(d[0])+sign*f64(b[0]), f64(d[1])+sign*f64(b[1])
	if fastPE(c) && noDenormal(d[0], b[0]) && noDenormal(d[1], b[1]) && finite(math.Float64bits(r0)) && finite(math.Float64bits(r1)) {
		d[0], d[1] = math.Float64bits(r0), math.Float64bits(r1)
		return true
	}
	return false
}

func mulpdXX(c *CPU, in *Inst) {
	if !packedMul(c, in, c.X[in.Args[1].Reg&15]) {
		in.inner(c, in)
	}
}

func mulpdXM(c *CPU, in *Inst) {
	if a := c.ea(&in.Args[1]); a&15 != 0 || !packedMul(c, in, c.load128(a)) {
		in.inner(c, in)
	}
}

func packedMul(c *CPU, in *Inst, b XMM) bool {
	d := &c.X[in.Args[0].Reg&15]
	r0, r1 := f64(d[0])*f64(b[0]), f64(d[1])*f64(b[1])
	if fastPE(c) && noDenormal(d[0], b[0]) && noDenormal(d[1], b[1]) && normalResult(math.Float64bits(r0)) && normalResult(math.Float64bits(r1)) {
		d[0], d[1] = math.Float64bits(r0), math.Float64bits(r1)
		return true
	}
	return false
}
