package symbols

import (
	"debug/dwarf"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
)

// Go runtime layouts read here (internal/abi, internal/runtime/maps), the
// ones delve reads too.
const (
	abiTypeTFlag     = 20 // abi.Type.TFlag
	abiTypeKind      = 23 // abi.Type.Kind_
	abiTypeStr       = 40 // abi.Type.Str (a NameOff)
	tflagExtraStar   = 1 << 1
	directIfaceBit   = 1 << 5 // TFlagDirectIface (Go 1.26), KindDirectIface before
	itabType         = 8      // abi.ITab.Type
	swissGroupSlots  = 8
	swissCtrlEmptyHi = 0x80 // ctrl bytes of empty and deleted slots have the high bit set
	maxMapGroups     = 1 << 14
)

var errNilInterface = errors.New("nil interface")

// field returns the named field of a struct type.
func field(st *godwarf.StructType, name string) *godwarf.StructField {
	for _, f := range st.Field {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func (c *evalCtx) fieldUint(v value, st *godwarf.StructType, name string) (uint64, error) {
	f := field(st, name)
	if f == nil {
		return 0, fmt.Errorf("runtime type %s has no field %s", st.StructName, name)
	}
	return c.uint(c.sub(v, f.ByteOffset, f.Type))
}

// goString formats a Go string.
func (c *evalCtx) goString(v value) string {
	st := &resolve(v.typ).(*godwarf.StringType).StructType
	c.load(&v)
	ptr, err := c.fieldUint(v, st, "str")
	if err != nil {
		return errString(err)
	}
	n, err := c.fieldUint(v, st, "len")
	if err != nil {
		return errString(err)
	}
	if n == 0 {
		return `""`
	}
	show := min(n, 512)
	b, known, err := c.read(ptr, int(show))
	if err != nil {
		return errString(err)
	}
	for i := range known {
		if !known[i] {
			return strconv.Quote(string(b[:i])) + "<unknown>"
		}
	}
	s := strconv.Quote(string(b))
	if n > show {
		s += fmt.Sprintf("...+%d more", n-show)
	}
	return s
}

// sliceHeader returns a slice's length, capacity and array address.
func (c *evalCtx) sliceHeader(v value) (n, capacity int64, array uint64, err error) {
	st := &resolve(v.typ).(*godwarf.SliceType).StructType
	c.load(&v)
	a, err := c.fieldUint(v, st, "array")
	if err != nil {
		return 0, 0, 0, err
	}
	l, err := c.fieldUint(v, st, "len")
	if err != nil {
		return 0, 0, 0, err
	}
	cp, err := c.fieldUint(v, st, "cap")
	if err != nil {
		return 0, 0, 0, err
	}
	if int64(l) < 0 || l > cp {
		return 0, 0, 0, fmt.Errorf("bad slice header len %d cap %d", l, cp)
	}
	return int64(l), int64(cp), a, nil
}

func (c *evalCtx) goSlice(v value, t *godwarf.SliceType, depth int) string {
	n, cp, arr, err := c.sliceHeader(v)
	if err != nil {
		return errString(err)
	}
	s := fmt.Sprintf("len: %d, cap: %d, ", n, cp)
	if arr == 0 {
		return s + "nil"
	}
	if depth >= maxDepth {
		return s + "[...]"
	}
	base := value{typ: t.ElemType, addr: arr, inMem: true}
	return s + c.formatElems(base, t.ElemType, sizeOf(t.ElemType), n, depth)
}

// mapHeader returns the runtime map header a map value points to.
func (c *evalCtx) mapHeader(v value, mt *godwarf.MapType) (value, *godwarf.StructType, error) {
	pt, ok := resolve(mt.TypedefType.Type).(*godwarf.PtrType)
	if !ok {
		return value{}, nil, errors.New("unexpected map representation")
	}
	st, ok := resolve(pt.Type).(*godwarf.StructType)
	if !ok {
		return value{}, nil, errors.New("unexpected map header type")
	}
	h := c.deref(value{typ: pt, addr: v.addr, inMem: v.inMem, data: v.data, known: v.known}, st)
	if h.err != nil {
		return h, st, h.err
	}
	c.load(&h)
	return h, st, h.err
}

// mapLen returns the number of entries of a Go map.
func (c *evalCtx) mapLen(v value) (int64, error) {
	mt := resolve(v.typ).(*godwarf.MapType)
	p, err := c.uint(v)
	if err != nil || p == 0 {
		return 0, err
	}
	h, st, err := c.mapHeader(v, mt)
	if err != nil {
		return 0, err
	}
	name := "used" // swiss tables (Go 1.24+)
	if field(st, name) == nil {
		name = "count" // hmap
	}
	n, err := c.fieldUint(h, st, name)
	return int64(n), err
}

type mapEntry struct{ key, elem value }

// mapEntries walks a swiss-table map (Go 1.24+) as delve does and returns
// up to limit entries in table order.
func (c *evalCtx) mapEntries(v value, mt *godwarf.MapType, limit int) ([]mapEntry, error) {
	if p, err := c.uint(v); err != nil || p == 0 {
		return nil, err
	}
	h, st, err := c.mapHeader(v, mt)
	if err != nil {
		return nil, err
	}
	dirF := field(st, "dirPtr")
	if dirF == nil {
		return nil, errors.New("map layout before Go 1.24: entries not shown")
	}
	tablePP, _ := resolve(dirF.Type).(*godwarf.PtrType)
	if tablePP == nil {
		return nil, errors.New("unexpected dirPtr type")
	}
	tableP, _ := resolve(tablePP.Type).(*godwarf.PtrType)
	if tableP == nil {
		return nil, errors.New("unexpected dirPtr type")
	}
	tableT, _ := resolve(tableP.Type).(*godwarf.StructType)
	groupsF := field(tableT, "groups")
	if tableT == nil || groupsF == nil {
		return nil, errors.New("unexpected table type")
	}
	groupsT, _ := resolve(groupsF.Type).(*godwarf.StructType)
	dataF, maskF := field(groupsT, "data"), field(groupsT, "lengthMask")
	if groupsT == nil || dataF == nil || maskF == nil {
		return nil, errors.New("unexpected groups type")
	}
	groupP, _ := resolve(dataF.Type).(*godwarf.PtrType)
	groupT, _ := resolve(groupP.Type).(*godwarf.StructType)
	if groupT == nil {
		return nil, errors.New("unexpected group type")
	}
	dir, err := c.uint(c.sub(h, dirF.ByteOffset, ptrType))
	if err != nil {
		return nil, err
	}
	dirLen, err := c.fieldUint(h, st, "dirLen")
	if err != nil {
		return nil, err
	}
	var groups []uint64
	if dirLen == 0 {
		groups = append(groups, dir) // a small map: dirPtr is one group
	}
	for i := uint64(0); i < dirLen && i < maxMapGroups; i++ {
		tp, err := c.uint(value{typ: ptrType, addr: dir + 8*i, inMem: true})
		if err != nil {
			return nil, err
		}
		tab := value{typ: tableT, addr: tp, inMem: true}
		c.load(&tab)
		if idx, err := c.fieldUint(tab, tableT, "index"); err != nil || idx != i {
			continue // the same table fills several directory slots
		}
		g := c.sub(tab, groupsF.ByteOffset, groupsT)
		data, err1 := c.fieldUint(g, groupsT, "data")
		mask, err2 := c.fieldUint(g, groupsT, "lengthMask")
		if err1 != nil || err2 != nil {
			return nil, errors.Join(err1, err2)
		}
		for j := uint64(0); j <= mask && len(groups) < maxMapGroups; j++ {
			groups = append(groups, data+j*uint64(sizeOf(groupT)))
		}
	}
	return c.groupEntries(groups, groupT, mt, limit)
}

// groupEntries reads the full slots of swiss-table groups.
func (c *evalCtx) groupEntries(groups []uint64, groupT *godwarf.StructType, mt *godwarf.MapType, limit int) ([]mapEntry, error) {
	ctrlF := field(groupT, "ctrl")
	slotsF := field(groupT, "slots")
	keysF, elemsF := field(groupT, "keys"), field(groupT, "elems")
	if ctrlF == nil || slotsF == nil && (keysF == nil || elemsF == nil) {
		return nil, errors.New("unexpected group layout")
	}
	var out []mapEntry
	for _, ga := range groups {
		g := value{typ: groupT, addr: ga, inMem: true}
		c.load(&g)
		ctrl, err := c.bytes(c.sub(g, ctrlF.ByteOffset, ctrlF.Type))
		if err != nil {
			return out, err
		}
		for s := 0; s < swissGroupSlots && s < len(ctrl); s++ {
			if ctrl[s]&swissCtrlEmptyHi != 0 {
				continue
			}
			var k, e value
			if slotsF != nil {
				arr, _ := resolve(slotsF.Type).(*godwarf.ArrayType)
				slotT, _ := resolve(arr.Type).(*godwarf.StructType)
				kf, ef := field(slotT, "key"), field(slotT, "elem")
				if kf == nil || ef == nil {
					return out, errors.New("unexpected slot layout")
				}
				slot := c.sub(g, slotsF.ByteOffset+int64(s)*elemStride(arr), slotT)
				k, e = c.sub(slot, kf.ByteOffset, kf.Type), c.sub(slot, ef.ByteOffset, ef.Type)
			} else {
				ka, _ := resolve(keysF.Type).(*godwarf.ArrayType)
				ea, _ := resolve(elemsF.Type).(*godwarf.ArrayType)
				k = c.sub(g, keysF.ByteOffset+int64(s)*elemStride(ka), ka.Type)
				e = c.sub(g, elemsF.ByteOffset+int64(s)*elemStride(ea), ea.Type)
			}
			out = append(out, mapEntry{c.indirect(k, mt.KeyType), c.indirect(e, mt.ElemType)})
			if len(out) >= limit {
				return out, nil
			}
		}
	}
	return out, nil
}

// indirect dereferences a map slot that holds a pointer to a key or
// element too large to store inline.
func (c *evalCtx) indirect(v value, want godwarf.Type) value {
	if _, isPtr := resolve(v.typ).(*godwarf.PtrType); isPtr {
		if _, wantPtr := resolve(want).(*godwarf.PtrType); !wantPtr {
			return c.deref(v, want)
		}
	}
	return v
}

func (c *evalCtx) goMap(v value, mt *godwarf.MapType, depth int) string {
	p, err := c.uint(v)
	if err != nil {
		return errString(err)
	}
	if p == 0 {
		return "nil"
	}
	n, err := c.mapLen(v)
	if err != nil {
		return errString(err)
	}
	s := fmt.Sprintf("len: %d", n)
	if depth >= maxDepth || n == 0 {
		return s
	}
	es, err := c.mapEntries(v, mt, maxElems)
	if err != nil {
		return s + ", " + errString(err)
	}
	var parts []string
	for _, e := range es {
		parts = append(parts, c.format(e.key, depth+1)+": "+c.format(e.elem, depth+1))
	}
	if n > int64(len(es)) {
		parts = append(parts, "...")
	}
	return s + ", [" + strings.Join(parts, ", ") + "]"
}

func (c *evalCtx) mapChildren(v value, mt *godwarf.MapType) []*Variable {
	es, err := c.mapEntries(v, mt, MaxChildren)
	if err != nil {
		return []*Variable{{Name: "error", Value: errString(err)}}
	}
	var out []*Variable
	for _, e := range es {
		out = append(out, c.newVariable("["+c.format(e.key, maxDepth-1)+"]", e.elem))
	}
	return out
}

// ifaceValue returns the dynamic value of a Go interface and its type's
// name.
func (c *evalCtx) ifaceValue(v value) (value, string, error) {
	c.load(&v)
	w0, err := c.uint(c.sub(v, 0, ptrType))
	if err != nil {
		return value{}, "", err
	}
	data := c.sub(v, 8, ptrType)
	if w0 == 0 {
		return value{}, "", errNilInterface
	}
	rtype := w0
	if st, ok := resolve(resolve(v.typ).(*godwarf.InterfaceType).Type).(*godwarf.StructType); ok && len(st.Field) > 0 && st.Field[0].Name == "tab" {
		if rtype, err = c.uint(value{typ: ptrType, addr: w0 + itabType, inMem: true}); err != nil {
			return value{}, "", err
		}
	}
	img := c.t.imageFor(rtype)
	name := c.runtimeTypeName(img, rtype)
	var off dwarf.Offset
	if img != nil && img.symNames["runtime.types"] != nil {
		off = img.rtypes[rtype-img.symNames["runtime.types"].addr]
	}
	if off == 0 {
		return value{}, name, fmt.Errorf("no DWARF for dynamic type %s", name)
	}
	dyn, err := img.readType(off)
	if err != nil {
		return value{}, name, err
	}
	if name == "" {
		name = (&evalCtx{isGo: true}).typeName(dyn)
	}
	direct := pointerShaped(dyn)
	if fl, unknown, err := c.read(rtype+abiTypeTFlag, 4); err == nil && unknown == nil {
		direct = fl[0]&directIfaceBit != 0 || fl[abiTypeKind-abiTypeTFlag]&directIfaceBit != 0
	}
	if direct {
		w, err := c.bytes(data)
		if err != nil {
			return value{}, name, err
		}
		return value{typ: dyn, data: fit(append([]byte(nil), w...), sizeOf(dyn))}, name, nil
	}
	return c.deref(data, dyn), name, nil
}

// pointerShaped reports a type Go stores directly in an interface word.
func pointerShaped(t godwarf.Type) bool {
	switch t := resolve(t).(type) {
	case *godwarf.PtrType, *godwarf.MapType, *godwarf.ChanType, *godwarf.FuncType:
		return true
	case *godwarf.StructType:
		return len(t.Field) == 1 && pointerShaped(t.Field[0].Type)
	case *godwarf.ArrayType:
		return t.Count == 1 && pointerShaped(t.Type)
	}
	return false
}

// runtimeTypeName reads a type's name from its runtime descriptor.
func (c *evalCtx) runtimeTypeName(img *image, rtype uint64) string {
	if img == nil {
		return ""
	}
	types := img.symNames["runtime.types"]
	if types == nil {
		return ""
	}
	hdr, known, err := c.read(rtype+abiTypeTFlag, abiTypeStr+4-abiTypeTFlag)
	if err != nil || known != nil {
		return ""
	}
	off := int32(binary.LittleEndian.Uint32(hdr[abiTypeStr-abiTypeTFlag:]))
	b, known, err := c.read(types.addr+uint64(int64(off)), 3)
	if err != nil || known != nil {
		return ""
	}
	n, w := binary.Uvarint(b[1:])
	if w <= 0 || n > 1<<12 {
		return ""
	}
	s, known, err := c.read(types.addr+uint64(int64(off))+1+uint64(w), int(n))
	if err != nil || known != nil {
		return ""
	}
	name := string(s)
	if hdr[0]&tflagExtraStar != 0 && strings.HasPrefix(name, "*") {
		name = name[1:]
	}
	return name
}

func (c *evalCtx) goInterface(v value, depth int) string {
	dv, name, err := c.ifaceValue(v)
	if errors.Is(err, errNilInterface) {
		return "nil"
	}
	if err != nil {
		if name != "" {
			return name + " " + errString(err)
		}
		return errString(err)
	}
	return name + "(" + c.format(dv, depth+1) + ")"
}

// goFunc formats a Go func value: the name of the function its closure
// calls.
func (c *evalCtx) goFunc(v value) string {
	p, err := c.uint(v)
	if err != nil {
		return errString(err)
	}
	if p == 0 {
		return "nil"
	}
	pc, err := c.uint(value{typ: ptrType, addr: p, inMem: true})
	if err != nil {
		return fmt.Sprintf("%#x", p)
	}
	if name, _, ok := c.t.PCToFunc(pc); ok {
		return name
	}
	return fmt.Sprintf("%#x", pc)
}
