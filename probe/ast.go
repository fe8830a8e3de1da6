package probe

// The syntax tree of a script. Every node knows where it came from, so
// the checker and run-time faults name a line and column.

// Expr is an expression.
type Expr interface{ At() Pos }

type (
	// IntLit is an integer or character constant.
	IntLit struct {
		P Pos
		V int64
	}
	// StrLit is a string constant.
	StrLit struct {
		P Pos
		S string
	}
	// Ident is a built-in variable (pid, arg0...) or a global scalar.
	Ident struct {
		P    Pos
		Name string
	}
	// SelfVar is a thread-local variable, self->Name.
	SelfVar struct {
		P    Pos
		Name string
	}
	// ThisVar is a clause-local variable, this->Name.
	ThisVar struct {
		P    Pos
		Name string
	}
	// IndexExpr is an associative array element, Name[Keys...], or
	// args[N].
	IndexExpr struct {
		P    Pos
		Name string
		Keys []Expr
	}
	// AggRef names an aggregation (@name, or @ alone) as a function
	// argument (printa, trunc, clear).
	AggRef struct {
		P    Pos
		Name string
	}
	// Bquote is a global of the program, `name.
	Bquote struct {
		P    Pos
		Name string
	}
	// Unary is -x, !x, ~x, *x (a load), &`sym.
	Unary struct {
		P  Pos
		Op string
		X  Expr
	}
	// Binary is x OP y.
	Binary struct {
		P    Pos
		Op   string
		X, Y Expr
	}
	// Cond is c ? t : f.
	Cond struct {
		P       Pos
		C, T, F Expr
	}
	// Call is a function or action: printf(...), copyinstr(...).
	Call struct {
		P    Pos
		Fn   string
		Args []Expr
	}
	// Member is X->Name (Arrow) or X.Name: a member of a struct of the
	// program's DWARF types (ctypes.go).
	Member struct {
		P     Pos
		X     Expr
		Name  string
		Arrow bool
	}
	// Cast is (type)x.
	Cast struct {
		P Pos
		T CType
		X Expr
	}
	// Assign is L OP R with OP one of = += -= *= /= %= &= |= ^= <<= >>=.
	Assign struct {
		P    Pos
		Op   string
		L, R Expr
	}
	// IncDec is ++x, x++, --x, x--.
	IncDec struct {
		P    Pos
		Op   string
		L    Expr
		Post bool
	}
)

func (e *IntLit) At() Pos    { return e.P }
func (e *StrLit) At() Pos    { return e.P }
func (e *Ident) At() Pos     { return e.P }
func (e *SelfVar) At() Pos   { return e.P }
func (e *ThisVar) At() Pos   { return e.P }
func (e *IndexExpr) At() Pos { return e.P }
func (e *AggRef) At() Pos    { return e.P }
func (e *Bquote) At() Pos    { return e.P }
func (e *Unary) At() Pos     { return e.P }
func (e *Binary) At() Pos    { return e.P }
func (e *Cond) At() Pos      { return e.P }
func (e *Call) At() Pos      { return e.P }
func (e *Cast) At() Pos      { return e.P }
func (e *Member) At() Pos    { return e.P }
func (e *Assign) At() Pos    { return e.P }
func (e *IncDec) At() Pos    { return e.P }

// CType is a C type named in a cast: an integer of Size bytes, a
// pointer to one (Ptr levels), or string.
type CType struct {
	Name   string // as written, for messages
	Size   int    // of the pointed-to or plain integer: 1, 2, 4, 8
	Signed bool
	Ptr    int
	String bool
	// DWARF names a type of the program ("struct item"), resolved when
	// the program is bound to a trace.
	DWARF string
}

// Stmt is a statement of a clause body.
type Stmt interface{ At() Pos }

type (
	// ExprStmt is an expression evaluated for its effect.
	ExprStmt struct {
		P Pos
		X Expr
	}
	// AggStmt is @Name[Keys] = Fn(Args).
	AggStmt struct {
		P    Pos
		Name string
		Keys []Expr
		Fn   string
		Args []Expr
	}
	// IfStmt is if (C) Then else Else.
	IfStmt struct {
		P    Pos
		C    Expr
		Then []Stmt
		Else []Stmt
	}
)

func (s *ExprStmt) At() Pos { return s.P }
func (s *AggStmt) At() Pos  { return s.P }
func (s *IfStmt) At() Pos   { return s.P }

// ProbeSpec is one probe description of a clause:
// provider:module:function:name, with * and ? wildcards.
type ProbeSpec struct {
	P                     Pos
	Text                  string
	Prov, Mod, Func, Name string
}

// Clause is probes, an optional predicate and a body.
type Clause struct {
	P      Pos
	ID     int // 1, 2, ... in script order
	Probes []ProbeSpec
	Pred   Expr
	Body   []Stmt
}

// Script is a parsed script.
type Script struct {
	Clauses []*Clause
	Options map[string]string // #pragma D option name[=value]
}
