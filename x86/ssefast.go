package x86

import (
	"fmt"
	"math"
	"unsafe"

	"golang.org/x/arch/x86/x86asm"
)

// Fast paths for the hottest double-precision arithmetic. When MXCSR is
// the default (all exceptions masked, round to nearest, no DAZ or FTZ) with
// the sticky precision flag already set — the state almost every program
// runs in — the result is Go's IEEE arithmetic, computed by the host's own
// SSE instruction, and the host's MXCSR collects the exception flags it
// raises until Run merges them into the guest's (hostfp.go). NaN results,
// and every other MXCSR, go to the exact handler built by sse_fp.go
// (sseExact).
//
// When a fast path with a memory operand gives up, the exact handler
// reads the operand again: the read is observed twice, identically when
// recording and replaying.
//
// This file's name sorts after sse*.go so its init wraps their builders.

const mxFastPE = mxDefault | MxPE

// fallback runs the exact handler of an instruction whose fast path read
// its memory operand src: the handler takes src instead of reading it
// again (buildX), except when replaying a recording that read it twice.
func (c *CPU) fallback(in *Inst, src XMM) {
	if !c.cache.LegacyReads {
		c.pin, c.pinned = src, true
	}
	c.exact(in)
}

// source returns the operand a fast path handed over (fallback), if any.
func (c *CPU) source() (XMM, bool) {
	if c.pinned {
		c.pinned = false
		return c.pin, true
	}
	return XMM{}, false
}

func fastPE(c *CPU) bool { return hostFPFlags && c.MXCSR&0xffe0 == mxFastPE }

// sseFast lists the instructions with fast paths, by form: register
// source (xx) and memory source (xm). A memory form's fast path reads its
// operand and, when it hands the instruction to the exact handler (a NaN
// result, a denormal operand), hands the operand over too (fallback), so
// that the instruction reads memory once, as the hardware and translated
// code do. Recordings made before that (CodeCache.LegacyReads) contain a
// second read there; replaying them, the exact handler reads again, and
// the block translator leaves these memory forms to the interpreter.
var sseFast = map[x86asm.Op]struct{ xx, xm Handler }{
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

func init() {
	for op, f := range sseFast {
		orig, f := builders[op], f
		size := sseFastMemSize(op)
		// The exact handlers depend on the op and the form only: made
		// once here, they are what the fast paths fall back to.
		xx := Inst{Op: op, NArgs: 2, Args: [3]Operand{{Kind: KXMM}, {Kind: KXMM, Reg: 1}}}
		xm := Inst{Op: op, NArgs: 2, MemSize: size, Args: [3]Operand{{Kind: KXMM}, {Kind: KMem, Size: size, Base: NoReg, Index: NoReg}}}
		e := &sseExact[len(sseExactOps)]
		e.xx, e.xm = orig(&xx), orig(&xm)
		if e.xx == nil || e.xm == nil {
			panic(fmt.Sprintf("x86: no exact handler for the fast paths of %v", op))
		}
		sseExactOps = append(sseExactOps, op)
		sseExactIdx[op] = uint8(len(sseExactOps))
		builders[op] = func(in *Inst) Handler {
			h := orig(in)
			if h == nil || in.Lock || in.Args[0].Kind != KXMM {
				return h
			}
			switch in.Args[1].Kind {
			case KXMM:
				return f.xx
			case KMem:
				if in.MemSize == size {
					return f.xm
				}
			}
			return h
		}
	}
}

// sseFastMemSize is the size of the memory operand of op's memory form:
// a double, or two for the packed forms.
func sseFastMemSize(op x86asm.Op) uint8 {
	switch op {
	case x86asm.ADDPD, x86asm.SUBPD, x86asm.MULPD:
		return 16
	}
	return 8
}

// sseExact holds the exact handlers of the ops of sseFast, xx for the
// register source and xm for the memory source, at sseExactIdx[op]-1.
var (
	sseExact    [16]struct{ xx, xm Handler }
	sseExactOps []x86asm.Op
	sseExactIdx [4096]uint8
)

// exact runs the exact handler of an instruction whose fast path gave
// it up (a NaN result, a denormal operand, another MXCSR, an unaligned
// operand).
func (c *CPU) exact(in *Inst) {
	e := &sseExact[sseExactIdx[in.Op&4095]-1]
	if in.Args[1].Kind == KXMM {
		e.xx(c, in)
		return
	}
	e.xm(c, in)
}

// noDenormal reports that neither a nor b is a denormal: x<<1 drops the
// sign, and a denormal's is in [2, 2^53).
func noDenormal(a, b uint64) bool { return min(a<<1-2, b<<1-2) >= 1<<53-2 }

// xf views the XMM registers as float64 lanes, so that the compiler loads
// and stores the operands of the register forms with MOVSD and folds a load
// into the arithmetic, with no round trip through a general register.
func (c *CPU) xf() *[16][2]float64 { return (*[16][2]float64)(unsafe.Pointer(&c.X)) }

// The scalar forms compute with Go's float64 arithmetic, which is the
// host's SSE instruction: the exception flags it raises stay in the host's
// MXCSR until Run merges them (hostfp.go). A NaN result goes to the exact
// handler, which knows which operand's NaN x86 propagates.

// notNaN tests the bits: a float comparison (r == r) would raise DE on the
// host for a denormal result.
func notNaN(r float64) bool { return math.Float64bits(r)<<1 <= 0x7ff<<53 }

func addsdXX(c *CPU, in *Inst) {
	if fastPE(c) {
		x := c.xf()
		d := &x[in.Args[0].Reg&15][0]
		if r := *d + x[in.Args[1].Reg&15][0]; notNaN(r) {
			*d = r
			return
		}
	}
	c.exact(in)
}

func addsdXM(c *CPU, in *Inst) {
	if fastPE(c) {
		ea := c.ea(&in.Args[1])
		b, ok := c.tryLoad64(ea)
		if !ok || c.Pred != nil && !c.Pred.Hit(ea, 8, b) {
			b = c.loadSlow(ea, 8)
		}
		d := &c.xf()[in.Args[0].Reg&15][0]
		if r := *d + f64(b); notNaN(r) {
			*d = r
			return
		}
		c.fallback(in, XMM{b})
		return
	}
	c.exact(in)
}

func subsdXX(c *CPU, in *Inst) {
	if fastPE(c) {
		x := c.xf()
		d := &x[in.Args[0].Reg&15][0]
		if r := *d - x[in.Args[1].Reg&15][0]; notNaN(r) {
			*d = r
			return
		}
	}
	c.exact(in)
}

func subsdXM(c *CPU, in *Inst) {
	if fastPE(c) {
		ea := c.ea(&in.Args[1])
		b, ok := c.tryLoad64(ea)
		if !ok || c.Pred != nil && !c.Pred.Hit(ea, 8, b) {
			b = c.loadSlow(ea, 8)
		}
		d := &c.xf()[in.Args[0].Reg&15][0]
		if r := *d - f64(b); notNaN(r) {
			*d = r
			return
		}
		c.fallback(in, XMM{b})
		return
	}
	c.exact(in)
}

func mulsdXX(c *CPU, in *Inst) {
	if fastPE(c) {
		x := c.xf()
		d := &x[in.Args[0].Reg&15][0]
		if r := *d * x[in.Args[1].Reg&15][0]; notNaN(r) {
			*d = r
			return
		}
	}
	c.exact(in)
}

func mulsdXM(c *CPU, in *Inst) {
	if fastPE(c) {
		ea := c.ea(&in.Args[1])
		b, ok := c.tryLoad64(ea)
		if !ok || c.Pred != nil && !c.Pred.Hit(ea, 8, b) {
			b = c.loadSlow(ea, 8)
		}
		d := &c.xf()[in.Args[0].Reg&15][0]
		if r := *d * f64(b); notNaN(r) {
			*d = r
			return
		}
		c.fallback(in, XMM{b})
		return
	}
	c.exact(in)
}

func divsdXX(c *CPU, in *Inst) {
	if fastPE(c) {
		x := c.xf()
		d := &x[in.Args[0].Reg&15][0]
		if r := *d / x[in.Args[1].Reg&15][0]; notNaN(r) {
			*d = r
			return
		}
	}
	c.exact(in)
}

func divsdXM(c *CPU, in *Inst) {
	if fastPE(c) {
		ea := c.ea(&in.Args[1])
		b, ok := c.tryLoad64(ea)
		if !ok || c.Pred != nil && !c.Pred.Hit(ea, 8, b) {
			b = c.loadSlow(ea, 8)
		}
		d := &c.xf()[in.Args[0].Reg&15][0]
		if r := *d / f64(b); notNaN(r) {
			*d = r
			return
		}
		c.fallback(in, XMM{b})
		return
	}
	c.exact(in)
}

func sqrtsdXX(c *CPU, in *Inst) {
	if fastPE(c) {
		x := c.xf()
		if r := math.Sqrt(x[in.Args[1].Reg&15][0]); notNaN(r) {
			x[in.Args[0].Reg&15][0] = r
			return
		}
	}
	c.exact(in)
}

func sqrtsdXM(c *CPU, in *Inst) {
	if fastPE(c) {
		b := c.load64(c.ea(&in.Args[1]))
		if r := math.Sqrt(f64(b)); notNaN(r) {
			c.xf()[in.Args[0].Reg&15][0] = r
			return
		}
		c.fallback(in, XMM{b})
		return
	}
	c.exact(in)
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
	c.exact(in)
}

func comisdXM(c *CPU, in *Inst) {
	a, b := c.X[in.Args[0].Reg&15][0], c.load64(c.ea(&in.Args[1]))
	if noDenormal(a, b) && max(a<<1, b<<1) <= 0x7ff<<53 {
		comisdFlags(c, a, b)
		return
	}
	c.fallback(in, XMM{b})
}

// Packed doubles: each lane as the scalar forms, MXCSR's flags being the OR
// over the lanes. A memory operand must be 16-byte aligned; an unaligned
// one goes to the exact handler, which raises #GP.

func addpdXX(c *CPU, in *Inst) {
	if !packedAdd(c, in, c.X[in.Args[1].Reg&15]) {
		c.exact(in)
	}
}

func addpdXM(c *CPU, in *Inst) {
	a := c.ea(&in.Args[1])
	if a&15 != 0 {
		c.exact(in) // #GP
		return
	}
	if b := c.load128(a); !packedAdd(c, in, b) {
		c.fallback(in, b)
	}
}

func subpdXX(c *CPU, in *Inst) {
	if !packedSub(c, in, c.X[in.Args[1].Reg&15]) {
		c.exact(in)
	}
}

func subpdXM(c *CPU, in *Inst) {
	a := c.ea(&in.Args[1])
	if a&15 != 0 {
		c.exact(in) // #GP
		return
	}
	if b := c.load128(a); !packedSub(c, in, b) {
		c.fallback(in, b)
	}
}

// packedAdd adds b's lanes to the destination's, as the scalar form does,
// and reports whether it did.
func packedAdd(c *CPU, in *Inst, b XMM) bool {
	if !fastPE(c) {
		return false
	}
	d := &c.xf()[in.Args[0].Reg&15]
	if r0, r1 := d[0]+f64(b[0]), d[1]+f64(b[1]); notNaN(r0) && notNaN(r1) {
		d[0], d[1] = r0, r1
		return true
	}
	return false
}

// packedSub is packedAdd for subpd.
func packedSub(c *CPU, in *Inst, b XMM) bool {
	if !fastPE(c) {
		return false
	}
	d := &c.xf()[in.Args[0].Reg&15]
	if r0, r1 := d[0]-f64(b[0]), d[1]-f64(b[1]); notNaN(r0) && notNaN(r1) {
		d[0], d[1] = r0, r1
		return true
	}
	return false
}

func mulpdXX(c *CPU, in *Inst) {
	if !packedMul(c, in, c.X[in.Args[1].Reg&15]) {
		c.exact(in)
	}
}

func mulpdXM(c *CPU, in *Inst) {
	a := c.ea(&in.Args[1])
	if a&15 != 0 {
		c.exact(in) // #GP
		return
	}
	if b := c.load128(a); !packedMul(c, in, b) {
		c.fallback(in, b)
	}
}

func packedMul(c *CPU, in *Inst, b XMM) bool {
	if !fastPE(c) {
		return false
	}
	d := &c.xf()[in.Args[0].Reg&15]
	if r0, r1 := d[0]*f64(b[0]), d[1]*f64(b[1]); notNaN(r0) && notNaN(r1) {
		d[0], d[1] = r0, r1
		return true
	}
	return false
}
