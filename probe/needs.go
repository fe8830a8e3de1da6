package probe

import "strings"

// NeedsDWARF reports whether the script needs the program's DWARF or CFI:
// to read memory (members, globals, stacks), for line: probes, for casts
// to the program's types, for watch: probes on symbols, or to symbolise
// addresses (usym, %a...). A script that
// needs none (fn, usdt, syscall, proc probes with aggregations) binds to
// ELF symbols alone, which load several times faster.
func (p *Program) NeedsDWARF() bool {
	if p.needMemory {
		return true
	}
	need := false
	for _, cl := range p.Script.Clauses {
		for _, ps := range cl.Probes {
			if ps.Prov == "line" || ps.Prov == "watch" {
				need = true
			}
		}
		walkClause(cl, func(e Expr) {
			switch x := e.(type) {
			case *Cast:
				need = need || x.T.DWARF != ""
			case *Member:
				need = true
			case *Call:
				// Symbolised addresses name DWARF's functions first.
				switch x.Fn {
				case "ufunc", "func", "usym", "sym", "uaddr":
					need = true
				}
			case *StrLit:
				// A format's %a and %A symbolise too.
				need = need || strings.Contains(x.S, "%a") || strings.Contains(x.S, "%A")
			}
		})
	}
	return need
}

// walkClause calls fn for every expression of a clause, its predicate's
// and its statements' (walk).
func walkClause(cl *Clause, fn func(Expr)) {
	walk(cl.Pred, fn)
	var stmts func([]Stmt)
	stmts = func(ss []Stmt) {
		for _, st := range ss {
			switch st := st.(type) {
			case *ExprStmt:
				walk(st.X, fn)
			case *AggStmt:
				for _, k := range st.Keys {
					walk(k, fn)
				}
				for _, a := range st.Args {
					walk(a, fn)
				}
			case *IfStmt:
				walk(st.C, fn)
				stmts(st.Then)
				stmts(st.Else)
			}
		}
	}
	stmts(cl.Body)
}
