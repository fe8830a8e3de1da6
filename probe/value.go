package probe

import (
	"cmp"
	"math"
	"strconv"
	"strings"
)

// Kind says what a Value holds.
type Kind uint8

// Value kinds.
const (
	KInt   Kind = iota // a 64-bit integer (the zero Value: 0, or unset)
	KStr               // a string
	KStack             // a symbolised stack (stack, ustack): one frame a line
	// KFloat is a float or double member of the program (I holds the
	// float64's bits): printf's %f, %e and %g print it, trace prints it
	// as %g does; used as an integer it truncates toward zero, as a C
	// conversion does (D itself does not compute with floating point).
	KFloat
)

// Value is what an expression evaluates to. The zero Value is the
// integer 0, which is also what an unset variable reads as.
type Value struct {
	K Kind   `json:"k,omitempty"`
	I int64  `json:"i,omitempty"`
	S string `json:"s,omitempty"`
}

func intVal(v int64) Value  { return Value{I: v} }
func strVal(s string) Value { return Value{K: KStr, S: s} }
func floatVal(f float64) Value {
	return Value{K: KFloat, I: int64(math.Float64bits(f))}
}

// Float is a KFloat's value.
func (v Value) Float() float64 { return math.Float64frombits(uint64(v.I)) }

// isZero reports an unset or cleared variable: 0 or "".
func (v Value) isZero() bool {
	switch v.K {
	case KInt:
		return v.I == 0
	case KFloat:
		return v.Float() == 0
	}
	return v.S == ""
}

// same reports whether two values are equal as variables (0 and "" are
// both unset).
func (v Value) same(w Value) bool {
	if v.isZero() && w.isZero() {
		return true
	}
	return v == w
}

func (v Value) truth() bool { return !v.isZero() }

// String formats the value as trace() prints it.
func (v Value) String() string {
	switch v.K {
	case KInt:
		return strconv.FormatInt(v.I, 10)
	case KFloat:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	}
	return v.S
}

// keyString encodes a tuple of values into a map key: distinct tuples
// give distinct strings.
func keyString(vs []Value) string { return string(appendKey(nil, vs)) }

// appendKey appends keyString's encoding to b (the hot path looks a key
// up without allocating: m[string(b)]).
func appendKey(b []byte, vs []Value) []byte {
	for _, v := range vs {
		switch v.K {
		case KInt:
			b = append(b, 'i')
			b = strconv.AppendInt(b, v.I, 10)
		case KFloat:
			b = append(b, 'f')
			b = strconv.AppendInt(b, v.I, 10)
		default:
			b = append(b, 's'+byte(v.K))
			b = strconv.AppendInt(b, int64(len(v.S)), 10)
			b = append(b, ':')
			b = append(b, v.S...)
		}
		b = append(b, '|')
	}
	return b
}

// compareValues orders values: integers numerically, strings
// lexically, integers before strings.
func compareValues(a, b Value) int {
	if a.K != b.K {
		if a.K < b.K {
			return -1
		}
		return 1
	}
	if a.K == KFloat {
		return cmpFloat(a.Float(), b.Float())
	}
	if a.K == KInt {
		switch {
		case a.I < b.I:
			return -1
		case a.I > b.I:
			return 1
		}
		return 0
	}
	return strings.Compare(a.S, b.S)
}

func compareKeys(a, b []Value) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := compareValues(a[i], b[i]); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

func cmpFloat(a, b float64) int { return cmp.Compare(a, b) }

// number is v as an integer: a float truncates toward zero. ok is false
// for a string.
func (v Value) number() (int64, bool) {
	switch v.K {
	case KInt:
		return v.I, true
	case KFloat:
		return int64(v.Float()), true
	}
	return 0, false
}

// numeric reports an integer or a float.
func (v Value) numeric() bool { return v.K == KInt || v.K == KFloat }

// asFloat is a numeric value as a float64.
func (v Value) asFloat() float64 {
	if v.K == KFloat {
		return v.Float()
	}
	return float64(v.I)
}
