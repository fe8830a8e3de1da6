package f80

import (
	"math"
	"math/bits"
)

// FromInt64 converts i exactly (FILD).
func FromInt64(i int64) F80 {
	if i == 0 {
		return Zero
	}
	sign := i < 0
	m := uint64(i)
	if sign {
		m = -m
	}
	n := bits.LeadingZeros64(m)
	return pack(sign, bias+63-int32(n), m<<uint(n))
}

// FromUint64 converts u exactly.
func FromUint64(u uint64) F80 {
	if u == 0 {
		return Zero
	}
	n := bits.LeadingZeros64(u)
	return pack(false, bias+63-int32(n), u<<uint(n))
}

// fromIEEE converts an IEEE binary value with the given field widths
// exactly. NaNs keep their payload and signalling state.
func fromIEEE(u uint64, mantBits, expBits uint) F80 {
	sign := u>>(mantBits+expBits) != 0
	emax := uint64(1)<<expBits - 1
	e := u >> mantBits & emax
	m := u & (uint64(1)<<mantBits - 1)
	ebias := int32(emax >> 1)
	switch {
	case e == emax:
		return pack(sign, maxExp, intBit|m<<(63-mantBits))
	case e == 0:
		if m == 0 {
			return pack(sign, 0, 0)
		}
		n := uint(bits.LeadingZeros64(m))
		// value = m * 2^(1-ebias-mantBits) = (m<<n) * 2^(exp-bias-63)
		return pack(sign, 1-ebias-int32(mantBits)+bias+63-int32(n), m<<n)
	}
	return pack(sign, int32(e)-ebias+bias, intBit|m<<(63-mantBits))
}

// FromFloat64 converts f exactly, keeping NaN payloads and SNaNs as they
// are. This is the value an m64 operand of FADD and the like contributes.
func FromFloat64(f float64) F80 { return fromIEEE(math.Float64bits(f), 52, 11) }

// FromFloat32 converts f exactly, like FromFloat64.
func FromFloat32(f float32) F80 { return fromIEEE(uint64(math.Float32bits(f)), 23, 8) }

// LoadFloat64 converts f as FLD m64 does: a denormal raises DE, an SNaN
// raises IE and is made quiet.
func LoadFloat64(f float64) (F80, Exc) { return load(FromFloat64(f), isDenormal64(f)) }

// LoadFloat32 converts f as FLD m32 does.
func LoadFloat32(f float32) (F80, Exc) { return load(FromFloat32(f), isDenormal32(f)) }

// OperandFloat64 converts an m64 operand of an arithmetic instruction
// (FADD m64 and the like): the value is exact and an SNaN is left for the
// operation to handle; a denormal gives DE. Combine that with the
// operation's exceptions with MergeOperandExc.
func OperandFloat64(f float64) (F80, Exc) {
	if isDenormal64(f) {
		return FromFloat64(f), DE
	}
	return FromFloat64(f), 0
}

// OperandFloat32 is OperandFloat64 for m32 operands.
func OperandFloat32(f float32) (F80, Exc) {
	if isDenormal32(f) {
		return FromFloat32(f), DE
	}
	return FromFloat32(f), 0
}

// MergeOperandExc combines the exceptions e of an operation on ST0 = a and
// a memory operand converted by OperandFloat64 or OperandFloat32 with
// those of the conversion, eop: the operand's DE is dropped when a is a
// NaN or the operation raised IE or ZE, which take priority.
func MergeOperandExc(a F80, e, eop Exc) Exc {
	if a.IsNaN() || e&(IE|ZE) != 0 {
		return e
	}
	return e | eop
}

func isDenormal64(f float64) bool {
	u := math.Float64bits(f)
	return u>>52&0x7FF == 0 && u<<12 != 0
}

func isDenormal32(f float32) bool {
	u := math.Float32bits(f)
	return u>>23&0xFF == 0 && u<<9 != 0
}

func load(a F80, den bool) (F80, Exc) {
	if a.IsSNaN() {
		return quiet(a), IE
	}
	if den {
		return a, DE
	}
	return a, 0
}

// toIEEE rounds a to an IEEE binary format as FST m32/m64 do.
func toIEEE(a F80, rc Rounding, mantBits, expBits uint) (uint64, Exc) {
	signPos := mantBits + expBits
	emax := uint64(1)<<expBits - 1
	ebias := int32(emax >> 1)
	var s uint64
	if a.Sign() {
		s = 1 << signPos
	}
	switch {
	case a.IsUnsupported():
		return 1<<signPos | emax<<mantBits | 1<<(mantBits-1), IE
	case a.IsNaN():
		var e Exc
		if a.IsSNaN() {
			e = IE
		}
		return s | emax<<mantBits | 1<<(mantBits-1) | (a.Mant<<1)>>(64-mantBits), e
	case a.IsInf():
		return s | emax<<mantBits, 0
	case a.IsZero():
		return s, 0
	}
	var e Exc
	sign, exp, sig := unpack(a)
	x := exp - bias + ebias // biased exponent in the target format
	p := mantBits + 1
	if x <= 0 {
		tiny := true
		if x == 0 {
			kept, ulp, rb := splitRound(sig, 0, p)
			if roundsUp(rb, kept&ulp != 0, sign, rc) && kept+ulp == 0 {
				tiny = false
			}
		}
		hi, lo := shiftRightJam128(sig, 0, uint(1-x))
		kept, ulp, rb := splitRound(hi, lo, p)
		if rb != 0 {
			e |= PE
			if tiny {
				e |= UE
			}
			if roundsUp(rb, kept&ulp != 0, sign, rc) {
				kept += ulp
				e |= C1
			}
		}
		// kept has the integer bit in bit 63; a carry into it makes
		// the smallest normal, which the encoding handles by itself.
		return s | kept>>(63-mantBits), e
	}
	kept, ulp, rb := splitRound(sig, 0, p)
	if rb != 0 {
		e |= PE
		if roundsUp(rb, kept&ulp != 0, sign, rc) {
			e |= C1
			kept += ulp
			if kept == 0 {
				kept = intBit
				x++
			}
		}
	}
	if x >= int32(emax) {
		if rc == RoundNearest || (rc == RoundDown && sign) || (rc == RoundUp && !sign) {
			return s | emax<<mantBits, OE | PE | C1
		}
		return s | (emax-1)<<mantBits | (uint64(1)<<mantBits - 1), OE | PE
	}
	return s | uint64(x)<<mantBits | (kept<<1)>>(64-mantBits), e
}

// Float64 rounds a to float64 as FST m64 does.
func (a F80) Float64(rc Rounding) (float64, Exc) {
	u, e := toIEEE(a, rc, 52, 11)
	return math.Float64frombits(u), e
}

// Float32 rounds a to float32 as FST m32 does.
func (a F80) Float32(rc Rounding) (float32, Exc) {
	u, e := toIEEE(a, rc, 23, 8)
	return math.Float32frombits(uint32(u)), e
}

// toInt rounds a to a signed integer of n bits as FIST does; values that
// do not fit give IE and the integer indefinite (-2^(n-1)).
func toInt(a F80, rc Rounding, n uint) (int64, Exc) {
	indef := int64(-1) << (n - 1)
	if a.IsNaN() || a.IsInf() || a.IsUnsupported() {
		return indef, IE
	}
	if a.IsZero() {
		return 0, 0
	}
	sign, exp, sig := unpack(a)
	var e Exc
	var m uint64 // magnitude
	switch {
	case exp >= bias+64:
		return indef, IE
	case exp < bias:
		rb := uint64(1)
		if exp == bias-1 {
			rb = sig
		}
		e = PE
		if roundsUp(rb, false, sign, rc) {
			m = 1
			e |= C1
		}
	default:
		sh := uint(bias + 63 - exp)
		if sh == 0 {
			m = sig
			break
		}
		m = sig >> sh
		frac := sig << (64 - sh)
		if frac != 0 {
			e = PE
			if roundsUp(frac, m&1 != 0, sign, rc) {
				m++
				e |= C1
			}
		}
	}
	limit := uint64(1)<<(n-1) - 1
	if sign {
		limit++
	}
	if m > limit {
		return indef, IE
	}
	if sign {
		return -int64(m), e
	}
	return int64(m), e
}

// Int64 rounds a to an int64 under rc (FIST m64; FISTTP is RoundZero).
func (a F80) Int64(rc Rounding) (int64, Exc) { return toInt(a, rc, 64) }

// Int32 rounds a to an int32 under rc (FIST m32).
func (a F80) Int32(rc Rounding) (int32, Exc) {
	v, e := toInt(a, rc, 32)
	return int32(v), e
}

// Int16 rounds a to an int16 under rc (FIST m16).
func (a F80) Int16(rc Rounding) (int16, Exc) {
	v, e := toInt(a, rc, 16)
	return int16(v), e
}
