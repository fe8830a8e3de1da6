package x86

import (
	"math/bits"
	"testing"
)

// TestAESSbox checks the S-box tables against FIPS-197's table (a few
// entries) and against the definition, every entry (gfInv against its
// own definition too).
func TestAESSbox(t *testing.T) {
	for x := 0; x < 256; x++ {
		b := gfInv(byte(x))
		v := b ^ bits.RotateLeft8(b, 1) ^ bits.RotateLeft8(b, 2) ^ bits.RotateLeft8(b, 3) ^ bits.RotateLeft8(b, 4) ^ 0x63
		if aesSbox[x] != v || aesInvSbox[v] != byte(x) {
			t.Errorf("S(%#02x) = %#02x, S^-1(%#02x) = %#02x; want %#02x and %#02x", x, aesSbox[x], v, aesInvSbox[v], v, x)
		}
	}
	for x, want := range map[byte]byte{0x00: 0x63, 0x01: 0x7c, 0x53: 0xed, 0x10: 0xca, 0xff: 0x16, 0x9a: 0xb8} {
		if aesSbox[x] != want {
			t.Errorf("S(%#02x) = %#02x, want %#02x", x, aesSbox[x], want)
		}
		if aesInvSbox[want] != x {
			t.Errorf("S^-1(%#02x) = %#02x, want %#02x", want, aesInvSbox[want], x)
		}
	}
	if gfInv(0) != 0 {
		t.Errorf("gfInv(0) = %#x", gfInv(0))
	}
	for a := 1; a < 256; a++ {
		if p := gfMul(byte(a), gfInv(byte(a))); p != 1 {
			t.Fatalf("%#02x * gfInv(%#02x) = %#02x", a, a, p)
		}
	}
}

// gfInv is the multiplicative inverse (0 for 0): a^254, by square and
// multiply.
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
