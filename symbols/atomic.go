package symbols

import (
	"debug/dwarf"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
)

// tagAtomicType is DW_TAG_atomic_type (DWARF 5), which C11's _Atomic
// produces and godwarf does not know: it reads it as an UnsupportedType
// without the qualified type, and such a value was unreadable ("value
// too large").
const tagAtomicType dwarf.Tag = 0x47

// fixTypes replaces, in the type graph reachable from t, every
// _Atomic placeholder by a qualifier on the type it qualifies, as
// const and volatile are. Each node is visited once per image (the
// type cache is shared). The caller holds img.typeMu.
func (img *image) fixTypes(t godwarf.Type) godwarf.Type {
	if img.typeSeen == nil {
		img.typeSeen = map[godwarf.Type]bool{}
	}
	return img.fixType(t, 0)
}

func (img *image) fixType(t godwarf.Type, depth int) godwarf.Type {
	if t == nil || depth > 64 {
		return t
	}
	if u, ok := t.(*godwarf.UnsupportedType); ok && u.Tag == tagAtomicType {
		if q := img.atomicQual(u); q != nil {
			return q
		}
		return t
	}
	if img.typeSeen[t] {
		return t
	}
	img.typeSeen[t] = true
	switch x := t.(type) {
	case *godwarf.PtrType:
		x.Type = img.fixType(x.Type, depth+1)
	case *godwarf.TypedefType:
		x.Type = img.fixType(x.Type, depth+1)
	case *godwarf.QualType:
		x.Type = img.fixType(x.Type, depth+1)
	case *godwarf.ArrayType:
		x.Type = img.fixType(x.Type, depth+1)
	case *godwarf.StructType:
		for _, f := range x.Field {
			f.Type = img.fixType(f.Type, depth+1)
		}
	}
	return t
}

// atomicQual reads the type an atomic placeholder qualifies.
func (img *image) atomicQual(u *godwarf.UnsupportedType) godwarf.Type {
	r := img.dwarf.Reader()
	r.Seek(u.Offset)
	e, err := r.Next()
	if err != nil || e == nil || e.Tag != tagAtomicType {
		return nil
	}
	off, ok := e.Val(dwarf.AttrType).(dwarf.Offset)
	if !ok {
		return nil
	}
	inner, err := godwarf.ReadType(img.dwarf, 0, off, img.typeCache)
	if err != nil {
		return nil
	}
	q := &godwarf.QualType{Qual: "_Atomic", Type: img.fixType(inner, 1)}
	q.Offset = u.Offset
	q.ByteSize = inner.Size()
	img.typeCache[u.Offset] = q
	return q
}
