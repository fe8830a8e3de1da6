package probe

import (
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

// isZero reports an unset or cleared variable: 0 or "".
func (v Value) isZero() bool { return v.K == KInt && v.I == 0 || v.K != KInt && v.S == "" }

// same reports whether two values are equal as variables (0 and "" are
// both unset).
func (v Value) same(w Value) bool {
	if v.isZero() && w.isZero() {
		return true
	}
	return v == w
}

func (v Value) truth() bool {
	if v.K == KInt {
		return v.I != 0
	}
	return v.S != ""
}

// String formats the value as trace() prints it.
func (v Value) String() string {
	if v.K == KInt {
		return strconv.FormatInt(v.I, 10)
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
