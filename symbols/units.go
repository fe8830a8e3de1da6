package symbols

import (
	"debug/dwarf"
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
	once     sync.Once
	dw       *dwarf.Data
	ranges   []unitRange // by lo
	lineData []byte
	lineStr  []byte
	info     []byte
	versions [][2]uint64

	mu    sync.Mutex
	units map[dwarf.Offset]*image // one compile unit each (nil: malformed)
}

// unitRange is an address range of a compile unit, at its link address.
type unitRange struct {
	lo, hi uint64
	off    dwarf.Offset // the unit's header in .debug_info
}

// load opens the module's DWARF and reads .debug_aranges; a module
// without either has no index (every answer then comes from the ELF
// symbols).
func (u *unitIndex) load(img *image) {
	if img.dwFile == nil {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			u.dw, u.ranges = nil, nil
		}
	}()
	sec := img.sections()
	ranges, err := parseAranges(sec("aranges"))
	if err != nil || len(ranges) == 0 {
		return
	}
	dw, err := openDWARF(img.dwFile, sec)
	if err != nil {
		return
	}
	u.dw, u.ranges = dw, ranges
	u.lineData, u.lineStr = sec("line"), sec("line_str")
	u.info = sec("info")
	u.versions = unitVersions(u.info)
	u.units = map[dwarf.Offset]*image{}
}

// unitAt returns an image holding only the compile unit that covers pc
// (its functions and lines), or nil.
func (img *image) unitAt(pc uint64) *image {
	u := &img.units
	u.once.Do(func() { u.load(img) })
	if u.dw == nil || pc < img.bias {
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
	one := &image{path: img.path, debugPath: img.debugPath, file: img.file, dwFile: img.dwFile,
		bias: img.bias, loadAddr: img.loadAddr, lo: img.lo, hi: img.hi, segs: img.segs,
		dwarf: u.dw, funcNames: map[string]*function{}, globals: map[string]*globalVar{}, lineStr: u.lineStr}
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
	first, err := firstEntry(u.info, uint64(off))
	if err != nil {
		return err
	}
	return img.walkUnits(first, u.lineData, u.versions, true)
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
