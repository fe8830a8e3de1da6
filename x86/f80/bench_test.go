package f80

import "testing"

var sink F80

func BenchmarkAdd(b *testing.B) {
	x, y := F80{0xC90FDAA22168C235, bias}, F80{0xB17217F7D1CF79AC, bias - 3}
	for i := 0; i < b.N; i++ {
		sink, _ = Add(x, y, RoundNearest, Prec64)
	}
}

func BenchmarkDiv(b *testing.B) {
	x, y := F80{0xC90FDAA22168C235, bias}, F80{0xB17217F7D1CF79AC, bias - 3}
	for i := 0; i < b.N; i++ {
		sink, _ = Div(x, y, RoundNearest, Prec53)
	}
}

func BenchmarkSqrt(b *testing.B) {
	x := F80{0xC90FDAA22168C235, bias}
	for i := 0; i < b.N; i++ {
		sink, _ = Sqrt(x, RoundNearest, Prec64)
	}
}

func BenchmarkSin(b *testing.B) {
	x := F80{0xC90FDAA22168C235, bias + 3}
	for i := 0; i < b.N; i++ {
		sink, _, _ = Sin(x, RoundNearest)
	}
}

func BenchmarkF2xm1(b *testing.B) {
	x := F80{0xC90FDAA22168C235, bias - 2}
	for i := 0; i < b.N; i++ {
		sink, _ = F2xm1(x, RoundNearest)
	}
}

func BenchmarkYl2x(b *testing.B) {
	x := F80{0xC90FDAA22168C235, bias + 3}
	for i := 0; i < b.N; i++ {
		sink, _ = Yl2x(One, x, RoundNearest)
	}
}

func BenchmarkPatan(b *testing.B) {
	x := F80{0xC90FDAA22168C235, bias + 3}
	for i := 0; i < b.N; i++ {
		sink, _ = Patan(One, x, RoundNearest)
	}
}
