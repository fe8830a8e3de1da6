package symbols

import (
	"debug/dwarf"
	"fmt"
	"strings"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
)

// C++: base classes, template arguments, and libstdc++'s containers and
// smart pointers shown as gdb's libstdc++ printers show them (elements
// and sizes, expandable children, a smart pointer's pointee), with v[i]
// and v.size() in expressions.
//
// godwarf reads neither DW_TAG_inheritance nor template parameters, so
// they are read here from the struct's DIE. Container layouts are
// libstdc++'s (GCC 5 and later, the new string and list ABI).

// baseClass is one base class of a struct: its type and offset.
type baseClass struct {
	name string
	typ  godwarf.Type
	off  int64
}

// structInfo is what godwarf leaves out of a struct type.
type structInfo struct {
	bases []baseClass
	targs []godwarf.Type // template type arguments, in order
}

// structInfo reads st's base classes and template arguments (cached).
func (img *image) structInfo(st *godwarf.StructType) *structInfo {
	img.typeMu.Lock()
	defer img.typeMu.Unlock()
	if info, ok := img.structs[st.Offset]; ok {
		return info
	}
	if img.structs == nil {
		img.structs = map[dwarf.Offset]*structInfo{}
	}
	info := &structInfo{}
	img.structs[st.Offset] = info
	r := img.dwarf.Reader()
	r.Seek(st.Offset)
	e, err := r.Next()
	if err != nil || e == nil || !e.Children {
		return info
	}
	for {
		k, err := r.Next()
		if err != nil || k == nil || k.Tag == 0 {
			break
		}
		switch k.Tag {
		case dwarf.TagInheritance, dwarf.TagTemplateTypeParameter:
			off, ok := k.Val(dwarf.AttrType).(dwarf.Offset)
			if !ok {
				break
			}
			t, err := godwarf.ReadType(img.dwarf, 0, off, img.typeCache)
			if err != nil {
				break
			}
			t = img.fixType(t, 0)
			if k.Tag == dwarf.TagTemplateTypeParameter {
				info.targs = append(info.targs, t)
				break
			}
			var o int64
			switch loc := k.Val(dwarf.AttrDataMemberLoc).(type) {
			case int64:
				o = loc
			case []byte: // DW_OP_plus_uconst n
				if len(loc) >= 2 && loc[0] == 0x23 {
					o = int64(loc[1] & 0x7f)
				}
			}
			info.bases = append(info.bases, baseClass{name: t.Common().Name, typ: t, off: o})
		}
		if k.Children {
			r.SkipChildren()
		}
	}
	return info
}

// cxxMember finds a data member by name in v's struct, its bases and
// its _M_ member structs (depth first), as the printers need.
func (c *evalCtx) cxxMember(v value, name string) (value, bool) {
	return c.cxxMemberIf(v, name, nil)
}

// cxxMemberIf is cxxMember for the first member named name that ok
// accepts (nil: any).
func (c *evalCtx) cxxMemberIf(v value, name string, ok func(value) bool) (value, bool) {
	st, isStruct := resolve(v.typ).(*godwarf.StructType)
	if !isStruct || c.img == nil {
		return value{}, false
	}
	for i, f := range st.Field {
		if f.Name == name {
			if m := c.fieldValue(v, st, i); ok == nil || ok(m) {
				return m, true
			}
		}
	}
	for _, b := range c.img.structInfo(st).bases {
		if m, found := c.cxxMemberIf(c.sub(v, b.off, b.typ), name, ok); found {
			return m, true
		}
	}
	for i, f := range st.Field { // members of member structs (_M_impl...)
		if _, isStruct := resolve(f.Type).(*godwarf.StructType); isStruct && strings.HasPrefix(f.Name, "_M_") {
			if m, found := c.cxxMemberIf(c.fieldValue(v, st, i), name, ok); found {
				return m, true
			}
		}
	}
	return value{}, false
}

func isPointer(v value) bool {
	_, ok := resolve(v.typ).(*godwarf.PtrType)
	return ok
}

func (c *evalCtx) memberUint(v value, name string) (uint64, error) {
	m, ok := c.cxxMember(v, name)
	if !ok {
		return 0, fmt.Errorf("no member %s", name)
	}
	return c.uint(m)
}

// container is a libstdc++ value seen as gdb's printers see it.
type container struct {
	kind string // "vector", "string", "map"...
	name string // as gdb's printers name it: std::vector, std::optional<int>
	// n is the number of elements (-1 when unknown); capacity, for a
	// vector.
	n, capacity int64
	// elem returns element i (for maps, the value) and its name ("[0]",
	// or "[key]" for a map).
	elem func(i int64) (name string, v value)
	// pointee is a smart pointer's object (ptr is its address) or an
	// optional's value; engaged says an optional holds one.
	pointer bool
	ptr     uint64
	pointee value
	engaged bool
	extra   string // "use count 1, weak count 0"
}

// cxxContainer recognises a libstdc++ container or smart pointer.
func (c *evalCtx) cxxContainer(v value) (*container, bool) {
	if c.isGo || c.img == nil || v.err != nil {
		return nil, false
	}
	st, ok := resolve(v.typ).(*godwarf.StructType)
	if !ok || st.Incomplete {
		return nil, false
	}
	name := st.StructName
	if name == "" {
		name = st.Name
	}
	kind := cxxKind(name)
	if kind == "" {
		return nil, false
	}
	info := c.img.structInfo(st)
	targ := func(i int) godwarf.Type {
		if i < len(info.targs) {
			return info.targs[i]
		}
		return nil
	}
	ct := &container{kind: kind, n: -1, name: "std::" + kind}
	switch kind {
	case "unique_ptr", "shared_ptr", "weak_ptr", "optional":
		if len(info.targs) > 0 {
			arg := c.typeName(info.targs[0])
			for _, k := range []string{"struct ", "class ", "union "} {
				arg = strings.TrimPrefix(arg, k)
			}
			ct.name += "<" + arg + ">"
		}
	}
	switch kind {
	case "string":
		p, err1 := c.memberUint(v, "_M_p")
		n, err2 := c.memberUint(v, "_M_string_length")
		if err1 != nil || err2 != nil {
			return nil, false
		}
		ct.n, ct.ptr = int64(n), p
		et := targ(0)
		if et == nil {
			et = &godwarf.CharType{BasicType: godwarf.BasicType{CommonType: godwarf.CommonType{ByteSize: 1, Name: "char"}}}
		}
		ct.elem = func(i int64) (string, value) {
			return fmt.Sprintf("[%d]", i), value{typ: et, addr: p + uint64(i*sizeOf(et)), inMem: true}
		}
	case "vector":
		start, ok := c.cxxMember(v, "_M_start")
		if !ok {
			return nil, false
		}
		pt, ok := resolve(start.typ).(*godwarf.PtrType)
		if !ok || sizeOf(pt.Type) <= 0 {
			return nil, false
		}
		s, err1 := c.uint(start)
		f, err2 := c.memberUint(v, "_M_finish")
		e, err3 := c.memberUint(v, "_M_end_of_storage")
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, false
		}
		sz := sizeOf(pt.Type)
		ct.n, ct.capacity = int64(f-s)/sz, int64(e-s)/sz
		ct.elem = func(i int64) (string, value) {
			return fmt.Sprintf("[%d]", i), value{typ: pt.Type, addr: s + uint64(i*sz), inMem: true}
		}
	case "array":
		elems, ok := c.cxxMember(v, "_M_elems")
		at, isArr := resolve(elems.typ).(*godwarf.ArrayType)
		if !ok {
			ct.n = 0 // std::array<T, 0>
			break
		}
		if !isArr {
			return nil, false
		}
		ct.n = at.Count
		ct.elem = func(i int64) (string, value) {
			return fmt.Sprintf("[%d]", i), c.sub(elems, i*elemStride(at), at.Type)
		}
	case "deque":
		return c.cxxDeque(v, ct)
	case "list":
		et := targ(0)
		hdr, ok := c.cxxMember(v, "_M_node")
		if !ok || et == nil || !hdr.inMem {
			return nil, false
		}
		n, err := c.memberUint(hdr, "_M_size")
		if err != nil {
			return nil, false
		}
		ct.n = int64(n)
		nodes := c.linked(hdr.addr, func(a uint64) (uint64, error) { return c.word(a) }, int64(n))
		ct.elem = func(i int64) (string, value) {
			if i >= int64(len(nodes)) {
				return fmt.Sprintf("[%d]", i), value{typ: et, err: errUnknown}
			}
			return fmt.Sprintf("[%d]", i), value{typ: et, addr: nodes[i] + 16, inMem: true}
		}
	case "map", "set", "multimap", "multiset":
		return c.cxxTree(v, ct, targ(0), targ(1))
	case "unordered_map", "unordered_set", "unordered_multimap", "unordered_multiset":
		return c.cxxHash(v, ct, targ(0), targ(1))
	case "unique_ptr", "shared_ptr", "weak_ptr":
		ct.pointer = true
		var p value
		var ok bool
		if kind == "unique_ptr" {
			// The deleter's _Head_base has an _M_head_impl too.
			p, ok = c.cxxMemberIf(v, "_M_head_impl", isPointer)
		} else {
			p, ok = c.cxxMember(v, "_M_ptr")
		}
		pt, isPtr := resolve(p.typ).(*godwarf.PtrType)
		if !ok || !isPtr {
			return nil, false
		}
		a, err := c.uint(p)
		if err != nil {
			return nil, false
		}
		ct.ptr = a
		if a != 0 {
			ct.pointee = value{typ: pt.Type, addr: a, inMem: true}
		}
		if kind != "unique_ptr" {
			if pi, err := c.memberUint(v, "_M_pi"); err == nil && pi != 0 {
				if u, err := c.word(pi + 8); err == nil {
					ct.extra = fmt.Sprintf("use count %d, weak count %d", int32(u), int32(u>>32)-1)
				}
			}
		}
	case "optional":
		eng, err := c.memberUint(v, "_M_engaged")
		if err != nil {
			return nil, false
		}
		ct.engaged = eng&0xff != 0
		if ct.engaged {
			ct.pointee, _ = c.cxxMember(v, "_M_value")
		}
	}
	return ct, true
}

// cxxKind names the libstdc++ template a struct name instantiates.
func cxxKind(name string) string {
	base, _, ok := strings.Cut(name, "<")
	if !ok {
		return ""
	}
	base = strings.TrimPrefix(base, "std::")
	base = strings.TrimPrefix(base, "__cxx11::")
	base = strings.TrimPrefix(base, "__debug::")
	switch base {
	case "basic_string":
		return "string"
	case "vector", "array", "deque", "list", "map", "set", "multimap", "multiset", "unordered_map", "unordered_set",
		"unordered_multimap", "unordered_multiset", "unique_ptr", "shared_ptr", "weak_ptr", "optional":
		if base == "vector" && strings.HasPrefix(name[len("std::vector<"):], "bool,") {
			return "" // the bit vector: shown as its members
		}
		return base
	}
	return ""
}

// word reads 8 known bytes.
func (c *evalCtx) word(addr uint64) (uint64, error) {
	return c.uint(value{typ: ptrType, addr: addr, inMem: true})
}

// linked follows next pointers from the sentinel node at head (a list's
// header: next at offset 0) and returns at most n node addresses.
func (c *evalCtx) linked(head uint64, next func(uint64) (uint64, error), n int64) []uint64 {
	var out []uint64
	a, err := next(head)
	for err == nil && a != head && a != 0 && int64(len(out)) < min(n, MaxChildren) {
		out = append(out, a)
		a, err = next(a)
	}
	return out
}

// cxxDeque: _M_start and _M_finish iterators over node buffers of
// __deque_buf_size(sizeof(T)) elements.
func (c *evalCtx) cxxDeque(v value, ct *container) (*container, bool) {
	start, ok1 := c.cxxMember(v, "_M_start")
	finish, ok2 := c.cxxMember(v, "_M_finish")
	if !ok1 || !ok2 {
		return nil, false
	}
	cur, ok := c.cxxMember(start, "_M_cur")
	pt, isPtr := resolve(cur.typ).(*godwarf.PtrType)
	if !ok || !isPtr || sizeOf(pt.Type) <= 0 {
		return nil, false
	}
	sz := sizeOf(pt.Type)
	buf := int64(1)
	if sz < 512 {
		buf = 512 / sz
	}
	sCur, e1 := c.memberUint(start, "_M_cur")
	sLast, e2 := c.memberUint(start, "_M_last")
	sNode, e3 := c.memberUint(start, "_M_node")
	fCur, e4 := c.memberUint(finish, "_M_cur")
	fFirst, e5 := c.memberUint(finish, "_M_first")
	fNode, e6 := c.memberUint(finish, "_M_node")
	for _, e := range []error{e1, e2, e3, e4, e5, e6} {
		if e != nil {
			return nil, false
		}
	}
	ct.n = (int64(fNode-sNode)/8-1)*buf + int64(fCur-fFirst)/sz + int64(sLast-sCur)/sz
	if fNode == sNode {
		ct.n = int64(fCur-sCur) / sz
	}
	sFirst, _ := c.memberUint(start, "_M_first")
	headOff := int64(sCur-sFirst) / sz
	ct.elem = func(i int64) (string, value) {
		k := headOff + i
		node, err := c.word(sNode + uint64(k/buf)*8)
		if err != nil {
			return fmt.Sprintf("[%d]", i), value{typ: pt.Type, err: err}
		}
		return fmt.Sprintf("[%d]", i), value{typ: pt.Type, addr: node + uint64((k%buf)*sz), inMem: true}
	}
	return ct, true
}

// cxxTree: _Rb_tree's header (color, parent, left, right) and node
// count; values follow each 32-byte node base, in order.
func (c *evalCtx) cxxTree(v value, ct *container, key, val godwarf.Type) (*container, bool) {
	hdr, ok := c.cxxMember(v, "_M_header")
	if !ok || !hdr.inMem || key == nil {
		return nil, false
	}
	n, err := c.memberUint(v, "_M_node_count")
	if err != nil {
		return nil, false
	}
	ct.n = int64(n)
	h := hdr.addr
	var nodes []uint64
	x, err := c.word(h + 16) // leftmost
	for err == nil && x != h && x != 0 && int64(len(nodes)) < min(ct.n, MaxChildren) {
		nodes = append(nodes, x)
		// In-order successor.
		if r, _ := c.word(x + 24); r != 0 {
			x = r
			for {
				l, e := c.word(x + 16)
				if e != nil || l == 0 {
					err = e
					break
				}
				x = l
			}
			continue
		}
		y, e := c.word(x + 8)
		for e == nil && y != h && func() bool { r, _ := c.word(y + 24); return r == x }() {
			x = y
			y, e = c.word(y + 8)
		}
		err = e
		x = y
	}
	isMap := ct.kind == "map" || ct.kind == "multimap"
	ct.elem = c.pairElems(nodes, 32, key, val, isMap)
	return ct, true
}

// cxxHash: _Hashtable's singly linked nodes from _M_before_begin, each
// a next pointer then the value.
func (c *evalCtx) cxxHash(v value, ct *container, key, val godwarf.Type) (*container, bool) {
	bb, ok := c.cxxMember(v, "_M_before_begin")
	if !ok || !bb.inMem || key == nil {
		return nil, false
	}
	n, err := c.memberUint(v, "_M_element_count")
	if err != nil {
		return nil, false
	}
	ct.n = int64(n)
	var nodes []uint64
	x, err := c.word(bb.addr)
	for err == nil && x != 0 && int64(len(nodes)) < min(ct.n, MaxChildren) {
		nodes = append(nodes, x)
		x, err = c.word(x)
	}
	isMap := ct.kind == "unordered_map" || ct.kind == "unordered_multimap"
	ct.elem = c.pairElems(nodes, 8, key, val, isMap)
	return ct, true
}

// pairElems lists the values stored at node+off: for a map a pair of
// key and value, named "[key]"; for a set the key, named "[i]".
func (c *evalCtx) pairElems(nodes []uint64, off int64, key, val godwarf.Type, isMap bool) func(int64) (string, value) {
	return func(i int64) (string, value) {
		if i >= int64(len(nodes)) {
			return fmt.Sprintf("[%d]", i), value{typ: key, err: errUnknown}
		}
		base := nodes[i] + uint64(roundUp(uint64(off), uint64(alignOf(key))))
		k := value{typ: key, addr: base, inMem: true}
		if !isMap || val == nil {
			return fmt.Sprintf("[%d]", i), k
		}
		voff := roundUp(uint64(sizeOf(key)), uint64(alignOf(val)))
		return "[" + c.format(k, maxDepth-1) + "]", value{typ: val, addr: base + voff, inMem: true}
	}
}

// alignOf is a type's alignment as the x86-64 ABI gives it.
func alignOf(t godwarf.Type) int64 {
	switch x := resolve(t).(type) {
	case *godwarf.StructType:
		a := int64(1)
		for _, f := range x.Field {
			a = max(a, alignOf(f.Type))
		}
		return a
	case *godwarf.ArrayType:
		return alignOf(x.Type)
	case nil:
		return 1
	}
	n := sizeOf(t)
	switch {
	case n >= 16:
		return 16
	case n >= 8:
		return 8
	case n >= 4:
		return 4
	case n >= 2:
		return 2
	}
	return 1
}

// formatContainer renders a container as gdb's printers do.
func (c *evalCtx) formatContainer(v value, ct *container, depth int) string {
	tn := ct.name
	switch ct.kind {
	case "string":
		b, known, err := c.read(ct.ptr, int(min(ct.n, maxString)))
		if err != nil {
			return errString(err)
		}
		for _, k := range known {
			if !k {
				return errString(errUnknown)
			}
		}
		s := cString(b)
		if ct.n > maxString {
			s += "..."
		}
		return s
	case "unique_ptr", "shared_ptr", "weak_ptr":
		s := tn
		if ct.extra != "" {
			s += " (" + ct.extra + ")"
		}
		return s + fmt.Sprintf(" = {get() = %#x}", ct.ptr)
	case "optional":
		if !ct.engaged {
			return tn + " [no contained value]"
		}
		return tn + " = {[contained value] = " + c.format(ct.pointee, depth+1) + "}"
	}
	var head string
	switch {
	case ct.kind == "vector":
		head = fmt.Sprintf("%s of length %d, capacity %d", tn, ct.n, ct.capacity)
	case ct.kind == "array":
		head = fmt.Sprintf("%s of length %d", tn, ct.n)
	default:
		head = fmt.Sprintf("%s with %d elements", tn, ct.n)
	}
	if ct.n == 0 {
		return head
	}
	if depth >= maxDepth {
		return head + " = {...}"
	}
	var parts []string
	for i := int64(0); i < ct.n && i < maxElems; i++ {
		name, ev := ct.elem(i)
		if strings.HasPrefix(ct.kind, "map") || strings.HasPrefix(ct.kind, "multimap") || strings.HasSuffix(ct.kind, "_map") || strings.HasSuffix(ct.kind, "multimap") {
			parts = append(parts, name+" = "+c.format(ev, depth+1))
		} else {
			parts = append(parts, c.format(ev, depth+1))
		}
	}
	if ct.n > maxElems {
		parts = append(parts, "...")
	}
	return head + " = {" + strings.Join(parts, ", ") + "}"
}

// containerChildren expands a container: its elements, or a pointer's
// object.
func (c *evalCtx) containerChildren(ct *container, name string) []*Variable {
	var out []*Variable
	switch ct.kind {
	case "unique_ptr", "shared_ptr", "weak_ptr":
		if ct.ptr != 0 {
			out = append(out, c.newVariable("*"+name, ct.pointee))
		}
		return out
	case "optional":
		if ct.engaged {
			out = append(out, c.newVariable("[contained value]", ct.pointee))
		}
		return out
	case "string":
		return nil
	}
	for i := int64(0); i < ct.n && i < MaxChildren; i++ {
		n, ev := ct.elem(i)
		out = append(out, c.newVariable(n, ev))
	}
	return out
}

func (ct *container) hasChildren() bool {
	switch ct.kind {
	case "string":
		return false
	case "unique_ptr", "shared_ptr", "weak_ptr":
		return ct.ptr != 0
	case "optional":
		return ct.engaged
	}
	return ct.n > 0
}

// containerIndex is v[i] on a vector, array, deque or string.
func (c *evalCtx) containerIndex(ct *container, i int64) (value, error) {
	switch ct.kind {
	case "vector", "array", "deque", "string", "list":
		if i < 0 || i >= ct.n {
			return value{}, fmt.Errorf("index %d out of range [0, %d)", i, ct.n)
		}
		_, v := ct.elem(i)
		return v, nil
	}
	return value{}, fmt.Errorf("cannot index a std::%s by position", ct.kind)
}

// method evaluates v.name() for the containers' size(), length() and
// empty(), the calls a recording can answer without running code.
func (c *evalCtx) method(v value, name string, arrow bool) (value, error) {
	if pt, ok := resolve(v.typ).(*godwarf.PtrType); ok && arrow {
		v = c.deref(v, pt.Type)
	}
	ct, ok := c.cxxContainer(v)
	if !ok {
		return v, fmt.Errorf("cannot call %s() on a %s: only size(), length() and empty() of standard containers", name, c.typeName(v.typ))
	}
	switch name {
	case "size", "length":
		if ct.n < 0 {
			return v, fmt.Errorf("std::%s has no size", ct.kind)
		}
		return intValue(ct.n), nil
	case "empty":
		if ct.n < 0 {
			return v, fmt.Errorf("std::%s has no size", ct.kind)
		}
		b := int64(0)
		if ct.n == 0 {
			b = 1
		}
		return intValue(b), nil
	}
	return v, fmt.Errorf("cannot call %s() on a std::%s: only size(), length() and empty()", name, ct.kind)
}
