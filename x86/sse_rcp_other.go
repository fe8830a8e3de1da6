//go:build !amd64

package x86

import "math"

// hostRecip approximates rcpps and rsqrtps portably where the host has no
// such instruction: the correctly rounded result truncated to 12
// significant bits, which is within the architectural error bound but
// matches no particular CPU.
func hostRecip(op int, x XMM, mx uint32) XMM {
	var r XMM
	for i := 0; i < 4; i++ {
		a := lane32(x, i)
		if mx&MxDAZ != 0 && fmt32.isDenormal(a) {
			a &= 1 << 31
		}
		v := float64(f32(a))
		if op == recipRcp {
			v = 1 / v
		} else {
			v = 1 / math.Sqrt(v)
		}
		b := b32(float32(v))
		if isNorm32(b) {
			b &^= 1<<11 - 1
		} else if fmt32.isDenormal(b) {
			b &= 1 << 31 // tiny results flush to zero
		}
		r[i>>1] |= b << (32 * uint(i&1))
	}
	return r
}
