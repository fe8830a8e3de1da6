package probe

import (
	"ttd/reader"
	"ttd/symbols"
	"ttd/ttd"
	"ttd/x86"
)

// OpenTarget opens a recording for probing: the trace, its symbol table
// (from the recorded binaries or their copies embedded in the trace)
// and, when withIndex is set, its index (built on first use and saved
// next to the trace, as ttd query does), so that scripts reading memory
// see bytes learned before their segment. progress, when set, is told
// about an index build. close releases everything.
func OpenTarget(path string, withIndex bool, progress func(done, total int)) (t *Target, close func(), symErr error, err error) {
	return openTarget(path, withIndex, false, 0, progress)
}

// OpenTargetFor opens a recording for probing with p: with its index
// when p reads memory, and with the modules' ELF symbols only when p
// needs no DWARF (NeedsDWARF).
func OpenTargetFor(path string, p *Program, progress func(done, total int)) (t *Target, close func(), symErr error, err error) {
	return openTarget(path, p.NeedsMemory(), !p.NeedsDWARF(), 0, progress)
}

// OpenTargetJobs is OpenTargetFor for a run with jobs jobs (RunOptions):
// while the symbols load, the chunks where the jobs will start decode
// (when p's segments chain: one re-simulation per job).
func OpenTargetJobs(path string, p *Program, jobs int, progress func(done, total int)) (t *Target, close func(), symErr error, err error) {
	if p.needMemory {
		jobs = 0
	}
	return openTarget(path, p.NeedsMemory(), !p.NeedsDWARF(), jobs, progress)
}

func openTarget(path string, withIndex, symbolsOnly bool, jobs int, progress func(done, total int)) (t *Target, close func(), symErr error, err error) {
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
	// Bind lists the checkpoints: from the index (tracefile minor 6),
	// or by decoding the chunks that hold some (every chunk, in
	// parallel). Either overlaps the symbols' loading, and so does
	// decoding the chunks the jobs start in.
	go prefetchJobStarts(tr, jobs)
	images := &symbols.ImageCache{}
	tb, symErr := loadSymbolsWith(images, tr, symbolsOnly)
	return &Target{Name: path, Trace: tr, Syms: tb, images: images}, func() { tr.Close() }, symErr, nil
}

// prefetchJobStarts makes the process-wide preparations for guest code
// now (x86.OnFirstDecode: cmd/ttd reserves a huge-page heap, with a
// collection, which the first job's first decoded block otherwise
// paid, inside the eval, the other job running beside the collection
// and the heap grown: 13-41 ms of wall of marking in sort -n and gzip
// -9's `--jobs 2`), lists the checkpoints and, for a run of jobs jobs,
// starts decoding the chunks where they will start (chainRuns' split),
// then decodes the checkpoint memory the jobs starting past the first
// restore (reader.Trace.PrefetchRestore), while the symbols load and
// the program binds on the other core: xz -6's second job's first
// segment took 65-76 ms of thread CPU against 82-116 (4 runs each).
func prefetchJobStarts(tr *reader.Trace, jobs int) {
	if f := x86.OnFirstDecode; f != nil && jobs > 0 {
		f()
	}
	cps, err := tr.Checkpoints()
	if err != nil || jobs <= 0 || len(cps) == 0 {
		return
	}
	var startCosts []uint64 // (one job starts nowhere else)
	if jobs > 1 {
		startCosts = tr.RunStartCosts(cps)
	}
	starts := chainStarts(tr.SegmentCosts(cps), jobs, startCosts, func(int) bool { return false })
	for _, k := range starts {
		tr.Prefetch(cps[k].Chunk)
	}
	for _, k := range starts[1:] {
		tr.PrefetchRestore(cps[k])
	}
}

// LoadSymbols builds the symbol table of a trace's modules. A module
// whose file is gone and not embedded is left out; the error says which.
func LoadSymbols(tr *reader.Trace) (*symbols.Table, error) { return loadSymbols(tr, false) }

func loadSymbols(tr *reader.Trace, symbolsOnly bool) (*symbols.Table, error) {
	return loadSymbolsWith(nil, tr, symbolsOnly)
}

// loadSymbolsWith is loadSymbols through images (nil: none), which then
// holds the modules for the tables of a process tree's programs
// (loadPrograms), so that Bind does not load them again.
func loadSymbolsWith(images *symbols.ImageCache, tr *reader.Trace, symbolsOnly bool) (*symbols.Table, error) {
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
	if images != nil {
		return images.Load(ms)
	}
	return symbols.Load(ms)
}
