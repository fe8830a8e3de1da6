package symbols

import (
	"bytes"
	"cmp"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/go-delve/delve/pkg/dwarf/frame"
	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/go-delve/delve/pkg/dwarf/loclist"
)

// DebugRoot is the directory searched for separate debug information, as
// gdb does: DebugRoot/.build-id/xx/yyyy.debug by build id, and
// DebugRoot/<dir of the file>/<.gnu_debuglink name>.
const DebugRoot = "/usr/lib/debug"

// Module is one ELF file mapped into the debugged program: the executable
// or a shared library (the dynamic loader and vdso included, if wanted).
type Module struct {
	// Path names the file. It is read when Data is nil, used to find
	// separate debug information, and shown in messages and frames.
	Path string
	// Data optionally holds the file's bytes, e.g. embedded in a trace.
	Data []byte
	// LoadAddr is where the file's first PT_LOAD segment (file offset 0)
	// was mapped. For a position-dependent executable (ET_EXEC) it may be
	// left 0, meaning "at its link address".
	LoadAddr uint64
	// DebugFile optionally names a separate debug-information file. When
	// empty and the file has no DWARF, Load looks for one by build id and
	// .gnu_debuglink under DebugRoot.
	DebugFile string
	// SymbolsOnly loads the ELF symbols (the debug file's too) and the
	// USDT notes only, not DWARF nor the CFI: for a caller that needs
	// no lines, types, variables or unwinding (a probe script counting
	// calls), loading the rest was most of its start-up.
	SymbolsOnly bool
}

// ErrNotX86 is returned for an ELF file that is not x86-64.
var ErrNotX86 = errors.New("not an x86-64 ELF file")

// ErrNoSymbol is returned by ParseAddr for a name no module defines.
var ErrNoSymbol = errors.New("no such symbol")

// LoadError is a failure to load one module; Path names the file.
type LoadError struct {
	Path string
	Err  error
}

func (e *LoadError) Error() string { return "symbols: " + e.Path + ": " + e.Err.Error() }

func (e *LoadError) Unwrap() error { return e.Err }

// Table holds the symbols of every loaded module of one program. It is
// safe for concurrent use.
type Table struct {
	mu     sync.RWMutex
	images []*image // load order: the first is the main program

	// lineMu serialises line-table queries: delve's line tables cache
	// state machines in maps.
	lineMu sync.Mutex
	// sharedLines, when set, serialises them instead: the Table shares
	// its modules with others (ImageCache).
	sharedLines *sync.Mutex
}

// lines is the mutex of line-table queries.
func (t *Table) lines() *sync.Mutex {
	if t.sharedLines != nil {
		return t.sharedLines
	}
	return &t.lineMu
}

// Load reads the modules of a program. A module that cannot be read is
// left out and reported in the returned error (one *LoadError per module,
// joined); the Table is usable with the others, so a missing library costs
// its frames' names, not the session. A module without DWARF contributes
// its ELF symbol table and unwind information only.
// The modules load concurrently, one goroutine each (libc's symbols
// alone take most of the 30-40 ms that gzip's three modules took one
// after the other, before `ttd probe` could start its jobs), and are
// added in order.
func Load(mods []Module) (*Table, error) {
	t := &Table{}
	imgs := make([]*image, len(mods))
	lerrs := make([]error, len(mods))
	var wg sync.WaitGroup
	for i := range mods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			imgs[i], lerrs[i] = loadModule(mods[i])
		}()
	}
	wg.Wait()
	var errs []error
	for i, img := range imgs {
		if lerrs[i] != nil {
			errs = append(errs, lerrs[i])
			continue
		}
		t.images = append(t.images, img)
	}
	return t, errors.Join(errs...)
}

// Add loads one more module, e.g. a library the program opened with
// dlopen. The error, if any, is a *LoadError.
func (t *Table) Add(m Module) error {
	img, err := loadModule(m)
	if err != nil {
		return err
	}
	t.mu.Lock()
	t.images = append(t.images, img)
	t.mu.Unlock()
	return nil
}

// loadModule loads m; the error, if any, is a *LoadError, a malformed
// file's panic included.
func loadModule(m Module) (img *image, err error) {
	defer func() {
		if r := recover(); r != nil {
			img, err = nil, &LoadError{m.Path, fmt.Errorf("malformed file: %v", r)}
		}
	}()
	img, err = loadImage(m)
	if err != nil {
		return nil, &LoadError{m.Path, err}
	}
	return img, nil
}

// Modules returns the loaded modules' paths with the address ranges they
// cover and whether DWARF was found (and where).
func (t *Table) Modules() []ModuleInfo {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []ModuleInfo
	for _, img := range t.images {
		img.ensureDWARF()
		out = append(out, ModuleInfo{Path: img.path, Lo: img.lo, Hi: img.hi, Bias: img.bias,
			HasDWARF: img.dwarf != nil, DebugFile: img.debugPath, Warnings: img.warn})
	}
	return out
}

// ModuleExtent is the runtime addresses [lo, hi) that the PT_LOAD
// segments of the module last added from path cover; unlike Modules it
// loads no DWARF.
func (t *Table) ModuleExtent(path string) (lo, hi uint64, ok bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for i := len(t.images) - 1; i >= 0; i-- {
		if img := t.images[i]; img.path == path && img.lo < img.hi {
			return img.lo, img.hi, true
		}
	}
	return 0, 0, false
}

// MainModule is the path of the first module added (the program's), or
// "" before any; unlike Modules it loads no DWARF.
func (t *Table) MainModule() string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if len(t.images) == 0 {
		return ""
	}
	return t.images[0].path
}

// ModuleInfo describes a loaded module.
type ModuleInfo struct {
	Path      string
	Lo, Hi    uint64 // runtime addresses covered by its PT_LOAD segments
	Bias      uint64 // runtime address minus link-time address
	HasDWARF  bool
	DebugFile string   // where DWARF came from, if not Path itself
	Warnings  []string // parts that could not be read (e.g. a bad .eh_frame)
}

// image is one loaded module.
type image struct {
	path      string
	debugPath string
	file      *elf.File   // the module itself
	dwFile    *elf.File   // where DWARF lives: file or the separate debug file
	dwRaw     io.ReaderAt // dwFile's bytes (the cache of its sections: seccache.go)
	bias      uint64
	loadAddr  uint64 // Module.LoadAddr
	lo, hi    uint64
	segs      []segment
	warn      []string

	dwarf     *dwarf.Data
	cus       []*compUnit
	funcs     []*function // sorted by lo; one per address range
	funcNames map[string]*function
	syms      []*symbol // function symbols, sorted by addr
	symNames  map[string]*symbol
	globals   map[string]*globalVar
	frames    frame.FrameDescriptionEntries
	loc2      *loclist.Dwarf2Reader
	loc5      *loclist.Dwarf5Reader
	debugAddr *godwarf.DebugAddrSection
	lineStr   []byte
	isGo      bool
	rtypes    map[uint64]dwarf.Offset // Go runtime type, as offset from runtime.types → DWARF type
	typeNames map[string]dwarf.Offset // "int", "struct point", "main.T"

	typeMu    sync.Mutex // guards typeCache and trees
	typeCache map[dwarf.Offset]godwarf.Type
	typeSeen  map[godwarf.Type]bool        // nodes fixTypes visited
	structs   map[dwarf.Offset]*structInfo // C++ bases and template arguments (cxx.go)
	// tlsOff is how far below the thread pointer the module's static
	// TLS block starts (the executable's only; see ExecTLSOffset).
	tlsOff uint64
	tlsErr error
	trees  map[dwarf.Offset]*godwarf.Tree
	usdt   []USDTProbe // .note.stapsdt probes (stapsdt.go)
	// dwOnce loads the DWARF fields above (dwarf to typeNames) on
	// first use: every way to an image (imageFor, imageList, Modules)
	// calls ensureDWARF.
	dwOnce sync.Once
	// units indexes single compile units for a SymbolsOnly image
	// (UnitFuncForPC, UnitPCToLine).
	units unitIndex
	demangleState
}

// ensureDWARF loads the image's DWARF, once; a failure (or a malformed
// file) leaves it without, with a warning.
func (img *image) ensureDWARF() {
	img.dwOnce.Do(func() {
		if img.dwFile == nil {
			return
		}
		defer func() {
			if r := recover(); r != nil {
				img.warnf("DWARF: malformed: %v", r)
				img.dwarf = nil
			}
		}()
		if err := img.loadDWARF(); err != nil {
			img.warnf("DWARF: %v", err)
			img.dwarf = nil
		}
	})
}

// segment is a PT_LOAD segment at its runtime address.
type segment struct {
	addr, memsz uint64
	data        []byte // the file bytes (filesz of them)
	writable    bool
	exec        bool
}

func loadImage(m Module) (*image, error) {
	data := m.Data
	if data == nil {
		b, err := os.ReadFile(m.Path)
		if err != nil {
			return nil, err
		}
		data = b
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if f.Machine != elf.EM_X86_64 || f.Class != elf.ELFCLASS64 {
		return nil, ErrNotX86
	}
	img := &image{path: m.Path, file: f, loadAddr: m.LoadAddr, typeCache: map[dwarf.Offset]godwarf.Type{}}
	img.tlsOff, img.tlsErr = ExecTLSOffset(f)
	if err := img.mapSegments(m, data); err != nil {
		return nil, err
	}
	img.dwFile, img.debugPath, img.dwRaw = findDebugFile(m, f, data)
	img.readSymbols()
	img.readUSDT()
	// DWARF loads on first use (ensureDWARF): a query that names only
	// the program's code never parses libc's debug file (0.5 s of CPU
	// of a cold 1.4 s ttd query --find-prev-write, issue 23).
	if m.SymbolsOnly {
		// Nor later: FuncSymbols and the other walks of every image
		// (imageList) would load it, 0.6 s of the 3.5 s of
		// `ttd probe fn::malloc:entry` over sqlite3.
		img.dwOnce.Do(func() {})
		return img, nil
	}
	img.loadFrames()
	return img, nil
}

func (img *image) warnf(format string, args ...any) {
	img.warn = append(img.warn, fmt.Sprintf(format, args...))
}

// mapSegments computes the bias from LoadAddr and records the segments.
func (img *image) mapSegments(m Module, data []byte) error {
	var loads []*elf.Prog
	for _, p := range img.file.Progs {
		if p.Type == elf.PT_LOAD {
			loads = append(loads, p)
		}
	}
	if len(loads) == 0 {
		return errors.New("no PT_LOAD segment")
	}
	sort.Slice(loads, func(i, j int) bool { return loads[i].Vaddr < loads[j].Vaddr })
	base := loads[0].Vaddr - loads[0].Off // where file offset 0 is linked
	base &^= 0xfff
	switch {
	case m.LoadAddr == 0 && img.file.Type == elf.ET_EXEC:
		img.bias = 0
	case img.file.Type == elf.ET_EXEC && m.LoadAddr != base:
		return fmt.Errorf("ET_EXEC linked at %#x cannot be loaded at %#x", base, m.LoadAddr)
	default:
		img.bias = m.LoadAddr - base
	}
	img.lo = ^uint64(0)
	for _, p := range loads {
		s := segment{addr: p.Vaddr + img.bias, memsz: p.Memsz, writable: p.Flags&elf.PF_W != 0, exec: p.Flags&elf.PF_X != 0}
		if p.Off <= uint64(len(data)) && p.Filesz <= uint64(len(data))-p.Off {
			s.data = data[p.Off : p.Off+p.Filesz]
		}
		img.segs = append(img.segs, s)
		img.lo = min(img.lo, s.addr)
		img.hi = max(img.hi, s.addr+s.memsz)
	}
	return nil
}

// readStatic copies bytes of read-only segments from the file: code and
// constant data cannot differ from the file, so they are known even where
// the recording never read them.
func (img *image) readStatic(addr uint64, b []byte, known []bool) {
	for _, s := range img.segs {
		if s.writable || addr+uint64(len(b)) <= s.addr || addr >= s.addr+uint64(len(s.data)) {
			continue
		}
		for i := range b {
			a := addr + uint64(i)
			if !known[i] && a >= s.addr && a-s.addr < uint64(len(s.data)) {
				b[i] = s.data[a-s.addr]
				known[i] = true
			}
		}
	}
}

// findDebugFile returns the ELF file holding the module's DWARF: the file
// itself (whose bytes are data), the given DebugFile, or one found by
// build id or debuglink; and a reader of its bytes.
func findDebugFile(m Module, f *elf.File, data []byte) (*elf.File, string, io.ReaderAt) {
	if hasDWARF(f) {
		return f, "", bytes.NewReader(data)
	}
	var cands []string
	if m.DebugFile != "" {
		cands = append(cands, m.DebugFile)
	}
	if id := buildID(f); id != "" && len(id) > 2 {
		cands = append(cands, filepath.Join(DebugRoot, ".build-id", id[:2], id[2:]+".debug"))
	}
	if s := f.Section(".gnu_debuglink"); s != nil && m.Path != "" {
		if b, err := s.Data(); err == nil {
			if i := bytes.IndexByte(b, 0); i > 0 {
				name := string(b[:i])
				dir := filepath.Dir(m.Path)
				cands = append(cands, filepath.Join(dir, name), filepath.Join(dir, ".debug", name),
					filepath.Join(DebugRoot, dir, name))
			}
		}
	}
	for _, c := range cands {
		if c == m.Path {
			continue
		}
		fh, err := os.Open(c)
		if err != nil {
			continue
		}
		df, err := elf.NewFile(fh)
		if err == nil && df.Machine == elf.EM_X86_64 && hasDWARF(df) {
			return df, c, fh // open as long as the image: its sections load on first use
		}
		fh.Close()
	}
	return nil, "", nil
}

func hasDWARF(f *elf.File) bool {
	for _, s := range f.Sections {
		if (s.Name == ".debug_info" || s.Name == ".zdebug_info") && s.Type != elf.SHT_NOBITS {
			return true
		}
	}
	return false
}

// buildID returns the hex GNU build id of f, or "".
func buildID(f *elf.File) string {
	s := f.Section(".note.gnu.build-id")
	if s == nil {
		return ""
	}
	b, err := s.Data()
	if err != nil || len(b) < 16 {
		return ""
	}
	namesz := binary.LittleEndian.Uint32(b[0:])
	descsz := binary.LittleEndian.Uint32(b[4:])
	off := 12 + (uint64(namesz)+3)&^3
	if off+uint64(descsz) > uint64(len(b)) {
		return ""
	}
	return hex.EncodeToString(b[off : off+uint64(descsz)])
}

// readSymbols reads .symtab (of the file and of its debug file) and
// .dynsym.
func (img *image) readSymbols() {
	img.symNames = map[string]*symbol{}
	seen := map[[2]uint64]bool{}
	add := func(syms []elf.Symbol) {
		for _, s := range syms {
			typ := elf.ST_TYPE(s.Info)
			if s.Section == elf.SHN_UNDEF || s.Value == 0 || s.Name == "" {
				continue
			}
			// The dynamic loader's _start is a label with no type: the
			// symbol at the file's entry point is a function all the
			// same (every program's call tree starts there).
			fn := typ == elf.STT_FUNC || typ == elf.STT_GNU_IFUNC ||
				typ == elf.STT_NOTYPE && s.Value == img.file.Entry && s.Section != elf.SHN_ABS
			if !fn && typ != elf.STT_OBJECT && typ != elf.STT_TLS {
				continue
			}
			if typ == elf.STT_TLS {
				continue // TLS offsets are not addresses
			}
			name := s.Name
			if i := strings.Index(name, "@"); i > 0 {
				name = name[:i]
			}
			sym := &symbol{name: name, addr: s.Value + img.bias, size: s.Size, fn: fn}
			if _, dup := img.symNames[name]; !dup || elf.ST_BIND(s.Info) == elf.STB_GLOBAL {
				img.symNames[name] = sym
			}
			k := [2]uint64{sym.addr, sym.size}
			if fn && !seen[k] {
				seen[k] = true
				img.syms = append(img.syms, sym)
			}
		}
	}
	if syms, err := img.file.Symbols(); err == nil {
		add(syms)
	}
	if img.dwFile != nil && img.dwFile != img.file {
		if syms, err := img.dwFile.Symbols(); err == nil {
			add(syms)
		}
	}
	if syms, err := img.file.DynamicSymbols(); err == nil {
		add(syms)
	}
	// Stable: by address, the larger first, then in the order added
	// (the index as the last key, so that pdqsort may sort: the
	// rotations of sort.SliceStable's merges were most of the 7 ms
	// libc's symbols took before ttd probe could bind).
	type at struct {
		s *symbol
		i int
	}
	order := make([]at, len(img.syms))
	for i, sy := range img.syms {
		order[i] = at{sy, i}
	}
	slices.SortFunc(order, func(a, b at) int {
		if c := cmp.Compare(a.s.addr, b.s.addr); c != 0 {
			return c
		}
		if c := cmp.Compare(b.s.size, a.s.size); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	for i, o := range order {
		img.syms[i] = o.s
	}
}

// symbol is an ELF symbol at its runtime address.
type symbol struct {
	name       string
	addr, size uint64
	fn         bool
}

// loadFrames parses .eh_frame (from the module) and .debug_frame (from
// the module or its debug file).
func (img *image) loadFrames() {
	if s := img.file.Section(".eh_frame"); s != nil && s.Type != elf.SHT_NOBITS && s.Addr != 0 {
		if b, err := s.Data(); err == nil {
			fdes, err := parseFrames(b, img.bias, s.Addr)
			if err != nil {
				img.warnf(".eh_frame: %v", err)
			}
			img.frames = img.frames.Append(fdes)
		}
	}
	for _, f := range []*elf.File{img.file, img.dwFile} {
		if f == nil {
			continue
		}
		if b, err := godwarf.GetDebugSectionElf(f, "frame"); err == nil && len(b) > 0 {
			fdes, err := parseFrames(b, img.bias, 0)
			if err != nil {
				img.warnf(".debug_frame: %v", err)
			}
			img.frames = img.frames.Append(fdes)
			break
		}
	}
}

func parseFrames(b []byte, bias, ehAddr uint64) (fdes frame.FrameDescriptionEntries, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed: %v", r)
		}
	}()
	return frame.Parse(b, binary.LittleEndian, bias, 8, ehAddr)
}

// image returns the module whose segments cover pc.
func (t *Table) imageFor(pc uint64) *image {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, img := range t.images {
		if pc >= img.lo && pc < img.hi {
			img.ensureDWARF()
			return img
		}
	}
	return nil
}

// imageList returns every module, their DWARF loaded.
func (t *Table) imageList() []*image {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, img := range t.images {
		img.ensureDWARF()
	}
	return append([]*image(nil), t.images...)
}

// readMem reads memory through mem, filling bytes it does not know from
// the read-only segments of the modules. known is nil when every byte is
// known.
func (t *Table) readMem(mem MemReader, addr uint64, b []byte) ([]bool, error) {
	var known []bool
	var err error
	if mem != nil {
		known, err = mem(addr, b)
		if err == nil && known == nil {
			return nil, nil
		}
	}
	if known == nil {
		known = make([]bool, len(b)) // mem failed or is absent: nothing known yet
	}
	t.ReadStatic(addr, b, known)
	for _, k := range known {
		if !k {
			if err != nil {
				return known, err
			}
			return known, nil
		}
	}
	return nil, nil
}
