package symbols

// What probe providers need from a symbol table: every function symbol
// (to match wildcards such as fn:libc.so.6:mem*:entry) and the bytes of
// the modules' read-only segments (strings the program never read
// itself, such as a path literal passed to open).

// FuncSymbol is a function as a module's ELF symbol tables name it, at
// its runtime address.
type FuncSymbol struct {
	Name       string
	Addr, Size uint64
	Module     string // the module's path
}

// FuncSymbols lists the function symbols of every module, one per
// address and size (aliases such as malloc and __libc_malloc appear
// once), in module load order and by address.
func (t *Table) FuncSymbols() []FuncSymbol {
	var out []FuncSymbol
	for _, img := range t.imageList() {
		for _, s := range img.syms {
			out = append(out, FuncSymbol{Name: s.name, Addr: s.addr, Size: s.size, Module: img.path})
		}
	}
	return out
}

// ReadStatic fills the bytes of b (at runtime address addr) that known
// does not mark from the modules' file-backed read-only segments, and
// marks them.
func (t *Table) ReadStatic(addr uint64, b []byte, known []bool) {
	for _, img := range t.imageList() {
		if addr < img.hi && addr+uint64(len(b)) > img.lo {
			img.readStatic(addr, b, known)
		}
	}
}
