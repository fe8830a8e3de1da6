package probe

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DTrace's printf: C's conversions with D's additions (%a symbol+offset,
// %A, %S escaped string, %Y date, %k stack, %@ the value in printa).

type conv struct {
	lit     string // literal text before the conversion ("" at the end)
	flags   string
	width   string // digits or "*"
	prec    string // digits or "*" (without the dot), hasPrec says if present
	hasPrec bool
	verb    byte // 0: literal only
	agg     bool // %@d
}

func parseFormat(f string) ([]conv, error) {
	var out []conv
	var lit strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			lit.WriteByte(f[i])
			continue
		}
		i++
		if i < len(f) && f[i] == '%' {
			lit.WriteByte('%')
			continue
		}
		c := conv{lit: lit.String()}
		lit.Reset()
		for i < len(f) && strings.IndexByte("-+ #0'", f[i]) >= 0 {
			c.flags += string(f[i])
			i++
		}
		if i < len(f) && f[i] == '@' {
			c.agg = true
			i++
		}
		for i < len(f) && (isDigit(f[i]) || f[i] == '*') {
			c.width += string(f[i])
			i++
		}
		if i < len(f) && f[i] == '.' {
			c.hasPrec = true
			i++
			for i < len(f) && (isDigit(f[i]) || f[i] == '*') {
				c.prec += string(f[i])
				i++
			}
		}
		for i < len(f) && strings.IndexByte("hlLqjzt", f[i]) >= 0 {
			i++
		}
		if i >= len(f) {
			return nil, fmt.Errorf("incomplete conversion at the end of %q", f)
		}
		c.verb = f[i]
		if strings.IndexByte("diuxXocspaAeEfgGSYk", c.verb) < 0 {
			return nil, fmt.Errorf("unknown conversion %%%c", c.verb)
		}
		out = append(out, c)
	}
	out = append(out, conv{lit: lit.String()})
	return out, nil
}

// countArgs is the number of arguments a format takes (a * width or
// precision takes one; %@ takes the printa value, not an argument).
func countArgs(cs []conv) int {
	n := 0
	for _, c := range cs {
		if c.verb == 0 || c.agg {
			continue
		}
		n++
		if c.width == "*" {
			n++
		}
		if c.prec == "*" {
			n++
		}
	}
	return n
}

// symbolizer names code addresses for %a and stacks.
type symbolizer interface {
	PCToFunc(pc uint64) (name string, entry uint64, ok bool)
}

// sprintf formats args by cs. aggVal is the value for %@ (printa).
func sprintf(cs []conv, args []Value, aggVal *Value, sy symbolizer) string {
	var b strings.Builder
	ai := 0
	next := func() Value {
		if ai < len(args) {
			ai++
			return args[ai-1]
		}
		return Value{}
	}
	for _, c := range cs {
		b.WriteString(c.lit)
		if c.verb == 0 {
			continue
		}
		width, prec := c.width, c.prec
		if width == "*" {
			width = strconv.FormatInt(next().I, 10)
		}
		if prec == "*" {
			prec = strconv.FormatInt(next().I, 10)
		}
		var v Value
		if c.agg {
			if aggVal != nil {
				v = *aggVal
			}
		} else {
			v = next()
		}
		spec := "%" + c.flags + width
		if c.hasPrec {
			spec += "." + prec
		}
		if v.K == KFloat && strings.IndexByte("eEfgG", c.verb) < 0 {
			if c.verb == 's' {
				v = strVal(v.String())
			} else {
				v = intVal(int64(v.Float())) // %d of a double: C's conversion
			}
		}
		switch c.verb {
		case 'd', 'i':
			if v.K != KInt {
				b.WriteString(fmt.Sprintf(spec+"s", v.S))
				continue
			}
			b.WriteString(fmt.Sprintf(spec+"d", v.I))
		case 'u':
			b.WriteString(fmt.Sprintf(spec+"d", uint64(v.I)))
		case 'x', 'X', 'o':
			b.WriteString(fmt.Sprintf(spec+string(c.verb), uint64(v.I)))
		case 'c':
			b.WriteString(fmt.Sprintf(spec+"c", rune(byte(v.I))))
		case 'p':
			b.WriteString(fmt.Sprintf(strings.Replace(spec, "#", "", 1)+"s", fmt.Sprintf("%#x", uint64(v.I))))
		case 's', 'S', 'k':
			s := v.S
			if v.K == KInt {
				s = strconv.FormatInt(v.I, 10)
			}
			if c.verb == 'S' {
				s = strings.Trim(strconv.Quote(s), `"`)
			}
			b.WriteString(fmt.Sprintf(spec+"s", s))
		case 'a', 'A':
			a := symAddr(sy, uint64(v.I), c.verb == 'a')
			if v.K == KStr {
				// Symbolised when aggregated (segEval.symKeys).
				a = v.S
				if i := strings.LastIndexByte(a, '+'); c.verb == 'A' && i > 0 {
					a = a[:i]
				}
			}
			b.WriteString(fmt.Sprintf(spec+"s", a))
		case 'e', 'E', 'f', 'g', 'G':
			if !c.hasPrec && (c.verb == 'g' || c.verb == 'G') {
				spec += ".6" // C's default precision; Go's %g is the shortest
			}
			b.WriteString(fmt.Sprintf(spec+string(c.verb), v.asFloat()))
		case 'Y':
			t := time.Unix(0, v.I).UTC()
			b.WriteString(fmt.Sprintf(spec+"s", t.Format("2006 Jan  2 15:04:05")))
		}
	}
	return b.String()
}

// symAddr formats a code address as func+0xoff (DTrace's %a).
func symAddr(sy symbolizer, pc uint64, offset bool) string {
	if sy != nil {
		if name, entry, ok := sy.PCToFunc(pc); ok {
			if pc == entry || !offset {
				return name
			}
			return fmt.Sprintf("%s+%#x", name, pc-entry)
		}
	}
	return fmt.Sprintf("%#x", pc)
}
