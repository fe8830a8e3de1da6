package probe

import (
	"ttd/reader"
	"ttd/symbols"
	"ttd/ttd"
)

// OpenTarget opens a recording for probing: the trace, its symbol table
// (from the recorded binaries or their copies embedded in the trace)
// and, when withIndex is set, its index (built on first use and saved
// next to the trace, as ttd query does), so that scripts reading memory
// see bytes learned before their segment. progress, when set, is told
// about an index build. close releases everything.
func OpenTarget(path string, withIndex bool, progress func(done, total int)) (t *Target, close func(), symErr error, err error) {
	return openTarget(path, withIndex, false, progress)
}

// OpenTargetFor opens a recording for probing with p: with its index
// when p reads memory, and with the modules' ELF symbols only when p
// needs no DWARF (NeedsDWARF).
func OpenTargetFor(path string, p *Program, progress func(done, total int)) (t *Target, close func(), symErr error, err error) {
	return openTarget(path, p.NeedsMemory(), !p.NeedsDWARF(), progress)
}

func openTarget(path string, withIndex, symbolsOnly bool, progress func(done, total int)) (t *Target, close func(), symErr error, err error) {
	if withIndex {
		s, err := ttd.OpenWith(path, ttd.Options{Progress: progress})
		if err != nil {
			return nil, nil, nil, err
		}
		sy, symErr := s.Symbols()
		tb, _ := sy.(*symbols.Table)
		return &Target{Name: path, Trace: s.Trace(), Syms: tb, Index: s.Index()}, func() { s.Close() }, symErr, nil
	}
	tr, err := reader.Open(path)
	if err != nil {
		return nil, nil, nil, err
	}
	// Bind lists the checkpoints, which decodes the chunks that hold
	// some (every chunk, in parallel): it overlaps the symbols' loading.
	go tr.Checkpoints()
	tb, symErr := loadSymbols(tr, symbolsOnly)
	return &Target{Name: path, Trace: tr, Syms: tb}, func() { tr.Close() }, symErr, nil
}

// LoadSymbols builds the symbol table of a trace's modules. A module
// whose file is gone and not embedded is left out; the error says which.
func LoadSymbols(tr *reader.Trace) (*symbols.Table, error) { return loadSymbols(tr, false) }

func loadSymbols(tr *reader.Trace, symbolsOnly bool) (*symbols.Table, error) {
	mods, err := tr.Modules()
	if err != nil {
		return nil, err
	}
	var ms []symbols.Module
	for _, m := range mods {
		sm := symbols.Module{Path: string(m.Path), LoadAddr: m.LoadAddr, SymbolsOnly: symbolsOnly}
		if data, err := tr.ModuleFile(m); err == nil && data != nil {
			sm.Data = data
		}
		ms = append(ms, sm)
	}
	return symbols.Load(ms)
}
