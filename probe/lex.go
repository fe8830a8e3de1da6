package probe

import (
	"fmt"
	"strings"
)

// Pos is a place in a script: line and column, both from 1.
type Pos struct{ Line, Col int }

func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// Error is a script error found before anything runs: where, and what.
type Error struct {
	Pos Pos
	Msg string
}

func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

func errAt(p Pos, format string, args ...any) *Error {
	return &Error{Pos: p, Msg: fmt.Sprintf(format, args...)}
}

type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tInt
	tStr
	tOp     // punctuation and operators
	tProbe  // a probe description (lexed in probe context)
	tPragma // #pragma D option ...: Text holds the rest of the line
	tMacro  // $N
	tBquote // `name
	tChar   // 'c' (Int holds its value)
)

type token struct {
	kind tokKind
	text string
	val  int64
	pos  Pos
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "end of script"
	case tStr:
		return fmt.Sprintf("%q", t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

// lexer turns a script into tokens. Probe descriptions are lexed on
// demand (probeDesc), since their characters (':', '*', '-') mean
// something else in expressions.
type lexer struct {
	src  string
	i    int
	line int
	col  int
}

func newLexer(src string) *lexer { return &lexer{src: src, line: 1, col: 1} }

func (l *lexer) pos() Pos { return Pos{l.line, l.col} }

func (l *lexer) advance(n int) {
	for k := 0; k < n && l.i < len(l.src); k++ {
		if l.src[l.i] == '\n' {
			l.line++
			l.col = 1
		} else {
			l.col++
		}
		l.i++
	}
}

// skipSpace skips blanks and comments (/* */ and //).
func (l *lexer) skipSpace() *Error {
	for l.i < len(l.src) {
		c := l.src[l.i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			l.advance(1)
		case strings.HasPrefix(l.src[l.i:], "/*"):
			p := l.pos()
			end := strings.Index(l.src[l.i+2:], "*/")
			if end < 0 {
				return errAt(p, "unterminated comment")
			}
			l.advance(end + 4)
		case strings.HasPrefix(l.src[l.i:], "//"):
			for l.i < len(l.src) && l.src[l.i] != '\n' {
				l.advance(1)
			}
		default:
			return nil
		}
	}
	return nil
}

var ops3 = []string{"<<=", ">>=", "..."}
var ops2 = []string{"->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "^^", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^="}

const opChars = "+-*/%<>=!&|^~?:;,.()[]{}@"

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// next returns the next expression-context token.
func (l *lexer) next() (token, *Error) {
	if err := l.skipSpace(); err != nil {
		return token{}, err
	}
	p := l.pos()
	if l.i >= len(l.src) {
		return token{kind: tEOF, pos: p}, nil
	}
	c := l.src[l.i]
	switch {
	case c == '#':
		end := strings.IndexByte(l.src[l.i:], '\n')
		if end < 0 {
			end = len(l.src) - l.i
		}
		line := l.src[l.i : l.i+end]
		l.advance(end)
		return token{kind: tPragma, text: line, pos: p}, nil
	case isIdentStart(c):
		j := l.i
		for j < len(l.src) && (isIdentStart(l.src[j]) || isDigit(l.src[j])) {
			j++
		}
		t := token{kind: tIdent, text: l.src[l.i:j], pos: p}
		l.advance(j - l.i)
		return t, nil
	case isDigit(c):
		j := l.i
		for j < len(l.src) && (isIdentStart(l.src[j]) || isDigit(l.src[j])) {
			j++
		}
		text := l.src[l.i:j]
		l.advance(j - l.i)
		v, err := parseInt(text)
		if err != nil {
			return token{}, errAt(p, "bad number %q", text)
		}
		return token{kind: tInt, text: text, val: v, pos: p}, nil
	case c == '"':
		var b strings.Builder
		j := l.i + 1
		for {
			if j >= len(l.src) || l.src[j] == '\n' {
				return token{}, errAt(p, "unterminated string")
			}
			if l.src[j] == '"' {
				break
			}
			if l.src[j] == '\\' && j+1 < len(l.src) {
				r, n, ok := unescape(l.src[j+1:])
				if !ok {
					return token{}, errAt(Pos{p.Line, p.Col + j - l.i}, "bad escape \\%c", l.src[j+1])
				}
				b.WriteString(r)
				j += 1 + n
				continue
			}
			b.WriteByte(l.src[j])
			j++
		}
		l.advance(j + 1 - l.i)
		return token{kind: tStr, text: b.String(), pos: p}, nil
	case c == '\'':
		j := l.i + 1
		var v int64
		if j < len(l.src) && l.src[j] == '\\' {
			r, n, ok := unescape(l.src[j+1:])
			if !ok || len(r) != 1 {
				return token{}, errAt(p, "bad character constant")
			}
			v = int64(r[0])
			j += 1 + n
		} else if j < len(l.src) {
			v = int64(l.src[j])
			j++
		}
		if j >= len(l.src) || l.src[j] != '\'' {
			return token{}, errAt(p, "bad character constant")
		}
		l.advance(j + 1 - l.i)
		return token{kind: tInt, text: "'", val: v, pos: p}, nil
	case c == '$':
		j := l.i + 1
		for j < len(l.src) && (isDigit(l.src[j]) || isIdentStart(l.src[j])) {
			j++
		}
		t := token{kind: tMacro, text: l.src[l.i:j], pos: p}
		l.advance(j - l.i)
		return t, nil
	case c == '`':
		j := l.i + 1
		for j < len(l.src) && (isIdentStart(l.src[j]) || isDigit(l.src[j]) || l.src[j] == '.') {
			j++
		}
		if j == l.i+1 {
			return token{}, errAt(p, "` must be followed by a symbol name")
		}
		t := token{kind: tBquote, text: l.src[l.i+1 : j], pos: p}
		l.advance(j - l.i)
		return t, nil
	}
	for _, o := range ops3 {
		if strings.HasPrefix(l.src[l.i:], o) {
			l.advance(3)
			return token{kind: tOp, text: o, pos: p}, nil
		}
	}
	for _, o := range ops2 {
		if strings.HasPrefix(l.src[l.i:], o) {
			l.advance(2)
			return token{kind: tOp, text: o, pos: p}, nil
		}
	}
	if strings.IndexByte(opChars, c) >= 0 {
		l.advance(1)
		return token{kind: tOp, text: string(c), pos: p}, nil
	}
	return token{}, errAt(p, "unexpected character %q", c)
}

// probeDesc lexes a probe description: the characters up to blank space,
// ',', '{' or '/', outside double quotes: a quoted part ("Acc<int,
// long>::add(int, long)") is part of the description whatever it holds,
// and names itself literally (probeSpec). ok is false when none is there.
func (l *lexer) probeDesc() (token, bool, *Error) {
	if err := l.skipSpace(); err != nil {
		return token{}, false, err
	}
	p := l.pos()
	j := l.i
	quoted := false
	for j < len(l.src) {
		c := l.src[j]
		if c == '"' {
			quoted = !quoted
		} else if c == '\n' && quoted {
			break
		} else if !quoted && (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == '{' || c == '/') {
			break
		}
		j++
	}
	if quoted {
		return token{}, false, errAt(p, "unterminated quote in probe description %s", l.src[l.i:j])
	}
	if j == l.i {
		return token{}, false, nil
	}
	t := token{kind: tProbe, text: l.src[l.i:j], pos: p}
	l.advance(j - l.i)
	return t, true, nil
}

func parseInt(s string) (int64, error) {
	t := strings.TrimRight(strings.ToLower(s), "ul")
	var v uint64
	base := uint64(10)
	switch {
	case strings.HasPrefix(t, "0x"):
		base, t = 16, t[2:]
	case len(t) > 1 && t[0] == '0':
		base, t = 8, t[1:]
	}
	if t == "" {
		return 0, fmt.Errorf("empty")
	}
	for _, c := range []byte(t) {
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		default:
			return 0, fmt.Errorf("bad digit")
		}
		if d >= base {
			return 0, fmt.Errorf("bad digit")
		}
		if v > (^uint64(0)-d)/base {
			return 0, fmt.Errorf("overflow")
		}
		v = v*base + d
	}
	return int64(v), nil
}

// unescape decodes the escape after a backslash: the text and how many
// bytes it used.
func unescape(s string) (string, int, bool) {
	if s == "" {
		return "", 0, false
	}
	switch s[0] {
	case 'n':
		return "\n", 1, true
	case 't':
		return "\t", 1, true
	case 'r':
		return "\r", 1, true
	case '0', '1', '2', '3', '4', '5', '6', '7':
		v, n := 0, 0
		for n < 3 && n < len(s) && s[n] >= '0' && s[n] <= '7' {
			v = v*8 + int(s[n]-'0')
			n++
		}
		return string([]byte{byte(v)}), n, true
	case '\\', '"', '\'', '?':
		return s[:1], 1, true
	case 'a':
		return "\a", 1, true
	case 'b':
		return "\b", 1, true
	case 'f':
		return "\f", 1, true
	case 'v':
		return "\v", 1, true
	}
	return "", 0, false
}
