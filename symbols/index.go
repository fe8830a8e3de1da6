package symbols

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/go-delve/delve/pkg/dwarf/line"
	"github.com/go-delve/delve/pkg/dwarf/loclist"
	"github.com/go-delve/delve/pkg/dwarf/op"
)

// DWARF constants debug/dwarf does not name.
const (
	attrAddrBase   dwarf.Attr = 0x73
	attrCallFile   dwarf.Attr = 0x58
	attrCallLine   dwarf.Attr = 0x59
	attrDataBitOff dwarf.Attr = 0x6b
	langGo                    = 0x16
	opAddr                    = 0x03
)

// compUnit is one DWARF compile unit.
type compUnit struct {
	img     *image
	entry   *dwarf.Entry
	name    string
	version int
	isGo    bool
	ranges  [][2]uint64         // runtime addresses
	lowPC   uint64              // runtime base address for location lists
	lines   *line.DebugLineInfo // delve's, for breakpoints

	rowsOnce sync.Once
	rows     []lineRow // for PCToLine
}

// function is one address range of a function, from DWARF or from the
// ELF symbol table (cu == nil).
type function struct {
	name   string
	entry  uint64 // runtime entry point
	lo, hi uint64 // runtime range [lo, hi)
	end    uint64 // end of the function's first range, for prologue search
	img    *image
	cu     *compUnit
	off    dwarf.Offset // the subprogram DIE
	line   int          // DW_AT_decl_line
}

// globalVar is a variable at a fixed address, or (tls) at a fixed
// offset in each thread's thread-local storage block of its module.
type globalVar struct {
	name    string
	addr    uint64
	tls     bool
	typeOff dwarf.Offset
	cu      *compUnit
	img     *image
}

// DWARF operations of thread-local locations: DW_OP_const4u or
// DW_OP_const8u, then DW_OP_form_tls_address (or GCC's older
// DW_OP_GNU_push_tls_address).
const (
	opConst4u           = 0x0c
	opConst8u           = 0x0e
	opFormTLSAddress    = 0x9b
	opGNUPushTLSAddress = 0xe0
)

func isTLSOp(op byte) bool { return op == opFormTLSAddress || op == opGNUPushTLSAddress }

// loadDWARF indexes compile units, functions, globals, line tables and
// (for Go) runtime types.
func (img *image) loadDWARF() error {
	sec := img.sections()
	dw, err := openDWARF(img.dwFile, sec)
	if err != nil {
		return err
	}
	img.dwarf = dw
	img.funcNames = map[string]*function{}
	img.globals = map[string]*globalVar{}
	versions := unitVersions(sec("info"))
	lineData := sec("line")
	img.lineStr = sec("line_str")
	if b := sec("loc"); len(b) > 0 {
		img.loc2 = loclist.NewDwarf2Reader(b, 8)
	}
	if b := sec("loclists"); len(b) > 0 {
		img.loc5 = loclist.NewDwarf5Reader(b)
	}
	if b := sec("addr"); len(b) > 0 {
		img.debugAddr = godwarf.ParseAddr(b)
	}
	return img.walkUnits(0, lineData, versions, false)
}

// sections returns a reader of the module's DWARF sections by name
// ("info"), each decompressed once (or read from the cache of
// decompressed sections: seccache.go).
func (img *image) sections() func(name string) []byte {
	secs := map[string][]byte{}
	id, idRead := "", false
	return func(name string) []byte {
		b, ok := secs[name]
		if !ok {
			if !idRead {
				id, idRead = buildID(img.dwFile), true
			}
			b = debugSection(img.dwFile, img.dwRaw, id, name)
			secs[name] = b
		}
		return b
	}
}

// walkUnits indexes the compile units from offset at on: all of them,
// or with one only the first and only its functions and lines (no
// globals, types or delve's line tables: unitIndex).
func (img *image) walkUnits(at dwarf.Offset, lineData []byte, versions [][2]uint64, one bool) error {
	dw := img.dwarf
	r := dw.Reader()
	r.Seek(at)
	origins := dw.Reader()
	var cu *compUnit
walk:
	for {
		e, err := r.Next()
		if err != nil {
			return err
		}
		if e == nil {
			break
		}
		switch e.Tag {
		case dwarf.TagCompileUnit, dwarf.TagPartialUnit:
			if one && cu != nil {
				break walk
			}
			cu = &compUnit{img: img, entry: e, version: versionAt(versions, e.Offset)}
			cu.name, _ = e.Val(dwarf.AttrName).(string)
			lang, _ := e.Val(dwarf.AttrLanguage).(int64)
			cu.isGo = lang == langGo
			img.isGo = img.isGo || cu.isGo
			if rngs, err := dw.Ranges(e); err == nil {
				for _, rg := range rngs {
					cu.ranges = append(cu.ranges, [2]uint64{rg[0] + img.bias, rg[1] + img.bias})
				}
			}
			if low, ok := e.Val(dwarf.AttrLowpc).(uint64); ok {
				cu.lowPC = low + img.bias
			} else if len(cu.ranges) > 0 {
				cu.lowPC = cu.ranges[0][0]
			}
			if off, ok := e.Val(dwarf.AttrStmtList).(int64); ok && !one && off >= 0 && off < int64(len(lineData)) {
				dir, _ := e.Val(dwarf.AttrCompDir).(string)
				cu.lines = parseLines(dir, lineData[off:], img.lineStr, img.bias)
			}
			img.cus = append(img.cus, cu)
			continue
		case dwarf.TagSubprogram:
			if cu != nil {
				img.addSubprogram(cu, e, origins)
			}
		case dwarf.TagVariable:
			if cu != nil && !one {
				img.addGlobal(cu, e, origins)
			}
		case dwarf.TagNamespace:
			continue // C++: look inside
		default:
			if cu != nil && !one {
				img.addType(cu, e)
			}
		}
		r.SkipChildren()
	}
	sort.SliceStable(img.funcs, func(i, j int) bool { return img.funcs[i].lo < img.funcs[j].lo })
	return nil
}

// openDWARF is f.DWARF() with the sections read through sec, which
// loadDWARF reads once: f.DWARF() decompresses every .debug_ section,
// those debug/dwarf ignores too (loclists, aranges), and loadDWARF then
// decompressed info, line and loclists again: with libc's separate
// debug file, decompressing was a third of ttd calls' fixed cost. A
// relocatable file (whose sections f.DWARF() relocates) goes through
// f.DWARF().
func openDWARF(f *elf.File, sec func(name string) []byte) (*dwarf.Data, error) {
	if f.Type == elf.ET_REL {
		return f.DWARF()
	}
	d, err := newDWARF(sec, sec("info"))
	if err != nil {
		return nil, err
	}
	// DWARF 4 type units: one .debug_types section per unit group.
	for i, s := range f.Sections {
		if s.Name == ".debug_types" {
			b, err := s.Data()
			if err != nil {
				return nil, err
			}
			if err := d.AddTypes(fmt.Sprintf("types-%d", i), b); err != nil {
				return nil, err
			}
		}
	}
	return d, nil
}

// newDWARF opens the DWARF of info (all of .debug_info, or one unit of
// it) with the module's other sections.
func newDWARF(sec func(name string) []byte, info []byte) (*dwarf.Data, error) {
	d, err := dwarf.New(sec("abbrev"), nil, nil, info, sec("line"), nil, sec("ranges"), sec("str"))
	if err != nil {
		return nil, err
	}
	// The DWARF 5 sections debug/dwarf reads, as f.DWARF() adds them.
	for _, name := range []string{"addr", "line_str", "str_offsets", "rnglists"} {
		if b := sec(name); b != nil {
			if err := d.AddSection(".debug_"+name, b); err != nil {
				return nil, err
			}
		}
	}
	return d, nil
}

func parseLines(compDir string, b []byte, lineStr []byte, bias uint64) (li *line.DebugLineInfo) {
	defer func() {
		if recover() != nil {
			li = nil
		}
	}()
	li = line.Parse(compDir, bytes.NewBuffer(b), lineStr, nil, bias, false, 8)
	if li != nil && (li.Prologue == nil || li.Prologue.LineRange == 0) {
		// delve's state machine divides by line_range: a table that says
		// 0 is corrupt, and would panic in every later query.
		return nil
	}
	return li
}

// unitVersions returns the start offset and version of each unit header
// in .debug_info (debug/dwarf does not expose the version).
func unitVersions(info []byte) [][2]uint64 {
	var out [][2]uint64
	for off := uint64(0); off+6 < uint64(len(info)); {
		n := uint64(binary.LittleEndian.Uint32(info[off:]))
		hdr := uint64(4)
		if n == 0xffffffff {
			if off+14 > uint64(len(info)) {
				break
			}
			n = binary.LittleEndian.Uint64(info[off+4:])
			hdr = 12
		}
		if n == 0 {
			break
		}
		out = append(out, [2]uint64{off, uint64(binary.LittleEndian.Uint16(info[off+hdr:]))})
		off += hdr + n
	}
	return out
}

func versionAt(vs [][2]uint64, off dwarf.Offset) int {
	i := sort.Search(len(vs), func(i int) bool { return vs[i][0] > uint64(off) })
	if i == 0 {
		return 4
	}
	return int(vs[i-1][1])
}

// entryName returns e's name, following abstract origins and
// specifications.
func entryName(e *dwarf.Entry, origins *dwarf.Reader) (string, godwarf.Entry) {
	full, _ := godwarf.LoadAbstractOriginAndSpecification(e, origins)
	name, _ := full.Val(dwarf.AttrName).(string)
	return name, full
}

func (img *image) addSubprogram(cu *compUnit, e *dwarf.Entry, origins *dwarf.Reader) {
	rngs, err := img.dwarf.Ranges(e)
	if err != nil || len(rngs) == 0 {
		return
	}
	name, full := entryName(e, origins)
	if name == "" {
		return
	}
	entry := rngs[0][0]
	if low, ok := e.Val(dwarf.AttrLowpc).(uint64); ok {
		entry = low
	}
	declLine, _ := full.Val(dwarf.AttrDeclLine).(int64)
	var first *function
	n := 0
	for _, rg := range rngs {
		if rg[1] <= rg[0] || rg[0] == 0 { // empty, or discarded by the linker
			continue
		}
		n++
		fn := &function{name: name, entry: entry + img.bias, lo: rg[0] + img.bias, hi: rg[1] + img.bias,
			img: img, cu: cu, off: e.Offset, line: int(declLine)}
		if first == nil {
			first = fn
		}
		img.funcs = append(img.funcs, fn)
	}
	if first == nil {
		return
	}
	for _, fn := range img.funcs[len(img.funcs)-n:] {
		if fn.entry >= fn.lo && fn.entry < fn.hi {
			first = fn
		}
	}
	for _, fn := range img.funcs[len(img.funcs)-n:] {
		fn.end = first.hi
	}
	if _, dup := img.funcNames[name]; !dup {
		img.funcNames[name] = first
	}
}

func (img *image) addGlobal(cu *compUnit, e *dwarf.Entry, origins *dwarf.Reader) {
	loc, ok := e.Val(dwarf.AttrLocation).([]byte)
	if !ok {
		return // optimised away or a declaration
	}
	var addr uint64
	tls := false
	switch {
	case len(loc) == 9 && loc[0] == opAddr:
		addr = binary.LittleEndian.Uint64(loc[1:]) + img.bias
	case len(loc) == 10 && loc[0] == opConst8u && isTLSOp(loc[9]):
		addr, tls = binary.LittleEndian.Uint64(loc[1:]), true
	case len(loc) == 6 && loc[0] == opConst4u && isTLSOp(loc[5]):
		addr, tls = uint64(binary.LittleEndian.Uint32(loc[1:])), true
	default:
		return
	}
	name, full := entryName(e, origins)
	typ, ok := full.Val(dwarf.AttrType).(dwarf.Offset)
	if name == "" || !ok {
		return
	}
	g := &globalVar{name: name, addr: addr, tls: tls, typeOff: typ, cu: cu, img: img}
	if _, dup := img.globals[name]; !dup {
		img.globals[name] = g
	}
}

// addType indexes a named type for casts, and a Go type's runtime type
// descriptor for interfaces.
func (img *image) addType(cu *compUnit, e *dwarf.Entry) {
	if cu.isGo {
		if a, ok := e.Val(godwarf.AttrGoRuntimeType).(uint64); ok {
			if img.rtypes == nil {
				img.rtypes = map[uint64]dwarf.Offset{}
			}
			img.rtypes[a] = e.Offset
		}
	}
	name, _ := e.Val(dwarf.AttrName).(string)
	if name == "" || e.Val(dwarf.AttrDeclaration) != nil {
		return
	}
	key := name
	switch e.Tag {
	case dwarf.TagStructType:
		key = "struct " + name
	case dwarf.TagUnionType:
		key = "union " + name
	case dwarf.TagEnumerationType:
		key = "enum " + name
	case dwarf.TagClassType:
		key = "class " + name
	case dwarf.TagBaseType, dwarf.TagTypedef, dwarf.TagPointerType, dwarf.TagArrayType,
		dwarf.TagSubroutineType, dwarf.TagInterfaceType:
	default:
		return
	}
	if img.typeNames == nil {
		img.typeNames = map[string]dwarf.Offset{}
	}
	for _, k := range []string{key, name} {
		if _, dup := img.typeNames[k]; !dup {
			img.typeNames[k] = e.Offset
		}
	}
}

// readType returns the DWARF type at off.
func (img *image) readType(off dwarf.Offset) (t godwarf.Type, err error) {
	img.typeMu.Lock()
	defer img.typeMu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed type at %#x: %v", off, r)
		}
	}()
	t, err = godwarf.ReadType(img.dwarf, 0, off, img.typeCache)
	if err == nil {
		t = img.fixTypes(t)
	}
	return t, err
}

// loadTree loads the DIE tree of a function (or any entry) at off.
func (img *image) loadTree(off dwarf.Offset) (t *godwarf.Tree, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed DWARF at %#x: %v", off, r)
		}
	}()
	return godwarf.LoadTree(off, img.dwarf, img.bias)
}

// funcAt returns the DWARF function covering pc, or nil.
func (img *image) funcAt(pc uint64) *function {
	i := sort.Search(len(img.funcs), func(i int) bool { return img.funcs[i].lo > pc }) - 1
	for j := i; j >= 0 && j > i-8; j-- { // ranges seldom nest: look a few back
		if fn := img.funcs[j]; pc >= fn.lo && pc < fn.hi {
			return fn
		}
	}
	return nil
}

// symAt returns the ELF function symbol covering pc, or the nearest one
// before it when symbols have no size.
func (img *image) symAt(pc uint64) *symbol {
	i := sort.Search(len(img.syms), func(i int) bool { return img.syms[i].addr > pc }) - 1
	for j := i; j >= 0 && j > i-8; j-- {
		s := img.syms[j]
		if pc < s.addr+s.size {
			return s
		}
	}
	if i >= 0 && img.syms[i].size == 0 && img.executable(pc) {
		return img.syms[i]
	}
	return nil
}

// executable reports whether addr is in an executable segment.
func (img *image) executable(addr uint64) bool {
	for _, s := range img.segs {
		if s.exec && addr >= s.addr && addr < s.addr+s.memsz {
			return true
		}
	}
	return false
}

// cuAt returns the compile unit covering pc, or nil.
func (img *image) cuAt(pc uint64) *compUnit {
	if fn := img.funcAt(pc); fn != nil {
		return fn.cu
	}
	for _, cu := range img.cus {
		for _, rg := range cu.ranges {
			if pc >= rg[0] && pc < rg[1] {
				return cu
			}
		}
	}
	return nil
}

// location returns the location expression of attr of e at pc: the block
// itself, or the matching location-list entry.
func (img *image) location(cu *compUnit, e godwarf.Entry, attr dwarf.Attr, pc uint64) ([]byte, error) {
	switch v := e.Val(attr).(type) {
	case []byte:
		return v, nil
	case int64:
		return img.loclistEntry(cu, v, pc)
	case nil:
		return nil, errOptimizedOut
	default:
		return nil, fmt.Errorf("unsupported location form %T", v)
	}
}

// loclistEntry finds pc in the location list at off. It works in link-time
// addresses: delve's DWARF 5 reader relocates some entry kinds and not
// others.
func (img *image) loclistEntry(cu *compUnit, off int64, pc uint64) (instr []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed location list: %v", r)
		}
	}()
	var rdr loclist.Reader
	var addrs *godwarf.DebugAddr
	if cu.version >= 5 && img.loc5 != nil {
		rdr = img.loc5
		if base, ok := cu.entry.Val(attrAddrBase).(int64); ok && img.debugAddr != nil {
			addrs = img.debugAddr.GetSubsection(uint64(base))
		}
	} else if img.loc2 != nil {
		rdr = img.loc2
	} else {
		return nil, fmt.Errorf("location list without a location section")
	}
	e, err := rdr.Find(int(off), 0, cu.lowPC-img.bias, pc-img.bias, addrs)
	if err != nil {
		return nil, err
	}
	if e == nil || len(e.Instr) == 0 {
		return nil, errOptimizedOut
	}
	return e.Instr, nil
}

// execLocation runs a DWARF expression; delve's evaluator may panic on
// malformed input. Operations it does not implement that optimising
// compilers emit are reported as gdb reports them.
func execLocation(regs op.DwarfRegisters, instr []byte, read op.ReadMemoryFunc) (addr int64, pieces []op.Piece, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed location expression: %v", r)
		}
	}()
	addr, pieces, err = op.ExecuteStackProgram(regs, instr, 8, read)
	if err != nil {
		switch msg := err.Error(); {
		case strings.HasPrefix(msg, "invalid instruction 0xa3"), strings.HasPrefix(msg, "invalid instruction 0xf3"):
			// DW_OP_entry_value: the value a register had on entry.
			err = fmt.Errorf("%w (entry value)", errOptimizedOut)
		case strings.HasPrefix(msg, "invalid instruction 0xa0"), strings.HasPrefix(msg, "invalid instruction 0xf2"):
			err = errSynthetic // DW_OP_implicit_pointer
		case strings.HasPrefix(msg, "register ") && strings.HasSuffix(msg, " not available"):
			err = fmt.Errorf("%w: %s", errUnknown, msg) // not recovered in this frame
		}
	}
	return addr, pieces, err
}

// fileName returns the path of file index i of the CU's line table.
func (cu *compUnit) fileName(i int64) string {
	if cu == nil || cu.lines == nil {
		return ""
	}
	if cu.version < 5 {
		i--
	}
	if i < 0 || i >= int64(len(cu.lines.FileNames)) {
		return ""
	}
	return path.Clean(cu.lines.FileNames[i].Path)
}
