package x86

// AES-NI (aesenc, aesenclast, aesdec, aesdeclast, aesimc,
// aeskeygenassist) and pclmulqdq, legacy and VEX.128 (the VEX.256 forms
// are VAES and VPCLMULQDQ, AVX-512-era extensions ttd does not
// implement). Neither is part of an x86-64 level: a guest CPU has them
// only with --cpu host on a host that has them. The AES round steps
// follow FIPS-197 and the Intel SDM's pseudo-code (vol. 2, AESENC...):
// the 16 bytes of a register are the state in column-major order, byte
// 4c+r being row r of column c.

import (
	"math/bits"

	"golang.org/x/arch/x86/x86asm"
)

// aesSbox and aesInvSbox are FIPS-197's S-box and its inverse, computed
// from the definition (the multiplicative inverse in GF(2^8), then the
// affine transform).
var aesSbox, aesInvSbox = func() (s, inv [256]byte) {
	for x := 0; x < 256; x++ {
		b := gfInv(byte(x))
		v := b ^ bits.RotateLeft8(b, 1) ^ bits.RotateLeft8(b, 2) ^ bits.RotateLeft8(b, 3) ^ bits.RotateLeft8(b, 4) ^ 0x63
		s[x] = v
		inv[v] = byte(x)
	}
	return
}()

// gfMul multiplies in GF(2^8) modulo x^8+x^4+x^3+x+1.
func gfMul(a, b byte) byte {
	var p byte
	for b != 0 {
		if b&1 != 0 {
			p ^= a
		}
		hi := a & 0x80
		a <<= 1
		if hi != 0 {
			a ^= 0x1b
		}
		b >>= 1
	}
	return p
}

// gfInv is the multiplicative inverse (0 for 0): a^254, by square and
// multiply (254 multiplications in a row were a fifth of ttd's start-up
// CPU, about 7 ms, in every command).
func gfInv(a byte) byte {
	r, p := byte(1), a
	for e := 254; e != 0; e >>= 1 {
		if e&1 != 0 {
			r = gfMul(r, p)
		}
		p = gfMul(p, p)
	}
	return r
}

func shiftRows(s [16]byte, inverse bool) (o [16]byte) {
	for c := 0; c < 4; c++ {
		for r := 0; r < 4; r++ {
			if inverse {
				o[r+4*((c+r)&3)] = s[r+4*c]
			} else {
				o[r+4*c] = s[r+4*((c+r)&3)]
			}
		}
	}
	return o
}

func subBytes(s *[16]byte, box *[256]byte) {
	for i := range s {
		s[i] = box[s[i]]
	}
}

// mixColumns multiplies each column by the circulant matrix of m (2 3 1 1
// for MixColumns, 14 11 13 9 for InvMixColumns).
func mixColumns(s *[16]byte, m [4]byte) {
	for c := 0; c < 4; c++ {
		a := [4]byte{s[4*c], s[4*c+1], s[4*c+2], s[4*c+3]}
		for r := 0; r < 4; r++ {
			s[4*c+r] = gfMul(a[0], m[(4-r)&3]) ^ gfMul(a[1], m[(5-r)&3]) ^ gfMul(a[2], m[(6-r)&3]) ^ gfMul(a[3], m[(7-r)&3])
		}
	}
}

var (
	aesMix    = [4]byte{2, 3, 1, 1}
	aesInvMix = [4]byte{14, 11, 13, 9}
)

// aesRound is one round of AES on state d with round key k: encrypt or
// decrypt, the last round (no MixColumns) or not.
func aesRound(d, k XMM, decrypt, last bool) XMM {
	s := shiftRows(bytesOf(d), decrypt)
	if decrypt {
		subBytes(&s, &aesInvSbox)
		if !last {
			mixColumns(&s, aesInvMix)
		}
	} else {
		subBytes(&s, &aesSbox)
		if !last {
			mixColumns(&s, aesMix)
		}
	}
	r := fromBytes(s)
	return XMM{r[0] ^ k[0], r[1] ^ k[1]}
}

func subWord(w uint32) uint32 {
	return uint32(aesSbox[w&0xff]) | uint32(aesSbox[w>>8&0xff])<<8 | uint32(aesSbox[w>>16&0xff])<<16 | uint32(aesSbox[w>>24])<<24
}

// clmul is the carry-less product of a and b.
func clmul(a, b uint64) XMM {
	var lo, hi uint64
	for i := uint(0); i < 64; i++ {
		if b>>i&1 != 0 {
			lo ^= a << i
			if i > 0 {
				hi ^= a >> (64 - i)
			}
		}
	}
	return XMM{lo, hi}
}

func init() {
	for _, r := range []struct {
		op            x86asm.Op
		decrypt, last bool
	}{{x86asm.AESENC, false, false}, {x86asm.AESENCLAST, false, true}, {x86asm.AESDEC, true, false}, {x86asm.AESDECLAST, true, true}} {
		sse(func(c *CPU, in *Inst, d *XMM, s XMM) { *d = aesRound(*d, s, r.decrypt, r.last) }, r.op)
	}
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		b := bytesOf(s)
		mixColumns(&b, aesInvMix)
		*d = fromBytes(b)
	}, x86asm.AESIMC)
	registerImm(x86asm.AESKEYGENASSIST, func(imm uint64) xfn {
		rcon := uint32(imm)
		return func(c *CPU, in *Inst, d *XMM, s XMM) {
			x1, x3 := subWord(uint32(s[0]>>32)), subWord(uint32(s[1]>>32))
			*d = XMM{uint64(x1) | uint64(bits.RotateLeft32(x1, -8)^rcon)<<32, uint64(x3) | uint64(bits.RotateLeft32(x3, -8)^rcon)<<32}
		}
	})
	registerImm(x86asm.PCLMULQDQ, func(imm uint64) xfn {
		return func(c *CPU, in *Inst, d *XMM, s XMM) { *d = clmul(d[imm&1], s[imm>>4&1]) }
	})

	// The VEX.128 forms: dest = f(vvvv, rm).
	const A, P = FeatAVX | FeatAES, FeatAVX | FeatPCLMUL
	only128 := func(b func(in *Inst) Handler) func(in *Inst) Handler {
		return func(in *Inst) Handler {
			if vexL(in) {
				return nil // VAES
			}
			return b(in)
		}
	}
	defVex(2, 1, 0xdc, "VAESENC", A, false, only128(vl(x86asm.AESENC)))
	defVex(2, 1, 0xdd, "VAESENCLAST", A, false, only128(vl(x86asm.AESENCLAST)))
	defVex(2, 1, 0xde, "VAESDEC", A, false, only128(vl(x86asm.AESDEC)))
	defVex(2, 1, 0xdf, "VAESDECLAST", A, false, only128(vl(x86asm.AESDECLAST)))
	defVex(2, 1, 0xdb, "VAESIMC", A, false, only128(vl(x86asm.AESIMC)))
	defVex(3, 1, 0xdf, "VAESKEYGENASSIST", A, true, only128(vli(x86asm.AESKEYGENASSIST)))
	defVex(3, 1, 0x44, "VPCLMULQDQ", P, true, only128(vli(x86asm.PCLMULQDQ)))
}
