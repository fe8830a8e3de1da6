package probe

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"ttd/symbols"
	"ttd/x86"
)

// event is what a probe firing gives its clauses.
type event struct {
	pos    uint64
	tid    int
	bp     *boundProbe
	args   [10]int64
	retval int64
	errno  int64
	cpu    *x86.CPU // the thread's registers, when it has them (fn, line, profile)
	pid    int      // the process, when not the recorded one (proc.go)
	pc     uint64   // the probed instruction (hooks: cpu.RIP is its block's start)
	sp     *space   // the program of a hooked instruction (nil: see evSpace)
}

// fault is a run-time error in a clause: it ends the clause, is counted
// and reported, and the run goes on.
type fault struct {
	pos Pos
	msg string
}

func (s *segEval) faultf(p Pos, format string, args ...any) {
	panic(fault{p, fmt.Sprintf(format, args...)})
}

// clauseRun is the state of one clause firing.
type clauseRun struct {
	ev     *event
	cl     *Clause
	this   map[string]Value
	out    strings.Builder // the clause's traced data
	spec   int             // speculate(id) in effect
	action int             // statements run so far (for fault messages)
	any    bool            // a data-recording action ran
	// aggc outlives the reset of each run: the segment's probe-keyed
	// aggregation entries by probe ID (aggregate).
	aggc [][]aggCache
}

func (s *segEval) runClause(cl *Clause, ev *event) {
	if s.countFast(cl, ev) {
		return
	}
	// One clauseRun per segment, reset: clauses do not nest.
	cr := &s.cr
	out := cr.out
	out.Reset()
	*cr = clauseRun{ev: ev, cl: cl, out: out, aggc: cr.aggc}
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(fault)
			if !ok {
				panic(r)
			}
			s.part.Faults++
			s.emit(Record{Pos: ev.pos, Tid: ev.tid, Kind: RecFault,
				Text: fmt.Sprintf("error on enabled probe ID %d (ID %d: %s): %s in action #%d at %v (position %d)",
					cl.ID, ev.bp.ID, ev.bp.label(), f.msg, cr.action, f.pos, ev.pos)})
		}
	}()
	if cl.Pred != nil && !s.eval(cr, cl.Pred).truth() {
		return
	}
	s.stmts(cr, cl.Body)
	s.finishClause(cr)
}

// finishClause emits the clause's output: in quiet mode what it traced;
// otherwise DTrace's default line (here position, thread and probe) with
// the traced data.
func (s *segEval) finishClause(cr *clauseRun) {
	ev := cr.ev
	if s.b.P.quiet {
		if cr.out.Len() > 0 {
			s.emitSpec(cr, Record{Pos: ev.pos, Tid: ev.tid, Kind: RecText, Text: cr.out.String()})
		}
		return
	}
	// As in DTrace, a clause prints its default line only when it has
	// no statements at all or traced something.
	if len(cr.cl.Body) > 0 && !cr.any {
		return
	}
	rec := Record{Pos: ev.pos, Tid: ev.tid, Kind: RecText, Text: cr.out.String()}
	if s.b.P.flowindent && (ev.bp.Name == "entry" || ev.bp.Name == "return") && ev.bp.Prov != "" {
		rec.Kind, rec.Label = RecFlow, ev.bp.Func
		rec.Entry = ev.bp.Name == "entry"
	} else {
		rec.Label = ev.bp.label()
	}
	s.emitSpec(cr, rec)
}

func (s *segEval) emitSpec(cr *clauseRun, rec Record) {
	if cr.spec != 0 {
		sp := s.specs[cr.spec]
		if sp == nil {
			s.part.Faults++
			s.emit(Record{Pos: cr.ev.pos, Tid: cr.ev.tid, Kind: RecFault, Text: fmt.Sprintf("error on enabled probe ID %d: speculation %d is not active (position %d)", cr.cl.ID, cr.spec, cr.ev.pos)})
			return
		}
		sp.recs = append(sp.recs, rec)
		return
	}
	s.emit(rec)
}

func (s *segEval) stmts(cr *clauseRun, body []Stmt) {
	for _, st := range body {
		if s.stopped && s.stopNow {
			return
		}
		cr.action++
		switch st := st.(type) {
		case *ExprStmt:
			v := s.eval(cr, st.X)
			if c, ok := st.X.(*Call); ok && (c.Fn == "stack" || c.Fn == "ustack") {
				cr.any = true
				cr.out.WriteString(v.S + "\n")
			}
		case *IfStmt:
			if s.eval(cr, st.C).truth() {
				s.stmts(cr, st.Then)
			} else {
				s.stmts(cr, st.Else)
			}
		case *AggStmt:
			s.aggregate(cr, st)
		}
	}
}

func (s *segEval) aggregate(cr *clauseRun, st *AggStmt) {
	// Keys that name the probe (@[probefunc]) give each probe one
	// entry: found once per open table, not hashed at each event.
	byProbe := probeKeyed(st)
	keys := s.keys[:0]
	if !byProbe {
		for _, k := range st.Keys {
			keys = append(keys, s.eval(cr, k))
		}
	}
	s.keys = keys
	var v, incr int64 = 0, 1
	if len(st.Args) > 0 {
		a, ok := s.eval(cr, st.Args[0]).number()
		if !ok {
			s.faultf(st.Args[0].At(), "%s() of a string", st.Fn)
		}
		v = a
	}
	switch {
	case st.Fn == "quantize" && len(st.Args) == 2:
		incr = s.eval(cr, st.Args[1]).I
	case st.Fn == "lquantize" && len(st.Args) == 5:
		incr = s.eval(cr, st.Args[4]).I
	}
	if cr.spec != 0 {
		s.faultf(st.P, "aggregations cannot be speculative")
	}
	if byProbe {
		if c := cr.cachedAgg(cr.ev.bp, st); c != nil {
			c.d.add(&c.e.State, v, incr)
			return
		}
	}
	d := s.b.P.aggs[st.Name]
	s.symKeys(d, keys)
	series := s.part.Aggs[st.Name]
	if n := len(series); n == 0 || series[n-1].Op != opNone {
		series.open()
		s.part.Aggs[st.Name] = series
	}
	part := &series[len(series)-1]
	if byProbe {
		bp := cr.ev.bp
		for _, k := range st.Keys {
			keys = append(keys, s.eval(cr, k))
		}
		s.keys = keys
		e := part.Table.entryBuf(keys, &s.keyBuf)
		cr.cacheAgg(aggCache{bp, st, part, e, d})
		d.add(&e.State, v, incr)
		return
	}
	d.add(&part.Table.entryBuf(keys, &s.keyBuf).State, v, incr)
}

// probeKeyed reports whether st's keys all name the probe that fires
// (probeprov, probemod, probefunc, probename: builtins, which no
// variable hides).
func probeKeyed(st *AggStmt) bool {
	if len(st.Keys) == 0 {
		return false
	}
	for _, k := range st.Keys {
		id, ok := k.(*Ident)
		if !ok {
			return false
		}
		switch id.Name {
		case "probeprov", "probemod", "probefunc", "probename":
		default:
			return false
		}
	}
	return true
}

// aggCache is a probe's entry in one aggregation's open table, for
// keys that name the probe (segEval.aggregate). A segment keeps them by
// probe ID (clauseRun.aggc); bp tells a probe of an earlier binding (live)
// that had the ID.
type aggCache struct {
	bp   *boundProbe
	st   *AggStmt
	part *AggPart
	e    *AggEntry
	d    *aggDecl
}

// cachedAgg is bp's entry for st in the open part, found without
// hashing (nil: not cached): a part no longer open (its Op set by
// printa, clear, trunc) is never the one to add to.
func (cr *clauseRun) cachedAgg(bp *boundProbe, st *AggStmt) *aggCache {
	if bp.ID >= len(cr.aggc) {
		return nil
	}
	for i := range cr.aggc[bp.ID] {
		if c := &cr.aggc[bp.ID][i]; c.st == st && c.bp == bp && c.part.Op == opNone {
			return c
		}
	}
	return nil
}

// countFast runs a clause that is only @a[probe keys] = count() (no
// predicate) when the probe's entry is cached, as runClause would (it
// prints nothing, cannot fault): the live fn:::entry probe's clause,
// at every call.
func (s *segEval) countFast(cl *Clause, ev *event) bool {
	st := countStmt(cl)
	if st == nil {
		return false
	}
	c := s.cr.cachedAgg(ev.bp, st)
	if c == nil {
		return false
	}
	c.d.add(&c.e.State, 0, 1)
	return true
}

// countStmt is cl's statement when cl is only @a[probe keys] = count()
// with no predicate (countFast's form), or nil.
func countStmt(cl *Clause) *AggStmt {
	if cl.Pred != nil || len(cl.Body) != 1 {
		return nil
	}
	st, ok := cl.Body[0].(*AggStmt)
	if !ok || st.Fn != "count" || len(st.Args) != 0 || !probeKeyed(st) {
		return nil
	}
	return st
}

// cacheAgg keeps e as bp's entry for st in part (replacing the entry of
// an earlier part or binding).
func (cr *clauseRun) cacheAgg(c aggCache) {
	id := c.bp.ID
	if id >= len(cr.aggc) {
		cr.aggc = append(cr.aggc, make([][]aggCache, id+1-len(cr.aggc))...)
	}
	cs := cr.aggc[id]
	for i := range cs {
		if cs[i].st == c.st {
			cs[i] = c
			return
		}
	}
	cr.aggc[id] = append(cs, c)
}

// Variables: the state a segment reads and writes (see doc.go).

func (s *segEval) getState(key string) Value {
	if v, ok := s.state[key]; ok {
		return v
	}
	v := s.init[key]
	if _, seen := s.part.Assumed[key]; !seen {
		s.part.Assumed[key] = v
	}
	return v
}

func (s *segEval) setState(key string, v Value) {
	s.state[key] = v
	s.part.Writes[key] = v
}

func selfKey(tid int, name string) string { return "t:" + strconv.Itoa(tid) + ":" + name }

func (s *segEval) varKey(cr *clauseRun, e Expr) string {
	switch e := e.(type) {
	case *Ident:
		return "g:" + e.Name
	case *SelfVar:
		return selfKey(cr.ev.tid, e.Name)
	case *IndexExpr:
		keys := make([]Value, len(e.Keys))
		for i, k := range e.Keys {
			keys[i] = s.eval(cr, k)
		}
		return "a:" + e.Name + ":" + keyString(keys)
	}
	return ""
}

func (s *segEval) load(cr *clauseRun, e Expr) Value {
	if tv, ok := e.(*ThisVar); ok {
		return cr.this[tv.Name]
	}
	return s.getState(s.varKey(cr, e))
}

func (s *segEval) store(cr *clauseRun, e Expr, key string, v Value) {
	if tv, ok := e.(*ThisVar); ok {
		if cr.this == nil {
			cr.this = map[string]Value{}
		}
		cr.this[tv.Name] = v
		return
	}
	s.setState(key, v)
}

func (s *segEval) eval(cr *clauseRun, e Expr) Value {
	switch e := e.(type) {
	case *IntLit:
		return intVal(e.V)
	case *StrLit:
		return strVal(e.S)
	case *Ident:
		if v, ok := s.builtin(cr, e.Name); ok {
			return v
		}
		return s.getState("g:" + e.Name)
	case *SelfVar, *ThisVar:
		return s.load(cr, e)
	case *IndexExpr:
		if e.Name == "args" {
			if cr.ev.bp != nil && cr.ev.bp.usdt != nil {
				return intVal(s.usdtArg(cr, int(e.Keys[0].(*IntLit).V)))
			}
			return intVal(cr.ev.args[e.Keys[0].(*IntLit).V])
		}
		return s.load(cr, e)
	case *Bquote:
		addr, size := s.symbol(e)
		if size != 1 && size != 2 && size != 4 && size != 8 {
			size = 8
		}
		return intVal(s.loadInt(e.P, addr, int(size), size == 4))
	case *Unary:
		if e.Op == "&" {
			addr, _ := s.symbol(e.X.(*Bquote))
			return intVal(int64(addr))
		}
		x := s.eval(cr, e.X)
		switch e.Op {
		case "!":
			return boolVal(!x.truth())
		case "-":
			return intVal(-s.num(e.X, x))
		case "~":
			return intVal(^s.num(e.X, x))
		case "*":
			// The pointee's width and sign, when the pointer is a cast
			// to a pointer to an integer (*(int *)arg0 reads 4 bytes).
			size, signed := 8, false
			if c, ok := e.X.(*Cast); ok && c.T.Ptr == 1 && !c.T.String && c.T.DWARF == "" && c.T.Size > 0 {
				size, signed = c.T.Size, c.T.Signed
			}
			return intVal(s.loadInt(e.P, uint64(s.num(e.X, x)), size, signed))
		}
	case *Binary:
		return s.binary(cr, e)
	case *Cond:
		if s.eval(cr, e.C).truth() {
			return s.eval(cr, e.T)
		}
		return s.eval(cr, e.F)
	case *Member:
		return s.member(cr, e)
	case *Cast:
		return s.cast(cr, e)
	case *Assign:
		r := s.eval(cr, e.R)
		key := ""
		if _, ok := e.L.(*ThisVar); !ok {
			key = s.varKey(cr, e.L)
		}
		if e.Op != "=" {
			var old Value
			if key != "" {
				old = s.getState(key)
			} else {
				old = s.load(cr, e.L)
			}
			r = s.arith(e.P, e.Op[:len(e.Op)-1], old, r, e.L, e.R)
		}
		s.store(cr, e.L, key, r)
		return r
	case *IncDec:
		key := ""
		var old Value
		if _, ok := e.L.(*ThisVar); ok {
			old = s.load(cr, e.L)
		} else {
			key = s.varKey(cr, e.L)
			old = s.getState(key)
		}
		n := s.num(e.L, old)
		nv := n + 1
		if e.Op == "--" {
			nv = n - 1
		}
		s.store(cr, e.L, key, intVal(nv))
		if e.Post {
			return intVal(n)
		}
		return intVal(nv)
	case *Call:
		return s.call(cr, e)
	}
	s.faultf(e.At(), "cannot evaluate this expression")
	return Value{}
}

func boolVal(b bool) Value {
	if b {
		return intVal(1)
	}
	return intVal(0)
}

// num is an integer operand; a string is a fault.
func (s *segEval) num(e Expr, v Value) int64 {
	n, ok := v.number()
	if !ok {
		s.faultf(e.At(), "a string is used as a number")
	}
	return n
}

func (s *segEval) binary(cr *clauseRun, e *Binary) Value {
	switch e.Op {
	case "&&":
		return boolVal(s.eval(cr, e.X).truth() && s.eval(cr, e.Y).truth())
	case "||":
		return boolVal(s.eval(cr, e.X).truth() || s.eval(cr, e.Y).truth())
	case "^^":
		return boolVal(s.eval(cr, e.X).truth() != s.eval(cr, e.Y).truth())
	}
	x, y := s.eval(cr, e.X), s.eval(cr, e.Y)
	switch e.Op {
	case "==", "!=", "<", "<=", ">", ">=":
		var c int
		if x.K == KInt && y.K == KInt {
			c = compareValues(x, y)
		} else if x.numeric() && y.numeric() {
			c = cmpFloat(x.asFloat(), y.asFloat())
		} else {
			// Strings compare as strings; an unset variable is "".
			xs, ys := x.S, y.S
			if x.K == KInt {
				if x.I != 0 {
					s.faultf(e.P, "comparing a number with a string")
				}
				xs = ""
			}
			if y.K == KInt {
				if y.I != 0 {
					s.faultf(e.P, "comparing a string with a number")
				}
				ys = ""
			}
			c = strings.Compare(xs, ys)
		}
		switch e.Op {
		case "==":
			return boolVal(c == 0)
		case "!=":
			return boolVal(c != 0)
		case "<":
			return boolVal(c < 0)
		case "<=":
			return boolVal(c <= 0)
		case ">":
			return boolVal(c > 0)
		}
		return boolVal(c >= 0)
	}
	return s.arith(e.P, e.Op, x, y, e.X, e.Y)
}

func (s *segEval) arith(p Pos, op string, x, y Value, ex, ey Expr) Value {
	a, b := s.num(ex, x), s.num(ey, y)
	switch op {
	case "+":
		return intVal(a + b)
	case "-":
		return intVal(a - b)
	case "*":
		return intVal(a * b)
	case "/", "%":
		if b == 0 {
			s.faultf(p, "divide-by-zero")
		}
		if a == -1<<63 && b == -1 {
			if op == "/" {
				return intVal(a)
			}
			return intVal(0)
		}
		if op == "/" {
			return intVal(a / b)
		}
		return intVal(a % b)
	case "&":
		return intVal(a & b)
	case "|":
		return intVal(a | b)
	case "^":
		return intVal(a ^ b)
	case "<<":
		return intVal(a << (uint64(b) & 63))
	case ">>":
		return intVal(a >> (uint64(b) & 63))
	}
	s.faultf(p, "unknown operator %s", op)
	return Value{}
}

func (s *segEval) cast(cr *clauseRun, e *Cast) Value {
	x := s.eval(cr, e.X)
	t := e.T
	if t.String {
		if x.K != KInt {
			return x
		}
		return strVal(s.readString(e.P, uint64(x.I), s.b.P.strsize))
	}
	if x.K == KFloat {
		x = intVal(int64(x.Float())) // C's conversion: toward zero
	}
	if x.K != KInt {
		if x.K == KStr && t.Ptr == 0 {
			// copyin's bytes read as an integer.
			var b [8]byte
			copy(b[:], x.S)
			return intVal(extend(binary.LittleEndian.Uint64(b[:]), t.Size, t.Signed))
		}
		s.faultf(e.P, "cannot cast a string to %s", t.Name)
	}
	if t.Ptr > 0 {
		return x
	}
	return intVal(extend(uint64(x.I), t.Size, t.Signed))
}

// extend truncates v to size bytes and extends it.
func extend(v uint64, size int, signed bool) int64 {
	if size >= 8 {
		return int64(v)
	}
	bits := uint(size * 8)
	v &= 1<<bits - 1
	if signed && v&(1<<(bits-1)) != 0 {
		v |= ^uint64(0) << bits
	}
	return int64(v)
}

func (s *segEval) builtin(cr *clauseRun, name string) (Value, bool) {
	ev := cr.ev
	switch name {
	case "arg0", "arg1", "arg2", "arg3", "arg4", "arg5", "arg6", "arg7", "arg8", "arg9":
		if ev.bp != nil && ev.bp.usdt != nil {
			return intVal(s.usdtArg(cr, int(name[3]-'0'))), true
		}
		return intVal(ev.args[name[3]-'0']), true
	case "retval":
		return intVal(ev.retval), true
	case "errno":
		return intVal(ev.errno), true
	case "pid":
		return intVal(int64(s.eventPid(ev))), true
	case "ppid":
		return intVal(int64(s.b.ppidOf(s.eventPid(ev)))), true
	case "tid":
		return intVal(int64(ev.tid)), true
	case "execname":
		return strVal(s.b.execnameOf(s.eventPid(ev), ev.pos)), true
	case "probeprov":
		return strVal(ev.bp.Prov), true
	case "probemod":
		return strVal(ev.bp.Mod), true
	case "probefunc":
		return strVal(ev.bp.Func), true
	case "probename":
		return strVal(ev.bp.Name), true
	case "timestamp", "vtimestamp", "pos":
		return intVal(int64(ev.pos)), true
	case "walltimestamp":
		return intVal(s.b.created + int64(ev.pos)), true
	case "cpu":
		return intVal(0), true
	case "id":
		return intVal(int64(ev.bp.ID)), true
	case "epid":
		return intVal(int64(cr.cl.ID)), true
	}
	return Value{}, false
}

func (s *segEval) symbol(e *Bquote) (uint64, uint64) {
	sy := s.syms()
	if sy == nil {
		s.faultf(e.P, "`%s: the trace has no symbols", e.Name)
	}
	a, size, ok := sy.LookupSymbol(e.Name)
	if !ok {
		s.faultf(e.P, "`%s: no such symbol in the program", e.Name)
	}
	return a, size
}

func (s *segEval) call(cr *clauseRun, e *Call) Value {
	arg := func(i int) Value { return s.eval(cr, e.Args[i]) }
	switch e.Fn {
	case "trace":
		v := arg(0)
		cr.any = true
		if s.b.P.quiet {
			cr.out.WriteString(v.String())
		} else {
			cr.out.WriteString(" " + v.String())
		}
	case "printf":
		cs, _ := parseFormat(e.Args[0].(*StrLit).S)
		vals := make([]Value, len(e.Args)-1)
		for i := range vals {
			vals[i] = arg(i + 1)
		}
		cr.any = true
		cr.out.WriteString(sprintf(cs, vals, nil, s.symz()))
	case "printa":
		fmtS := ""
		ref := e.Args[0]
		if len(e.Args) == 2 {
			fmtS, ref = e.Args[0].(*StrLit).S, e.Args[1]
		}
		name := ref.(*AggRef).Name
		s.flushText(cr)
		s.seq++
		series := s.part.Aggs[name]
		series.cut(opSnap, 0, cr.ev.pos, s.seq)
		s.part.Aggs[name] = series
		s.part.Records = append(s.part.Records, Record{Pos: cr.ev.pos, Seq: s.seq, Tid: cr.ev.tid, Kind: RecPrinta, Agg: name, Fmt: fmtS})
	case "trunc", "clear":
		name := e.Args[0].(*AggRef).Name
		var n int64
		if len(e.Args) == 2 {
			n = s.num(e.Args[1], arg(1))
		}
		op := opClear
		if e.Fn == "trunc" {
			op = opTrunc
		}
		s.seq++
		series := s.part.Aggs[name]
		series.cut(op, n, cr.ev.pos, s.seq)
		s.part.Aggs[name] = series
	case "exit":
		code := s.num(e.Args[0], arg(0))
		if s.part.Exit == nil {
			s.part.Exit = &ExitInfo{Pos: cr.ev.pos, Code: int(code)}
		}
		s.stopped = true
	case "stack", "ustack":
		n := 20
		if len(e.Args) > 0 {
			n = int(e.Args[0].(*IntLit).V)
		}
		v := Value{K: KStack, S: s.ustack(cr, n)}
		return v
	case "copyin":
		addr, n := s.num(e.Args[0], arg(0)), s.num(e.Args[1], arg(1))
		if n < 0 || n > 1<<16 {
			s.faultf(e.P, "copyin of %d bytes", n)
		}
		return Value{K: KStr, S: string(s.readBytes(e.P, uint64(addr), int(n)))}
	case "copyinstr":
		addr := arg(0)
		n := s.b.P.strsize
		if len(e.Args) == 2 {
			n = int(min(max(s.num(e.Args[1], arg(1)), 0), 1<<16))
		}
		return strVal(s.readString(e.P, uint64(s.num(e.Args[0], addr)), n))
	case "stringof":
		v := arg(0)
		if v.K != KInt {
			return v
		}
		return strVal(s.readString(e.P, uint64(v.I), s.b.P.strsize))
	case "speculation":
		s.nextSpec++
		id := s.nextSpec
		s.specs[id] = &spec{}
		return intVal(int64(id))
	case "speculate":
		id := int(s.num(e.Args[0], arg(0)))
		if s.specs[id] == nil {
			s.faultf(e.P, "speculation %d is not active", id)
		}
		cr.spec = id
	case "commit", "discard":
		id := int(s.num(e.Args[0], arg(0)))
		sp := s.specs[id]
		if sp == nil {
			s.faultf(e.P, "speculation %d is not active", id)
		}
		delete(s.specs, id)
		if e.Fn == "commit" {
			for _, r := range sp.recs {
				s.emit(r)
			}
		}
	case "strlen":
		return intVal(int64(len(s.str(e.Args[0], arg(0)))))
	case "strjoin":
		return strVal(s.str(e.Args[0], arg(0)) + s.str(e.Args[1], arg(1)))
	case "lltostr":
		return strVal(strconv.FormatInt(s.num(e.Args[0], arg(0)), 10))
	case "basename":
		return strVal(filepath.Base(s.str(e.Args[0], arg(0))))
	case "dirname":
		return strVal(filepath.Dir(s.str(e.Args[0], arg(0))))
	case "substr":
		str := s.str(e.Args[0], arg(0))
		i := int(s.num(e.Args[1], arg(1)))
		if i < 0 {
			i = max(len(str)+i, 0)
		}
		i = min(i, len(str))
		j := len(str)
		if len(e.Args) == 3 {
			j = min(i+max(int(s.num(e.Args[2], arg(2))), 0), len(str))
		}
		return strVal(str[i:j])
	case "strstr":
		a, b := s.str(e.Args[0], arg(0)), s.str(e.Args[1], arg(1))
		if i := strings.Index(a, b); i >= 0 {
			return strVal(a[i:])
		}
		return strVal("")
	case "index":
		return intVal(int64(strings.Index(s.str(e.Args[0], arg(0)), s.str(e.Args[1], arg(1)))))
	case "ufunc", "func":
		return strVal(symAddr(s.symz(), uint64(s.num(e.Args[0], arg(0))), false))
	case "usym", "sym", "uaddr":
		return strVal(symAddr(s.symz(), uint64(s.num(e.Args[0], arg(0))), e.Fn == "uaddr"))
	case "ntohs", "htons":
		v := uint16(s.num(e.Args[0], arg(0)))
		return intVal(int64(v>>8 | v<<8))
	case "ntohl", "htonl":
		v := uint32(s.num(e.Args[0], arg(0)))
		return intVal(int64(v>>24 | (v>>8)&0xff00 | (v<<8)&0xff0000 | v<<24))
	case "tracemem":
		addr, n := s.num(e.Args[0], arg(0)), s.num(e.Args[1], arg(1))
		if n < 0 || n > 1<<16 {
			s.faultf(e.P, "tracemem of %d bytes", n)
		}
		b := s.readBytes(e.P, uint64(addr), int(n))
		cr.out.WriteString("\n" + hexDump(b))
	default:
		s.faultf(e.P, "unknown function %s", e.Fn)
	}
	return Value{}
}

func (s *segEval) str(e Expr, v Value) string {
	if v.numeric() {
		s.faultf(e.At(), "a number is used as a string")
	}
	return v.S
}

func hexDump(b []byte) string {
	var sb strings.Builder
	sb.WriteString("             0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f  0123456789abcdef\n")
	for i := 0; i < len(b); i += 16 {
		fmt.Fprintf(&sb, "%10x: ", i)
		for j := 0; j < 16; j++ {
			if i+j < len(b) {
				fmt.Fprintf(&sb, "%02x ", b[i+j])
			} else {
				sb.WriteString("   ")
			}
		}
		sb.WriteByte(' ')
		for j := 0; j < 16 && i+j < len(b); j++ {
			c := b[i+j]
			if c < 32 || c > 126 {
				c = '.'
			}
			sb.WriteByte(c)
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

func (s *segEval) symz() symbolizer {
	if sy := s.syms(); sy != nil {
		return sy
	}
	return nil
}

// ustack symbolises the thread's stack through CFI, as DTrace prints it:
// module`function+offset, one frame a line.
func (s *segEval) ustack(cr *clauseRun, n int) string {
	sy := s.syms()
	if cr.ev.cpu == nil || sy == nil {
		return ""
	}
	var regs symbols.Regs
	copy(regs[:16], cr.ev.cpu.R[:16])
	regs[symbols.RIP] = cr.ev.cpu.RIP
	if cr.ev.pc != 0 {
		regs[symbols.RIP] = cr.ev.pc
	}
	mem := func(addr uint64, buf []byte) ([]bool, error) {
		known := make([]bool, len(buf))
		s.readInto(addr, buf, known)
		return known, nil
	}
	var b strings.Builder
	for _, f := range sy.Unwind(regs, mem, n) {
		b.WriteString("\n              ")
		mod := filepath.Base(f.Module)
		switch {
		case f.Func == "":
			fmt.Fprintf(&b, "%#x", f.PC)
		case f.PC == f.Entry || f.Inlined:
			fmt.Fprintf(&b, "%s`%s", mod, f.Func)
		default:
			fmt.Fprintf(&b, "%s`%s+%#x", mod, f.Func, f.PC-f.Entry)
		}
	}
	return b.String()
}
