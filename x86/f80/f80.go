package f80

import (
	"encoding/binary"
	"math/bits"
)

// F80 is an x87 extended-precision value: Mant is the 64-bit significand
// with its explicit integer bit in bit 63, SE holds the sign in bit 15 and
// the biased exponent (bias 16383) in bits 0-14.
type F80 struct {
	Mant uint64
	SE   uint16
}

// Rounding is the x87 rounding control (RC field of the control word).
type Rounding uint8

// Rounding modes in RC field order.
const (
	RoundNearest Rounding = 0 // to nearest, ties to even
	RoundDown    Rounding = 1 // toward -infinity
	RoundUp      Rounding = 2 // toward +infinity
	RoundZero    Rounding = 3 // toward zero (chop)
)

// Precision is the x87 precision control (PC field of the control word).
type Precision uint8

// Precision control values. The reserved value 1 behaves like Prec64.
const (
	Prec24 Precision = 0 // single: 24-bit significand
	Prec53 Precision = 2 // double: 53-bit significand
	Prec64 Precision = 3 // extended: 64-bit significand
)

// Exc holds status-word bits set by an operation, at their status word
// positions: the exception flags in bits 0-5 and C1 in bit 9.
type Exc uint16

// Exception flags, as in the x87 status word.
const (
	IE Exc = 1  // invalid operation
	DE Exc = 2  // denormal operand
	ZE Exc = 4  // zero divide
	OE Exc = 8  // overflow
	UE Exc = 16 // underflow
	PE Exc = 32 // precision (inexact)

	// C1 is not an exception: it is the value of condition code C1 after
	// an arithmetic operation, set when the result was rounded up in
	// magnitude. The caller copies it to status word bit 9 (clearing
	// C1 when absent) and ORs only the bits in Flags into the status word.
	C1 Exc = 1 << 9

	// Flags masks the sticky exception flags.
	Flags Exc = 0x3F
)

const (
	bias    = 16383
	maxExp  = 0x7FFF
	intBit  = uint64(1) << 63
	quietBt = uint64(1) << 62
	signBit = uint16(0x8000)
)

// Some values.
var (
	Zero       = F80{0, 0}
	NegZero    = F80{0, 0x8000}
	One        = F80{intBit, bias}
	Inf        = F80{intBit, maxExp}
	NegInf     = F80{intBit, 0x8000 | maxExp}
	Indefinite = F80{0xC000000000000000, 0xFFFF} // default QNaN
)

// Integer indefinite values stored by FIST when the value does not fit.
const (
	IntIndefinite16 = int16(-0x8000)
	IntIndefinite32 = int32(-0x80000000)
	IntIndefinite64 = int64(-0x8000000000000000)
)

// FromBytes decodes the 10-byte little-endian memory form.
func FromBytes(b []byte) F80 {
	_ = b[9]
	return F80{binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint16(b[8:])}
}

// Bytes encodes a into b[0:10] in memory form.
func (a F80) Bytes(b []byte) {
	_ = b[9]
	binary.LittleEndian.PutUint64(b, a.Mant)
	binary.LittleEndian.PutUint16(b[8:], a.SE)
}

// Sign reports whether the sign bit is set.
func (a F80) Sign() bool { return a.SE&signBit != 0 }

// Exp returns the biased exponent field.
func (a F80) Exp() int { return int(a.SE & maxExp) }

// Neg returns a with the sign flipped (FCHS).
func (a F80) Neg() F80 { return F80{a.Mant, a.SE ^ signBit} }

// Abs returns a with the sign cleared (FABS).
func (a F80) Abs() F80 { return F80{a.Mant, a.SE &^ signBit} }

// IsNaN reports whether a is a NaN (quiet or signalling).
func (a F80) IsNaN() bool {
	return a.SE&maxExp == maxExp && a.Mant&intBit != 0 && a.Mant<<1 != 0
}

// IsSNaN reports whether a is a signalling NaN.
func (a F80) IsSNaN() bool { return a.IsNaN() && a.Mant&quietBt == 0 }

// IsInf reports whether a is an infinity.
func (a F80) IsInf() bool { return a.SE&maxExp == maxExp && a.Mant == intBit }

// IsZero reports whether a is a zero.
func (a F80) IsZero() bool { return a.SE&maxExp == 0 && a.Mant == 0 }

// IsDenormal reports whether a is a denormal or pseudo-denormal (exponent
// field 0, significand not zero). Such operands raise DE.
func (a F80) IsDenormal() bool { return a.SE&maxExp == 0 && a.Mant != 0 }

// IsUnsupported reports whether a has a format the 387 and later reject
// with an invalid-operation exception: unnormals, pseudo-infinities and
// pseudo-NaNs (integer bit clear with a non-zero exponent field).
func (a F80) IsUnsupported() bool { return a.SE&maxExp != 0 && a.Mant&intBit == 0 }

// Class is the FXAM classification of a value (register tags are the
// caller's business).
type Class uint8

// Classes, numbered by FXAM's C3,C2,C0 encoding (C3<<2 | C2<<1 | C0).
const (
	ClassUnsupported Class = 0 // C3=0 C2=0 C0=0
	ClassNaN         Class = 1 // C0
	ClassNormal      Class = 2 // C2
	ClassInf         Class = 3 // C2 C0
	ClassZero        Class = 4 // C3
	ClassEmpty       Class = 5 // C3 C0 (never returned; the caller's)
	ClassDenormal    Class = 6 // C3 C2
)

// Class classifies a as FXAM does.
func (a F80) Class() Class {
	e := a.SE & maxExp
	switch {
	case e == 0 && a.Mant == 0:
		return ClassZero
	case e == 0:
		return ClassDenormal
	case a.Mant&intBit == 0:
		return ClassUnsupported
	case e == maxExp && a.Mant<<1 == 0:
		return ClassInf
	case e == maxExp:
		return ClassNaN
	}
	return ClassNormal
}

// Xam returns the status word condition bits FXAM sets for a non-empty
// register: C0 (0x100), C1 (0x200, the sign), C2 (0x400) and C3 (0x4000).
func (a F80) Xam() uint16 {
	c := a.Class()
	var sw uint16
	if c&1 != 0 {
		sw |= 0x100
	}
	if c&2 != 0 {
		sw |= 0x400
	}
	if c&4 != 0 {
		sw |= 0x4000
	}
	if a.Sign() {
		sw |= 0x200
	}
	return sw
}

func pack(sign bool, exp int32, sig uint64) F80 {
	se := uint16(exp)
	if sign {
		se |= signBit
	}
	return F80{sig, se}
}

// unpack returns the sign, the exponent and the significand normalised so
// that bit 63 is set (for non-zero values); the value is
// sig * 2^(exp-bias-63). Denormals get exponents below 1. It must not be
// used on NaNs, infinities or unsupported values.
func unpack(a F80) (sign bool, exp int32, sig uint64) {
	sign = a.Sign()
	exp = int32(a.SE & maxExp)
	sig = a.Mant
	if exp == 0 {
		if sig == 0 {
			return
		}
		n := bits.LeadingZeros64(sig)
		sig <<= uint(n)
		exp = 1 - int32(n)
	}
	return
}

// quiet returns the NaN a made quiet.
func quiet(a F80) F80 { return F80{a.Mant | quietBt, a.SE} }

// propagate2 returns the NaN result of an operation on a and b, at least one
// of which is a NaN, following the x87 rules: an SNaN is quieted and raises
// IE; a QNaN wins over an SNaN; of two NaNs of the same kind, the one with
// the larger significand wins.
func propagate2(a, b F80) (F80, Exc) {
	var e Exc
	as, bs := a.IsSNaN(), b.IsSNaN()
	if as || bs {
		e = IE
	}
	an, bn := a.IsNaN(), b.IsNaN()
	switch {
	case an && !bn:
		return quiet(a), e
	case bn && !an:
		return quiet(b), e
	case as && !bs:
		return b, e
	case bs && !as:
		return a, e
	}
	if a.Mant < b.Mant || (a.Mant == b.Mant && a.SE > b.SE) {
		return quiet(b), e
	}
	return quiet(a), e
}

// roundsUp tells whether a value whose discarded part is rb (a binary
// fraction of one unit in the last place, 1<<63 = one half), sign sign and
// last kept bit odd rounds up in magnitude under rc.
func roundsUp(rb uint64, odd, sign bool, rc Rounding) bool {
	if rb == 0 {
		return false
	}
	switch rc {
	case RoundNearest:
		return rb > 1<<63 || (rb == 1<<63 && odd)
	case RoundDown:
		return sign
	case RoundUp:
		return !sign
	}
	return false
}

func precBits(pc Precision) uint {
	switch pc {
	case Prec24:
		return 24
	case Prec53:
		return 53
	}
	return 64
}

// splitRound splits sig:extra at precision p: it returns sig with the
// discarded bits cleared, the unit in the last place and the discarded
// part as a binary fraction of that unit (with a sticky bit).
func splitRound(sig, extra uint64, p uint) (kept, ulp, rb uint64) {
	if p == 64 {
		return sig, 1, extra
	}
	sh := 64 - p
	mask := uint64(1)<<sh - 1
	rb = (sig & mask) << (64 - sh)
	if extra != 0 {
		rb |= 1
	}
	return sig &^ mask, uint64(1) << sh, rb
}

// shiftRightJam128 shifts hi:lo right by n, ORing any bits shifted out into
// the lowest bit.
func shiftRightJam128(hi, lo uint64, n uint) (uint64, uint64) {
	switch {
	case n == 0:
		return hi, lo
	case n < 64:
		sticky := lo << (64 - n)
		lo = lo>>n | hi<<(64-n)
		hi >>= n
		if sticky != 0 {
			lo |= 1
		}
		return hi, lo
	case n < 128:
		sticky := lo
		if n > 64 {
			sticky |= hi << (128 - n)
		}
		lo = hi >> (n - 64)
		if sticky != 0 {
			lo |= 1
		}
		return 0, lo
	}
	if hi|lo != 0 {
		return 0, 1
	}
	return 0, 0
}

// roundPack rounds the value sig:extra * 2^(exp-bias-63), with sig
// normalised (bit 63 set), to precision p bits under rc and packs it,
// handling overflow and (masked) underflow as the x87 does.
func roundPack(sign bool, exp int32, sig, extra uint64, rc Rounding, p uint) (F80, Exc) {
	var e Exc
	if exp <= 0 {
		// Tininess is detected after rounding: the value is tiny
		// unless rounding with unbounded exponent carries it up to
		// the smallest normal.
		tiny := true
		if exp == 0 {
			kept, ulp, rb := splitRound(sig, extra, p)
			if roundsUp(rb, kept&ulp != 0, sign, rc) && kept+ulp == 0 {
				tiny = false
			}
		}
		sig, extra = shiftRightJam128(sig, extra, uint(1-exp))
		kept, ulp, rb := splitRound(sig, extra, p)
		if rb != 0 {
			e |= PE
			if tiny {
				e |= UE
			}
		}
		if roundsUp(rb, kept&ulp != 0, sign, rc) {
			kept += ulp
			e |= C1
		}
		exp = 0
		if kept&intBit != 0 {
			exp = 1
		}
		return pack(sign, exp, kept), e
	}
	kept, ulp, rb := splitRound(sig, extra, p)
	if rb != 0 {
		e |= PE
		if roundsUp(rb, kept&ulp != 0, sign, rc) {
			e |= C1
			kept += ulp
			if kept == 0 {
				kept = intBit
				exp++
			}
		}
	}
	if exp >= maxExp {
		return overflow(sign, rc, p)
	}
	return pack(sign, exp, kept), e
}

// overflow returns the masked response to overflow at precision p.
func overflow(sign bool, rc Rounding, p uint) (F80, Exc) {
	if rc == RoundNearest || (rc == RoundDown && sign) || (rc == RoundUp && !sign) {
		return pack(sign, maxExp, intBit), OE | PE | C1
	}
	return pack(sign, maxExp-1, ^uint64(0)<<(64-p)), OE | PE
}

// normRoundPack normalises sig:extra (not both zero) and rounds.
func normRoundPack(sign bool, exp int32, sig, extra uint64, rc Rounding, p uint) (F80, Exc) {
	if sig == 0 {
		sig, extra = extra, 0
		exp -= 64
	}
	if n := uint(bits.LeadingZeros64(sig)); n != 0 {
		sig = sig<<n | extra>>(64-n)
		extra <<= n
		exp -= int32(n)
	}
	return roundPack(sign, exp, sig, extra, rc, p)
}
