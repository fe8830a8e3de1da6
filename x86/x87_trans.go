package x86

import (
	"math"

	"ttd/x86/f80"
)

// Transcendental x87 operations. TEMPORARY: computed in float64 until
// package f80 provides extended-precision versions.

func t1(v f80.F80, rc f80.Rounding, f func(float64) float64) (f80.F80, f80.Exc) {
	x, _ := v.Float64(f80.RoundNearest)
	return f80.FromFloat64(f(x)), f80.PE
}

func xF2xm1(v f80.F80, rc f80.Rounding) (f80.F80, f80.Exc) {
	return t1(v, rc, func(x float64) float64 { return math.Expm1(x * math.Ln2) })
}
func xSin(v f80.F80, rc f80.Rounding) (f80.F80, f80.Exc) { return t1(v, rc, math.Sin) }
func xCos(v f80.F80, rc f80.Rounding) (f80.F80, f80.Exc) { return t1(v, rc, math.Cos) }
func xTan(v f80.F80, rc f80.Rounding) (f80.F80, f80.Exc) { return t1(v, rc, math.Tan) }

func t2(y, x f80.F80, f func(y, x float64) float64) (f80.F80, f80.Exc) {
	a, _ := y.Float64(f80.RoundNearest)
	b, _ := x.Float64(f80.RoundNearest)
	return f80.FromFloat64(f(a, b)), f80.PE
}

func xYl2x(y, x f80.F80, rc f80.Rounding) (f80.F80, f80.Exc) {
	return t2(y, x, func(y, x float64) float64 { return y * math.Log2(x) })
}
func xYl2xp1(y, x f80.F80, rc f80.Rounding) (f80.F80, f80.Exc) {
	return t2(y, x, func(y, x float64) float64 { return y * math.Log1p(x) / math.Ln2 })
}
func xPatan(y, x f80.F80, rc f80.Rounding) (f80.F80, f80.Exc) { return t2(y, x, math.Atan2) }
