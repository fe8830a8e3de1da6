package ttd

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"ttd/reader"
	"ttd/symbols"
)

// Symbolizer is what the session needs from a symbol table (package
// symbols' Table: ELF symbols, DWARF lines, CFI). Tests and tools may
// swap in another through loadSymbols.
type Symbolizer interface {
	// PCToFunc names the function containing pc and gives its entry.
	PCToFunc(pc uint64) (name string, entry uint64, ok bool)
	// PCToLine gives the source line of pc, when there is DWARF.
	PCToLine(pc uint64) (file string, line int, ok bool)
	// LookupSymbol finds a global symbol's address and size.
	LookupSymbol(name string) (addr, size uint64, ok bool)
}

// ModuleFile is a mapped ELF file of the recording, as a symbol table
// loads it: its path, its bytes when the trace embeds them, and where
// its first PT_LOAD segment was mapped.
type ModuleFile struct {
	Path     string
	Data     []byte
	LoadAddr uint64
	Position uint64 // where the mapping took effect
	// recorded is the path the recording names (Path may be another
	// file: SetBinaries).
	recorded string
}

// loadSymbols builds the symbol table of mods, with the modules cache
// has loaded before (the session's tables share their modules).
func loadSymbols(cache *symbols.ImageCache, mods []ModuleFile) (Symbolizer, error) {
	var ms []symbols.Module
	for _, m := range mods {
		ms = append(ms, symbols.Module{Path: m.Path, Data: m.Data, LoadAddr: m.LoadAddr})
	}
	t, err := cache.Load(ms)
	if t == nil {
		return nil, err
	}
	return t, err
}

// Modules lists the executables and libraries the recording mapped, in
// order, with their embedded files when the trace has them (ttd record
// --embed-binaries).
func (s *Session) Modules() ([]ModuleFile, error) {
	if !s.modsOK {
		mods, err := s.tr.Modules()
		if err != nil {
			return nil, err
		}
		s.mods, s.modsOK = mods, true
	}
	return moduleFiles(s.tr, s.mods, s.binaries), nil
}

// moduleFiles are the recording's modules, once each (path and load
// address), as symbol tables load them: from binaries' replacement
// paths, else with their embedded files.
func moduleFiles(tr *reader.Trace, refs []reader.ModuleRef, binaries map[string]string) []ModuleFile {
	var out []ModuleFile
	type key struct {
		path string
		addr uint64
	}
	seen := map[key]bool{}
	for _, m := range refs {
		// A ring-buffer trace announces its modules again at every
		// checkpoint.
		if k := (key{string(m.Path), m.LoadAddr}); seen[k] {
			continue
		} else {
			seen[k] = true
		}
		mf := ModuleFile{Path: string(m.Path), LoadAddr: m.LoadAddr, Position: m.Position, recorded: string(m.Path)}
		if alt, ok := binaries[mf.Path]; ok {
			mf.Path = alt
		} else if data, err := tr.ModuleFile(m); err == nil && data != nil {
			mf.Data = data
		}
		out = append(out, mf)
	}
	return out
}

// SetBinaries makes the session read its modules' files from other
// paths: recorded path → file to read instead (a copy of a binary that
// moved, or one with debug information). It drops the symbol table
// built so far.
func (s *Session) SetBinaries(m map[string]string) {
	s.binaries = m
	s.syms, s.symsErr = nil, nil
	s.imgSyms, s.imgCache = nil, &symbols.ImageCache{}
	if s.imgs != nil {
		s.imgs.tables = map[int]symsResult{}
	}
}

// Symbols returns the session's symbol table (built on first use; never
// nil). A module whose file is gone and not embedded is left out; err
// says which.
func (s *Session) Symbols() (Symbolizer, error) {
	if s.syms == nil {
		mods, err := s.Modules()
		if err != nil {
			s.syms, s.symsErr = noSymbols{}, err
			return s.syms, err
		}
		s.syms, s.symsErr = loadSymbols(s.imgCache, mods)
		if s.syms == nil {
			s.syms = noSymbols{}
		}
	}
	return s.syms, s.symsErr
}

// Describe names a code address: function+offset and file:line when
// known, else the address alone.
func Describe(sy Symbolizer, pc uint64) string {
	if sy == nil {
		return fmt.Sprintf("%#x", pc)
	}
	s := fmt.Sprintf("%#x", pc)
	if name, entry, ok := sy.PCToFunc(pc); ok {
		s += " " + name
		if pc != entry {
			s += fmt.Sprintf("+%#x", pc-entry)
		}
	}
	if file, line, ok := sy.PCToLine(pc); ok {
		s += fmt.Sprintf(" (%s:%d)", file, line)
	}
	return s
}

// ResolveAddr parses an address: hex with 0x, a global symbol "name" or
// "name+off" (off in Go syntax: 0x10, 16), or bare hex digits that name
// no symbol.
func ResolveAddr(sy Symbolizer, text string) (uint64, error) {
	t := strings.TrimSpace(text)
	if t == "" {
		return 0, errors.New("empty address")
	}
	if strings.HasPrefix(t, "0x") || strings.HasPrefix(t, "0X") {
		v, err := strconv.ParseUint(t[2:], 16, 64)
		if err != nil {
			return 0, fmt.Errorf("bad address %q", t)
		}
		return v, nil
	}
	name, off := t, uint64(0)
	if i := strings.LastIndexByte(t, '+'); i > 0 {
		o, err := strconv.ParseUint(t[i+1:], 0, 64)
		if err != nil {
			return 0, fmt.Errorf("bad offset in %q", t)
		}
		name, off = t[:i], o
	}
	if sy != nil {
		if addr, _, ok := sy.LookupSymbol(name); ok {
			return addr + off, nil
		}
	}
	if v, err := strconv.ParseUint(t, 16, 64); err == nil {
		return v, nil
	}
	if sy == nil {
		return 0, fmt.Errorf("%q: no symbols", name)
	}
	return 0, fmt.Errorf("no symbol %q in the recorded modules", name)
}

// noSymbols is the table of a trace whose modules could not be read.
type noSymbols struct{}

func (noSymbols) PCToFunc(uint64) (string, uint64, bool)     { return "", 0, false }
func (noSymbols) PCToLine(uint64) (string, int, bool)        { return "", 0, false }
func (noSymbols) LookupSymbol(string) (uint64, uint64, bool) { return 0, 0, false }
