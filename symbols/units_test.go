package symbols

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"testing"
)

// TestUnitLookupsMatchDWARF checks that a SymbolsOnly table, indexing
// only the compile unit of each address asked about, names functions and
// lines exactly as the table with all its DWARF loaded, and loads no
// module's DWARF in full.
func TestUnitLookupsMatchDWARF(t *testing.T) {
	f := getFixture(t, "c-O0")
	tab := symbolsOnly(t, f)
	dwarfFuncs, lines, checked := 0, 0, 0
	for _, s := range tab.FuncSymbols() {
		for _, pc := range []uint64{s.Addr, s.Addr + 1, s.Addr + 4, s.Addr + s.Size/2, s.Addr + s.Size - 1} {
			want, wok := f.table.FuncForPC(pc)
			got, gok := tab.UnitFuncForPC(pc)
			if want != got || wok != gok {
				t.Errorf("%s %#x: UnitFuncForPC = %+v, %v; FuncForPC with DWARF = %+v, %v", s.Name, pc, got, gok, want, wok)
			}
			wf, wl, wok := f.table.PCToLine(pc)
			gf, gl, gok := tab.UnitPCToLine(pc)
			if wf != gf || wl != gl || wok != gok {
				t.Errorf("%s %#x: UnitPCToLine = %s:%d %v; PCToLine with DWARF = %s:%d %v", s.Name, pc, gf, gl, gok, wf, wl, wok)
			}
			checked++
			if want.DWARF {
				dwarfFuncs++
			}
			if wok {
				lines++
			}
		}
	}
	if dwarfFuncs == 0 || lines == 0 {
		t.Fatalf("%d addresses, %d in DWARF functions, %d with lines: the test tests nothing", checked, dwarfFuncs, lines)
	}
	t.Logf("%d addresses, %d in DWARF functions, %d with lines", checked, dwarfFuncs, lines)
	for _, m := range tab.Modules() {
		if m.HasDWARF {
			t.Errorf("%s: all its DWARF loaded for unit lookups", m.Path)
		}
	}
	// Each unit was opened alone (unitData), none through the whole
	// .debug_info.
	units := 0
	for _, img := range tab.images {
		u := &img.units
		if u.fullOpened {
			t.Errorf("%s: all of .debug_info opened for unit lookups", img.path)
		}
		for _, one := range u.units {
			if one != nil {
				units++
			}
		}
	}
	if units == 0 {
		t.Errorf("no compile unit indexed")
	}
}

// TestUnitRefersOut reads abbreviation tables: a unit whose entries may
// refer to another unit's (DW_FORM_ref_addr, indirect forms, the
// supplementary file's) is indexed with all of the module's DWARF, one
// that refers only within itself alone.
func TestUnitRefersOut(t *testing.T) {
	// abbrev: code 1, DW_TAG_compile_unit (0x11), children, name/strp,
	// then the attribute of the case, then the table's end.
	table := func(attrs ...byte) []byte {
		b := []byte{1, 0x11, 1, 0x03, 0x0e}
		b = append(b, attrs...)
		return append(b, 0, 0, 0)
	}
	for _, tc := range []struct {
		name   string
		abbrev []byte
		off    uint64
		out    bool
	}{
		{"ref4 only", table(0x31, 0x13), 0, false},
		{"implicit_const", table(0x3b, 0x21, 0x05), 0, false},
		{"ref_addr", table(0x31, 0x10), 0, true},
		{"implicit_const then ref_addr", table(0x3b, 0x21, 0x7f, 0x31, 0x10), 0, true},
		{"indirect", table(0x49, 0x16), 0, true},
		{"GNU_ref_alt", table(0x31, 0xa0, 0x3e), 0, true},
		{"second abbreviation", append([]byte{2, 0x2e, 0, 0x31, 0x13, 0, 0}, table(0x31, 0x10)...), 0, true},
		{"table at an offset", append([]byte{9, 9, 9}, table(0x31, 0x13)...), 3, false},
		{"truncated", table(0x31, 0x13)[:6], 0, true},
		{"offset beyond", table(0x31, 0x13), 100, true},
	} {
		if got := unitRefersOut(tc.abbrev, tc.off); got != tc.out {
			t.Errorf("%s: unitRefersOut = %v, want %v", tc.name, got, tc.out)
		}
	}
}

// TestParseAranges reads address ranges of 32- and 64-bit sets, skips
// empty ones and rejects a set that overruns the section.
func TestParseAranges(t *testing.T) {
	le := binary.LittleEndian
	set := func(wide bool, cu uint64, ranges ...[2]uint64) []byte {
		var body bytes.Buffer
		binary.Write(&body, le, uint16(2))
		if wide {
			binary.Write(&body, le, cu)
		} else {
			binary.Write(&body, le, uint32(cu))
		}
		body.Write([]byte{8, 0})
		hdr := 4
		if wide {
			hdr = 12
		}
		for (hdr+body.Len())%16 != 0 {
			body.WriteByte(0)
		}
		for _, r := range append(ranges, [2]uint64{}) {
			binary.Write(&body, le, r)
		}
		var out bytes.Buffer
		if wide {
			binary.Write(&out, le, uint32(0xffffffff))
			binary.Write(&out, le, uint64(body.Len()))
		} else {
			binary.Write(&out, le, uint32(body.Len()))
		}
		out.Write(body.Bytes())
		return out.Bytes()
	}
	b := append(set(false, 0x40, [2]uint64{0x2000, 0x10}, [2]uint64{0x1000, 0}), set(true, 0x80, [2]uint64{0x1000, 0x20})...)
	got, err := parseAranges(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []unitRange{{0x1000, 0x1020, 0x80}, {0x2000, 0x2010, 0x40}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("parseAranges = %+v, want %+v", got, want)
	}
	if _, err := parseAranges(b[:len(b)-3]); err == nil {
		t.Errorf("a truncated section parsed")
	}
	if e, err := firstEntry(b, 0); err != nil || e != 11 {
		t.Errorf("firstEntry of a DWARF 2 header = %d, %v; want 11", e, err)
	}
}

// TestEntryLabelIsAFunction: the dynamic loader's _start, a label with
// no symbol type, names the code at its entry point (the root of every
// dynamically linked program's call tree).
func TestEntryLabelIsAFunction(t *testing.T) {
	const ldso = "/lib64/ld-linux-x86-64.so.2"
	f, err := elf.Open(ldso)
	if err != nil {
		t.Skip(err)
	}
	entry := f.Entry
	f.Close()
	const base = 0x7f0000000000
	tab, err := Load([]Module{{Path: ldso, LoadAddr: base, SymbolsOnly: true}})
	if err != nil {
		t.Fatal(err)
	}
	if name, e, ok := tab.PCToFunc(base + entry); !ok || e != base+entry || name != "_start" {
		t.Errorf("PCToFunc(entry) = %q, %#x, %v; want _start at %#x", name, e, ok, base+entry)
	}
}
