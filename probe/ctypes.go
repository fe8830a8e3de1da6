package probe

import (
	"math"

	"ttd/symbols"
)

// Casts to the program's DWARF types and member access, as D has them:
//
//	((struct item *)arg0)->name    ((struct item *)arg0)->pos.x
//	stringof(((struct item *)arg0)->label)   (a char * member)
//
// A cast names a pointer to a struct, union or class, or to a typedef
// of one; -> follows a pointer
// to one, . takes a member of one. The types are resolved when the
// program is bound to a trace (the trace's modules hold the DWARF), so
// an unknown type or member is an error with its line:column before
// anything runs. At run time a member is read from the program's memory
// at its offset: an integer, enum or char of its size and signedness; a
// pointer as its address (to follow with -> or stringof); a char array
// as a string; a struct or other array as its address (to take a member
// of or pass on); a bit-field as its bits, sign-extended for a signed
// type; a float or double as a floating-point value (value.go). A cast
// may name a typedef of the program: ((item_t *)arg0)->x.

// dtype is the static type of an expression: ct with ptr more levels
// of pointer on top (what a cast writes with '*').
type dtype struct {
	ct  symbols.CType
	ptr int
}

func (d dtype) String() string {
	s := d.ct.String()
	for i := 0; i < d.ptr; i++ {
		s += " *"
	}
	return s
}

// pointee is the type a pointer points to; ok is false for a non-pointer.
func (d dtype) pointee() (dtype, bool) {
	if d.ptr > 0 {
		return dtype{d.ct, d.ptr - 1}, true
	}
	if d.ct.Kind() == symbols.CPointer {
		return dtype{d.ct.Elem(), 0}, true
	}
	return dtype{}, false
}

func (d dtype) isStruct() bool { return d.ptr == 0 && d.ct.Kind() == symbols.CStruct }

// How a member's value is read.
const (
	loadInt   = iota + 1 // an integer of size bytes
	loadAddr             // its address (a struct, a non-char array)
	loadStr              // a char array: a string of at most strLen bytes
	loadBits             // a bit-field: bitSize bits from bit bitShift of size bytes
	loadFloat            // a float or double of size bytes
)

// memberPlan is a member access resolved against a target's types.
type memberPlan struct {
	typ    dtype // the member's type
	off    int64
	load   int
	size   int
	signed bool
	strLen int
	// bit-fields: the field's lowest bit in the bytes read, its width
	bitShift, bitSize int
}

// bindTypes resolves the program's DWARF casts and member accesses on
// the target's table (over a process tree every program's modules: a
// type no program defines is an error), then, when the target runs
// several programs, in each program's own table (space.members), which
// the events of that program use: a struct may be laid out differently
// in each.
//
// A live program's first binding has only the first program (a shell,
// say, that runs the program defining the type later): there an
// unresolved type is reported at the end (Live.Unmatched) unless some
// program defined it.
func (b *Bound) bindTypes() error {
	err := b.bindTypesIn(b.T.Syms, b.casts, b.members)
	if b.pick == nil && (err == nil || b.mem == nil) {
		return err
	}
	b.typeErr = err
	for _, sp := range b.spaces {
		sp.casts, sp.members = map[*Cast]dtype{}, map[*Member]*memberPlan{}
		if sp.syms != nil {
			// A program without the type leaves its plans out: a
			// member read there faults (segEval.member).
			if b.bindTypesIn(sp.syms, sp.casts, sp.members) == nil {
				b.typeErr = nil
			}
		}
	}
	if b.mem == nil {
		return err
	}
	return nil
}

// bindTypesIn resolves the casts and member accesses in table syms.
func (b *Bound) bindTypesIn(syms *symbols.Table, casts map[*Cast]dtype, members map[*Member]*memberPlan) error {
	var err error
	var typeOf func(e Expr) (dtype, bool)
	typeOf = func(e Expr) (dtype, bool) {
		switch e := e.(type) {
		case *Cast:
			if e.T.DWARF == "" {
				return dtype{}, false
			}
			if d, ok := casts[e]; ok {
				return d, true
			}
			if syms == nil {
				err = errAt(e.P, "cast to %s needs the program's DWARF, and this trace has no symbols", e.T.Name)
				return dtype{}, false
			}
			ct, ok := syms.LookupCType(e.T.DWARF)
			if !ok {
				err = errAt(e.P, "unknown type %q: the program's DWARF does not define it", e.T.DWARF)
				return dtype{}, false
			}
			d := dtype{ct, e.T.Ptr}
			casts[e] = d
			return d, true
		case *Member:
			if pl, ok := members[e]; ok {
				return pl.typ, true
			}
			xt, ok := typeOf(e.X)
			if err != nil {
				return dtype{}, false
			}
			if !ok {
				err = errAt(e.P, "%s%s: the left side has no struct type (cast it, ((struct T *)x)->%s)", map[bool]string{true: "->", false: "."}[e.Arrow], e.Name, e.Name)
				return dtype{}, false
			}
			st := xt
			if e.Arrow {
				p, ok := xt.pointee()
				if !ok || !p.isStruct() {
					err = errAt(e.P, "->%s: %s is not a pointer to a struct", e.Name, xt)
					return dtype{}, false
				}
				st = p
			} else if !xt.isStruct() {
				err = errAt(e.P, ".%s: %s is not a struct (use -> for a pointer)", e.Name, xt)
				return dtype{}, false
			}
			m, ok := st.ct.Field(e.Name)
			if !ok {
				err = errAt(e.P, "%s has no member named %q", st, e.Name)
				return dtype{}, false
			}
			ft := m.Type
			pl := &memberPlan{typ: dtype{ft, 0}, off: m.Offset}
			switch ft.Kind() {
			case symbols.CInt:
				pl.load, pl.size, pl.signed = loadInt, int(ft.Size()), ft.Signed()
				if m.BitSize != 0 {
					// A bit-field: the bytes that hold it, shifted and
					// masked, sign-extended for a signed type.
					pl.load, pl.bitShift, pl.bitSize = loadBits, int(m.BitPos-m.Offset*8), int(m.BitSize)
					pl.size = (pl.bitShift + pl.bitSize + 7) / 8
					if pl.size > 8 {
						err = errAt(e.P, "bit-field %s spans %d bytes, which probes cannot read", e.Name, pl.size)
						return dtype{}, false
					}
				}
			case symbols.CPointer:
				pl.load, pl.size = loadInt, 8
			case symbols.CArray:
				pl.load = loadAddr
				if ft.Elem().IsChar() {
					pl.load, pl.strLen = loadStr, int(ft.Len())
				}
			case symbols.CStruct:
				pl.load = loadAddr
			case symbols.CFloat:
				// float and double: printf's %f, %e, %g print them; as an
				// integer they truncate (value.go).
				pl.load, pl.size = loadFloat, int(ft.Size())
				if pl.size != 4 && pl.size != 8 {
					err = errAt(e.P, "member %s is a %d-byte floating-point number (%s), which probes cannot read", e.Name, pl.size, ft)
					return dtype{}, false
				}
			default:
				err = errAt(e.P, "member %s has type %s, which probes cannot read", e.Name, ft)
				return dtype{}, false
			}
			if pl.load == loadInt && pl.size != 1 && pl.size != 2 && pl.size != 4 && pl.size != 8 {
				err = errAt(e.P, "member %s has %d bytes, which probes cannot read as an integer", e.Name, pl.size)
				return dtype{}, false
			}
			members[e] = pl
			return pl.typ, true
		}
		return dtype{}, false
	}
	visit := func(e Expr) {
		walk(e, func(x Expr) {
			if err == nil {
				switch x.(type) {
				case *Cast, *Member:
					typeOf(x)
				}
			}
		})
	}
	for _, cl := range b.P.Script.Clauses {
		visit(cl.Pred)
		var stmts func([]Stmt)
		stmts = func(ss []Stmt) {
			for _, st := range ss {
				switch st := st.(type) {
				case *ExprStmt:
					visit(st.X)
				case *AggStmt:
					for _, k := range st.Keys {
						visit(k)
					}
					for _, a := range st.Args {
						visit(a)
					}
				case *IfStmt:
					visit(st.C)
					stmts(st.Then)
					stmts(st.Else)
				}
			}
		}
		stmts(cl.Body)
		if err != nil {
			return err
		}
	}
	return err
}

// member reads X->Name or X.Name.
func (s *segEval) member(cr *clauseRun, e *Member) Value {
	pl := s.b.members[e]
	if s.b.pick != nil && cr.ev != nil {
		// The program the event fired in (bindTypes).
		pl = s.evSpace(cr.ev).members[e]
	}
	if pl == nil {
		s.faultf(e.P, "member %s was not resolved (its type is not in this program's DWARF)", e.Name)
	}
	x := s.eval(cr, e.X)
	if x.K != KInt {
		s.faultf(e.P, "%s: not an address", e.Name)
	}
	base := uint64(x.I)
	if e.Arrow && base == 0 {
		s.faultf(e.P, "invalid address (0x0) in ->%s", e.Name)
	}
	addr := base + uint64(pl.off)
	switch pl.load {
	case loadInt:
		return intVal(s.loadInt(e.P, addr, pl.size, pl.signed))
	case loadBits:
		v := uint64(s.loadInt(e.P, addr, pl.size, false)) >> pl.bitShift
		v &= 1<<pl.bitSize - 1
		if pl.signed && pl.bitSize < 64 && v&(1<<(pl.bitSize-1)) != 0 {
			v |= ^uint64(0) << pl.bitSize
		}
		return intVal(int64(v))
	case loadFloat:
		bits := uint64(s.loadInt(e.P, addr, pl.size, false))
		if pl.size == 4 {
			return floatVal(float64(math.Float32frombits(uint32(bits))))
		}
		return floatVal(math.Float64frombits(bits))
	case loadStr:
		n := s.b.P.strsize
		if pl.strLen >= 0 && pl.strLen < n {
			n = pl.strLen
		}
		return strVal(s.readString(e.P, addr, n))
	}
	return intVal(int64(addr))
}
