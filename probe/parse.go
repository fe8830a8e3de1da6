package probe

import (
	"strconv"
	"strings"
)

// Parse reads a script. $1..$N are replaced by args (a number stays a
// number, anything else becomes a string); a missing one is an error.
func Parse(src string, args []string) (*Script, error) {
	p := &parser{lx: newLexer(src), args: args}
	s, err := p.script()
	if err != nil {
		return nil, err
	}
	return s, nil
}

type parser struct {
	lx   *lexer
	tok  token
	peek *token
	args []string
	// pred is set while parsing a predicate at nesting 0: '/' ends it
	// rather than dividing.
	pred bool
	nest int
}

// bail carries a parse error up through panic/recover: the grammar
// functions stay short.
type bail struct{ err *Error }

func (p *parser) fail(pos Pos, format string, args ...any) {
	panic(bail{errAt(pos, format, args...)})
}

func (p *parser) advance() {
	if p.peek != nil {
		p.tok, p.peek = *p.peek, nil
		return
	}
	t, err := p.lx.next()
	if err != nil {
		panic(bail{err})
	}
	p.tok = t
}

func (p *parser) lookahead() token {
	if p.peek == nil {
		t, err := p.lx.next()
		if err != nil {
			panic(bail{err})
		}
		p.peek = &t
	}
	return *p.peek
}

func (p *parser) is(op string) bool { return p.tok.kind == tOp && p.tok.text == op }

func (p *parser) expect(op string) Pos {
	if !p.is(op) {
		p.fail(p.tok.pos, "expected %q, found %s", op, p.tok)
	}
	pos := p.tok.pos
	p.advance()
	return pos
}

func (p *parser) script() (s *Script, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bail)
			if !ok {
				panic(r)
			}
			s, err = nil, b.err
		}
	}()
	s = &Script{Options: map[string]string{}}
	for {
		// A clause begins with probe descriptions, lexed on their own.
		if err := p.lx.skipSpace(); err != nil {
			return nil, err
		}
		if p.lx.i >= len(p.lx.src) {
			break
		}
		if p.lx.src[p.lx.i] == '#' {
			p.advance()
			p.pragma(s, p.tok)
			continue
		}
		s.Clauses = append(s.Clauses, p.clause(len(s.Clauses)+1))
	}
	if len(s.Clauses) == 0 {
		return nil, errAt(Pos{1, 1}, "the script has no probe clauses")
	}
	return s, nil
}

func (p *parser) pragma(s *Script, t token) {
	f := strings.Fields(t.text)
	if len(f) >= 1 && (f[0] == "#!" || strings.HasPrefix(f[0], "#!")) {
		return // an interpreter line (#!/usr/sbin/dtrace -s)
	}
	if len(f) != 4 || f[0] != "#pragma" || f[1] != "D" || f[2] != "option" {
		p.fail(t.pos, "unsupported directive %q (only #pragma D option NAME[=VALUE])", t.text)
	}
	name, val, _ := strings.Cut(f[3], "=")
	switch name {
	case "quiet", "flowindent", "strsize", "bufsize", "aggsize", "switchrate", "aggrate", "destructive", "dynvarsize", "nspec", "specsize", "defaultargs", "stackframes", "ustackframes", "aggsortkey", "aggsortrev":
	default:
		p.fail(t.pos, "unknown option %q", name)
	}
	if name == "destructive" {
		p.fail(t.pos, "option destructive: scripts never change the program or the recording")
	}
	s.Options[name] = val
}

func (p *parser) clause(id int) *Clause {
	c := &Clause{ID: id}
	for {
		t, ok, err := p.lx.probeDesc()
		if err != nil {
			panic(bail{err})
		}
		if !ok {
			p.advance()
			p.fail(p.tok.pos, "expected a probe description, found %s", p.tok)
		}
		if len(c.Probes) == 0 {
			c.P = t.pos
		}
		c.Probes = append(c.Probes, p.probeSpec(t))
		p.advance()
		if p.is(",") {
			continue
		}
		break
	}
	if p.is("/") {
		p.advance()
		p.pred, p.nest = true, 0
		c.Pred = p.expr()
		p.pred = false
		p.expect("/")
	}
	if !p.is("{") {
		p.fail(p.tok.pos, "expected '{' after the probe description, found %s", p.tok)
	}
	c.Body = p.block()
	return c
}

// probeSpec splits provider:module:function:name. Fewer fields fill
// from the right, as DTrace does (a lone BEGIN is its name).
//
// A double-quoted part of a field is literal: its colons do not split
// fields, and its wildcard characters (* ? [) and commas match
// themselves: fn::"mix<int, long>":entry, fn::"operator*(int)":entry.
func (p *parser) probeSpec(t token) ProbeSpec {
	parts := splitProbe(t.text)
	if len(parts) > 4 && (parts[0] == "fn" || strings.HasPrefix(parts[0], "pid")) {
		// A C++ function: fn:MOD:geo::scale:entry keeps its colons.
		return ProbeSpec{P: t.pos, Text: t.text, Prov: parts[0], Mod: parts[1], Func: strings.Join(parts[2:len(parts)-1], ":"), Name: parts[len(parts)-1]}
	}
	if len(parts) > 4 {
		// line:FILE:LINE and watch:ADDR:LEN:KIND keep their own shapes;
		// anything with more than four fields is not a probe.
		p.fail(t.pos, "bad probe description %q: more than four fields", t.text)
	}
	if len(parts) == 3 && parts[0] == "line" {
		// line:FILE:LINE
		return ProbeSpec{P: t.pos, Text: t.text, Prov: "line", Func: parts[1], Name: parts[2]}
	}
	for len(parts) < 4 {
		parts = append([]string{""}, parts...)
	}
	return ProbeSpec{P: t.pos, Text: t.text, Prov: parts[0], Mod: parts[1], Func: parts[2], Name: parts[3]}
}

// splitProbe splits a probe description at the colons outside double
// quotes and turns each field's quoted parts into glob patterns that
// match them literally.
func splitProbe(text string) []string {
	var parts []string
	var f strings.Builder
	quoted := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '"':
			quoted = !quoted
		case c == ':' && !quoted:
			parts = append(parts, f.String())
			f.Reset()
		case quoted && strings.IndexByte("*?[\\", c) >= 0:
			f.WriteByte('\\')
			f.WriteByte(c)
		default:
			f.WriteByte(c)
		}
	}
	return append(parts, f.String())
}

// block parses { stmt; stmt; ... } and the token after it.
func (p *parser) block() []Stmt {
	p.expect("{")
	var out []Stmt
	for !p.is("}") {
		if p.tok.kind == tEOF {
			p.fail(p.tok.pos, "missing '}'")
		}
		if p.is(";") {
			p.advance()
			continue
		}
		out = append(out, p.stmt())
		if p.is(";") {
			p.advance()
		} else if !p.is("}") {
			p.fail(p.tok.pos, "expected ';' or '}', found %s", p.tok)
		}
	}
	// The closing brace: the next token is read lazily by the caller
	// (a clause ends here and the next probe description is raw text).
	return out
}

func (p *parser) stmt() Stmt {
	pos := p.tok.pos
	if p.tok.kind == tIdent && p.tok.text == "if" {
		p.advance()
		p.expect("(")
		c := p.expr()
		p.expect(")")
		s := &IfStmt{P: pos, C: c}
		s.Then = p.body()
		if p.tok.kind == tIdent && p.tok.text == "else" {
			p.advance()
			s.Else = p.body()
		}
		return s
	}
	if p.is("@") {
		return p.aggStmt()
	}
	return &ExprStmt{P: pos, X: p.expr()}
}

// body is a block or a single statement (after if/else).
func (p *parser) body() []Stmt {
	if p.is("{") {
		b := p.block()
		p.advance()
		return b
	}
	s := p.stmt()
	if p.is(";") {
		p.advance()
	}
	return []Stmt{s}
}

func (p *parser) aggName() (Pos, string) {
	pos := p.expect("@")
	name := ""
	if p.tok.kind == tIdent && p.tok.pos.Line == pos.Line && p.tok.pos.Col == pos.Col+1 {
		name = p.tok.text
		p.advance()
	}
	return pos, name
}

func (p *parser) aggStmt() Stmt {
	pos, name := p.aggName()
	s := &AggStmt{P: pos, Name: name}
	if p.is("[") {
		p.advance()
		s.Keys = p.exprList("]")
	}
	p.expect("=")
	if p.tok.kind != tIdent {
		p.fail(p.tok.pos, "expected an aggregating function after '@%s =', found %s", name, p.tok)
	}
	fpos := p.tok.pos
	s.Fn = p.tok.text
	if !aggFuncs[s.Fn] {
		p.fail(fpos, "%q is not an aggregating function (count, sum, min, max, avg, stddev, quantize, lquantize)", s.Fn)
	}
	p.advance()
	p.expect("(")
	s.Args = p.exprList(")")
	return s
}

// exprList parses expressions separated by commas up to close (consumed).
func (p *parser) exprList(close string) []Expr {
	var out []Expr
	if p.is(close) {
		p.advance()
		return out
	}
	for {
		out = append(out, p.assign())
		if p.is(",") {
			p.advance()
			continue
		}
		p.expect(close)
		return out
	}
}

func (p *parser) expr() Expr { return p.assign() }

var assignOps = map[string]bool{"=": true, "+=": true, "-=": true, "*=": true, "/=": true, "%=": true, "&=": true, "|=": true, "^=": true, "<<=": true, ">>=": true}

func (p *parser) assign() Expr {
	l := p.cond()
	if p.tok.kind == tOp && assignOps[p.tok.text] {
		op, pos := p.tok.text, p.tok.pos
		p.advance()
		switch l.(type) {
		case *Ident, *SelfVar, *ThisVar, *IndexExpr:
		default:
			p.fail(pos, "the left side of %s is not a variable", op)
		}
		return &Assign{P: pos, Op: op, L: l, R: p.assign()}
	}
	return l
}

func (p *parser) cond() Expr {
	c := p.binary(0)
	if p.is("?") {
		pos := p.tok.pos
		p.advance()
		t := p.assign()
		p.expect(":")
		f := p.cond()
		return &Cond{P: pos, C: c, T: t, F: f}
	}
	return c
}

var binLevels = [][]string{
	{"||"}, {"^^"}, {"&&"}, {"|"}, {"^"}, {"&"},
	{"==", "!="}, {"<", "<=", ">", ">="}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "%"},
}

func (p *parser) binary(level int) Expr {
	if level == len(binLevels) {
		return p.unary()
	}
	x := p.binary(level + 1)
	for p.tok.kind == tOp {
		found := false
		for _, op := range binLevels[level] {
			if p.tok.text == op {
				found = true
			}
		}
		if !found || p.pred && p.nest == 0 && p.tok.text == "/" {
			break
		}
		op, pos := p.tok.text, p.tok.pos
		p.advance()
		x = &Binary{P: pos, Op: op, X: x, Y: p.binary(level + 1)}
	}
	return x
}

var typeWords = map[string]bool{"char": true, "short": true, "int": true, "long": true, "unsigned": true, "signed": true,
	"int8_t": true, "int16_t": true, "int32_t": true, "int64_t": true, "uint8_t": true, "uint16_t": true, "uint32_t": true, "uint64_t": true,
	"size_t": true, "ssize_t": true, "uintptr_t": true, "intptr_t": true, "string": true, "void": true, "struct": true, "union": true, "class": true, "const": true, "off_t": true, "pid_t": true}

func (p *parser) unary() Expr {
	pos := p.tok.pos
	if p.tok.kind == tOp {
		switch p.tok.text {
		case "-", "!", "~", "*", "&", "+":
			op := p.tok.text
			p.advance()
			x := p.unary()
			if op == "+" {
				return x
			}
			return &Unary{P: pos, Op: op, X: x}
		case "++", "--":
			op := p.tok.text
			p.advance()
			return &IncDec{P: pos, Op: op, L: p.unary()}
		case "(":
			if la := p.lookahead(); la.kind == tIdent && (typeWords[la.text] || p.typedefCast()) {
				p.advance()
				t := p.ctype()
				p.expect(")")
				return &Cast{P: pos, T: t, X: p.unary()}
			}
		}
	}
	if p.tok.kind == tIdent && p.tok.text == "sizeof" {
		p.advance()
		p.expect("(")
		t := p.ctype()
		p.expect(")")
		n := int64(t.Size)
		if t.Ptr > 0 {
			n = 8
		}
		return &IntLit{P: pos, V: n}
	}
	return p.postfix()
}

// typedefCast reports whether the tokens after "(" are "NAME *... )":
// a cast to a pointer to a type the program's DWARF names (a typedef,
// ((item_t *)arg0)->x), resolved when the program is bound. (NAME)
// alone stays a parenthesised expression, and (a * b) a product.
func (p *parser) typedefCast() bool {
	lx := *p.lx // scan ahead on a copy
	stars := 0
	for {
		t, err := lx.next()
		if err != nil || t.kind != tOp {
			return false
		}
		switch t.text {
		case "*":
			stars++
		case ")":
			return stars > 0
		default:
			return false
		}
	}
}

// ctype parses a C type name for a cast.
func (p *parser) ctype() CType {
	pos := p.tok.pos
	var words []string
	if p.tok.kind == tIdent && !typeWords[p.tok.text] {
		// A typedef of the program (typedefCast).
		name := p.tok.text
		p.advance()
		t := CType{Name: name, DWARF: name, Size: 8}
		for p.is("*") {
			t.Ptr++
			t.Name += " *"
			p.advance()
		}
		return t
	}
	for p.tok.kind == tIdent && (typeWords[p.tok.text] || len(words) > 0 && (words[len(words)-1] == "struct" || words[len(words)-1] == "union" || words[len(words)-1] == "class")) {
		words = append(words, p.tok.text)
		p.advance()
	}
	t := CType{Name: strings.Join(words, " "), Signed: true}
	for p.is("*") {
		t.Ptr++
		t.Name += " *"
		p.advance()
	}
	ws := strings.Join(words, " ")
	ws = strings.TrimPrefix(ws, "const ")
	switch ws {
	case "char", "signed char", "int8_t":
		t.Size = 1
	case "unsigned char", "uint8_t":
		t.Size, t.Signed = 1, false
	case "short", "short int", "signed short", "int16_t":
		t.Size = 2
	case "unsigned short", "unsigned short int", "uint16_t":
		t.Size, t.Signed = 2, false
	case "int", "signed", "signed int", "int32_t", "pid_t":
		t.Size = 4
	case "unsigned", "unsigned int", "uint32_t":
		t.Size, t.Signed = 4, false
	case "long", "long int", "long long", "long long int", "signed long", "int64_t", "ssize_t", "intptr_t", "off_t":
		t.Size = 8
	case "unsigned long", "unsigned long int", "unsigned long long", "unsigned long long int", "uint64_t", "size_t", "uintptr_t":
		t.Size, t.Signed = 8, false
	case "void":
		t.Size, t.Signed = 1, false
		if t.Ptr == 0 {
			p.fail(pos, "cannot cast to void")
		}
	case "string":
		t.String = true
		if t.Ptr > 0 {
			p.fail(pos, "bad type %q", t.Name)
		}
	default:
		if strings.HasPrefix(ws, "struct ") || strings.HasPrefix(ws, "union ") || strings.HasPrefix(ws, "class ") {
			if t.Ptr == 0 {
				p.fail(pos, "cannot cast to %s itself: cast a pointer, (%s *)", t.Name, ws)
			}
			t.DWARF, t.Size, t.Signed = ws, 8, false
			return t
		}
		p.fail(pos, "unknown type %q", t.Name)
	}
	return t
}

func (p *parser) postfix() Expr {
	x := p.primary()
	for {
		switch {
		case p.is("["):
			pos := p.tok.pos
			id, ok := x.(*Ident)
			if !ok {
				p.fail(pos, "only associative arrays and args[] can be indexed")
			}
			p.advance()
			p.nest++
			keys := p.exprList("]")
			p.nest--
			x = &IndexExpr{P: id.P, Name: id.Name, Keys: keys}
		case p.is("++") || p.is("--"):
			x = &IncDec{P: p.tok.pos, Op: p.tok.text, L: x, Post: true}
			p.advance()
		case p.is("->") || p.is("."):
			arrow := p.is("->")
			p.advance()
			if p.tok.kind != tIdent {
				p.fail(p.tok.pos, "expected a member name after %s", map[bool]string{true: "->", false: "."}[arrow])
			}
			x = &Member{P: p.tok.pos, X: x, Name: p.tok.text, Arrow: arrow}
			p.advance()
		default:
			return x
		}
	}
}

func (p *parser) primary() Expr {
	t := p.tok
	switch t.kind {
	case tInt:
		p.advance()
		return &IntLit{P: t.pos, V: t.val}
	case tStr:
		p.advance()
		return &StrLit{P: t.pos, S: t.text}
	case tBquote:
		p.advance()
		return &Bquote{P: t.pos, Name: t.text}
	case tMacro:
		p.advance()
		n, err := strconv.Atoi(t.text[1:])
		if err != nil || n < 0 {
			p.fail(t.pos, "unknown macro variable %s", t.text)
		}
		if n == 0 {
			return &StrLit{P: t.pos, S: "ttd"}
		}
		if n > len(p.args) {
			p.fail(t.pos, "macro argument %s is not defined (the command line gives %d)", t.text, len(p.args))
		}
		a := p.args[n-1]
		if v, err := parseInt(a); err == nil {
			return &IntLit{P: t.pos, V: v}
		}
		if strings.HasPrefix(a, "-") {
			if v, err := parseInt(a[1:]); err == nil {
				return &IntLit{P: t.pos, V: -v}
			}
		}
		return &StrLit{P: t.pos, S: a}
	case tIdent:
		p.advance()
		switch t.text {
		case "self", "this":
			if !p.is("->") {
				p.fail(p.tok.pos, "expected '->' after %s", t.text)
			}
			p.advance()
			if p.tok.kind != tIdent {
				p.fail(p.tok.pos, "expected a variable name after %s->", t.text)
			}
			name := p.tok
			p.advance()
			if t.text == "self" {
				return &SelfVar{P: t.pos, Name: name.text}
			}
			return &ThisVar{P: t.pos, Name: name.text}
		}
		if p.is("(") {
			p.advance()
			p.nest++
			args := p.exprList(")")
			p.nest--
			return &Call{P: t.pos, Fn: t.text, Args: args}
		}
		return &Ident{P: t.pos, Name: t.text}
	case tOp:
		switch t.text {
		case "(":
			p.advance()
			p.nest++
			x := p.expr()
			p.nest--
			p.expect(")")
			return x
		case "@":
			pos, name := p.aggName()
			return &AggRef{P: pos, Name: name}
		}
	}
	p.fail(t.pos, "unexpected %s", t)
	return nil
}
