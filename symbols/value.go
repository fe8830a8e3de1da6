package symbols

import (
	"debug/dwarf"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
)

const (
	maxLoad     = 1 << 16 // bytes of a value read at once
	maxElems    = 100     // elements shown in a Value string
	maxDepth    = 4       // nesting shown in a Value string
	maxString   = 200     // characters of a C string or Go string shown
	repeatLimit = 10      // gdb's threshold: longer runs show "<repeats N times>"
)

// resolve strips typedefs and qualifiers.
func resolve(t godwarf.Type) godwarf.Type {
	for range 64 {
		switch x := t.(type) {
		case *godwarf.TypedefType:
			if x.Type == nil {
				return t
			}
			t = x.Type
		case *godwarf.QualType:
			t = x.Type
		default:
			return t
		}
	}
	return t
}

func errString(err error) string {
	switch {
	case errors.Is(err, errUnknown):
		return "<unknown>"
	case errors.Is(err, errOptimizedOut):
		return "<optimized out>"
	case errors.Is(err, errSynthetic):
		return "<synthetic pointer>"
	}
	return "<unreadable: " + err.Error() + ">"
}

// read reads n bytes at addr.
func (c *evalCtx) read(addr uint64, n int) ([]byte, []bool, error) {
	b := make([]byte, n)
	known, err := c.t.readMem(c.mem, addr, b)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read %#x: %w", addr, err)
	}
	return b, known, nil
}

// load fills v.data for an in-memory value of manageable size.
func (c *evalCtx) load(v *value) {
	if v.err != nil || v.data != nil || !v.inMem {
		return
	}
	n := sizeOf(v.typ)
	if n <= 0 || n > maxLoad {
		return
	}
	v.data, v.known, v.err = c.read(v.addr, int(n))
}

// bytes returns the bytes of a scalar value, or errUnknown if any is
// unknown.
func (c *evalCtx) bytes(v value) ([]byte, error) {
	c.load(&v)
	if v.err != nil {
		return nil, v.err
	}
	if v.data == nil {
		return nil, fmt.Errorf("value too large")
	}
	for _, k := range v.known {
		if !k {
			return nil, errUnknown
		}
	}
	return v.data, nil
}

// sub returns the part of v at off with type typ.
func (c *evalCtx) sub(v value, off int64, typ godwarf.Type) value {
	s := value{typ: typ, err: v.err}
	if v.err != nil {
		return s
	}
	if v.inMem {
		s.addr, s.inMem = v.addr+uint64(off), true
	}
	if v.data != nil {
		n := sizeOf(typ)
		if off < 0 || n < 0 || off+n > int64(len(v.data)) {
			if !s.inMem {
				s.err = errUnknown
			}
			return s
		}
		s.data = v.data[off : off+n]
		if v.known != nil {
			s.known = v.known[off : off+n]
		}
	}
	return s
}

// uint reads v as an unsigned integer of its size.
func (c *evalCtx) uint(v value) (uint64, error) {
	b, err := c.bytes(v)
	if err != nil {
		return 0, err
	}
	var w [8]byte
	copy(w[:], b)
	return binary.LittleEndian.Uint64(w[:]), nil
}

func signExtend(u uint64, size int64) int64 {
	if size <= 0 || size >= 8 {
		return int64(u)
	}
	sh := 64 - 8*uint(size)
	return int64(u<<sh) >> sh
}

// deref returns the value a pointer value points to.
func (c *evalCtx) deref(p value, elem godwarf.Type) value {
	addr, err := c.uint(p)
	if err != nil {
		return value{typ: elem, err: err}
	}
	if addr == 0 {
		return value{typ: elem, err: errors.New("nil pointer")}
	}
	return value{typ: elem, addr: addr, inMem: true}
}

// newVariable wraps a value for display.
func (c *evalCtx) newVariable(name string, v value) *Variable {
	c.load(&v)
	out := &Variable{Name: name, Type: c.typeName(v.typ), Value: c.format(v, 0), ctx: c, val: v}
	if v.inMem {
		out.Addr = v.addr
	}
	if v.typ != nil {
		if n := sizeOf(v.typ); n > 0 {
			out.Size = int(n)
		}
	}
	out.HasChildren = v.err == nil && c.hasChildren(v)
	return out
}

// typeName names a type the way its language writes it.
func (c *evalCtx) typeName(t godwarf.Type) string {
	if t == nil {
		return ""
	}
	if c.isGo {
		if n := t.Common().Name; n != "" {
			return n
		}
		return t.String()
	}
	return cTypeName(t)
}

// cTypeName names a C type as gdb does ("int *", "char [8]", "struct
// point", "int (*)(int, struct node *)").
func cTypeName(t godwarf.Type) string {
	switch t := t.(type) {
	case *godwarf.PtrType:
		switch in := t.Type.(type) {
		case nil:
			return "void *"
		case *godwarf.FuncType:
			return cTypeName(in.ReturnType) + " (*)(" + cParams(in) + ")"
		case *godwarf.ArrayType:
			base, dims := cArray(in)
			return base + " (*)" + dims
		}
		s := cTypeName(t.Type)
		if strings.HasSuffix(s, "*") {
			return s + "*"
		}
		return s + " *"
	case *godwarf.ArrayType:
		base, dims := cArray(t)
		return base + " " + dims
	case *godwarf.StructType:
		if t.StructName != "" {
			return t.Kind + " " + t.StructName
		}
		return t.Kind + " {...}"
	case *godwarf.EnumType:
		if t.EnumName != "" {
			return "enum " + t.EnumName
		}
		return "enum {...}"
	case *godwarf.QualType:
		if _, ptr := t.Type.(*godwarf.PtrType); ptr {
			return cTypeName(t.Type) + " " + t.Qual
		}
		return t.Qual + " " + cTypeName(t.Type)
	case *godwarf.FuncType:
		return cTypeName(t.ReturnType) + " (" + cParams(t) + ")"
	case *godwarf.VoidType:
		return "void"
	case nil:
		return "void"
	}
	if n := t.Common().Name; n != "" {
		return n
	}
	return t.String()
}

func cParams(f *godwarf.FuncType) string {
	var ps []string
	for _, p := range f.ParamType {
		ps = append(ps, cTypeName(p))
	}
	if len(ps) == 0 {
		return "void"
	}
	return strings.Join(ps, ", ")
}

func cArray(t *godwarf.ArrayType) (string, string) {
	dims := ""
	var el godwarf.Type = t
	for {
		a, ok := el.(*godwarf.ArrayType)
		if !ok {
			break
		}
		if a.Count < 0 {
			dims += "[]"
		} else {
			dims += "[" + strconv.FormatInt(a.Count, 10) + "]"
		}
		el = a.Type
	}
	return cTypeName(el), dims
}

// format renders a value: gdb's style for C, delve's for Go.
func (c *evalCtx) format(v value, depth int) string {
	if v.err != nil {
		return errString(v.err)
	}
	switch t := resolve(v.typ).(type) {
	case *godwarf.StringType:
		return c.goString(v)
	case *godwarf.SliceType:
		return c.goSlice(v, t, depth)
	case *godwarf.MapType:
		return c.goMap(v, t, depth)
	case *godwarf.InterfaceType:
		return c.goInterface(v, depth)
	case *godwarf.ChanType:
		return c.pointer(v, nil)
	case *godwarf.StructType:
		if ct, ok := c.cxxContainer(v); ok {
			return c.formatContainer(v, ct, depth)
		}
		return c.formatStruct(v, t, depth)
	case *godwarf.ArrayType:
		return c.formatArray(v, t, depth)
	case *godwarf.PtrType:
		return c.pointer(v, t.Type)
	case *godwarf.FuncType:
		if sizeOf(t) <= 0 { // a function itself, not a function value
			return c.symbolic(v.addr)
		}
		if c.isGo {
			return c.goFunc(v)
		}
		return "{" + cTypeName(t) + "} " + c.symbolic(v.addr)
	case *godwarf.VoidType:
		return "void"
	default:
		return c.scalar(v, t)
	}
}

// scalar formats integers, characters, booleans, floats and enums.
func (c *evalCtx) scalar(v value, t godwarf.Type) string {
	b, err := c.bytes(v)
	if err != nil {
		return errString(err)
	}
	var w [8]byte
	copy(w[:], b)
	u := binary.LittleEndian.Uint64(w[:])
	size := int64(len(b))
	switch t := t.(type) {
	case *godwarf.IntType:
		return strconv.FormatInt(signExtend(u, size), 10)
	case *godwarf.UintType:
		return strconv.FormatUint(u, 10)
	case *godwarf.CharType:
		n := signExtend(u, size)
		if c.isGo {
			return strconv.FormatInt(n, 10)
		}
		return strconv.FormatInt(n, 10) + " " + cChar(byte(n))
	case *godwarf.UcharType:
		if c.isGo {
			return strconv.FormatUint(u, 10)
		}
		return strconv.FormatUint(u, 10) + " " + cChar(byte(u))
	case *godwarf.BoolType:
		if u != 0 {
			return "true"
		}
		return "false"
	case *godwarf.FloatType:
		return formatFloat(b, !c.isGo)
	case *godwarf.ComplexType:
		h := len(b) / 2
		re, im := formatFloat(b[:h], !c.isGo), formatFloat(b[h:], !c.isGo)
		if c.isGo {
			if !strings.HasPrefix(im, "-") {
				im = "+" + im
			}
			return "(" + re + im + "i)"
		}
		return re + " + " + im + "i"
	case *godwarf.EnumType:
		n := signExtend(u, size)
		for _, e := range t.Val {
			if e.Val == n {
				return e.Name
			}
		}
		return strconv.FormatInt(n, 10)
	case *godwarf.AddrType, *godwarf.UnspecifiedType:
		return fmt.Sprintf("%#x", u)
	}
	return fmt.Sprintf("%#x", u)
}

// formatFloat formats a 4-, 8-, 10- or 16-byte (x87 80-bit in 16) float:
// with gdb's %g precision (9, 17 and 21 digits) for C, shortest for Go.
func formatFloat(b []byte, gdb bool) string {
	prec := func(n int) int {
		if gdb {
			return n
		}
		return -1
	}
	switch len(b) {
	case 4:
		return strconv.FormatFloat(float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), 'g', prec(9), 32)
	case 8:
		return strconv.FormatFloat(math.Float64frombits(binary.LittleEndian.Uint64(b)), 'g', prec(17), 64)
	case 10, 12, 16:
		return formatF80(b[:10], prec(21))
	}
	return fmt.Sprintf("<%d-byte float>", len(b))
}

// formatF80 formats an x87 extended-precision value exactly.
func formatF80(b []byte, prec int) string {
	mant := binary.LittleEndian.Uint64(b)
	se := binary.LittleEndian.Uint16(b[8:])
	neg, exp := se&0x8000 != 0, int(se&0x7fff)
	sign := ""
	if neg {
		sign = "-"
	}
	switch {
	case exp == 0x7fff && mant<<1 == 0:
		return sign + "inf"
	case exp == 0x7fff:
		return sign + "nan(" + fmt.Sprintf("%#x", mant) + ")"
	case mant == 0:
		return sign + "0"
	}
	if exp == 0 {
		exp = 1 // denormal
	}
	f := new(big.Float).SetPrec(64).SetUint64(mant)
	f.SetMantExp(f, exp-16383-63)
	if neg {
		f.Neg(f)
	}
	s := f.Text('g', prec)
	if prec > 0 && strings.Contains(s, ".") && !strings.ContainsAny(s, "e") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// cChar quotes a byte as gdb does: 'A', '\n', '\310'.
func cChar(b byte) string {
	return "'" + cEscape(b, '\'') + "'"
}

func cEscape(b byte, quote byte) string {
	switch b {
	case '\a':
		return `\a`
	case '\b':
		return `\b`
	case '\f':
		return `\f`
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	case '\v':
		return `\v`
	case 033:
		return `\033`
	case '\\':
		return `\\`
	case quote:
		return `\` + string(quote)
	}
	if b >= 0x20 && b < 0x7f {
		return string(b)
	}
	return fmt.Sprintf(`\%03o`, b)
}

// cString quotes bytes as gdb does, with "<repeats N times>" runs.
func cString(b []byte) string {
	var parts []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			parts = append(parts, `"`+cur.String()+`"`)
			cur.Reset()
		}
	}
	for i := 0; i < len(b); {
		j := i
		for j < len(b) && b[j] == b[i] {
			j++
		}
		if j-i > repeatLimit {
			flush()
			parts = append(parts, fmt.Sprintf("%s <repeats %d times>", cChar(b[i]), j-i))
			i = j
			continue
		}
		cur.WriteString(cEscape(b[i], '"'))
		i++
	}
	flush()
	if len(parts) == 0 {
		return `""`
	}
	return strings.Join(parts, ", ")
}

// symbolic renders an address, with <symbol+off> when one covers it.
func (c *evalCtx) symbolic(addr uint64) string {
	s := fmt.Sprintf("%#x", addr)
	if name := c.t.symbolFor(addr); name != "" {
		s += " <" + name + ">"
	}
	return s
}

// symbolFor names the data or function symbol containing addr.
func (t *Table) symbolFor(addr uint64) string {
	img := t.imageFor(addr)
	if img == nil {
		return ""
	}
	for _, g := range img.globals {
		if addr == g.addr {
			return g.name
		}
	}
	for _, s := range img.symNames {
		if !s.fn && addr >= s.addr && addr < s.addr+max(s.size, 1) {
			if addr == s.addr {
				return s.name
			}
			return fmt.Sprintf("%s+%d", s.name, addr-s.addr)
		}
	}
	if f, ok := t.FuncForPC(addr); ok {
		if addr == f.Entry {
			return f.Name
		}
		return fmt.Sprintf("%s+%d", f.Name, addr-f.Entry)
	}
	return ""
}

// pointer formats a pointer: C strings and function pointers are shown
// as gdb shows them.
func (c *evalCtx) pointer(v value, elem godwarf.Type) string {
	addr, err := c.uint(v)
	if err != nil {
		return errString(err)
	}
	if c.isGo {
		if addr == 0 {
			return "nil"
		}
		return fmt.Sprintf("%#x", addr)
	}
	if addr == 0 {
		return "0x0"
	}
	switch e := resolve(elem).(type) {
	case *godwarf.FuncType:
		return c.symbolic(addr)
	case *godwarf.CharType, *godwarf.UcharType:
		if sizeOf(e) == 1 {
			return fmt.Sprintf("%#x %s", addr, c.cStringAt(addr))
		}
	}
	return c.symbolic(addr)
}

// cStringAt reads a NUL-terminated string.
func (c *evalCtx) cStringAt(addr uint64) string {
	var out []byte
	for len(out) < maxString {
		n := 64 - int(addr+uint64(len(out)))%64 // stay within a line of memory
		b, known, err := c.read(addr+uint64(len(out)), n)
		if err != nil {
			return "<unreadable>"
		}
		for i, ch := range b {
			if known != nil && !known[i] {
				return cString(out) + "<unknown>"
			}
			if ch == 0 {
				return cString(out)
			}
			out = append(out, ch)
		}
	}
	return cString(out[:maxString]) + "..."
}

// fieldValue returns a struct field, extracting bit fields.
func (c *evalCtx) fieldValue(v value, st *godwarf.StructType, i int) value {
	f := st.Field[i]
	if f.BitSize == 0 {
		return c.sub(v, f.ByteOffset, f.Type)
	}
	bitOff, ok := c.img.dataBitOffset(st, i)
	if !ok {
		// DWARF 2 bit_offset: counted from the most significant bit of a
		// storage unit at ByteOffset.
		unit := f.ByteSize
		if unit == 0 {
			unit = sizeOf(f.Type)
		}
		bitOff = f.ByteOffset*8 + unit*8 - f.BitOffset - f.BitSize
	}
	first, last := bitOff/8, (bitOff+f.BitSize+7)/8
	whole := c.sub(v, first, &godwarf.ArrayType{CommonType: godwarf.CommonType{ByteSize: last - first}, Type: &godwarf.UintType{}, Count: last - first})
	b, err := c.bytes(whole)
	out := value{typ: f.Type, err: err}
	if err != nil {
		return out
	}
	var w [16]byte
	copy(w[:], b)
	lo := binary.LittleEndian.Uint64(w[:])
	hi := binary.LittleEndian.Uint64(w[8:])
	sh := uint(bitOff % 8)
	u := lo >> sh
	if sh > 0 {
		u |= hi << (64 - sh)
	}
	u &= 1<<uint(f.BitSize) - 1
	switch resolve(f.Type).(type) {
	case *godwarf.IntType, *godwarf.CharType, *godwarf.EnumType:
		if u&(1<<uint(f.BitSize-1)) != 0 {
			u |= ^uint64(0) << uint(f.BitSize)
		}
	}
	out.data = binary.LittleEndian.AppendUint64(nil, u)[:max(sizeOf(f.Type), 1)]
	return out
}

// dataBitOffset returns DW_AT_data_bit_offset of member i of st (DWARF 4+
// bit fields), which godwarf does not read.
func (img *image) dataBitOffset(st *godwarf.StructType, i int) (int64, bool) {
	r := img.dwarf.Reader()
	r.Seek(st.Offset)
	e, err := r.Next()
	if err != nil || e == nil || !e.Children {
		return 0, false
	}
	for n := 0; ; {
		e, err := r.Next()
		if err != nil || e == nil || e.Tag == 0 {
			return 0, false
		}
		if e.Tag == dwarf.TagMember {
			if n == i {
				v, ok := e.Val(attrDataBitOff).(int64)
				return v, ok
			}
			n++
		}
		r.SkipChildren()
	}
}

func (c *evalCtx) formatStruct(v value, st *godwarf.StructType, depth int) string {
	if st.Incomplete {
		return "<incomplete type>"
	}
	if depth >= maxDepth {
		return "{...}"
	}
	c.load(&v)
	var parts []string
	if !c.isGo && c.img != nil {
		for _, b := range c.img.structInfo(st).bases {
			parts = append(parts, "<"+b.name+"> = "+c.format(c.sub(v, b.off, b.typ), depth+1))
		}
	}
	for i, f := range st.Field {
		fv := c.fieldValue(v, st, i)
		if c.isGo {
			parts = append(parts, f.Name+": "+c.format(fv, depth+1))
		} else {
			parts = append(parts, f.Name+" = "+c.format(fv, depth+1))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// sizeOf returns a type's size; delve's godwarf reports -1 for C arrays,
// which DWARF describes by their count alone.
func sizeOf(t godwarf.Type) int64 {
	for range 64 {
		switch x := t.(type) {
		case nil:
			return 0
		case *godwarf.ArrayType:
			if x.ByteSize > 0 || x.Count < 0 {
				return max(x.ByteSize, 0)
			}
			return x.Count * elemStride(x)
		case *godwarf.TypedefType:
			if x.ByteSize > 0 || x.Type == nil {
				return x.ByteSize
			}
			t = x.Type
		case *godwarf.QualType:
			t = x.Type
		default:
			return t.Size()
		}
	}
	return 0
}

// elemStride returns an array's element size.
func elemStride(t *godwarf.ArrayType) int64 {
	if t.StrideBitSize > 0 {
		return t.StrideBitSize / 8
	}
	return sizeOf(t.Type)
}

func (c *evalCtx) formatArray(v value, t *godwarf.ArrayType, depth int) string {
	if depth >= maxDepth {
		return "{...}"
	}
	n := t.Count
	if n < 0 {
		n = 0
	}
	if !c.isGo {
		if e := resolve(t.Type); sizeOf(e) == 1 {
			switch e.(type) {
			case *godwarf.CharType, *godwarf.UcharType:
				return c.charArray(v, n)
			}
		}
	}
	return c.formatElems(v, t.Type, elemStride(t), n, depth)
}

// charArray formats a char array as gdb does: as a string, without one
// trailing NUL.
func (c *evalCtx) charArray(v value, n int64) string {
	b, err := c.bytes(c.sub(v, 0, &godwarf.ArrayType{CommonType: godwarf.CommonType{ByteSize: min(n, maxString)}, Type: &godwarf.UcharType{}, Count: min(n, maxString)}))
	if err != nil {
		return errString(err)
	}
	if int64(len(b)) == n && n > 0 && b[n-1] == 0 {
		b = b[:n-1]
	}
	s := cString(b)
	if n > maxString {
		s += "..."
	}
	return s
}

// formatElems formats n elements of type et at v with the given stride.
func (c *evalCtx) formatElems(v value, et godwarf.Type, stride, n int64, depth int) string {
	var elems []string
	for i := int64(0); i < n && i < maxElems; i++ {
		elems = append(elems, c.format(c.sub(v, i*stride, et), depth+1))
	}
	var parts []string
	for i := 0; i < len(elems); {
		j := i
		for j < len(elems) && elems[j] == elems[i] {
			j++
		}
		if !c.isGo && j-i > repeatLimit {
			parts = append(parts, fmt.Sprintf("%s <repeats %d times>", elems[i], j-i))
		} else {
			parts = append(parts, elems[i:j]...)
		}
		i = j
	}
	s := strings.Join(parts, ", ")
	if n > maxElems {
		s += "..."
	}
	if c.isGo {
		return "[" + s + "]"
	}
	return "{" + s + "}"
}

// hasChildren tells whether a value expands.
func (c *evalCtx) hasChildren(v value) bool {
	switch t := resolve(v.typ).(type) {
	case *godwarf.StringType:
		return false
	case *godwarf.SliceType:
		n, _, _, err := c.sliceHeader(v)
		return err == nil && n > 0
	case *godwarf.MapType:
		n, err := c.mapLen(v)
		return err == nil && n > 0
	case *godwarf.InterfaceType:
		w, err := c.uint(c.sub(v, 0, ptrType))
		return err == nil && w != 0
	case *godwarf.StructType:
		if ct, ok := c.cxxContainer(v); ok {
			return ct.hasChildren()
		}
		return len(t.Field) > 0 || !c.isGo && c.img != nil && len(c.img.structInfo(t).bases) > 0
	case *godwarf.ArrayType:
		return t.Count > 0
	case *godwarf.PtrType:
		switch e := resolve(t.Type).(type) {
		case nil, *godwarf.VoidType, *godwarf.FuncType:
			return false
		case *godwarf.CharType, *godwarf.UcharType:
			if !c.isGo && sizeOf(e) == 1 {
				return false
			}
		}
		a, err := c.uint(v)
		return err == nil && a != 0
	}
	return false
}

// ptrType is an untyped 8-byte pointer.
var ptrType = &godwarf.PtrType{CommonType: godwarf.CommonType{ByteSize: 8, Name: "unsafe.Pointer"}, Type: &godwarf.VoidType{}}

// children expands a value.
func (c *evalCtx) children(v value, name string) []*Variable {
	var out []*Variable
	switch t := resolve(v.typ).(type) {
	case *godwarf.SliceType:
		n, _, arr, err := c.sliceHeader(v)
		if err != nil {
			return nil
		}
		base := value{typ: t.ElemType, addr: arr, inMem: true}
		for i := int64(0); i < n && i < MaxChildren; i++ {
			out = append(out, c.newVariable(fmt.Sprintf("[%d]", i), c.sub(base, i*sizeOf(t.ElemType), t.ElemType)))
		}
	case *godwarf.MapType:
		return c.mapChildren(v, t)
	case *godwarf.InterfaceType:
		if dv, _, err := c.ifaceValue(v); err == nil {
			out = append(out, c.newVariable("data", dv))
		}
	case *godwarf.StructType:
		if ct, ok := c.cxxContainer(v); ok {
			return c.containerChildren(ct, name)
		}
		c.load(&v)
		if !c.isGo && c.img != nil {
			// C++ base classes first, as gdb shows them: <Base> = {...}.
			for _, b := range c.img.structInfo(t).bases {
				out = append(out, c.newVariable("<"+b.name+">", c.sub(v, b.off, b.typ)))
			}
		}
		for i, f := range t.Field {
			out = append(out, c.newVariable(f.Name, c.fieldValue(v, t, i)))
		}
	case *godwarf.ArrayType:
		stride := elemStride(t)
		for i := int64(0); i < t.Count && i < MaxChildren; i++ {
			out = append(out, c.newVariable(fmt.Sprintf("[%d]", i), c.sub(v, i*stride, t.Type)))
		}
	case *godwarf.PtrType:
		target := c.deref(v, t.Type)
		if _, ok := resolve(t.Type).(*godwarf.StructType); ok && target.err == nil && !isGoSpecial(t.Type) {
			return c.children(target, name) // a pointer to a struct shows its fields
		}
		out = append(out, c.newVariable("*"+name, target))
	}
	return out
}

// isGoSpecial reports Go types godwarf gives a struct shape to.
func isGoSpecial(t godwarf.Type) bool {
	switch resolve(t).(type) {
	case *godwarf.StringType, *godwarf.SliceType:
		return true
	}
	return false
}
