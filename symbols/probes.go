package symbols

import (
	"cmp"
	"slices"
	"strings"
)

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
	// Demangled is the C++ name demangled (zero for C and Go names, and
	// until DemangleFuncs fills it).
	Demangled Demangled
}

// FuncSymbols lists the function symbols of every module, aliases
// included (malloc, __libc_malloc and __GI___libc_malloc are three
// entries at one address), in module load order, then by address; at
// one address the name with the fewest leading underscores comes first.
func (t *Table) FuncSymbols() []FuncSymbol {
	imgs := t.symbolImages()
	// Sized up front: grown by append, libc's names took most of the
	// 20 ms `ttd probe` spent here before its jobs could start.
	n := 0
	for _, img := range imgs {
		n += len(img.symNames)
	}
	out := make([]FuncSymbol, 0, n)
	for _, img := range imgs {
		start := len(out)
		for name, s := range img.symNames {
			if s.fn && s.size > 0 || s.fn && name == s.name {
				out = append(out, FuncSymbol{Name: name, Addr: s.addr, Size: s.size, Module: img.path})
			}
		}
		mine := out[start:]
		// (A total order: the names are distinct.)
		slices.SortFunc(mine, func(a, b FuncSymbol) int {
			if c := cmp.Compare(a.Addr, b.Addr); c != 0 {
				return c
			}
			ua, ub := len(a.Name)-len(strings.TrimLeft(a.Name, "_")), len(b.Name)-len(strings.TrimLeft(b.Name, "_"))
			if c := cmp.Compare(ua, ub); c != 0 {
				return c
			}
			return strings.Compare(a.Name, b.Name)
		})
	}
	return out
}

// symbolImages lists the modules for their ELF symbols: unlike
// imageList it loads no DWARF (binding a live fn probe paid 0.6-0.7 s
// of CPU for libc's debug file, whose DWARF fn probes never use).
func (t *Table) symbolImages() []*image {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return append([]*image(nil), t.images...)
}

// DemangleFuncs fills the Demangled names of fs (from FuncSymbols).
// Each module's names are demangled once, on first use: 4,400 names of
// libstdc++ take a few hundred milliseconds, which scripts that name no
// function do not pay.
func (t *Table) DemangleFuncs(fs []FuncSymbol) {
	byPath := map[string]map[string]Demangled{}
	for _, img := range t.symbolImages() {
		if _, ok := byPath[img.path]; !ok {
			byPath[img.path] = nil
		}
	}
	for i := range fs {
		f := &fs[i]
		if !strings.HasPrefix(f.Name, "_Z") {
			continue
		}
		dm, ok := byPath[f.Module]
		if dm == nil && ok {
			for _, img := range t.symbolImages() {
				if img.path == f.Module {
					dm = img.demangledNames()
					break
				}
			}
			byPath[f.Module] = dm
		}
		f.Demangled = dm[f.Name]
	}
}

// ReadStatic fills the bytes of b (at runtime address addr) that known
// does not mark from the modules' file-backed read-only segments, and
// marks them. A byte that images of different files cover (the table of
// a process tree whose processes ran different programs at the same
// addresses) is left unknown: which one was mapped depends on the
// process, and a guess would invent its value.
func (t *Table) ReadStatic(addr uint64, b []byte, known []bool) {
	var cover []*image
	for _, img := range t.imageList() {
		if addr < img.hi && addr+uint64(len(b)) > img.lo {
			cover = append(cover, img)
		}
	}
	for i := 0; i < len(b); {
		a := addr + uint64(i)
		var one *image
		ambiguous := false
		for _, img := range cover {
			if a >= img.lo && a < img.hi {
				if one != nil && (one.path != img.path || one.bias != img.bias) {
					ambiguous = true
				}
				one = img
			}
		}
		// The run of bytes with the same covering images.
		j := i + 1
		for j < len(b) && sameCover(cover, a, addr+uint64(j)) {
			j++
		}
		if one != nil && !ambiguous {
			one.readStatic(a, b[i:j], known[i:j])
		}
		i = j
	}
}

// sameCover reports whether the same images of cover hold a and c.
func sameCover(cover []*image, a, c uint64) bool {
	for _, img := range cover {
		if (a >= img.lo && a < img.hi) != (c >= img.lo && c < img.hi) {
			return false
		}
	}
	return true
}
