package calls

import (
	"cmp"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"ttd/reader"
	"ttd/symbols"
	"ttd/tracefile"
)

// Process is one process of a recorded tree, as the call analyses see
// it: who forked it, where, and the programs it ran.
type Process struct {
	Pid, Ppid int
	// ForkTid is the parent's thread that forked it and ForkPos where
	// (0 for the first process).
	ForkTid int
	ForkPos uint64
	// Start and End bound the positions it lived (End: the end of the
	// recording when it did not end first).
	Start, End uint64
	// Argv is the last program it ran.
	Argv []string
	// Name identifies the process across recordings, without its pid:
	// the chain of its ancestors' and its own program names with their
	// fork order among siblings of the same name ("bash", "bash/sort",
	// "bash/head#2"...).
	Name string
	// images are the program images it ran, from their first position:
	// the one inherited from its parent, then one per exec.
	images []procImage
}

type procImage struct {
	from uint64
	img  int
}

// Tree is the processes of a recording and the program images they
// ran, from its control records alone (no re-simulation).
type Tree struct {
	Procs  []*Process // in creation order
	byPid  map[int]*Process
	tidPid map[int]int
	// mods[i] are the modules image i mapped, in order; lazy: a trace
	// of one program, whose modules Load reads when asked.
	mods [][]reader.ModuleRef
	lazy bool
}

// NewTree reads the process tree of a recording: a trace of one process
// gives one process with one image.
func NewTree(t *reader.Trace) (*Tree, error) {
	tr := &Tree{byPid: map[int]*Process{}, tidPid: map[int]int{}, mods: [][]reader.ModuleRef{nil}}
	if infos := t.Processes(); len(infos) == 1 && infos[0].Execs == 0 {
		// One process running one program: its Process records say
		// all, without a pass over the trace.
		pi := infos[0]
		tr.add(&Process{Pid: pi.Pid, Ppid: pi.Ppid, Start: pi.Start, End: pi.End, Argv: pi.Argv, images: []procImage{{0, 0}}})
		tr.lazy = true
		tr.finish(t)
		return tr, nil
	}
	var pending *Process
	var firstTid int
	var modImg []int // the image of each module, in order
	// maps: the first mapping of each file in each image, in order (the
	// recorder writes a Module record for a file's first mapping in the
	// whole tree only).
	type mapped struct {
		img  int
		path string
		addr uint64
	}
	var maps []mapped
	seenMap := map[mapped]bool{}
	err := t.ScanEvents(reader.Checkpoint{}, func(ev *reader.Event) bool {
		switch ev.Kind {
		case reader.EventProcess:
			p := ev.Process
			switch p.Event {
			case tracefile.ProcessStarted:
				pr := &Process{Pid: p.Pid, Ppid: p.Ppid, ForkTid: p.Tid, ForkPos: ev.Position, Start: ev.Position, Argv: p.Argv}
				if parent := tr.procOf(p.Tid); parent != nil && p.Tid != 0 {
					pr.Argv = parent.Argv
					pr.images = []procImage{{ev.Position, parent.imageAt(ev.Position)}}
				} else {
					pr.ForkTid, pr.ForkPos = 0, 0
					pr.images = []procImage{{0, 0}}
				}
				tr.add(pr)
				pending = pr
			case tracefile.ProcessExeced:
				if pr := tr.byPid[p.Pid]; pr != nil {
					pr.Argv = p.Argv
					tr.mods = append(tr.mods, nil)
					pr.images = append(pr.images, procImage{ev.Position, len(tr.mods) - 1})
				}
			case tracefile.ProcessExited:
				if pr := tr.byPid[p.Pid]; pr != nil {
					pr.End = ev.Position
				}
			}
		case reader.EventThreadStart:
			ts := ev.Record.ThreadStart
			switch {
			case pending != nil && (ts.ParentTid == pending.ForkTid || pending.ForkTid == 0):
				tr.tidPid[ts.Tid] = pending.Pid
			case ts.ParentTid != 0:
				tr.tidPid[ts.Tid] = tr.tidPid[ts.ParentTid]
			default:
				firstTid = ts.Tid
			}
			pending = nil
		case reader.EventModule:
			img := 0
			if pr := tr.procOf(ev.Tid); pr != nil {
				img = pr.imageAt(ev.Position)
			}
			modImg = append(modImg, img)
		case reader.EventMmap:
			m := &ev.Record.Mmap
			if len(m.Path) == 0 {
				break
			}
			img := 0
			if pr := tr.procOf(ev.Tid); pr != nil {
				img = pr.imageAt(ev.Position)
			}
			k := mapped{img: img, path: string(m.Path)}
			if !seenMap[k] {
				seenMap[k] = true
				k.addr = m.Addr
				maps = append(maps, k)
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	refs, err := t.Modules()
	if err != nil {
		return nil, err
	}
	for i, m := range refs {
		img := 0
		if i < len(modImg) {
			img = modImg[i]
		}
		tr.mods[img] = append(tr.mods[img], m)
	}
	// The modules an image mapped that the recorder had already seen in
	// another: the same file at the image's own address.
	byPath := map[string]reader.ModuleRef{}
	for _, m := range refs {
		if _, ok := byPath[string(m.Path)]; !ok {
			byPath[string(m.Path)] = m
		}
	}
	for _, mp := range maps {
		m, ok := byPath[mp.path]
		if !ok || hasModule(tr.mods[mp.img], mp.path) {
			continue
		}
		m.LoadAddr = mp.addr
		tr.mods[mp.img] = append(tr.mods[mp.img], m)
	}
	if len(tr.Procs) == 0 {
		// A trace without Process records: one process, its first
		// thread's id.
		pr := &Process{Pid: firstTid, images: []procImage{{0, 0}}, Argv: []string{t.Header.ProgramPath}}
		tr.add(pr)
		tr.tidPid = map[int]int{}
	}
	tr.finish(t)
	return tr, nil
}

func (tr *Tree) finish(t *reader.Trace) {
	for _, pr := range tr.Procs {
		if pr.End == 0 {
			pr.End = t.End()
		}
	}
	tr.name()
}

func (tr *Tree) add(pr *Process) {
	tr.Procs = append(tr.Procs, pr)
	tr.byPid[pr.Pid] = pr
}

// name gives every process its identity across recordings.
func (tr *Tree) name() {
	seen := map[string]int{}
	for _, pr := range tr.Procs {
		prog := "?"
		if len(pr.Argv) > 0 {
			prog = path.Base(pr.Argv[0])
		}
		name := prog
		if parent := tr.byPid[pr.Ppid]; parent != nil && parent != pr && pr.ForkTid != 0 {
			name = parent.Name + "/" + prog
		}
		seen[name]++
		if k := seen[name]; k > 1 {
			name = fmt.Sprintf("%s#%d", name, k)
		}
		pr.Name = name
	}
}

// procOf is the process of thread tid (nil: unknown).
func (tr *Tree) procOf(tid int) *Process {
	if pid, ok := tr.tidPid[tid]; ok {
		return tr.byPid[pid]
	}
	if len(tr.Procs) > 0 {
		return tr.Procs[0] // a trace of one process: every thread is its
	}
	return nil
}

// Process returns process pid, or nil.
func (tr *Tree) Process(pid int) *Process { return tr.byPid[pid] }

// PidOf is the process thread tid belongs to (the first process for an
// unknown thread).
func (tr *Tree) PidOf(tid int) int {
	if pr := tr.procOf(tid); pr != nil {
		return pr.Pid
	}
	return 0
}

// imageAt is the image the process runs at pos.
func (p *Process) imageAt(pos uint64) int {
	i := sort.Search(len(p.images), func(i int) bool { return p.images[i].from > pos }) - 1
	if i < 0 {
		i = 0
	}
	return p.images[i].img
}

// gen is the number of execs process p made up to pos.
func (p *Process) gen(pos uint64) int {
	i := sort.Search(len(p.images), func(i int) bool { return p.images[i].from > pos }) - 1
	return max(i, 0)
}

// threadKey is how a segment and stitching know a thread: its tid, and
// the number of execs its process made (an exec starts a new call tree
// in a new program).
func (tr *Tree) threadKey(tid int, pos uint64) (key, img int) {
	pr := tr.procOf(tid)
	if pr == nil {
		return tid, 0
	}
	return tid | pr.gen(pos)<<32, pr.imageAt(pos)
}

// Images is the number of program images the tree ran.
func (tr *Tree) Images() int { return len(tr.mods) }

// loadImages opens each image's symbols (as Load does for the first).
// A file several images mapped (the dynamic loader, libc) is read once,
// and looked up in each at the address it has there.
func (tr *Tree) loadImages(t *reader.Trace) ([]Symbolizer, error) {
	type loaded struct {
		tab  *symbols.Table
		addr uint64
	}
	files := map[string]loaded{}
	out := make([]Symbolizer, len(tr.mods))
	// same: an image that maps the same files at the same addresses as
	// one before it (the 40 bash of a shell loop) is named by the same
	// Symbolizer, which lets segments share one cache of entries
	// (useTree).
	same := map[string]*imageSyms{}
	var errs []error
	for i, refs := range tr.mods {
		img := &imageSyms{}
		for _, m := range refs {
			f, ok := files[string(m.Path)]
			if !ok {
				tab, err := loadModules(t, []reader.ModuleRef{m})
				if tab == nil {
					return nil, err
				}
				if err != nil {
					errs = append(errs, err)
				}
				f = loaded{tab, m.LoadAddr}
				files[string(m.Path)] = f
			}
			for _, mi := range f.tab.Modules() {
				d := m.LoadAddr - f.addr
				img.parts = append(img.parts, symPart{mi.Lo + d, mi.Hi + d, d, f.tab})
			}
		}
		img.parts = visibleParts(img.parts)
		id := img.id()
		if s := same[id]; s != nil {
			img = s
		}
		same[id] = img
		out[i] = img
	}
	return out, errors.Join(errs...)
}

// imageSyms names the functions of one program image from files loaded
// at another address: each part covers [lo, hi) and is looked up delta
// below (the first part that covers an address).
type imageSyms struct{ parts []symPart }

// visibleParts drops the parts that an earlier part covers whole (a
// module the maps name again at the same address, under another path:
// /bin/bash and /usr/bin/bash), and orders the rest by address when none
// of them overlap (then no order changes which part covers an address).
func visibleParts(parts []symPart) []symPart {
	var out []symPart
	for _, p := range parts {
		hidden := false
		for _, q := range out {
			hidden = hidden || q.lo <= p.lo && p.hi <= q.hi
		}
		if !hidden {
			out = append(out, p)
		}
	}
	sorted := slices.Clone(out)
	slices.SortStableFunc(sorted, func(a, b symPart) int { return cmp.Compare(a.lo, b.lo) })
	for i := 1; i < len(sorted); i++ {
		if sorted[i].lo < sorted[i-1].hi {
			return out
		}
	}
	return sorted
}

// id names what s does: images with the same id name every address
// alike.
func (s *imageSyms) id() string {
	var b strings.Builder
	for _, p := range s.parts {
		fmt.Fprintf(&b, "%x %x %x %p;", p.lo, p.hi, p.delta, p.tab)
	}
	return b.String()
}

type symPart struct {
	lo, hi, delta uint64
	tab           *symbols.Table
}

func (s *imageSyms) part(pc uint64) *symPart {
	for i := range s.parts {
		if p := &s.parts[i]; pc >= p.lo && pc < p.hi {
			return p
		}
	}
	return nil
}

// PCToFunc implements Symbolizer.
func (s *imageSyms) PCToFunc(pc uint64) (string, uint64, bool) {
	p := s.part(pc)
	if p == nil {
		return "", 0, false
	}
	name, entry, ok := p.tab.PCToFunc(pc - p.delta)
	return name, entry + p.delta, ok
}

// PCToLine implements Symbolizer.
func (s *imageSyms) PCToLine(pc uint64) (string, int, bool) {
	p := s.part(pc)
	if p == nil {
		return "", 0, false
	}
	return p.tab.PCToLine(pc - p.delta)
}

// UnitFuncForPC implements dwarfNamer.
func (s *imageSyms) UnitFuncForPC(pc uint64) (symbols.Func, bool) {
	p := s.part(pc)
	if p == nil {
		return symbols.Func{}, false
	}
	f, ok := p.tab.UnitFuncForPC(pc - p.delta)
	f.Entry += p.delta
	return f, ok
}

// UnitPCToLine implements dwarfNamer.
func (s *imageSyms) UnitPCToLine(pc uint64) (string, int, bool) {
	p := s.part(pc)
	if p == nil {
		return "", 0, false
	}
	return p.tab.UnitPCToLine(pc - p.delta)
}

func loadModules(t *reader.Trace, refs []reader.ModuleRef) (*symbols.Table, error) {
	var ms []symbols.Module
	for _, m := range refs {
		data, _ := t.ModuleFile(m)
		// The hooks need ELF symbols only (function entries); the names
		// and call-site lines of the result come from the DWARF of the
		// compile units they fall in (dwarfNamer).
		ms = append(ms, symbols.Module{Path: string(m.Path), Data: data, LoadAddr: m.LoadAddr, SymbolsOnly: true})
	}
	return symbols.Load(ms)
}

// threadID is a segment's thread: its key and program image.
type threadID struct{ key, img int }

// keyOf is the key thread tid has now.
func (s *segment) keyOf(tid int) threadID {
	if id, ok := s.keys[tid]; ok {
		return id
	}
	return threadID{tid, 0}
}

// setKey gives thread tid the key and image it has at pos.
func (s *segment) setKey(tid int, pos uint64) threadID {
	if s.tree == nil {
		return threadID{tid, 0}
	}
	k, img := s.tree.threadKey(tid, pos)
	id := threadID{k, img}
	s.keys[tid] = id
	s.keysSet++
	return id
}

// useTree makes the segment follow a process tree's threads through
// forks and execs, naming each program's functions with its symbols.
func (s *segment) useTree(tr *Tree, syms []Symbolizer) {
	s.tree = tr
	if len(syms) <= 1 {
		return
	}
	s.fn.syms = syms
	s.fn.caches = make([]map[uint64]entryOf, len(syms))
	s.fn.canon = make([]int, len(syms))
	first := map[Symbolizer]int{}
	for i, sym := range syms {
		k, ok := first[sym]
		if !ok {
			k = i
			first[sym] = i
			s.fn.caches[i] = map[uint64]entryOf{}
		}
		s.fn.canon[i], s.fn.caches[i] = k, s.fn.caches[k]
	}
	s.fn.img = -1
	s.fn.use(0)
}

// use makes lookups name the functions of image img.
func (f *funcs) use(img int) {
	img = f.canonOf(img)
	if img != f.img && img >= 0 && img < len(f.syms) {
		f.img, f.sym, f.cache = img, f.syms[img], f.caches[img]
	}
}

// canonOf is the image whose cache and symbols image img uses (use).
func (f *funcs) canonOf(img int) int {
	if img >= 0 && img < len(f.canon) {
		return f.canon[img]
	}
	return img
}

// useCur goes back to the image of the thread the hook last saw.
func (s *segment) useCur() {
	if s.cur != nil {
		s.fn.use(s.cur.img)
	}
}

// forkSnap is the stack a thread had when it forked a process: the
// child's first thread starts on a copy of it (its calls continue the
// parent's path).
type forkSnap struct {
	parent, child int // keys
	b             int // base frames the parent had popped
	frames        []frame
}

// threadStart begins a thread: a new thread of a process starts with no
// frames; the first thread of a forked process on a copy of its
// parent's stack, known at stitching as frames open at a checkpoint are.
func (s *segment) threadStart(r *reader.Replay, ev *reader.Event) *segThread {
	ts := ev.Record.ThreadStart
	s.setKey(ev.Tid, ev.Position)
	c := cpuOf(r, ev.Tid)
	if s.tree == nil || ts.ParentTid == 0 || s.tree.PidOf(ts.ParentTid) == s.tree.PidOf(ev.Tid) {
		return s.thread(ev.Tid, c, true, ev.Position)
	}
	ps := s.threads[s.keyOf(ts.ParentTid).key]
	if ps == nil {
		return s.thread(ev.Tid, c, true, ev.Position)
	}
	st := s.thread(ev.Tid, c, false, ev.Position)
	st.basePending, st.baseLook = false, 0
	s.forks = append(s.forks, forkSnap{parent: ps.key, child: st.key, b: ps.b, frames: append([]frame(nil), ps.stack...)})
	return st
}

// exec ends the call tree of the thread that execed and starts another,
// in the new program.
func (s *segment) exec(r *reader.Replay, ev *reader.Event) {
	if s.tree == nil {
		return
	}
	tid := ev.Process.Tid
	if old := s.threads[s.keyOf(tid).key]; old != nil {
		s.finish(old)
	}
	s.setKey(tid, ev.Position)
	s.thread(tid, cpuOf(r, tid), true, ev.Position)
	s.cur, s.curCPU = nil, nil
}

// newThread adds a thread's tree to the profile.
func (s *segment) newThread(p *Profile, st *segThread) *Thread {
	th := &Thread{Tid: st.tid, Root: newRoot(), img: st.img, start: st.start}
	if s.tree != nil {
		th.Pid, th.Exec = s.tree.PidOf(st.tid), st.key>>32
	}
	p.Threads = append(p.Threads, th)
	return th
}

// forkStack is a forked process's first stack: its parent's real frames
// below the base frames it had popped, then the frames its segment had
// pushed, each node the same path in the child's tree (root).
func forkStack(base []gframe, frames []frame, at map[*segNode]*Node, root *Node) []gframe {
	cs := make([]gframe, 0, len(base)+len(frames))
	for _, g := range base {
		g.self = 0
		cs = append(cs, g)
	}
	for _, f := range frames {
		if f.node == nil {
			cs = append(cs, gframe{parent: locate(f.parent, at, nil), site: f.site, pos: f.pos, pc: f.target, slot: f.slot})
			continue
		}
		cs = append(cs, gframe{node: locate(f.node, at, nil), slot: f.slot, pos: f.pos})
	}
	memo := map[*Node]*Node{}
	for i := range cs {
		if cs[i].node != nil {
			cs[i].node = clonePath(cs[i].node, root, memo)
		}
		if cs[i].parent != nil {
			cs[i].parent = clonePath(cs[i].parent, root, memo)
		}
	}
	return cs
}

// clonePath is n's call path in another tree (root), with no calls.
func clonePath(n, root *Node, memo map[*Node]*Node) *Node {
	if n.Depth == 0 {
		return root
	}
	if c, ok := memo[n]; ok {
		return c
	}
	c := clonePath(n.Parent, root, memo).child(key{n.Site, n.Entry, 0})
	memo[n] = c
	return c
}

func hasModule(ms []reader.ModuleRef, path string) bool {
	for _, m := range ms {
		if string(m.Path) == path {
			return true
		}
	}
	return false
}

// procSite is the call site of a process's node in ByProcess.
const procSite = ^uint64(0) - 2

// ByProcess is the call tree of a process tree with one node per
// process, "[process NAME]", above the merged trees of its threads.
// Processes are known by Name (programs and fork order), not pid, so
// that two recordings of one program match (Diff).
func (p *Profile) ByProcess() *Node {
	root := newRoot()
	if p.Tree == nil {
		mergeThreads(root, p.Threads)
		return root
	}
	for i, pr := range p.Tree.Procs {
		var ths []*Thread
		for _, th := range p.Threads {
			if th.Pid == pr.Pid {
				ths = append(ths, th)
			}
		}
		n := root.child(key{procSite, uint64(i), 0})
		n.Func, n.Count = "[process "+pr.Name+"]", 1
		n.First, n.FirstTid = pr.Start, pr.Pid
		mergeThreads(n, ths)
		for _, c := range n.Children {
			n.Total += c.Total
		}
		n.Total += n.Self
		root.Total += n.Total
	}
	return root
}
