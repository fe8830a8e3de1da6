package symbols

import (
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

// CType is a type of the program's DWARF.
type CType struct{ t godwarf.Type }

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
					return CType{ty}, true
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
		return CType{x.Type}
	case *godwarf.ArrayType:
		return CType{x.Type}
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

// Field finds a member of a struct, union or class (anonymous members
// looked into) and its offset from the start; bits is non-zero for a
// bit-field.
func (c CType) Field(name string) (ft CType, off int64, bits int64, ok bool) {
	st, isStruct := resolve(c.t).(*godwarf.StructType)
	if !isStruct {
		return CType{}, 0, 0, false
	}
	for _, f := range st.Field {
		if f.Name == name {
			return CType{f.Type}, f.ByteOffset, f.BitSize, true
		}
	}
	for _, f := range st.Field {
		if f.Name == "" {
			if t, off, bits, ok := (CType{f.Type}).Field(name); ok {
				return t, f.ByteOffset + off, bits, true
			}
		}
	}
	return CType{}, 0, 0, false
}
