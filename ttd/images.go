package ttd

import (
	"errors"
	"sort"
	"strconv"
	"strings"

	"ttd/reader"
	"ttd/symbols"
	"ttd/tracefile"
)

// Symbols per program image. In a recording of a process tree each
// process runs one program at a time: the one it inherited from its
// parent at the fork, then one per exec. Programs overlap (a shell and
// the PIE program it execs are both mapped at the same address), so a
// code address means something only with the process and the position:
// the session keeps one symbol table per program image, built on first
// use from the modules that image mapped, and shared by every process
// and position running it (a forked child shares its parent's image).
// Tables are cached by their module list (paths and load addresses), so
// that two images of the same program at the same addresses share one,
// and package symbols shares each loaded module between tables.

// progImage is one program image of a tree: the modules it mapped, in
// order.
type progImage struct {
	mods []imageMod
	// pid is the process that started the image (by exec, or the first
	// process) at position start; end is where that process stopped
	// running it (its next exec or its end; 0: the end of the trace).
	pid        int
	start, end uint64
}

// imageMod is a module of an image: the index of its Module record in
// Session.Modules and where this image mapped it.
type imageMod struct {
	mod  int
	addr uint64
	pos  uint64 // where it was mapped
}

// procImages are the images a process ran, by first position.
type procImages struct {
	from []uint64
	img  []int
}

// at is the image the process runs at pos: an exec's position belongs
// to the program it starts.
func (p *procImages) at(pos uint64) int {
	i := sort.Search(len(p.from), func(i int) bool { return p.from[i] > pos })
	if i == 0 {
		return p.img[0]
	}
	return p.img[i-1]
}

// imageIndex is every process's images, from the control records alone
// (no re-simulation).
type imageIndex struct {
	images []progImage
	procs  map[int]*procImages
	// tables are the images' symbol tables, once built.
	tables map[int]symsResult
}

// buildImages reads the program images of a tree recording. The recorder
// writes a Module record for a file's first mapping in the whole tree
// only, so an image's other modules are its Mmap records at file offset
// 0 of files some Module record names. The Mmap records that follow a
// Checkpoint restate every process's mappings for re-simulation; they
// say nothing new and are skipped.
func buildImages(tr *reader.Trace, mods []ModuleFile) (*imageIndex, error) {
	ix := &imageIndex{procs: map[int]*procImages{}, tables: map[int]symsResult{}}
	modByPath := map[string]int{}
	for i, m := range mods {
		if _, ok := modByPath[m.recorded]; !ok {
			modByPath[m.recorded] = i
		}
	}
	tidPid := map[int]int{}
	newImage := func(pid int, pos uint64) int {
		ix.images = append(ix.images, progImage{pid: pid, start: pos})
		return len(ix.images) - 1
	}
	imageOf := func(tid int, pos uint64) int {
		pid, ok := tidPid[tid]
		if !ok && len(ix.procs) == 1 {
			// Before the first thread's records: the first process.
			for pid = range ix.procs {
			}
		}
		if p := ix.procs[pid]; p != nil {
			return p.at(pos)
		}
		return -1
	}
	seen := map[[2]uint64]bool{} // image, module
	add := func(img int, path string, addr, pos uint64) {
		mi, ok := modByPath[path]
		if !ok {
			return
		}
		if img < 0 || seen[[2]uint64{uint64(img), uint64(mi)}] {
			return
		}
		seen[[2]uint64{uint64(img), uint64(mi)}] = true
		ix.images[img].mods = append(ix.images[img].mods, imageMod{mod: mi, addr: addr, pos: pos})
	}
	restating := false
	err := tr.ScanEvents(reader.Checkpoint{}, func(ev *reader.Event) bool {
		if ev.Kind != reader.EventMmap {
			restating = ev.Kind == reader.EventCheckpoint
		}
		switch ev.Kind {
		case reader.EventProcess:
			p := ev.Process
			switch p.Event {
			case tracefile.ProcessStarted:
				img := imageOf(p.Tid, ev.Position)
				if img < 0 {
					img = newImage(p.Pid, ev.Position)
				}
				ix.procs[p.Pid] = &procImages{from: []uint64{ev.Position}, img: []int{img}}
				tidPid[p.Pid] = p.Pid
			case tracefile.ProcessExeced:
				if pi := ix.procs[p.Pid]; pi != nil {
					if last := &ix.images[pi.img[len(pi.img)-1]]; last.pid == p.Pid {
						last.end = ev.Position
					}
					pi.from = append(pi.from, ev.Position)
					pi.img = append(pi.img, newImage(p.Pid, ev.Position))
				}
			case tracefile.ProcessExited:
				if pi := ix.procs[p.Pid]; pi != nil {
					if last := &ix.images[pi.img[len(pi.img)-1]]; last.pid == p.Pid && last.end == 0 {
						last.end = ev.Position
					}
				}
			}
		case reader.EventThreadStart:
			ts := ev.Record.ThreadStart
			if _, ok := ix.procs[ts.Tid]; !ok {
				if pid, ok := tidPid[ts.ParentTid]; ok {
					tidPid[ts.Tid] = pid
				} else if len(ix.procs) == 1 {
					// The first thread of a trace whose first Process
					// record came first.
					for pid := range ix.procs {
						tidPid[ts.Tid] = pid
					}
				}
			}
		case reader.EventMmap:
			m := &ev.Record.Mmap
			if !restating && m.Offset == 0 && len(m.Path) > 0 {
				add(imageOf(ev.Tid, ev.Position), string(m.Path), m.Addr, ev.Position)
			}
		case reader.EventModule:
			add(imageOf(ev.Tid, ev.Position), string(ev.Module.Path), ev.Module.LoadAddr, ev.Position)
		}
		return true
	})
	return ix, err
}

// key names an image's module list: images with the same key have the
// same symbols.
func (im *progImage) key(mods []ModuleFile) string {
	var b strings.Builder
	for _, m := range im.mods {
		b.WriteString(mods[m.mod].Path)
		b.WriteByte('@')
		b.WriteString(strconv.FormatUint(m.addr, 16))
		b.WriteByte(';')
	}
	return b.String()
}

// ProcessSymbols returns the symbol table of the program process pid
// runs at the current position: in a recording of a process tree, only
// that program's modules, where that process mapped them; else (one
// process, or a process the recording does not describe) Symbols.
func (s *Session) ProcessSymbols(pid int) (Symbolizer, error) {
	if !s.tr.Tree() {
		return s.Symbols()
	}
	ix, err := s.imageIndex()
	if err != nil || ix == nil {
		return s.Symbols()
	}
	p := ix.procs[pid]
	if p == nil {
		return s.Symbols()
	}
	i := p.at(s.Position())
	if r, ok := ix.tables[i]; ok {
		return r.sy, r.err
	}
	img := &ix.images[i]
	if len(img.mods) == 0 {
		return s.Symbols()
	}
	mods, _ := s.Modules()
	k := img.key(mods)
	r, ok := s.imgSyms[k]
	if !ok {
		r.sy, r.err = loadSymbols(s.imgCache, img.modules(mods))
		if r.sy == nil {
			r.sy = noSymbols{}
		}
		if s.imgSyms == nil {
			s.imgSyms = map[string]symsResult{}
		}
		s.imgSyms[k] = r
	}
	ix.tables[i] = r
	return r.sy, r.err
}

func (im *progImage) modules(mods []ModuleFile) []ModuleFile {
	var ms []ModuleFile
	for _, m := range im.mods {
		mf := mods[m.mod]
		mf.LoadAddr, mf.Position = m.addr, m.pos
		ms = append(ms, mf)
	}
	return ms
}

// ProgramImage is the program a process runs at a position of a
// process tree's recording.
type ProgramImage struct {
	// Pid is the process that started it, at Start: by exec, or as the
	// first process (a forked child runs its parent's); End is where Pid
	// stopped running it (0: it ran to the end of the recording).
	Pid        int
	Start, End uint64
	// Modules are the files it mapped, where it mapped them and when,
	// the executable first.
	Modules []ModuleFile
}

// ProcessImage returns the program process pid runs at the current
// position; ok is false in a recording of one process, or for a process
// the recording does not describe.
func (s *Session) ProcessImage(pid int) (im ProgramImage, ok bool) {
	if !s.tr.Tree() {
		return im, false
	}
	ix, err := s.imageIndex()
	if err != nil || ix == nil || ix.procs[pid] == nil {
		return im, false
	}
	pi := &ix.images[ix.procs[pid].at(s.Position())]
	mods, _ := s.Modules()
	return ProgramImage{Pid: pi.pid, Start: pi.start, End: pi.end, Modules: pi.modules(mods)}, true
}

// ThreadSymbols is ProcessSymbols of the process thread tid belongs to
// at the current position (tid 0: the current thread).
func (s *Session) ThreadSymbols(tid int) (Symbolizer, error) {
	if !s.tr.Tree() {
		return s.Symbols()
	}
	if tid == 0 {
		tid, _ = s.CurrentThread()
	}
	return s.ProcessSymbols(s.ThreadPid(tid))
}

type symsResult struct {
	sy  Symbolizer
	err error
}

// imageIndex reads the tree's program images on first use.
func (s *Session) imageIndex() (*imageIndex, error) {
	if !s.imgsOK {
		s.imgsOK = true
		mods, err := s.Modules()
		if err != nil {
			s.imgsErr = err
			return nil, err
		}
		s.imgs, s.imgsErr = buildImages(s.tr, mods)
	}
	return s.imgs, s.imgsErr
}

// Programs are the programs of a process tree's recording, for a reader
// of the trace without a session: package probe binds its probes once
// per program, so that a probe on one program's function fires only in
// the processes running that program, under its names. A program is an
// image's module list (paths and load addresses): images with the same
// list share it, and its symbol table.
type Programs struct {
	ix *imageIndex
	// prog maps an image to its program (-1: the image mapped no
	// module the recording names).
	prog   []int
	tables []*symbols.Table
}

// ReadPrograms reads the program images of tr's process tree (refs are
// tr.Modules()) and loads each program's symbol table through cache
// (symbolsOnly: ELF symbols, no DWARF). It returns nil for a recording
// of one program: not a tree, or one process that never exec'd. err
// joins the modules that could not be loaded (their programs lack
// them).
func ReadPrograms(tr *reader.Trace, refs []reader.ModuleRef, cache *symbols.ImageCache, symbolsOnly bool) (*Programs, error) {
	if OneProgram(tr) {
		return nil, nil
	}
	mods := moduleFiles(tr, refs, nil)
	ix, err := buildImages(tr, mods)
	if err != nil {
		return nil, err
	}
	p := &Programs{ix: ix}
	byKey := map[string]int{}
	var errs []error
	for i := range ix.images {
		im := &ix.images[i]
		if len(im.mods) == 0 {
			p.prog = append(p.prog, -1)
			continue
		}
		k := im.key(mods)
		n, ok := byKey[k]
		if !ok {
			var ms []symbols.Module
			for _, m := range im.modules(mods) {
				ms = append(ms, symbols.Module{Path: m.Path, Data: m.Data, LoadAddr: m.LoadAddr, SymbolsOnly: symbolsOnly})
			}
			t, err := cache.Load(ms)
			if err != nil {
				errs = append(errs, err)
			}
			n = len(p.tables)
			byKey[k] = n
			p.tables = append(p.tables, t)
		}
		p.prog = append(p.prog, n)
	}
	return p, errors.Join(errs...)
}

// OneProgram reports whether tr recorded one program: not a tree, or
// one process that never exec'd (ReadPrograms returns nil for it). It
// reads no chunk.
func OneProgram(tr *reader.Trace) bool {
	if !tr.Tree() {
		return true
	}
	ps := tr.Processes()
	return len(ps) == 0 || len(ps) == 1 && ps[0].Execs == 0
}

// Len is the number of programs.
func (p *Programs) Len() int { return len(p.tables) }

// Table is program i's symbol table.
func (p *Programs) Table(i int) *symbols.Table { return p.tables[i] }

// At is the program process pid runs at pos (an exec's position belongs
// to the program it starts); -1 for a process the recording does not
// describe, or an image that mapped no module.
func (p *Programs) At(pid int, pos uint64) int {
	pi := p.ix.procs[pid]
	if pi == nil {
		return -1
	}
	return p.prog[pi.at(pos)]
}
