package probe

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Program is a checked script, ready to bind to traces. It is immutable
// and safe to share between goroutines.
type Program struct {
	Script   *Script
	aggs     map[string]*aggDecl
	aggOrder []string // in order of first appearance
	// globals and arrays are the names the script assigns; a name read
	// but never assigned is an error, as in D.
	globals map[string]bool
	arrays  map[string]int // name -> number of keys
	selfs   map[string]bool
	// needMemory is set when the script reads the program's memory
	// (copyin, copyinstr, stringof of a pointer, loads, backquote
	// globals, stacks): re-simulation then tracks what it learns.
	needMemory bool
	// carries is set when a clause of a probe other than BEGIN and END
	// reads state that earlier events may have written (globals,
	// arrays, self->): segments then go through the fix-up pass.
	carries    bool
	quiet      bool
	flowindent bool
	strsize    int
}

// Compile parses and checks a script; args are $1..$N. A bad script
// gives an *Error with the line and column of the bad part.
func Compile(src string, args []string) (*Program, error) {
	s, err := Parse(src, args)
	if err != nil {
		return nil, err
	}
	p := &Program{Script: s, aggs: map[string]*aggDecl{}, globals: map[string]bool{}, arrays: map[string]int{}, selfs: map[string]bool{}, strsize: 256}
	_, p.quiet = s.Options["quiet"]
	_, p.flowindent = s.Options["flowindent"]
	if v, ok := s.Options["strsize"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > 1<<20 {
			return nil, errAt(Pos{1, 1}, "bad strsize %q", v)
		}
		p.strsize = n
	}
	c := &checker{p: p, thisSeen: map[string]bool{}}
	if err := c.run(); err != nil {
		return nil, err
	}
	return p, nil
}

// Quiet reports #pragma D option quiet (or -q set by the caller via
// SetQuiet).
func (p *Program) Quiet() bool { return p.quiet }

// SetQuiet is -q.
func (p *Program) SetQuiet() { p.quiet = true }

// NeedsMemory reports whether the script reads the program's memory.
func (p *Program) NeedsMemory() bool { return p.needMemory }

// CarriesState reports whether the script's clauses read variables that
// earlier events wrote (globals, associative arrays, self->): such a
// script's segments are fixed up in order after the parallel pass (see
// doc.go).
func (p *Program) CarriesState() bool { return p.carries }

type checker struct {
	p        *Program
	thisSeen map[string]bool
	clause   *Clause
	special  bool // in BEGIN or END
}

var builtinVars = map[string]bool{
	"arg0": true, "arg1": true, "arg2": true, "arg3": true, "arg4": true, "arg5": true, "arg6": true, "arg7": true, "arg8": true, "arg9": true,
	"retval": true, "errno": true, "pid": true, "ppid": true, "tid": true, "execname": true,
	"probeprov": true, "probemod": true, "probefunc": true, "probename": true,
	"timestamp": true, "vtimestamp": true, "walltimestamp": true, "pos": true, "cpu": true, "id": true, "epid": true, "uregs": false,
}

// funcArity gives each non-aggregating function's argument counts.
var funcArity = map[string][2]int{
	"trace": {1, 1}, "printf": {1, 64}, "printa": {1, 2}, "stack": {0, 1}, "ustack": {0, 2},
	"copyin": {2, 2}, "copyinstr": {1, 2}, "stringof": {1, 1}, "exit": {1, 1},
	"trunc": {1, 2}, "clear": {1, 1}, "speculation": {0, 0}, "speculate": {1, 1}, "commit": {1, 1}, "discard": {1, 1},
	"strlen": {1, 1}, "strjoin": {2, 2}, "lltostr": {1, 1}, "basename": {1, 1}, "dirname": {1, 1}, "substr": {2, 3},
	"strstr": {2, 2}, "index": {2, 2}, "ufunc": {1, 1}, "usym": {1, 1}, "uaddr": {1, 1}, "func": {1, 1}, "sym": {1, 1},
	"tracemem": {2, 2}, "ntohs": {1, 1}, "ntohl": {1, 1}, "htons": {1, 1}, "htonl": {1, 1},
}

// actions are functions that may only be statements (they return nothing).
var actions = map[string]bool{"trace": true, "printf": true, "printa": true, "exit": true, "trunc": true, "clear": true,
	"speculate": true, "commit": true, "discard": true, "tracemem": true}

// memFuncs read the program's memory.
var memFuncs = map[string]bool{"copyin": true, "copyinstr": true, "stringof": true, "stack": true, "ustack": true, "tracemem": true}

func (c *checker) run() error {
	s := c.p.Script
	// First the declarations: what the script assigns anywhere.
	for _, cl := range s.Clauses {
		for _, pr := range cl.Probes {
			if err := checkProbeSpec(pr); err != nil {
				return err
			}
		}
		if err := c.declare(cl.Body); err != nil {
			return err
		}
	}
	for _, cl := range s.Clauses {
		c.clause = cl
		c.special = true
		for _, pr := range cl.Probes {
			if pr.Prov != "" || pr.Mod != "" || pr.Func != "" || (pr.Name != "BEGIN" && pr.Name != "END") {
				c.special = false
			}
		}
		c.thisSeen = map[string]bool{}
		if cl.Pred != nil {
			if err := c.expr(cl.Pred, false); err != nil {
				return err
			}
		}
		if err := c.stmts(cl.Body); err != nil {
			return err
		}
	}
	return nil
}

// declare collects the assigned variables and aggregations.
func (c *checker) declare(body []Stmt) error {
	for _, st := range body {
		switch st := st.(type) {
		case *AggStmt:
			if err := c.declareAgg(st); err != nil {
				return err
			}
		case *IfStmt:
			if err := c.declare(st.Then); err != nil {
				return err
			}
			if err := c.declare(st.Else); err != nil {
				return err
			}
			walk(st.C, c.declareExpr)
		case *ExprStmt:
			walk(st.X, c.declareExpr)
		}
	}
	return nil
}

func (c *checker) declareExpr(e Expr) {
	var l Expr
	switch e := e.(type) {
	case *Assign:
		l = e.L
	case *IncDec:
		l = e.L
	default:
		return
	}
	switch l := l.(type) {
	case *Ident:
		c.p.globals[l.Name] = true
	case *SelfVar:
		c.p.selfs[l.Name] = true
	case *IndexExpr:
		if _, ok := c.p.arrays[l.Name]; !ok {
			c.p.arrays[l.Name] = len(l.Keys)
		}
	}
}

func (c *checker) declareAgg(st *AggStmt) error {
	d := &aggDecl{Name: st.Name, Fn: st.Fn, NKeys: len(st.Keys), pos: st.P}
	want := map[string][2]int{"count": {0, 0}, "sum": {1, 1}, "min": {1, 1}, "max": {1, 1}, "avg": {1, 1}, "stddev": {1, 1}, "quantize": {1, 2}, "lquantize": {4, 5}}[st.Fn]
	if len(st.Args) < want[0] || len(st.Args) > want[1] {
		return errAt(st.P, "%s() takes %s, not %d", st.Fn, argCount(want), len(st.Args))
	}
	if st.Fn == "lquantize" {
		var vals [3]int64
		for i := 0; i < 3; i++ {
			lit, ok := st.Args[1+i].(*IntLit)
			if !ok {
				neg, isNeg := st.Args[1+i].(*Unary)
				if isNeg && neg.Op == "-" {
					if l, ok2 := neg.X.(*IntLit); ok2 {
						vals[i] = -l.V
						continue
					}
				}
				return errAt(st.Args[1+i].At(), "lquantize's %s must be an integer constant", []string{"lower bound", "upper bound", "step"}[i])
			}
			vals[i] = lit.V
		}
		d.Low, d.High, d.Step = vals[0], vals[1], vals[2]
		if d.Step <= 0 || d.High <= d.Low || (d.High-d.Low)/d.Step > 10000 {
			return errAt(st.Args[1].At(), "lquantize: bad range [%d, %d) step %d", d.Low, d.High, d.Step)
		}
	}
	if old := c.p.aggs[st.Name]; old != nil {
		if old.Fn != d.Fn {
			return errAt(st.P, "@%s is %s() at %v and %s() here", st.Name, old.Fn, old.pos, d.Fn)
		}
		if old.NKeys != d.NKeys {
			return errAt(st.P, "@%s has %d keys at %v and %d here", st.Name, old.NKeys, old.pos, d.NKeys)
		}
		if d.Fn == "lquantize" && (old.Low != d.Low || old.High != d.High || old.Step != d.Step) {
			return errAt(st.P, "@%s is lquantized with other parameters at %v", st.Name, old.pos)
		}
		return nil
	}
	c.p.aggs[st.Name] = d
	c.p.aggOrder = append(c.p.aggOrder, st.Name)
	return nil
}

func argCount(w [2]int) string {
	if w[0] == w[1] {
		if w[0] == 1 {
			return "1 argument"
		}
		return fmt.Sprintf("%d arguments", w[0])
	}
	return fmt.Sprintf("%d to %d arguments", w[0], w[1])
}

func (c *checker) stmts(body []Stmt) error {
	for _, st := range body {
		switch st := st.(type) {
		case *AggStmt:
			for _, k := range st.Keys {
				if err := c.expr(k, false); err != nil {
					return err
				}
			}
			for _, a := range st.Args {
				if err := c.expr(a, false); err != nil {
					return err
				}
			}
		case *IfStmt:
			if err := c.expr(st.C, false); err != nil {
				return err
			}
			if err := c.stmts(st.Then); err != nil {
				return err
			}
			if err := c.stmts(st.Else); err != nil {
				return err
			}
		case *ExprStmt:
			if err := c.expr(st.X, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// expr checks an expression; stmt is set for a statement's top level,
// where actions are allowed.
func (c *checker) expr(e Expr, stmt bool) error {
	switch e := e.(type) {
	case *IntLit, *StrLit:
	case *Ident:
		if builtinVars[e.Name] {
			return nil
		}
		if _, ok := c.p.arrays[e.Name]; ok {
			return errAt(e.P, "%s is an associative array: index it, %s[...]", e.Name, e.Name)
		}
		if !c.p.globals[e.Name] {
			return errAt(e.P, "undefined variable %q", e.Name)
		}
		if !c.special {
			c.p.carries = true
		}
	case *SelfVar:
		if !c.p.selfs[e.Name] {
			return errAt(e.P, "thread-local variable self->%s is never assigned", e.Name)
		}
		if !c.special {
			c.p.carries = true
		}
	case *ThisVar:
		if !c.thisSeen[e.Name] {
			return errAt(e.P, "clause-local variable this->%s is used before it is assigned in this clause", e.Name)
		}
	case *IndexExpr:
		if e.Name == "args" {
			if len(e.Keys) != 1 {
				return errAt(e.P, "args[] takes one index")
			}
			if l, ok := e.Keys[0].(*IntLit); !ok || l.V < 0 || l.V > 9 {
				return errAt(e.Keys[0].At(), "args[] index must be a constant from 0 to 9")
			}
			return nil
		}
		n, ok := c.p.arrays[e.Name]
		if !ok {
			if c.p.globals[e.Name] {
				return errAt(e.P, "%s is a scalar variable, not an array", e.Name)
			}
			return errAt(e.P, "undefined associative array %q", e.Name)
		}
		if n != len(e.Keys) {
			return errAt(e.P, "%s has %d keys elsewhere and %d here", e.Name, n, len(e.Keys))
		}
		if !c.special {
			c.p.carries = true
		}
		for _, k := range e.Keys {
			if err := c.expr(k, false); err != nil {
				return err
			}
		}
	case *AggRef:
		return errAt(e.P, "an aggregation can only be passed to printa, trunc or clear")
	case *Bquote:
		c.p.needMemory = true
	case *Unary:
		if e.Op == "*" {
			c.p.needMemory = true
		}
		if e.Op == "&" {
			if _, ok := e.X.(*Bquote); !ok {
				return errAt(e.P, "& applies only to the program's globals (&`name)")
			}
			return nil
		}
		return c.expr(e.X, false)
	case *Binary:
		if err := c.expr(e.X, false); err != nil {
			return err
		}
		return c.expr(e.Y, false)
	case *Cond:
		for _, x := range []Expr{e.C, e.T, e.F} {
			if err := c.expr(x, false); err != nil {
				return err
			}
		}
	case *Cast:
		if e.T.String {
			c.p.needMemory = true
		}
		return c.expr(e.X, false)
	case *Member:
		c.p.needMemory = true
		return c.expr(e.X, false)
	case *Assign:
		if err := c.expr(e.R, false); err != nil {
			return err
		}
		if e.Op != "=" {
			if err := c.expr(e.L, false); err != nil {
				return err
			}
		}
		if ix, ok := e.L.(*IndexExpr); ok {
			if ix.Name == "args" {
				return errAt(ix.P, "args[] cannot be assigned")
			}
			for _, k := range ix.Keys {
				if err := c.expr(k, false); err != nil {
					return err
				}
			}
		}
		if id, ok := e.L.(*Ident); ok && builtinVars[id.Name] {
			return errAt(id.P, "%s is a built-in variable and cannot be assigned", id.Name)
		}
		if tv, ok := e.L.(*ThisVar); ok {
			c.thisSeen[tv.Name] = true
		}
	case *IncDec:
		if tv, ok := e.L.(*ThisVar); ok && !c.thisSeen[tv.Name] {
			return errAt(tv.P, "clause-local variable this->%s is used before it is assigned in this clause", tv.Name)
		}
		switch l := e.L.(type) {
		case *Ident:
			if builtinVars[l.Name] {
				return errAt(l.P, "%s is a built-in variable and cannot be assigned", l.Name)
			}
		case *SelfVar, *ThisVar, *IndexExpr:
		default:
			return errAt(e.P, "%s applies only to variables", e.Op)
		}
		return c.expr(e.L, false)
	case *Call:
		return c.call(e, stmt)
	default:
		return errAt(e.At(), "unsupported expression")
	}
	return nil
}

func (c *checker) call(e *Call, stmt bool) error {
	if aggFuncs[e.Fn] {
		return errAt(e.P, "%s() is an aggregating function: use it as @name[keys] = %s(...)", e.Fn, e.Fn)
	}
	ar, ok := funcArity[e.Fn]
	if !ok {
		return errAt(e.P, "unknown function %q", e.Fn)
	}
	if len(e.Args) < ar[0] || len(e.Args) > ar[1] {
		return errAt(e.P, "%s() takes %s, not %d", e.Fn, argCount(ar), len(e.Args))
	}
	if actions[e.Fn] && !stmt {
		return errAt(e.P, "%s() is an action: it returns no value", e.Fn)
	}
	if memFuncs[e.Fn] {
		c.p.needMemory = true
	}
	switch e.Fn {
	case "printf":
		f, ok := e.Args[0].(*StrLit)
		if !ok {
			return errAt(e.Args[0].At(), "printf's format must be a string constant")
		}
		convs, err := parseFormat(f.S)
		if err != nil {
			return errAt(f.P, "printf format: %v", err)
		}
		if n := countArgs(convs); n != len(e.Args)-1 {
			return errAt(e.P, "printf format %q takes %d arguments, given %d", f.S, n, len(e.Args)-1)
		}
		return c.args(e.Args[1:])
	case "printa":
		ai := 0
		if len(e.Args) == 2 {
			f, ok := e.Args[0].(*StrLit)
			if !ok {
				return errAt(e.Args[0].At(), "printa's format must be a string constant")
			}
			cs, err := parseFormat(f.S)
			if err != nil {
				return errAt(f.P, "printa format: %v", err)
			}
			if err := c.aggArg(e.Args[1]); err != nil {
				return err
			}
			c.p.aggs[e.Args[1].(*AggRef).Name].markAddrKeys(cs)
			return nil
		}
		return c.aggArg(e.Args[ai])
	case "trunc", "clear":
		if err := c.aggArg(e.Args[0]); err != nil {
			return err
		}
		return c.args(e.Args[1:])
	case "ustack", "stack":
		for _, a := range e.Args {
			if _, ok := a.(*IntLit); !ok {
				return errAt(a.At(), "%s's frame count must be an integer constant", e.Fn)
			}
		}
		return nil
	}
	return c.args(e.Args)
}

func (c *checker) aggArg(a Expr) error {
	r, ok := a.(*AggRef)
	if !ok {
		return errAt(a.At(), "expected an aggregation (@name)")
	}
	if c.p.aggs[r.Name] == nil {
		return errAt(r.P, "undefined aggregation @%s", r.Name)
	}
	return nil
}

func (c *checker) args(as []Expr) error {
	for _, a := range as {
		if err := c.expr(a, false); err != nil {
			return err
		}
	}
	return nil
}

// walk calls fn on e and every expression below it.
func walk(e Expr, fn func(Expr)) {
	if e == nil {
		return
	}
	fn(e)
	switch e := e.(type) {
	case *IndexExpr:
		for _, k := range e.Keys {
			walk(k, fn)
		}
	case *Unary:
		walk(e.X, fn)
	case *Binary:
		walk(e.X, fn)
		walk(e.Y, fn)
	case *Cond:
		walk(e.C, fn)
		walk(e.T, fn)
		walk(e.F, fn)
	case *Call:
		for _, a := range e.Args {
			walk(a, fn)
		}
	case *Cast:
		walk(e.X, fn)
	case *Member:
		walk(e.X, fn)
	case *Assign:
		walk(e.L, fn)
		walk(e.R, fn)
	case *IncDec:
		walk(e.L, fn)
	}
}

// Providers and the probe names each offers.
var providers = map[string][]string{
	"fn": nil, "pid": nil, "syscall": {"entry", "return"}, "usdt": nil, "line": nil, "watch": nil,
	"proc": {"exec", "fork", "exit"}, "thread": {"start", "exit"}, "signal": {"deliver"}, "profile": nil,
}

func checkProbeSpec(pr ProbeSpec) error {
	if pr.Prov == "" && pr.Mod == "" && pr.Func == "" {
		switch pr.Name {
		case "BEGIN", "END":
			return nil
		case "ERROR":
			return errAt(pr.P, "the ERROR probe is not supported: run-time faults are counted and reported")
		}
		return errAt(pr.P, "unknown probe %q (give provider:module:function:name)", pr.Text)
	}
	prov := pr.Prov
	if strings.HasPrefix(prov, "pid") {
		prov = "pid"
	}
	names, ok := providers[prov]
	if !ok {
		known := make([]string, 0, len(providers))
		for k := range providers {
			known = append(known, k)
		}
		sort.Strings(known)
		return errAt(pr.P, "unknown provider %q in %q (known: %s)", pr.Prov, pr.Text, strings.Join(known, ", "))
	}
	if names != nil && pr.Name != "" && pr.Name != "*" {
		found := false
		for _, n := range names {
			if m, _ := path.Match(pr.Name, n); m {
				found = true
			}
		}
		if !found {
			return errAt(pr.P, "provider %s has no probe named %q (%s)", pr.Prov, pr.Name, strings.Join(names, ", "))
		}
	}
	switch prov {
	case "fn", "pid":
		if pr.Name != "" && pr.Name != "entry" && pr.Name != "return" && pr.Name != "*" {
			if _, err := strconv.ParseUint(pr.Name, 16, 64); err != nil {
				return errAt(pr.P, "fn probe name %q: give entry, return or a hex offset", pr.Name)
			}
		}
	case "profile":
		n, err := strconv.ParseUint(strings.TrimPrefix(pr.Name, "profile-"), 10, 64)
		if err != nil || n == 0 {
			return errAt(pr.P, "profile probe %q: give profile:::N, a number of instructions", pr.Text)
		}
	case "line":
		// line:FILE:LINE is written with three fields: Mod is the provider.
		if _, err := strconv.Atoi(pr.Name); err != nil || pr.Func == "" {
			return errAt(pr.P, "line probe %q: give line:FILE:LINE", pr.Text)
		}
	case "watch":
		if pr.Name != "read" && pr.Name != "write" && pr.Name != "rw" {
			return errAt(pr.P, "watch probe %q: give watch:ADDR_OR_SYMBOL:LEN:read|write|rw", pr.Text)
		}
		if n, err := strconv.ParseUint(pr.Func, 0, 64); err != nil || n == 0 || n > 1<<20 {
			return errAt(pr.P, "watch probe %q: bad length %q", pr.Text, pr.Func)
		}
	}
	return nil
}
