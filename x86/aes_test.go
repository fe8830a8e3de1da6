package x86

import "testing"

// TestAESSbox checks the S-box computed at start-up against FIPS-197's
// table (a few entries) and gfInv against its definition.
func TestAESSbox(t *testing.T) {
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
