package f80

// Constant names the constants the x87 loads with FLDPI and friends.
type Constant uint8

// The x87 constants.
const (
	ConstPi  Constant = iota // FLDPI: pi
	ConstL2T                 // FLDL2T: log2(10)
	ConstL2E                 // FLDL2E: log2(e)
	ConstLG2                 // FLDLG2: log10(2)
	ConstLN2                 // FLDLN2: ln(2)
)

// constBits holds the constants to 128 bits: exponent, significand and the
// next 64 bits.
var constBits = [...]struct {
	exp      uint16
	hi, next uint64
}{
	ConstPi:  {0x4000, 0xC90FDAA22168C234, 0xC4C6628B80DC1CD1},
	ConstL2T: {0x4000, 0xD49A784BCD1B8AFE, 0x492BF6FF4DAFDB4C},
	ConstL2E: {0x3FFF, 0xB8AA3B295C17F0BB, 0xBE87FED0691D3E88},
	ConstLG2: {0x3FFD, 0x9A209A84FBCFF798, 0x8F8959AC0B7C9178},
	ConstLN2: {0x3FFE, 0xB17217F7D1CF79AB, 0xC9E3B39803F2F6AF},
}

// Const returns constant c rounded under rc, as the FLD constant
// instructions load it. They raise no exceptions and leave C1 clear.
func Const(c Constant, rc Rounding) F80 {
	k := constBits[c]
	m := k.hi
	if roundsUp(k.next, m&1 != 0, false, rc) {
		m++
	}
	return F80{m, k.exp}
}

// The constants as loaded under round-to-nearest (the default).
var (
	Pi  = Const(ConstPi, RoundNearest)
	L2T = Const(ConstL2T, RoundNearest)
	L2E = Const(ConstL2E, RoundNearest)
	LG2 = Const(ConstLG2, RoundNearest)
	LN2 = Const(ConstLN2, RoundNearest)
)
