package symbols

import (
	"debug/dwarf"
	"strings"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
)

// C types for probes: a script's casts to the program's types
// ((struct item *)arg0) and member accesses (->, .) are resolved once,
// before anything runs, to offsets, sizes and signedness.

// CKind classifies a C type as probes use it.
type CKind uint8

// C type kinds.
const (
	CInt     CKind = iota + 1 // integers, chars, bools, enums
	CFloat                    // float, double
	CPointer                  // pointers (Elem)
	CStruct                   // struct, union, class (Field)
	CArray                    // arrays (Elem, Len)
	COther                    // functions, void...
)

// CType is a type of the program's DWARF (d: the DWARF it comes from,
// for what godwarf does not keep: bit-fields' DW_AT_data_bit_offset).
type CType struct {
	t godwarf.Type
	d *dwarf.Data
}

// LookupCType finds a named type ("struct item", "item_t", "int") in
// the modules' DWARF, the main program's first.
func (t *Table) LookupCType(name string) (CType, bool) {
	name = strings.TrimSpace(name)
	alt := name
	for _, kw := range []string{"struct ", "union ", "class "} {
		alt = strings.TrimPrefix(alt, kw)
	}
	for _, img := range t.imageList() {
		for _, n := range []string{name, "class " + alt, "struct " + alt} {
			if off, ok := img.typeNames[n]; ok {
				if ty, err := img.readType(off); err == nil && ty != nil {
					return CType{ty, img.dwarf}, true
				}
			}
		}
	}
	return CType{}, false
}

// Valid reports whether c names a type.
func (c CType) Valid() bool { return c.t != nil }

// String is the type as DWARF names it.
func (c CType) String() string {
	if c.t == nil {
		return "void"
	}
	return c.t.String()
}

// Kind classifies the type, typedefs and qualifiers looked through.
func (c CType) Kind() CKind {
	switch x := resolve(c.t).(type) {
	case *godwarf.IntType, *godwarf.UintType, *godwarf.CharType, *godwarf.UcharType, *godwarf.BoolType, *godwarf.EnumType:
		return CInt
	case *godwarf.FloatType:
		return CFloat
	case *godwarf.PtrType:
		return CPointer
	case *godwarf.StructType:
		return CStruct
	case *godwarf.ArrayType:
		return CArray
	case nil:
		return COther
	default:
		_ = x
		return COther
	}
}

// Size is the type's size in bytes.
func (c CType) Size() int64 { return sizeOf(c.t) }

// Signed reports whether an integer type is signed.
func (c CType) Signed() bool {
	switch resolve(c.t).(type) {
	case *godwarf.IntType, *godwarf.EnumType:
		return true
	case *godwarf.CharType:
		return true
	}
	return false
}

// IsChar reports whether the type is a char (of a string).
func (c CType) IsChar() bool {
	switch resolve(c.t).(type) {
	case *godwarf.CharType, *godwarf.UcharType:
		return true
	case *godwarf.IntType, *godwarf.UintType:
		return c.Size() == 1 && strings.Contains(resolve(c.t).String(), "char")
	}
	return false
}

// Elem is what a pointer points to or an array holds.
func (c CType) Elem() CType {
	switch x := resolve(c.t).(type) {
	case *godwarf.PtrType:
		return CType{x.Type, c.d}
	case *godwarf.ArrayType:
		return CType{x.Type, c.d}
	}
	return CType{}
}

// Len is an array's number of elements (-1 when unknown).
func (c CType) Len() int64 {
	if a, ok := resolve(c.t).(*godwarf.ArrayType); ok {
		return a.Count
	}
	return -1
}

// IsFloat reports a floating-point type (float, double); Size tells
// which.
func (c CType) IsFloat() bool { return c.Kind() == CFloat }

// CMember is a member of a struct, union or class.
type CMember struct {
	Type CType
	// Offset is its byte offset from the start of the struct; for a
	// bit-field, BitSize is non-zero and BitPos is the position of its
	// lowest bit from the start of the struct, in bits (little-endian
	// numbering, as x86 lays bit-fields out).
	Offset  int64
	BitPos  int64
	BitSize int64
}

// Field finds a member of a struct, union or class (anonymous members
// looked into).
func (c CType) Field(name string) (CMember, bool) {
	st, isStruct := resolve(c.t).(*godwarf.StructType)
	if !isStruct {
		return CMember{}, false
	}
	for _, f := range st.Field {
		if f.Name == name {
			m := CMember{Type: CType{f.Type, c.d}, Offset: f.ByteOffset, BitSize: f.BitSize}
			if f.BitSize != 0 {
				m.BitPos = c.bitPos(st, f)
				m.Offset = m.BitPos / 8
			}
			return m, true
		}
	}
	for _, f := range st.Field {
		if f.Name == "" {
			if m, ok := (CType{f.Type, c.d}).Field(name); ok {
				m.Offset += f.ByteOffset
				m.BitPos += f.ByteOffset * 8
				return m, true
			}
		}
	}
	return CMember{}, false
}

// bitPos is the position of bit-field f's lowest bit in struct st.
// DWARF 2/3 give DW_AT_bit_offset, counted from the most significant bit
// of the ByteSize bytes at ByteOffset; DWARF 4 and 5 (gcc 11 and later)
// give DW_AT_data_bit_offset from the start of the struct, which godwarf
// does not read: it is read here from the member's entry.
func (c CType) bitPos(st *godwarf.StructType, f *godwarf.StructField) int64 {
	if f.BitOffset != 0 || c.d == nil {
		size := f.ByteSize
		if size == 0 {
			size = sizeOf(f.Type)
		}
		return f.ByteOffset*8 + size*8 - f.BitOffset - f.BitSize
	}
	r := c.d.Reader()
	r.Seek(st.Offset)
	e, err := r.Next()
	if err != nil || e == nil || !e.Children {
		return f.ByteOffset * 8
	}
	for {
		kid, err := r.Next()
		if err != nil || kid == nil || kid.Tag == 0 {
			break
		}
		if kid.Tag == dwarf.TagMember {
			if n, _ := kid.Val(dwarf.AttrName).(string); n == f.Name {
				if v, ok := kid.Val(dwarf.AttrDataBitOffset).(int64); ok {
					return v
				}
				if v, ok := kid.Val(dwarf.AttrBitOffset).(int64); ok {
					size := f.ByteSize
					if size == 0 {
						size = sizeOf(f.Type)
					}
					return f.ByteOffset*8 + size*8 - v - f.BitSize
				}
				break
			}
		}
		if kid.Children {
			r.SkipChildren()
		}
	}
	return f.ByteOffset * 8
}
