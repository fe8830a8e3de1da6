package symbols

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
)

// ExprError is a malformed or unevaluable expression.
type ExprError struct {
	Expr string
	Msg  string
}

func (e *ExprError) Error() string { return fmt.Sprintf("%s: %s", e.Expr, e.Msg) }

// EvalExpr evaluates a simple expression in the frame's scope (f may be
// nil: globals and numbers only): a variable name (local, argument or
// global; "pkg.Name" for Go), a.b, p->x, *p, &x, arr[3], a cast such as
// *(int*)0x1234 or (struct point *)p, a register ($rax, $sp), a number,
// and + or - on integers and pointers. Go pointers are dereferenced by
// ".", as in Go.
func (t *Table) EvalExpr(expr string, f *Frame, mem MemReader) (*Variable, error) {
	c := &evalCtx{t: t, mem: mem, frame: f}
	switch {
	case f != nil && f.img != nil:
		c.img = f.img
		c.isGo = f.fn != nil && f.fn.cu.isGo || f.fn == nil && f.img.isGo
	default:
		if imgs := t.imageList(); len(imgs) > 0 {
			c.img = imgs[0]
			c.isGo = c.img.isGo
		}
	}
	toks, err := tokenize(expr)
	if err != nil {
		return nil, &ExprError{expr, err.Error()}
	}
	p := &parser{c: c, toks: toks}
	v, err := p.additive()
	if err == nil && p.pos < len(p.toks) {
		err = fmt.Errorf("unexpected %q", p.toks[p.pos])
	}
	if err != nil {
		return nil, &ExprError{expr, err.Error()}
	}
	return c.newVariable(expr, v), nil
}

func tokenize(s string) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		r := rune(s[i])
		switch {
		case unicode.IsSpace(r):
			i++
		case r == '-' && i+1 < len(s) && s[i+1] == '>':
			toks = append(toks, "->")
			i += 2
		case strings.ContainsRune("*&()[].+-", r):
			toks = append(toks, string(r))
			i++
		case r == '$' || r == '_' || r == '~' || unicode.IsLetter(r) || unicode.IsDigit(r) || r >= 0x80:
			j := i + 1
			for j < len(s) && (s[j] == '_' || s[j] >= 0x80 || unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j]))) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		default:
			return nil, fmt.Errorf("unexpected %q", r)
		}
	}
	return toks, nil
}

type parser struct {
	c    *evalCtx
	toks []string
	pos  int
}

func (p *parser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *parser) next() string {
	s := p.peek()
	p.pos++
	return s
}

func (p *parser) expect(s string) error {
	if p.next() != s {
		return fmt.Errorf("expected %q", s)
	}
	return nil
}

// long is the type of numbers and registers.
var long = &godwarf.IntType{BasicType: godwarf.BasicType{CommonType: godwarf.CommonType{ByteSize: 8, Name: "long"}}}

func intValue(n int64) value {
	return value{typ: long, data: binary.LittleEndian.AppendUint64(nil, uint64(n))}
}

func pointerTo(t godwarf.Type) *godwarf.PtrType {
	return &godwarf.PtrType{CommonType: godwarf.CommonType{ByteSize: 8}, Type: t}
}

func (p *parser) additive() (value, error) {
	v, err := p.unary()
	for err == nil && (p.peek() == "+" || p.peek() == "-") {
		op := p.next()
		var r value
		if r, err = p.unary(); err != nil {
			break
		}
		v, err = p.c.arith(v, r, op)
	}
	return v, err
}

// arith adds or subtracts integers, or an integer to a pointer.
func (c *evalCtx) arith(a, b value, op string) (value, error) {
	x, err := c.uint(a)
	if err != nil {
		return value{}, err
	}
	y, err := c.uint(b)
	if err != nil {
		return value{}, err
	}
	if _, ok := resolve(b.typ).(*godwarf.PtrType); ok && op == "+" {
		a, b, x, y = b, a, y, x
	}
	scale := int64(1)
	if pt, ok := resolve(a.typ).(*godwarf.PtrType); ok && pt.Type != nil {
		if _, bptr := resolve(b.typ).(*godwarf.PtrType); bptr {
			return value{}, errors.New("pointer arithmetic between pointers is not supported")
		}
		if sz := sizeOf(pt.Type); sz > 0 {
			scale = sz
		}
	}
	d := int64(y) * scale
	if op == "-" {
		d = -d
	}
	if _, ok := resolve(a.typ).(*godwarf.PtrType); ok {
		return value{typ: a.typ, data: binary.LittleEndian.AppendUint64(nil, x+uint64(d))}, nil
	}
	return intValue(int64(x) + d), nil
}

func (p *parser) unary() (value, error) {
	switch p.peek() {
	case "*":
		p.next()
		v, err := p.unary()
		if err != nil {
			return v, err
		}
		return p.c.derefExpr(v)
	case "&":
		p.next()
		v, err := p.unary()
		if err != nil {
			return v, err
		}
		if !v.inMem {
			return v, errors.New("cannot take the address of a value not in memory")
		}
		return value{typ: pointerTo(v.typ), data: binary.LittleEndian.AppendUint64(nil, v.addr)}, nil
	case "-":
		p.next()
		v, err := p.unary()
		if err != nil {
			return v, err
		}
		return p.c.arith(intValue(0), v, "-")
	case "(":
		save := p.pos
		p.next()
		if typ, ok := p.typeName(); ok && p.peek() == ")" {
			p.next()
			v, err := p.unary()
			if err != nil {
				return v, err
			}
			return p.c.cast(v, typ)
		}
		p.pos = save
	}
	return p.postfix()
}

// typeName parses a C or Go type name followed by '*'s (C) or preceded by
// them (Go).
func (p *parser) typeName() (godwarf.Type, bool) {
	stars := 0
	for p.peek() == "*" {
		p.next()
		stars++
	}
	var words []string
	for {
		w := p.peek()
		if w == "" || !(unicode.IsLetter(rune(w[0])) || w[0] == '_') {
			break
		}
		p.next()
		words = append(words, w)
		if p.peek() == "." { // Go: pkg.Type
			p.next()
			words[len(words)-1] += "." + p.next()
		}
	}
	for p.peek() == "*" {
		p.next()
		stars++
	}
	if len(words) == 0 {
		return nil, false
	}
	typ := p.c.lookupType(strings.Join(words, " "))
	if typ == nil {
		return nil, false
	}
	for range stars {
		typ = pointerTo(typ)
	}
	return typ, true
}

// lookupType finds a named type, the frame's module first.
func (c *evalCtx) lookupType(name string) godwarf.Type {
	name = strings.TrimPrefix(strings.TrimPrefix(name, "const "), "volatile ")
	aliases := map[string]string{"unsigned": "unsigned int", "signed": "int", "long int": "long",
		"unsigned long": "long unsigned int", "unsigned char": "unsigned char", "short": "short int",
		"unsigned short": "short unsigned int", "long long": "long long int",
		"unsigned long long": "long long unsigned int", "unsigned int": "unsigned int"}
	names := []string{name}
	if a, ok := aliases[name]; ok {
		names = append(names, a)
	}
	imgs := c.t.imageList()
	if c.img != nil {
		imgs = append([]*image{c.img}, imgs...)
	}
	for _, img := range imgs {
		for _, n := range names {
			if off, ok := img.typeNames[n]; ok {
				if t, err := img.readType(off); err == nil {
					return t
				}
			}
		}
	}
	if name == "long" || name == "long int" {
		return long
	}
	return nil
}

// cast reinterprets a scalar (or the bytes of a value) as typ.
func (c *evalCtx) cast(v value, typ godwarf.Type) (value, error) {
	if _, isArr := resolve(v.typ).(*godwarf.ArrayType); isArr && v.inMem {
		v = value{typ: pointerTo(nil), data: binary.LittleEndian.AppendUint64(nil, v.addr)}
	}
	b, err := c.bytes(v)
	if err != nil {
		return value{}, err
	}
	var data []byte
	switch resolve(typ).(type) {
	case *godwarf.StructType, *godwarf.ArrayType:
		if !v.inMem {
			return value{}, errors.New("cannot cast a value not in memory to an aggregate")
		}
		return value{typ: typ, addr: v.addr, inMem: true}, nil
	default:
		var w [8]byte
		copy(w[:], b)
		if sz := sizeOf(v.typ); sz < 8 {
			switch resolve(v.typ).(type) {
			case *godwarf.IntType, *godwarf.CharType, *godwarf.EnumType:
				binary.LittleEndian.PutUint64(w[:], uint64(signExtend(binary.LittleEndian.Uint64(w[:]), sz)))
			}
		}
		data = fit(w[:], sizeOf(typ))
	}
	return value{typ: typ, data: data}, nil
}

// derefExpr implements unary '*'.
func (c *evalCtx) derefExpr(v value) (value, error) {
	switch t := resolve(v.typ).(type) {
	case *godwarf.PtrType:
		if t.Type == nil {
			return value{}, errors.New("cannot dereference a void pointer")
		}
		if _, void := t.Type.(*godwarf.VoidType); void {
			return value{}, errors.New("cannot dereference a void pointer")
		}
		d := c.deref(v, t.Type)
		return d, d.err
	case *godwarf.ArrayType:
		return c.sub(v, 0, t.Type), nil
	}
	return value{}, fmt.Errorf("cannot dereference a %s", c.typeName(v.typ))
}

func (p *parser) postfix() (value, error) {
	v, err := p.primary()
	if err != nil {
		return v, err
	}
	for {
		switch p.peek() {
		case ".", "->":
			op := p.next()
			name := p.next()
			if name == "" {
				return v, errors.New("expected a field name")
			}
			if p.peek() == "(" {
				// A method call: size(), length() and empty() of the
				// C++ containers.
				p.next()
				if err := p.expect(")"); err != nil {
					return v, err
				}
				if v, err = p.c.method(v, name, op == "->"); err != nil {
					return v, err
				}
				continue
			}
			if v, err = p.c.member(v, name, op == "->"); err != nil {
				return v, err
			}
		case "[":
			p.next()
			idx, err := p.additive()
			if err != nil {
				return idx, err
			}
			if err := p.expect("]"); err != nil {
				return v, err
			}
			i, err := p.c.uint(idx)
			if err != nil {
				return v, err
			}
			if v, err = p.c.index(v, int64(i)); err != nil {
				return v, err
			}
		default:
			return v, nil
		}
	}
}

// member implements a.b and p->b (and Go's p.b through a pointer).
func (c *evalCtx) member(v value, name string, arrow bool) (value, error) {
	for range 2 {
		pt, isPtr := resolve(v.typ).(*godwarf.PtrType)
		if !isPtr {
			break
		}
		if !arrow && !c.isGo {
			return v, fmt.Errorf("%s is a pointer: use ->", c.typeName(v.typ))
		}
		v = c.deref(v, pt.Type)
		if v.err != nil {
			return v, v.err
		}
		arrow = false
	}
	st, ok := resolve(v.typ).(*godwarf.StructType)
	if !ok {
		return v, fmt.Errorf("%s has no fields", c.typeName(v.typ))
	}
	c.load(&v)
	for i, f := range st.Field {
		if f.Name == name {
			return c.fieldValue(v, st, i), nil
		}
	}
	for i, f := range st.Field { // Go embedded fields, one level down
		if f.Embedded {
			if ev, err := c.member(c.fieldValue(v, st, i), name, false); err == nil {
				return ev, nil
			}
		}
	}
	return v, fmt.Errorf("%s has no field %s", c.typeName(v.typ), name)
}

// index implements a[i] on arrays, pointers, Go slices and strings.
func (c *evalCtx) index(v value, i int64) (value, error) {
	switch t := resolve(v.typ).(type) {
	case *godwarf.ArrayType:
		if i < 0 || t.Count >= 0 && i >= t.Count {
			return v, fmt.Errorf("index %d out of range [0, %d)", i, t.Count)
		}
		return c.sub(v, i*elemStride(t), t.Type), nil
	case *godwarf.PtrType:
		if t.Type == nil || sizeOf(t.Type) <= 0 {
			return v, errors.New("cannot index a void pointer")
		}
		d := c.deref(v, t.Type)
		if d.err != nil {
			return d, d.err
		}
		d.addr += uint64(i * sizeOf(t.Type))
		return d, nil
	case *godwarf.StructType:
		if ct, ok := c.cxxContainer(v); ok {
			return c.containerIndex(ct, i)
		}
	case *godwarf.SliceType:
		n, _, arr, err := c.sliceHeader(v)
		if err != nil {
			return v, err
		}
		if i < 0 || i >= n {
			return v, fmt.Errorf("index %d out of range [0, %d)", i, n)
		}
		return value{typ: t.ElemType, addr: arr + uint64(i*sizeOf(t.ElemType)), inMem: true}, nil
	}
	return v, fmt.Errorf("cannot index a %s", c.typeName(v.typ))
}

func (p *parser) primary() (value, error) {
	tok := p.next()
	switch {
	case tok == "":
		return value{}, errors.New("unexpected end")
	case tok == "(":
		v, err := p.additive()
		if err == nil {
			err = p.expect(")")
		}
		return v, err
	case tok[0] == '$':
		return p.c.register(tok)
	case tok[0] >= '0' && tok[0] <= '9':
		n, err := strconv.ParseUint(tok, 0, 64)
		if err != nil {
			return value{}, fmt.Errorf("bad number %q", tok)
		}
		return intValue(int64(n)), nil
	}
	if v, ok := p.c.lookupVar(tok); ok {
		return v, v.err
	}
	// Go: pkg.Name
	if p.peek() == "." && p.pos+1 < len(p.toks) {
		if v, ok := p.c.lookupVar(tok + "." + p.toks[p.pos+1]); ok {
			p.pos += 2
			return v, v.err
		}
	}
	return value{}, fmt.Errorf("no variable %q in scope", tok)
}

// register returns a frame register as a number (rip, rsp and rbp as
// pointers).
func (c *evalCtx) register(tok string) (value, error) {
	i, ok := RegisterIndex(tok)
	if !ok {
		return value{}, fmt.Errorf("no register %s", tok)
	}
	if c.frame == nil {
		return value{}, fmt.Errorf("no frame for %s", tok)
	}
	v := intValue(int64(c.frame.Regs[i]))
	if i == RIP || i == RSP || i == RBP {
		v.typ = pointerTo(&godwarf.VoidType{CommonType: godwarf.CommonType{Name: "void"}})
	}
	if c.frame.Known&(1<<i) == 0 {
		v.data, v.err = nil, errUnknown
	}
	return v, nil
}

// lookupVar finds a local or argument visible in the frame, then a global
// (for Go also qualified with the frame's package), then a function.
func (c *evalCtx) lookupVar(name string) (value, bool) {
	if f := c.frame; f != nil && f.scope != nil && f.fn != nil {
		if args, locals, err := c.t.Scopes(f, c.mem); err == nil {
			for _, v := range append(locals, args...) {
				if v.Name == name && !v.Shadowed {
					return v.val, true
				}
			}
		}
	}
	names := []string{name}
	if c.isGo && c.frame != nil && c.frame.fn != nil {
		if i := strings.LastIndex(c.frame.fn.name, "."); i > 0 {
			pkg := c.frame.fn.name[:i]
			if j := strings.Index(pkg, "."); j > 0 && !strings.Contains(pkg[:j], "/") {
				pkg = pkg[:j] // method: pkg.(*T).m or pkg.T.m
			}
			names = append(names, pkg+"."+name)
		}
	}
	imgs := c.t.imageList()
	if c.img != nil {
		imgs = append([]*image{c.img}, imgs...)
	}
	for _, n := range names {
		for _, img := range imgs {
			if g := img.globals[n]; g != nil {
				if typ, err := img.readType(g.typeOff); err == nil {
					return c.globalValue(g, typ), true
				}
			}
		}
	}
	if fn, s := c.t.lookupFunc(name); fn != nil || s != nil {
		addr := uint64(0)
		if fn != nil {
			addr = fn.entry
		} else {
			addr = s.addr
		}
		ft := &godwarf.FuncType{CommonType: godwarf.CommonType{Name: name}}
		return value{typ: ft, addr: addr, inMem: true, data: []byte{}}, true
	}
	return value{}, false
}
