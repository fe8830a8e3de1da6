package symbols

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"sort"
	"sync"
)

// unitIndex answers DWARF questions about single addresses of a module
// loaded with SymbolsOnly by indexing only the compile unit that covers
// each (found through .debug_aranges): its functions and its line
// table. A caller that names a few hundred addresses of a big module
// (ttd calls naming its call paths and call sites) saves walking every
// unit: libc's separate debug file took 0.5-0.6 s of CPU to index in
// full, a third of ttd calls over a 1e9-instruction gzip trace.
type unitIndex struct {
	once   sync.Once
	ok     bool        // the index answers: .debug_aranges was read
	ranges []unitRange // by lo
	// sec reads the module's DWARF sections (each decompressed once,
	// on first use; callers hold mu after load).
	sec      func(name string) []byte
	file     *elf.File
	lineData []byte
	lineStr  []byte
	info     []byte
	abbrev   []byte

	// full is all of the module's DWARF, opened only for a unit that
	// refers outside itself (unitData), with fullVersions.
	full         *dwarf.Data
	fullOpened   bool
	fullVersions [][2]uint64

	mu    sync.Mutex
	units map[dwarf.Offset]*image // one compile unit each (nil: malformed)
}

// unitRange is an address range of a compile unit, at its link address.
type unitRange struct {
	lo, hi uint64
	off    dwarf.Offset // the unit's header in .debug_info
}

// load reads .debug_aranges; a module without DWARF or aranges has no
// index (every answer then comes from the ELF symbols). The DWARF is
// opened unit by unit (unitData): debug/dwarf.New over all of libc's
// .debug_info parsed every unit's header and abbreviations (18 MB of
// allocations, 0.1 s of ttd calls over a 1e9-instruction gzip trace)
// for the few units a call tree names.
func (u *unitIndex) load(img *image) {
	if img.dwFile == nil {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			u.ok, u.ranges = false, nil
		}
	}()
	sec := img.sections()
	ranges, err := parseAranges(sec("aranges"))
	if err != nil || len(ranges) == 0 {
		return
	}
	u.info, u.abbrev = sec("info"), sec("abbrev")
	if u.info == nil || u.abbrev == nil {
		return
	}
	u.ok, u.ranges, u.sec, u.file = true, ranges, sec, img.dwFile
	u.lineData, u.lineStr = sec("line"), sec("line_str")
	u.units = map[dwarf.Offset]*image{}
}

// unitData is the DWARF to index the unit at off with, the offset of the
// unit's first entry in it and its units' versions: a Data over that
// unit alone, unless the unit may refer to entries of other units (a
// DW_FORM_ref_addr, or a form unitRefersOut does not know), or the
// module is relocatable; then all of the module's DWARF.
func (u *unitIndex) unitData(off dwarf.Offset) (*dwarf.Data, dwarf.Offset, [][2]uint64, error) {
	if end, abbrevOff, ok := unitExtent(u.info, uint64(off)); ok && u.file.Type != elf.ET_REL &&
		!unitRefersOut(u.abbrev, abbrevOff) {
		b := u.info[off:end]
		dw, err := newDWARF(u.sec, b)
		if err != nil {
			return nil, 0, nil, err
		}
		first, err := firstEntry(b, 0)
		return dw, first, unitVersions(b), err
	}
	if !u.fullOpened {
		u.fullOpened = true
		u.full, _ = openDWARF(u.file, u.sec)
		u.fullVersions = unitVersions(u.info)
	}
	if u.full == nil {
		return nil, 0, nil, fmt.Errorf("no DWARF")
	}
	first, err := firstEntry(u.info, uint64(off))
	return u.full, first, u.fullVersions, err
}

// unitExtent is the end of the unit whose header is at off in info, and
// the offset of its abbreviations in .debug_abbrev (DWARF 2 to 5).
func unitExtent(info []byte, off uint64) (end, abbrevOff uint64, ok bool) {
	le := binary.LittleEndian
	if off+4 > uint64(len(info)) {
		return 0, 0, false
	}
	n, p, offSize := uint64(le.Uint32(info[off:])), off+4, uint64(4)
	if n == 0xffffffff {
		if off+12 > uint64(len(info)) {
			return 0, 0, false
		}
		n, p, offSize = le.Uint64(info[off+4:]), off+12, 8
	}
	if n > uint64(len(info))-p || n < 2+2+offSize {
		return 0, 0, false
	}
	end = p + n
	version := le.Uint16(info[p:])
	p += 2
	if version >= 5 {
		p += 2 // unit type and address size
	}
	if offSize == 8 {
		abbrevOff = le.Uint64(info[p:])
	} else {
		abbrevOff = uint64(le.Uint32(info[p:]))
	}
	return end, abbrevOff, version >= 2 && version <= 5
}

// unitRefersOut reports whether the abbreviation table at off in abbrev
// uses a form that may name an entry outside its unit (DW_FORM_ref_addr,
// the supplementary and alternate files' references) or one whose form
// is given only in the entry (DW_FORM_indirect); a table it cannot read
// counts as one that does.
func unitRefersOut(abbrev []byte, off uint64) bool {
	if off >= uint64(len(abbrev)) {
		return true
	}
	b := abbrev[off:]
	uleb := func() (uint64, bool) {
		var v uint64
		for shift := uint(0); len(b) > 0 && shift < 64; shift += 7 {
			c := b[0]
			b = b[1:]
			v |= uint64(c&0x7f) << shift
			if c < 0x80 {
				return v, true
			}
		}
		return 0, false
	}
	for {
		code, ok := uleb()
		if !ok {
			return true
		}
		if code == 0 {
			return false
		}
		if _, ok := uleb(); !ok || len(b) == 0 { // tag, children
			return true
		}
		b = b[1:]
		for {
			attr, ok1 := uleb()
			form, ok2 := uleb()
			if !ok1 || !ok2 {
				return true
			}
			if attr == 0 && form == 0 {
				break
			}
			switch form {
			case 0x10, 0x16, 0x1c, 0x24, 0x1f20: // ref_addr, indirect, ref_sup4, ref_sup8, GNU_ref_alt
				return true
			case 0x21: // implicit_const: its value follows
				if _, ok := uleb(); !ok {
					return true
				}
			}
		}
	}
}

// unitAt returns an image holding only the compile unit that covers pc
// (its functions and lines), or nil.
func (img *image) unitAt(pc uint64) *image {
	u := &img.units
	u.once.Do(func() { u.load(img) })
	if !u.ok || pc < img.bias {
		return nil
	}
	a := pc - img.bias
	i := sort.Search(len(u.ranges), func(i int) bool { return u.ranges[i].lo > a }) - 1
	for j := i; j >= 0 && j > i-8; j-- { // ranges seldom nest: look a few back
		if a < u.ranges[j].hi {
			return img.unit(u.ranges[j].off)
		}
	}
	return nil
}

// unit is the image of the compile unit at off, indexed on first use.
func (img *image) unit(off dwarf.Offset) *image {
	u := &img.units
	u.mu.Lock()
	defer u.mu.Unlock()
	if one, ok := u.units[off]; ok {
		return one
	}
	one := &image{path: img.path, debugPath: img.debugPath, file: img.file, dwFile: img.dwFile, dwRaw: img.dwRaw,
		bias: img.bias, loadAddr: img.loadAddr, lo: img.lo, hi: img.hi, segs: img.segs,
		funcNames: map[string]*function{}, globals: map[string]*globalVar{}, lineStr: u.lineStr}
	if err := one.walkOne(off, u); err != nil {
		one = nil
	}
	u.units[off] = one
	return one
}

// walkOne indexes the unit at off; a malformed one is an error.
func (img *image) walkOne(off dwarf.Offset, u *unitIndex) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed: %v", r)
		}
	}()
	dw, first, versions, err := u.unitData(off)
	if err != nil {
		return err
	}
	img.dwarf = dw
	return img.walkUnits(first, u.lineData, versions, true)
}

// firstEntry is the offset of the first entry of the unit whose header
// is at off in .debug_info (a compile or partial unit, DWARF 2 to 5).
func firstEntry(info []byte, off uint64) (dwarf.Offset, error) {
	le := binary.LittleEndian
	if off+4 > uint64(len(info)) {
		return 0, fmt.Errorf("unit header at %#x beyond .debug_info", off)
	}
	p, offSize := off+4, uint64(4)
	if le.Uint32(info[off:]) == 0xffffffff {
		p, offSize = off+12, 8
	}
	if p+2 > uint64(len(info)) {
		return 0, fmt.Errorf("unit header at %#x beyond .debug_info", off)
	}
	version := le.Uint16(info[p:])
	p += 2
	if version >= 5 {
		p += 2 // unit type and address size
	} else {
		p++ // address size
	}
	return dwarf.Offset(p + offSize), nil
}

// dwarfAt is the image whose DWARF answers for pc: img itself once its
// DWARF is loaded, else (SymbolsOnly) the unit covering pc, else img.
func (img *image) dwarfAt(pc uint64) *image {
	if img.dwarf != nil {
		return img
	}
	if one := img.unitAt(pc); one != nil {
		return one
	}
	return img
}

// parseAranges reads .debug_aranges: each unit's address ranges (DWARF
// 2 to 5, 32- and 64-bit), sorted by start.
func parseAranges(b []byte) ([]unitRange, error) {
	var out []unitRange
	le := binary.LittleEndian
	for off := 0; off < len(b); {
		if off+4 > len(b) {
			return nil, fmt.Errorf(".debug_aranges: truncated at %#x", off)
		}
		n, hdr, wide := uint64(le.Uint32(b[off:])), 4, false
		if n == 0xffffffff {
			if off+12 > len(b) {
				return nil, fmt.Errorf(".debug_aranges: truncated at %#x", off)
			}
			n, hdr, wide = le.Uint64(b[off+4:]), 12, true
		}
		if n > uint64(len(b)-off-hdr) {
			return nil, fmt.Errorf(".debug_aranges: set at %#x overruns the section", off)
		}
		set := b[off+hdr : off+hdr+int(n)]
		start := off
		off += hdr + int(n)
		p := 2 // version
		var cu uint64
		if wide {
			if len(set) < p+8+2 {
				return nil, fmt.Errorf(".debug_aranges: short set at %#x", start)
			}
			cu, p = le.Uint64(set[p:]), p+8
		} else {
			if len(set) < p+4+2 {
				return nil, fmt.Errorf(".debug_aranges: short set at %#x", start)
			}
			cu, p = uint64(le.Uint32(set[p:])), p+4
		}
		addrSize, segSize := int(set[p]), int(set[p+1])
		p += 2
		if addrSize != 8 || segSize != 0 {
			return nil, fmt.Errorf(".debug_aranges: set at %#x has %d-byte addresses, %d-byte segments", start, addrSize, segSize)
		}
		// Tuples start at a multiple of twice the address size from
		// the set's start (its length field included).
		for (hdr+p)%16 != 0 {
			p++
		}
		for ; p+16 <= len(set); p += 16 {
			lo, size := le.Uint64(set[p:]), le.Uint64(set[p+8:])
			if lo == 0 && size == 0 {
				break
			}
			if size == 0 || lo == 0 {
				continue // empty, or discarded by the linker
			}
			out = append(out, unitRange{lo: lo, hi: lo + size, off: dwarf.Offset(cu)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].lo < out[j].lo })
	return out, nil
}
