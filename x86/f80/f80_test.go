package f80

import (
	"math"
	"math/rand"
	"testing"
)

// These tests need no x87; the differential tests are in x87_test.go and
// trans_test.go.

func TestBytes(t *testing.T) {
	a := F80{0x0123456789ABCDEF, 0xC001}
	var b [10]byte
	a.Bytes(b[:])
	want := [10]byte{0xEF, 0xCD, 0xAB, 0x89, 0x67, 0x45, 0x23, 0x01, 0x01, 0xC0}
	if b != want {
		t.Fatalf("Bytes = % x, want % x", b, want)
	}
	if FromBytes(b[:]) != a {
		t.Fatalf("FromBytes(% x) = %v", b, FromBytes(b[:]))
	}
}

func TestFloatRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 100000; i++ {
		u := r.Uint64()
		if i%4 == 0 {
			u &= 0x800FFFFFFFFFFFFF // denormals
		}
		f := math.Float64frombits(u)
		a := FromFloat64(f)
		g, e := a.Float64(RoundNearest)
		wantE := Exc(0)
		wantU := u
		if a.IsSNaN() {
			wantE, wantU = IE, u|1<<51
		}
		if math.Float64bits(g) != wantU || e != wantE {
			t.Fatalf("float64 %#x -> %v -> %#x, %#x", u, a, math.Float64bits(g), e)
		}
		v := uint32(u)
		if i%4 == 0 {
			v &= 0x807FFFFF
		}
		a = FromFloat32(math.Float32frombits(v))
		h, e := a.Float32(RoundNearest)
		wantE, wantV := Exc(0), v
		if a.IsSNaN() {
			wantE, wantV = IE, v|1<<22
		}
		if math.Float32bits(h) != wantV || e != wantE {
			t.Fatalf("float32 %#x -> %v -> %#x, %#x", v, a, math.Float32bits(h), e)
		}
	}
}

func TestIntRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	for i := 0; i < 100000; i++ {
		v := int64(r.Uint64()) >> uint(r.Intn(64))
		a := FromInt64(v)
		if w, e := a.Int64(RoundNearest); w != v || e != 0 {
			t.Fatalf("%d -> %v -> %d, %#x", v, a, w, e)
		}
	}
	if v, e := FromInt64(1 << 40).Int32(RoundNearest); v != IntIndefinite32 || e != IE {
		t.Fatalf("Int32(2^40) = %d, %#x", v, e)
	}
	if v, e := (F80{0xC000000000000000, bias}).Int16(RoundNearest); v != 2 || e != PE|C1 {
		t.Fatalf("Int16(1.5) = %d, %#x", v, e)
	}
}

func TestValues(t *testing.T) {
	for _, c := range []struct {
		got, want F80
	}{
		{Pi, F80{0xC90FDAA22168C235, 0x4000}},
		{Const(ConstPi, RoundZero), F80{0xC90FDAA22168C234, 0x4000}},
		{L2T, F80{0xD49A784BCD1B8AFE, 0x4000}},
		{Const(ConstL2T, RoundUp), F80{0xD49A784BCD1B8AFF, 0x4000}},
		{L2E, F80{0xB8AA3B295C17F0BC, 0x3FFF}},
		{LG2, F80{0x9A209A84FBCFF799, 0x3FFD}},
		{LN2, F80{0xB17217F7D1CF79AC, 0x3FFE}},
		{FromInt64(-3), F80{0xC000000000000000, 0xC000}},
		{FromFloat64(0.5), F80{intBit, bias - 1}},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", hex80(c.got), hex80(c.want))
		}
	}
	third, e := Div(One, FromInt64(3), RoundNearest, Prec64)
	if third != (F80{0xAAAAAAAAAAAAAAAB, bias - 2}) || e != PE|C1 {
		t.Errorf("1/3 = %s, %#x", hex80(third), e)
	}
	if r, e := Sub(One, One, RoundDown, Prec64); r != NegZero || e != 0 {
		t.Errorf("1-1 rounding down = %s, %#x", hex80(r), e)
	}
	if r, e := Sqrt(One.Neg(), RoundNearest, Prec64); r != Indefinite || e != IE {
		t.Errorf("sqrt(-1) = %s, %#x", hex80(r), e)
	}
	if c, un := Compare(Zero, NegZero); c != 0 || un {
		t.Errorf("Compare(0, -0) = %d, %v", c, un)
	}
	if r, q, ok, e := Prem(FromInt64(7), FromInt64(2), true); r != One.Neg() || q != 4 || !ok || e != 0 {
		t.Errorf("fprem1(7, 2) = %s, %d, %v, %#x", hex80(r), q, ok, e)
	}
	if s, e, ok := Sin(Pi, RoundNearest); s != (F80{intBit, 0xBFBF}) || e != PE|C1 || !ok {
		t.Errorf("sin(pi) = %s, %#x, %v", hex80(s), e, ok)
	}
}

func TestNoAllocs(t *testing.T) {
	a, b := F80{0xC90FDAA22168C235, bias}, F80{0xB17217F7D1CF79AC, 3}
	n := testing.AllocsPerRun(100, func() {
		Add(a, b, RoundNearest, Prec64)
		Sub(a, b, RoundUp, Prec24)
		Mul(a, b, RoundDown, Prec53)
		Div(a, b, RoundZero, Prec64)
		Sqrt(a, RoundNearest, Prec64)
		RoundInt(a, RoundNearest)
		Prem(a, b, false)
		Scale(a, b, RoundNearest)
		a.Float64(RoundNearest)
		a.Int64(RoundNearest)
	})
	if n != 0 {
		t.Errorf("%v allocations", n)
	}
}
