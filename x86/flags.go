package x86

import "math/bits"

// Lazy flag operations: the arithmetic flags are computed from the last
// flag-setting operation's operands and result only when something reads
// them (Bochs/QEMU style).
const (
	ccEager uint8 = iota // arithmetic flags are in CPU.flags
	ccAdd
	ccAdc
	ccSub
	ccSbb
	ccLogic
	ccInc
	ccDec
)

type lazyFlags struct {
	op   uint8
	size uint8 // operand size in bytes
	cin  uint8 // carry in (adc/sbb) or preserved CF (inc/dec)
	res  uint64
	src1 uint64
	src2 uint64
}

var parityTable = func() (t [256]uint8) {
	for i := range t {
		if bits.OnesCount8(uint8(i))%2 == 0 {
			t[i] = FlagPF
		}
	}
	return
}()

func signBit(size uint8) uint64 { return 1 << (uint(size)*8 - 1) }

// sx sign-extends the low size bytes of v.
func sx(v uint64, size uint8) int64 {
	s := 64 - uint(size)*8
	return int64(v<<s) >> s
}

// setFlags records a lazily evaluated flag-setting operation. Operands and
// result must already be masked to size.
//
// The lazy state is written field by field: assigning a composite literal
// makes the compiler build it on the stack and copy it with 16-byte moves,
// which stall on store forwarding (this was 1 s of 19 in a gzip profile).
func (c *CPU) setFlags(op, size uint8, res, src1, src2 uint64) {
	l := &c.cc
	l.op, l.size, l.cin = op, size, 0
	l.res, l.src1, l.src2 = res, src1, src2
}

// setFlagsCin is setFlags for the operations with a carry in (adc, sbb)
// or a preserved CF (inc, dec).
func (c *CPU) setFlagsCin(op, size uint8, res, src1, src2, cin uint64) {
	l := &c.cc
	l.op, l.size, l.cin = op, size, uint8(cin)
	l.res, l.src1, l.src2 = res, src1, src2
}

// setLogic records the flags of a logical operation: CF=OF=0, AF
// undefined (0), the rest from the result.
func (c *CPU) setLogic(size uint8, res uint64) {
	l := &c.cc
	l.op, l.size, l.cin = ccLogic, size, 0
	l.res = res
}

// cf returns the carry flag (0 or 1).
func (c *CPU) cf() uint64 {
	l := &c.cc
	switch l.op {
	case ccAdd:
		return b2u(l.res < l.src1)
	case ccSub:
		return b2u(l.src1 < l.src2)
	case ccLogic:
		return 0
	}
	return c.arithFlags() & FlagCF
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// arithFlags computes CF, PF, AF, ZF, SF and OF.
func (c *CPU) arithFlags() uint64 {
	l := &c.cc
	if l.op == ccEager {
		return c.flags & ArithFlags
	}
	mask := sizeMask[l.size]
	sb := signBit(l.size)
	res := l.res
	var f uint64
	switch l.op {
	case ccAdd:
		f = b2u(res < l.src1) | ((l.src1^res)&(l.src2^res)&sb)>>0
	case ccAdc:
		f = b2u(res < l.src1 || (l.cin != 0 && res == l.src1)) | (l.src1^res)&(l.src2^res)&sb
	case ccSub:
		f = b2u(l.src1 < l.src2) | (l.src1^l.src2)&(l.src1^res)&sb
	case ccSbb:
		f = b2u(l.src1 < l.src2 || (l.cin != 0 && l.src1 == l.src2)) | (l.src1^l.src2)&(l.src1^res)&sb
	case ccLogic:
		f = 0
	case ccInc:
		f = uint64(l.cin) | b2u(res == sb)*sb
	case ccDec:
		f = uint64(l.cin) | b2u(res == sb-1)*sb
	}
	// f holds CF in bit 0 and OF in the sign bit position; move OF.
	out := f & 1
	if f&sb != 0 {
		out |= FlagOF
	}
	if l.op != ccLogic {
		out |= (l.src1 ^ l.src2 ^ res) & FlagAF
	}
	out |= uint64(parityTable[uint8(res)])
	if res&mask == 0 {
		out |= FlagZF
	}
	if res&sb != 0 {
		out |= FlagSF
	}
	return out
}

// materialize folds the lazy flags into c.flags.
func (c *CPU) materialize() {
	if c.cc.op != ccEager {
		c.flags = c.flags&^ArithFlags | c.arithFlags()
		c.cc.op = ccEager
	}
}

// setArith replaces the arithmetic flags given in mask with those in v.
// Replacing all of them needs no evaluation of the lazy ones.
func (c *CPU) setArith(mask, v uint64) {
	if mask == ArithFlags {
		c.cc.op = ccEager
	} else {
		c.materialize()
	}
	c.flags = c.flags&^mask | v&mask
}

// cond evaluates condition code cc (the low nibble of Jcc/SETcc/CMOVcc).
func (c *CPU) cond(cc uint8) bool {
	l := &c.cc
	switch l.op {
	case ccSub:
		switch cc {
		case 2:
			return l.src1 < l.src2
		case 3:
			return l.src1 >= l.src2
		case 4:
			return l.src1 == l.src2
		case 5:
			return l.src1 != l.src2
		case 6:
			return l.src1 <= l.src2
		case 7:
			return l.src1 > l.src2
		case 0xc:
			return sx(l.src1, l.size) < sx(l.src2, l.size)
		case 0xd:
			return sx(l.src1, l.size) >= sx(l.src2, l.size)
		case 0xe:
			return sx(l.src1, l.size) <= sx(l.src2, l.size)
		case 0xf:
			return sx(l.src1, l.size) > sx(l.src2, l.size)
		}
	case ccEager:
		return condFlags(c.flags, cc)
	}
	// Every lazy operation keeps its masked result: ZF and SF come from it.
	switch cc {
	case 4:
		return l.res == 0
	case 5:
		return l.res != 0
	case 8:
		return l.res&signBit(l.size) != 0
	case 9:
		return l.res&signBit(l.size) == 0
	}
	return condFlags(c.arithFlags(), cc)
}

func condFlags(f uint64, cc uint8) bool {
	var r bool
	switch cc >> 1 {
	case 0:
		r = f&FlagOF != 0
	case 1:
		r = f&FlagCF != 0
	case 2:
		r = f&FlagZF != 0
	case 3:
		r = f&(FlagCF|FlagZF) != 0
	case 4:
		r = f&FlagSF != 0
	case 5:
		r = f&FlagPF != 0
	case 6:
		r = (f&FlagSF != 0) != (f&FlagOF != 0)
	case 7:
		r = f&FlagZF != 0 || (f&FlagSF != 0) != (f&FlagOF != 0)
	}
	if cc&1 != 0 {
		return !r
	}
	return r
}

// DF reports the direction flag.
func (c *CPU) df() bool { return c.flags&FlagDF != 0 }
