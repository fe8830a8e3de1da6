package symbols

import (
	"debug/dwarf"
	"encoding/binary"
	"errors"
	"sort"
	"strings"
	"sync"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/go-delve/delve/pkg/dwarf/op"
	"github.com/go-delve/delve/pkg/dwarf/reader"
)

// Errors reading values. A Variable's Value shows them as "<unknown>",
// "<optimized out>" and "<unreadable: …>".
var (
	// ErrNoDebugInfo is returned for a frame whose function has no DWARF.
	ErrNoDebugInfo = errors.New("no debug information")
	errUnknown     = errors.New("unknown")
	// errOptimizedOut: the compiler left no location for the pc.
	errOptimizedOut = errors.New("optimized out")
	// errSynthetic: a pointer to a value that exists only in DWARF.
	errSynthetic = errors.New("synthetic pointer")
)

// Variable is a value shown to a person: a local, an argument, a global,
// a field, an element, or the result of EvalExpr.
type Variable struct {
	Name  string
	Type  string
	Value string // "<unknown>" where the recording does not know the bytes
	// Addr is the value's address when it lives in memory, else 0 (a
	// register, a constant, optimised out).
	Addr uint64
	// Size is the size of the value's type in bytes (0 if unknown): with
	// Addr, the range a data breakpoint on the variable watches.
	Size int
	// Shadowed marks a local hidden by an inner one of the same name.
	Shadowed bool
	// HasChildren tells whether Children has anything to show: fields,
	// elements, map entries, a pointer's target, an interface's value.
	HasChildren bool

	ctx  *evalCtx
	val  value
	once sync.Once
	kids []*Variable
}

// Children returns the variable's fields, elements, map entries, pointed-to
// value or dynamic value, read on first use (for DAP's
// variablesReference). Large arrays, slices and maps are cut at
// MaxChildren.
func (v *Variable) Children() []*Variable {
	v.once.Do(func() {
		if v.ctx != nil && v.HasChildren {
			v.kids = v.ctx.children(v.val, v.Name)
		}
	})
	return v.kids
}

// MaxChildren bounds the elements or entries Children returns.
const MaxChildren = 1000

// value is a typed value: in memory at addr, or held in data (from
// registers or constants). known is nil when every byte is known.
type value struct {
	typ   godwarf.Type
	addr  uint64
	inMem bool
	data  []byte
	known []bool
	err   error
}

// evalCtx is what reading values needs: the module (for types), memory,
// the frame (for registers) and the language.
type evalCtx struct {
	t     *Table
	img   *image
	mem   MemReader
	frame *Frame
	isGo  bool
}

// Scopes returns the arguments and the local variables visible at the
// frame's pc: lexical blocks that contain it, inner names before outer
// ones (an outer one they hide has Shadowed set). Locations are evaluated
// against the frame's registers, its CFA and frame base, and mem. For Go,
// locals are shown from the line after their declaration, as delve does;
// for C, all locals of the open blocks, as gdb does.
func (t *Table) Scopes(f *Frame, mem MemReader) (args, locals []*Variable, err error) {
	if f == nil || f.scope == nil || f.fn == nil {
		return nil, nil, ErrNoDebugInfo
	}
	ctx := &evalCtx{t: t, img: f.img, mem: mem, frame: f, isGo: f.fn.cu.isGo}
	flags := reader.VariablesOnlyVisible | reader.VariablesSkipInlinedSubroutines
	if !ctx.isGo {
		flags |= reader.VariablesNoDeclLineCheck
	}
	vars := safeVariables(f.scope, f.look, f.Line, flags)
	sort.SliceStable(vars, func(i, j int) bool { return vars[i].Depth > vars[j].Depth })
	seen := map[string]bool{}
	for _, rv := range vars {
		name, _ := rv.Val(dwarf.AttrName).(string)
		if name == "" {
			continue
		}
		v := ctx.variable(rv.Tree, name)
		if v == nil {
			continue
		}
		if seen[v.Name] {
			v.Shadowed = true
		}
		seen[v.Name] = true
		if rv.Tag == dwarf.TagFormalParameter {
			args = append(args, v)
		} else {
			locals = append(locals, v)
		}
	}
	return args, locals, nil
}

func safeVariables(root *godwarf.Tree, pc uint64, line int, flags reader.VariablesFlags) (out []reader.Variable) {
	defer func() {
		if recover() != nil {
			out = nil
		}
	}()
	return reader.Variables(root, pc, line, flags)
}

// Globals returns the global variables of the compile unit of the frame's
// function (for Go, its package's), sorted by name.
func (t *Table) Globals(f *Frame, mem MemReader) []*Variable {
	if f == nil || f.fn == nil {
		return nil
	}
	ctx := &evalCtx{t: t, img: f.img, mem: mem, frame: f, isGo: f.fn.cu.isGo}
	var out []*Variable
	for _, g := range f.img.globals {
		if g.cu == f.fn.cu || (ctx.isGo && g.cu.name == f.fn.cu.name) {
			if v := ctx.global(g); v != nil {
				out = append(out, v)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (c *evalCtx) global(g *globalVar) *Variable {
	typ, err := c.img.readType(g.typeOff)
	if err != nil {
		return nil
	}
	return c.newVariable(g.name, c.globalValue(g, typ))
}

// variable reads a variable DIE (local or argument).
func (c *evalCtx) variable(n *godwarf.Tree, name string) *Variable {
	typ, err := c.typeOf(n)
	if err != nil {
		return nil
	}
	val := c.locate(n, typ)
	if c.isGo && strings.HasPrefix(name, "&") {
		// An escaped variable: DWARF gives its heap address.
		name = name[1:]
		if p, ok := resolve(typ).(*godwarf.PtrType); ok && val.err == nil {
			val = c.deref(val, p.Type)
		}
	}
	return c.newVariable(name, val)
}

// typeOf reads n's type under the type lock (Tree.Type shares the cache).
func (c *evalCtx) typeOf(n *godwarf.Tree) (godwarf.Type, error) {
	off, ok := n.Val(dwarf.AttrType).(dwarf.Offset)
	if !ok {
		return nil, errors.New("no type")
	}
	return c.img.readType(off)
}

// locate evaluates n's location at the frame's pc.
func (c *evalCtx) locate(n *godwarf.Tree, typ godwarf.Type) value {
	v := value{typ: typ}
	if cv := n.Val(dwarf.AttrConstValue); cv != nil {
		switch cv := cv.(type) {
		case int64:
			v.data = binary.LittleEndian.AppendUint64(nil, uint64(cv))
		case uint64:
			v.data = binary.LittleEndian.AppendUint64(nil, cv)
		case []byte:
			v.data = cv
		default:
			v.err = errOptimizedOut
		}
		v.data = fit(v.data, sizeOf(typ))
		return v
	}
	f := c.frame
	instr, err := c.img.location(f.fn.cu, n, dwarf.AttrLocation, f.look)
	if err != nil {
		v.err = err
		return v
	}
	regs := dwarfRegs(f.Regs, f.Known, f.CFA, c.img.bias)
	if fb, err := c.frameBase(); err == nil {
		regs.FrameBase = fb
	}
	addr, pieces, err := execLocation(regs, instr, c.t.memFunc(c.mem))
	if errors.Is(err, errOptimizedOut) {
		if e2, ok := c.resolveEntryValue(instr, 0); ok {
			addr, pieces, err = execLocation(regs, e2, c.t.memFunc(c.mem))
		}
	}
	if err != nil {
		v.err = err
		return v
	}
	if pieces == nil {
		v.addr, v.inMem = uint64(addr), true
		return v
	}
	if len(pieces) == 1 && pieces[0].Kind == op.AddrPiece {
		v.addr, v.inMem = pieces[0].Val, true
		return v
	}
	v.data, v.known = c.fromPieces(pieces, sizeOf(typ))
	return v
}

// frameBase evaluates DW_AT_frame_base of the frame's function.
func (c *evalCtx) frameBase() (int64, error) {
	f := c.frame
	tree, err := c.img.tree(f.fn.off)
	if err != nil {
		return 0, err
	}
	instr, err := c.img.location(f.fn.cu, tree, dwarf.AttrFrameBase, f.look)
	if err != nil {
		return 0, err
	}
	regs := dwarfRegs(f.Regs, f.Known, f.CFA, c.img.bias)
	addr, pieces, err := execLocation(regs, instr, c.t.memFunc(c.mem))
	if err != nil {
		return 0, err
	}
	if len(pieces) == 1 && pieces[0].Kind == op.RegPiece {
		// DW_OP_reg6 and the like: the frame base is the register's value.
		i := fromDwarfNum(pieces[0].Val)
		if i < 0 || f.Known&(1<<i) == 0 {
			return 0, errUnknown
		}
		return int64(f.Regs[i]), nil
	}
	return addr, nil
}

// fromPieces assembles a value described by DW_OP_piece.
func (c *evalCtx) fromPieces(pieces []op.Piece, size int64) ([]byte, []bool) {
	var data []byte
	var known []bool
	for _, p := range pieces {
		n := p.Size
		if n == 0 {
			n = int(size)
		}
		b := make([]byte, n)
		k := make([]bool, n)
		switch p.Kind {
		case op.RegPiece:
			i := fromDwarfNum(p.Val)
			if i >= 0 && c.frame.Known&(1<<i) != 0 && n <= 8 {
				var w [8]byte
				binary.LittleEndian.PutUint64(w[:], c.frame.Regs[i])
				copy(b, w[:])
				fill(k, true)
			}
		case op.AddrPiece:
			if kn, err := c.t.readMem(c.mem, p.Val, b); err == nil {
				fill(k, true)
				for j := range kn {
					k[j] = kn[j]
				}
			}
		case op.ImmPiece:
			if p.Bytes != nil {
				copy(b, p.Bytes)
				fill(k, true)
			} else if len(pieces) == 1 || p.Val != 0 {
				// (A zero piece inside a composite is how delve reports
				// an empty DW_OP_piece, optimised out: left unknown.)
				var w [8]byte
				binary.LittleEndian.PutUint64(w[:], p.Val)
				copy(b, w[:])
				fill(k, true)
			}
		}
		data = append(data, b...)
		known = append(known, k...)
	}
	data, known = fit(data, size), fitKnown(known, size)
	for _, k := range known {
		if !k {
			return data, known
		}
	}
	return data, nil
}

func fill(k []bool, v bool) {
	for i := range k {
		k[i] = v
	}
}

func fit(b []byte, n int64) []byte {
	if n < 0 {
		return b
	}
	if int64(len(b)) >= n {
		return b[:n]
	}
	return append(b, make([]byte, n-int64(len(b)))...)
}

func fitKnown(k []bool, n int64) []bool {
	if int64(len(k)) >= n {
		return k[:n]
	}
	return append(k, make([]bool, n-int64(len(k)))...)
}

// DWARF call-site constants (DWARF 5, and the GNU extension of DWARF 4).
const (
	tagCallSite         dwarf.Tag  = 0x48
	tagCallSiteParam    dwarf.Tag  = 0x49
	tagGNUCallSite      dwarf.Tag  = 0x4109
	tagGNUCallSiteParam dwarf.Tag  = 0x410a
	attrCallReturnPC    dwarf.Attr = 0x7d
	attrCallValue       dwarf.Attr = 0x7e
	attrGNUCallValue    dwarf.Attr = 0x2111
	opEntryValue                   = 0xa3
	opGNUEntryValue                = 0xf3
	opReg0                         = 0x50
	opConstu                       = 0x10
)

// resolveEntryValue replaces a leading DW_OP_entry_value(DW_OP_regN), the
// value a register had when the function was entered, by that value when
// it can be found (as gdb does): at frame 0 on the entry instruction, or
// from the caller's DW_TAG_call_site_parameter for this call.
func (c *evalCtx) resolveEntryValue(instr []byte, depth int) ([]byte, bool) {
	if len(instr) < 3 || instr[0] != opEntryValue && instr[0] != opGNUEntryValue {
		return nil, false
	}
	n, w := binary.Uvarint(instr[1:])
	if w <= 0 || n != 1 || 1+w+1 > len(instr) {
		return nil, false
	}
	op := instr[1+w]
	if op < opReg0 || op >= opReg0+17 {
		return nil, false
	}
	val, ok := c.entryRegister(int(op-opReg0), depth)
	if !ok {
		return nil, false
	}
	out := binary.AppendUvarint([]byte{opConstu}, val)
	return append(out, instr[1+w+1:]...), true
}

// entryRegister returns the value DWARF register dreg had on entry to the
// frame's function.
func (c *evalCtx) entryRegister(dreg int, depth int) (uint64, bool) {
	f := c.frame
	i := fromDwarfNum(uint64(dreg))
	if i < 0 || depth > 3 || f.fn == nil {
		return 0, false
	}
	if f.Index == 0 && !f.Inlined && f.look == f.fn.entry && f.Known&(1<<i) != 0 {
		return f.Regs[i], true
	}
	up := f.up
	if up == nil || up.fn == nil || up.img == nil || up.img.dwarf == nil {
		return 0, false
	}
	tree, err := up.img.tree(up.fn.off)
	if err != nil {
		return 0, false
	}
	site := findCallSite(tree, up.PC, up.img.bias)
	if site == nil {
		return 0, false
	}
	for _, p := range site.Children {
		if p.Tag != tagCallSiteParam && p.Tag != tagGNUCallSiteParam {
			continue
		}
		if loc, _ := p.Val(dwarf.AttrLocation).([]byte); len(loc) != 1 || int(loc[0]) != opReg0+dreg {
			continue
		}
		expr, _ := p.Val(attrCallValue).([]byte)
		if expr == nil {
			expr, _ = p.Val(attrGNUCallValue).([]byte)
		}
		if expr == nil {
			return 0, false
		}
		cc := &evalCtx{t: c.t, img: up.img, mem: c.mem, frame: up, isGo: c.isGo}
		v, err := cc.evalValue(expr, depth+1)
		return v, err == nil
	}
	return 0, false
}

// findCallSite finds the call site whose return address is ret.
func findCallSite(n *godwarf.Tree, ret, bias uint64) *godwarf.Tree {
	switch n.Tag {
	case tagCallSite, tagGNUCallSite:
		a, ok := n.Val(attrCallReturnPC).(uint64)
		if !ok {
			a, ok = n.Val(dwarf.AttrLowpc).(uint64)
		}
		if ok && a+bias == ret {
			return n
		}
	}
	for _, ch := range n.Children {
		if s := findCallSite(ch, ret, bias); s != nil {
			return s
		}
	}
	return nil
}

// evalValue evaluates a DWARF expression that computes a value (not a
// location), such as DW_AT_call_value.
func (c *evalCtx) evalValue(expr []byte, depth int) (uint64, error) {
	f := c.frame
	regs := dwarfRegs(f.Regs, f.Known, f.CFA, c.img.bias)
	if fb, err := c.frameBase(); err == nil {
		regs.FrameBase = fb
	}
	addr, pieces, err := execLocation(regs, expr, c.t.memFunc(c.mem))
	if errors.Is(err, errOptimizedOut) {
		if e2, ok := c.resolveEntryValue(expr, depth); ok {
			addr, pieces, err = execLocation(regs, e2, c.t.memFunc(c.mem))
		}
	}
	if err != nil {
		return 0, err
	}
	if len(pieces) == 1 {
		switch p := pieces[0]; p.Kind {
		case op.RegPiece:
			i := fromDwarfNum(p.Val)
			if i < 0 || f.Known&(1<<i) == 0 {
				return 0, errUnknown
			}
			return f.Regs[i], nil
		case op.ImmPiece:
			return p.Val, nil
		}
		return 0, errUnknown
	}
	return uint64(addr), nil
}
