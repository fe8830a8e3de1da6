package calls

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"ttd/reader"
	"ttd/symbols"
)

// Symbolizer names code addresses (symbols.Table). It must be safe for
// concurrent use: segments run in parallel.
type Symbolizer interface {
	PCToFunc(pc uint64) (name string, entry uint64, ok bool)
	PCToLine(pc uint64) (file string, line int, ok bool)
}

// Node is a call path: the calls from the thread's first function down
// to Func, entered from call site Site.
//
// A segment follows calls in Nodes (segNode): their first fields are
// those following a call asks of the node called and childCache.lookup
// checks it by, in the first cache line, and the segment's own fields
// (last to next) follow. Stitching adopts a segment's nodes as the
// result's where no node of the same path is there yet (merge): sort
// -n's 1.2 million paths are made once, not as segment nodes and then
// copied into Nodes.
type Node struct {
	Count uint64 // calls that entered this path
	Self  uint64 // instructions run with this path on top
	First uint64 // position of the first call
	Site  uint64 // the call instruction (0 for a thread's first function)
	Entry uint64 // the function's entry address (the signal number for a signal frame)
	// Parent is the path one call shorter (nil for a thread's root; in
	// a segment, the segment's parent node).
	Parent *Node

	// last: the child childCache.child returned last: a loop calling
	// one function from the same path finds it here, checked by the
	// child's own key.
	last *Node
	// nkids is how many children the segment made the node (below
	// segKidsInline child looks through the list: kid, then each next;
	// beyond it childCache.many finds them).
	nkids uint32
	// id tells the path from the others for childCache's hash: a
	// recursion's paths at every depth have the same keys (lua's
	// fib, hashed by keys alone, sent a million lookups to the maps;
	// sqlite3 3.7 million), so the hash takes the parent's id, made
	// from its own parent's and the order it was made in.
	id uint32
	// kid is the node's last child a segment made, and those children
	// are a circular sibling list through next, each child's next the
	// child made after it, the last's the first (kid.next): sort -n's
	// merge sort makes a million paths, most with one or two children,
	// and a block of inline keys for each (144 bytes) was as much
	// memory as the nodes, most of its cost the kernel's and the
	// allocator's zeroing of new pages. Oldest first, a walk of the
	// tree reads the nodes in the order they were made, which is where
	// they lie; newest first, every sibling was a miss.
	kid, next *Node

	FirstTid int // the thread that made the first call

	// NodeInfo holds what only stitching, naming, printing and JSON
	// read, apart from the fields the segment's following touches per
	// record (above): with them in the Node, a node was 192 bytes, the
	// segment's were 104 before they became Nodes, and the bash+python3
	// tree's childCache.lookup missed more. nil in a segment's node
	// until stitching adopts it (adopt); every other Node has one.
	*NodeInfo
}

// NodeInfo is the part of a Node the call tree's users read: its name,
// site, totals, depth and children.
type NodeInfo struct {
	Func string // the function's name ("0x…" without a symbol)
	// SiteName names the call site: file:line when there is DWARF, else
	// caller+offset.
	SiteName string
	Total    uint64 // Self and the instructions of every longer path
	Depth    int32  // 1 for a thread's first function, 0 for a root
	// img is the node's key's image; it shares a word with Depth: 8
	// bytes fewer of each path's (sort -n: 1.2 million).
	img      int32
	Children []*Node // by first position

	// kids finds a child by key once there are more than kidsInline
	// (child).
	kids map[key]*Node
}

// newRoot is an empty tree's root.
func newRoot() *Node { return &Node{First: noPos, NodeInfo: &NodeInfo{}} }

// adopted reports whether segment node n is a real node: stitching
// adopted it (adopt gives it its NodeInfo). The nodes locate walks are
// a segment's, below its bases, never a result's root.
func (n *Node) adopted() bool { return n.NodeInfo != nil }

// kidsInline is how many children child looks through in Children
// before it keeps a map: most paths have a few (sort -n's merge sort
// makes a million paths, and a map for each of them cost more than
// re-simulating the recording, most of it allocating and collecting).
const kidsInline = 8

// Path is the chain of function names from the root to n.
func (n *Node) Path() []string {
	var p []string
	for m := n; m != nil && m.Depth > 0; m = m.Parent {
		p = append(p, m.Func)
	}
	for i, j := 0, len(p)-1; i < j; i, j = i+1, j-1 {
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// PathString joins Path with arrows.
func (n *Node) PathString() string { return strings.Join(n.Path(), " → ") }

// Walk calls fn for n's descendants in depth-first order, children by
// first position; fn returning false skips a node's children.
func (n *Node) Walk(fn func(m *Node) bool) {
	for _, c := range n.Children {
		if fn(c) {
			c.Walk(fn)
		}
	}
}

func (n *Node) child(k key) *Node { return n.childIn(k, nil) }

// childIn is child, with a new node from a (nil: the heap).
func (n *Node) childIn(k key, a *treeAlloc) *Node {
	if c := n.find(k); c != nil {
		return c
	}
	c := a.node()
	*c = Node{Entry: k.Entry, Site: k.Site, First: noPos, Parent: n, NodeInfo: a.info()}
	c.Depth, c.img = n.Depth+1, int32(k.img)
	n.add(k, c)
	return c
}

// find is n's child k, nil if none.
func (n *Node) find(k key) *Node {
	if n.kids != nil {
		return n.kids[k]
	}
	for _, c := range n.Children {
		if c.Site == k.Site && c.Entry == k.Entry && int(c.img) == k.img {
			return c
		}
	}
	if len(n.Children) >= kidsInline {
		n.kids = make(map[key]*Node, 2*len(n.Children))
		for _, c := range n.Children {
			n.kids[key{c.Site, c.Entry, int(c.img)}] = c
		}
	}
	return nil
}

// add makes c, found by key k, n's last child.
func (n *Node) add(k key, c *Node) {
	if n.kids != nil {
		n.kids[k] = c
	}
	n.Children = append(n.Children, c)
}

// Thread is one thread's call tree: of one program, as an exec starts
// another tree (Exec counts the execs before it). The tree of a forked
// process's first thread continues the forking thread's call path: its
// first nodes are that path, with no calls of their own.
type Thread struct {
	Tid  int
	Pid  int
	Exec int
	Root *Node // a pseudo-node: its children are the thread's first functions
	img  int
	// start is the position where the tree starts: the thread's start,
	// its process's exec, or the recording's first checkpoint.
	start uint64
}

// Profile is a recording's call tree.
type Profile struct {
	Threads      []*Thread // in order of first appearance
	Instructions uint64    // the recording's
	// Segments is the number of segments re-simulated, each from a
	// checkpoint (segmentStarts).
	Segments int
	// Flows, with Options.FlowOf, holds what each flow spent in each
	// call path (of the threads' trees).
	Flows map[int]map[*Node]*FlowStat
	// Tree is the recording's processes.
	Tree *Tree
	syms []Symbolizer
	imgs map[*Node]int // each thread root's image
}

// Options configure Analyze.
type Options struct {
	// Workers re-simulate segments in parallel (0: one per CPU).
	Workers int
	// Progress, when set, is told of each segment done.
	Progress func(done, total int)
	// FlowOf, when set, splits the accounting by flow (package flows):
	// the flow thread tid works for from position pos on. It is asked
	// at every checkpoint, thread start and syscall, from several
	// goroutines.
	FlowOf func(tid int, pos uint64) int
	// Sent gives the bytes a syscall event sent (0 for the others), for
	// the flows' communication profiles.
	Sent func(ev *reader.Event) uint64
	// HoldGC, when set, turns the collector off until the function it
	// returns is called (Analyze holds it while stitching many nodes):
	// for a program that sets GOGC as its heap goes, whose own policy
	// would otherwise turn collection back on. nil: debug.SetGCPercent.
	HoldGC func() (release func())
	// everyInstruction hooks every instruction instead of the blocks
	// holding a call or a ret and the instructions watch needs (the
	// tests' reference).
	everyInstruction bool
	// everyCheckpoint makes every checkpoint interval a segment of its
	// own (segmentStarts), as the tests of stitching need.
	everyCheckpoint bool
	// tree and syms: the processes, and each program image's symbols
	// (set by Analyze).
	tree *Tree
	syms []Symbolizer
}

// FlowStat is what one flow spent in one call path.
type FlowStat struct {
	Self  uint64 // instructions with the path on top
	Count uint64 // calls entering the path
	Sent  uint64 // bytes sent by syscalls made with the path on top
	// First is the position of the flow's first call of the path
	// (noPos: the flow never called it, only ran in it).
	First uint64
}

// Load opens the symbol table of a recording's first program (the
// files the trace embeds, else the paths it names); Analyze loads those
// of the other programs of a process tree itself. A module that cannot
// be read costs its names only; err says which.
func Load(t *reader.Trace) (*symbols.Table, error) {
	tr, err := NewTree(t)
	if err != nil {
		return nil, err
	}
	if tr.lazy {
		if tr.mods[0], err = t.Modules(); err != nil {
			return nil, err
		}
	}
	return loadModules(t, tr.mods[0])
}

// Analyze re-simulates t in segments that start at checkpoints
// (segmentStarts), in parallel, and stitches the segments' calls into
// the recording's call tree (see the package documentation).
func Analyze(t *reader.Trace, sym Symbolizer, opts Options) (*Profile, error) {
	cps, err := t.Checkpoints()
	if err != nil {
		return nil, err
	}
	if len(cps) == 0 {
		return nil, errors.New("calls: the trace has no checkpoint to start re-simulation from")
	}
	tr, err := NewTree(t)
	if err != nil {
		return nil, err
	}
	opts.tree, opts.syms = tr, make([]Symbolizer, tr.Images())
	opts.syms[0] = sym
	if sym != nil && tr.Images() > 1 {
		// Each program of the tree has its own symbols (Load gave the
		// first's); a module that cannot be read costs its names only.
		if opts.syms, err = tr.loadImages(t); opts.syms == nil {
			return nil, err
		}
	}
	if !t.Indexed() && !opts.everyCheckpoint && t.IndexAlong() {
		// A trace that logs no reads and has no checkpoint memory yet:
		// one segment from the start writes it on the way, rather than
		// an index pass before the segments (reader.IndexAlong).
		opts.Workers = 1
	}
	starts := segmentStarts(cps, t.End(), &opts)
	segs := make([]*segment, len(starts))
	errs := make([]error, len(starts))
	// Progress counts checkpoint intervals, which a segment runs one
	// after the other.
	var tick func()
	if opts.Progress != nil {
		done := make(chan struct{}, len(cps))
		tick = func() { done <- struct{}{} }
		go func() {
			for k := 1; k <= len(cps); k++ {
				<-done
				opts.Progress(k, len(cps))
			}
		}()
	}
	reader.Parallel(len(starts), opts.Workers, func(k int) {
		to := len(cps)
		if k+1 < len(starts) {
			to = starts[k+1]
		}
		segs[k], errs[k] = runSegment(t, sym, cps, starts[k], to, &opts, tick)
	})
	for k, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("calls: segment %d (from position %d): %w", k, cps[starts[k]].Position, err)
		}
	}
	// Stitching makes a Node for each segment node: when they are many,
	// a collection first gives it the memory of the replays (which
	// would otherwise wait for the next one, the heap growing to its
	// goal on fresh pages). sort -n's 1.2 million Nodes (175 MB): RSS
	// 404-475 MB -> 393-398, page faults 31-47k -> 30-37k.
	// Then stitching and finish run with collection off (holdGC): what
	// they allocate (a NodeInfo for each node adopted, the names) is
	// less than the nodes already live and stays live too, so the
	// collection it would set off frees next to nothing: sort -n's,
	// 282 -> 262 MB, took 90-100 ms of CPU marking 1.2 million nodes.
	if manyNodes(segs) {
		runtime.GC()
		defer holdGC(&opts)()
	}
	p := stitch(segs, sym)
	p.Instructions = t.End()
	p.Segments = len(starts)
	p.Tree = tr
	p.finish(sym)
	return p, nil
}

// holdGC turns collection off until the function it returns is called,
// through opts.HoldGC if set. Holds nest (Analyzes at once, as tests
// and library users may run them): the first turns collection off, the
// last release lets it go; a second hold saving GOGC -1 and putting it
// back last would leave collection off for good.
func holdGC(opts *Options) (release func()) {
	gcHolds.Lock()
	defer gcHolds.Unlock()
	if gcHolds.n == 0 {
		if opts.HoldGC != nil {
			gcHolds.release = opts.HoldGC()
		} else {
			p := debug.SetGCPercent(-1)
			gcHolds.release = func() { debug.SetGCPercent(p) }
		}
	}
	gcHolds.n++
	return func() {
		gcHolds.Lock()
		defer gcHolds.Unlock()
		if gcHolds.n--; gcHolds.n == 0 {
			gcHolds.release()
			gcHolds.release = nil
		}
	}
}

// gcHolds counts the holds in force (holdGC) and keeps the first's
// release.
var gcHolds struct {
	sync.Mutex
	n       int
	release func()
}

// collectBeforeStitch is how many segment nodes make Analyze collect
// before stitching (a collection marks what is live, the nodes among
// it: worth it only for many). A variable for the tests.
var collectBeforeStitch = 256 << 10

// manyNodes reports whether segs made collectBeforeStitch nodes or more.
func manyNodes(segs []*segment) bool {
	slabs := 0
	for _, s := range segs {
		slabs += s.slabs
	}
	return slabs*nodeSlab >= collectBeforeStitch
}

// segmentsPerWorker is how many segments each worker re-simulates when
// several share the work, so that one costlier stretch of the recording
// does not leave the others idle.
const segmentsPerWorker = 2

// segmentStarts picks, among the checkpoints cps of a recording of end
// instructions, those the segments start at: one segment for one
// worker, else segmentsPerWorker per worker, of about equal instruction
// counts. Each segment re-materialises the memory its program touches
// from the trace and stitching joins them; one worker gains nothing
// from more: with a checkpoint every 5e7 instructions, a segment per
// checkpoint interval cost xz -6 (1e9 instructions, 22 intervals) twice
// the CPU of a replay, most of it rebuilding the same pages.
// It returns their indices in cps.
func segmentStarts(cps []reader.Checkpoint, end uint64, opts *Options) []int {
	w := opts.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	n := 1
	if w > 1 {
		n = segmentsPerWorker * w
	}
	if opts.everyCheckpoint || n >= len(cps) {
		n = len(cps)
	}
	out := []int{0}
	first := cps[0].Position
	for i := 1; i < n; i++ {
		at := first + (end-first)*uint64(i)/uint64(n)
		j := sort.Search(len(cps), func(j int) bool { return cps[j].Position >= at })
		if n == len(cps) {
			j = i
		}
		if j < len(cps) && j > out[len(out)-1] {
			out = append(out, j)
		}
	}
	return out
}

// runSegment re-simulates the checkpoint intervals from to to (not
// included), one after the other, calling tick (if not nil) after each.
func runSegment(t *reader.Trace, sym Symbolizer, cps []reader.Checkpoint, from, to int, opts *Options, tick func()) (*segment, error) {
	k := from
	r, err := t.NewReplayAt(cps[k])
	if err != nil {
		return nil, err
	}
	defer r.Close()
	// A segment only runs forward: the chunks it leaves go out of the
	// trace's cache and the next ones' decoding reuses their memory.
	// Kept until the cache's 256 MiB bound, sort -n's (145 MB of reads)
	// were still live when stitch made the Nodes, all of those on fresh
	// pages: calls --jobs 1 peaked at 547 MB of RSS, 73k page faults;
	// streaming, 400 MB and 30-48k.
	r.Stream()
	s := newSegment(sym)
	s.flowOf, s.sent = opts.FlowOf, opts.Sent
	s.flows = map[flowKey]*FlowStat{}
	s.useTree(opts.tree, opts.syms)
	tids, cpus := r.Threads()
	for i, tid := range tids {
		s.setKey(tid, cps[k].Position)
		// The first interval starts with the program: its threads have
		// no frames yet.
		st := s.thread(tid, cpus[i], k == 0, cps[k].Position)
		if s.flowOf != nil {
			st.flow = s.flowOf(tid, cps[k].Position)
		}
	}
	r.Hook = s.instruction
	if !opts.everyInstruction {
		// Only calls, rets and the first instructions of a frame
		// matter: the other blocks run translated (segment.gate).
		r.HookInsts, r.HookGate = s.callsAndRets, s.gate
		s.useLog(r)        // logged hooks (hooklog.go)
		r.HookFixed = true // the verdicts are the symbols' (verdictOf)
		s.r = r
	}
	r.OnEvent = func(ev *reader.Event) { s.event(r, ev) }
	i := from + 1
	for ; i <= to && err == nil; i++ {
		end := t.End()
		if i < len(cps) {
			end = cps[i].Position
		}
		err = r.RunTo(end)
		if tick != nil {
			tick()
		}
	}
	for ; i <= to && tick != nil; i++ {
		tick() // the intervals after the program's end
	}
	if err != nil && err != reader.ErrEnd && !(err == io.ErrUnexpectedEOF && to == len(cps)) {
		return nil, err
	}
	// The threads still running: name their pending frames and give
	// them their last instructions.
	tids, cpus = r.Threads()
	for i, tid := range tids {
		st := s.thread(tid, cpus[i], false, 0)
		s.finish(st)
	}
	// Nothing of the replay is needed from here on: unreachable, its
	// memory (guest pages, decoded blocks) is the Nodes' (stitch).
	s.slabs = s.children.slabs
	s.children, s.verdicts, s.r, s.curCPU = nil, nil, nil, nil
	for _, st := range s.threads {
		st.cpu = nil
	}
	leafCalls.Add(s.leaves)
	leafNamings.Add(s.leafNamings)
	return s, nil
}

// gframe is a frame of a thread's real stack while stitching: a node,
// or a call whose function no interval could name yet.
type gframe struct {
	node *Node
	// A pending call: its caller, call site, position, first
	// instruction and the instructions it ran so far.
	parent        *Node
	site, pos, pc uint64
	self          uint64
	slot          uint64 // the address of the return address
}

// name gives a pending frame its node.
func (g *gframe) name(entry uint64, tid int) {
	n := g.parent.child(key{g.site, entry, 0})
	n.Count++
	if g.pos < n.First {
		n.First, n.FirstTid = g.pos, tid
	}
	n.Self += g.self
	g.node = n
}

// stitch joins the segments in order: each thread's real stack at a
// checkpoint is the previous segment's end.
func stitch(segs []*segment, sym Symbolizer) *Profile {
	p := &Profile{}
	roots := map[int]*Thread{}
	stacks := map[int][]gframe{}
	// alloc makes the real nodes of the segments' paths (merge, locate).
	var alloc treeAlloc
	for _, s := range segs {
		if p.syms == nil {
			p.syms = s.fn.syms
		}
		ats := map[int]map[*segNode]*Node{}
		for _, k := range s.order {
			st := s.threads[k]
			tid := st.tid
			sym := s.fn.syms[st.img]
			th := roots[k]
			if th == nil {
				th = s.newThread(p, st)
				roots[k] = th
			}
			gs := stacks[k]
			if st.fresh {
				gs = nil
				merge(st.root, th.Root, &alloc)
			}
			// at maps a segment's base or root node to the real frame.
			at := map[*segNode]*Node{}
			if st.root != nil {
				at[st.root] = th.Root
			}
			// real[b] is the index in gs of the frame base b stands
			// for (-1: below the bottom).
			real := make([]int, st.b+1)
			top := len(gs) - 1
			for b := range real {
				if b > 0 {
					bp := st.baseRets[b-1]
					for top >= 0 && gs[top].slot <= bp.sp {
						top--
					}
				}
				real[b] = top
			}
			// Level by level, in order: the frame open at the
			// checkpoint that base b stands for, and the jumps from a
			// base frame to a function's entry (a trampoline's frame
			// becomes the called function's, as one pass does; any
			// other frame keeps the instructions).
			for b := 0; b <= st.b; b++ {
				var bn *segNode
				if b < len(st.bases) {
					bn = st.bases[b]
				}
				var g *Node
				if i := real[b]; i >= 0 {
					if gs[i].node == nil {
						// The previous interval ended before naming
						// its last call: this one did, or carries
						// it on.
						entry := st.baseEntry
						if st.baseNoSym && gs[i].pc != 0 {
							entry = gs[i].pc
						}
						if entry == 0 && (bn == nil || bn.numChildren() == 0) {
							if bn != nil {
								gs[i].self += bn.Self
							}
							continue
						}
						if entry == 0 {
							// A signal arrived before the call was
							// named: by its first instruction.
							entry = gs[i].pc
							if sym != nil {
								if _, e, ok := sym.PCToFunc(gs[i].pc); ok {
									entry = e
								}
							}
						}
						gs[i].name(entry, tid)
					}
					g = gs[i].node
				} else {
					// A ret below what the recording showed us (a
					// thread that switched stacks): keep the
					// instructions, under a frame of its own.
					g = th.Root.child(key{unknownSite, 0, 0})
				}
				if bn != nil {
					merge(bn, g, &alloc)
					at[bn] = g
				}
				j := st.jumps[b]
				if j == nil {
					continue
				}
				if i := real[b]; i >= 0 && isTramp(sym, g) {
					trampJumps.Add(1)
					old := g
					g = old.Parent.child(key{old.Site, j.entry, 0})
					g.Count++
					if gs[i].pos < g.First {
						g.First, g.FirstTid = gs[i].pos, tid
					}
					gs[i].node = g
				}
				merge(j.node, g, &alloc)
				at[j.node] = g
			}
			for _, f := range s.forks {
				if f.parent == k {
					// The forked process's first thread starts on a
					// copy of this stack.
					cst := s.threads[f.child]
					cth := s.newThread(p, cst)
					roots[f.child] = cth
					stacks[f.child] = forkStack(gs[:real[f.b]+1], f.frames, at, cth.Root)
				}
			}
			keep := real[st.b] + 1
			ns := append([]gframe(nil), gs[:keep]...)
			for _, f := range st.stack {
				if f.node == nil {
					ns = append(ns, gframe{parent: locate(f.parent, at, &alloc), site: f.site, pos: f.pos, pc: f.target, self: f.pendSelf, slot: f.slot})
					continue
				}
				ns = append(ns, gframe{node: locate(f.node, at, &alloc), slot: f.slot, pos: f.pos})
			}
			stacks[k] = ns
			ats[k] = at
		}
		for fk, fs := range s.flows {
			at := ats[fk.tid]
			g := locateOK(fk.node, at)
			if g == nil {
				continue // a call the previous interval left unnamed
			}
			if p.Flows == nil {
				p.Flows = map[int]map[*Node]*FlowStat{}
			}
			m := p.Flows[fk.flow]
			if m == nil {
				m = map[*Node]*FlowStat{}
				p.Flows[fk.flow] = m
			}
			d := m[g]
			if d == nil {
				d = &FlowStat{First: noPos}
				m[g] = d
			}
			d.First = min(d.First, fs.First)
			d.Self += fs.Self
			d.Count += fs.Count
			d.Sent += fs.Sent
		}
	}
	// Calls still unnamed at the end of the recording: by the function
	// their first instruction is in.
	for k, gs := range stacks {
		th := roots[k]
		sym := p.syms[th.img]
		for i := range gs {
			if g := &gs[i]; g.node == nil {
				entry := g.pc
				if sym != nil {
					if _, e, ok := sym.PCToFunc(g.pc); ok {
						entry = e
					}
				}
				g.name(entry, th.Tid)
			}
		}
	}
	// In order of first appearance whatever the segments: stitching
	// meets a segment's threads in the order that segment first saw
	// them, so a tree that started in one segment could come before
	// one that started earlier in another (gcc's as and cc1's exec with
	// --jobs 1 and 2).
	sort.SliceStable(p.Threads, func(i, j int) bool {
		a, b := p.Threads[i], p.Threads[j]
		if a.start != b.start {
			return a.start < b.start
		}
		if a.Tid != b.Tid {
			return a.Tid < b.Tid
		}
		return a.Exec < b.Exec
	})
	return p
}

// trampJumps counts the trampoline frames open at a checkpoint that
// stitching made the frames of the functions they jumped to (tests check
// that they met one).
var trampJumps atomic.Uint64

// jumpsPastEntry counts the trampoline jumps from a frame open at a
// checkpoint whose target's entry made no record (watch's baseJmp), for
// TestLazyBindingAcrossCheckpoints.
var jumpsPastEntry atomic.Uint64

// isTramp reports whether n is a lazy-binding trampoline's frame.
func isTramp(sym Symbolizer, n *Node) bool {
	if sym == nil {
		return false
	}
	name, entry, ok := sym.PCToFunc(n.Entry)
	return ok && entry == n.Entry && strings.HasPrefix(name, "_dl_runtime_resolve")
}

// merge adds a segment's node into the real one: its instructions, and
// its children's calls. A child of the segment's that the real node has
// no child for becomes the real node's child, with its subtree (adopt):
// no copy is made. One segment (--jobs 1) gives every node so, sort
// -n's 1.2 million of them, which were copied into as many Nodes (250
// fresh bytes a path with the segment's). A real node with no children
// yet takes all of the segment's without looking each up first (a
// segment's keys are distinct). (Their kids map is made when a lookup
// first needs it: childIn.)
func merge(s *segNode, g *Node, a *treeAlloc) {
	g.Self += s.Self
	if len(g.Children) == 0 && g.kids == nil {
		adoptKids(s, g, a)
		return
	}
	for sc := s.firstKid(); sc != nil; sc = s.nextKid(sc) {
		k := key{sc.Site, sc.Entry, 0}
		if gc := g.find(k); gc != nil {
			mergeCounts(sc, gc)
			merge(sc, gc, a)
			continue
		}
		g.add(k, sc)
		adopt(sc, g, a)
	}
}

// adoptKids gives g, which has no children, s's children, each with its
// subtree (adopt), in the order the segment made them: by first
// position, the order sortChildren leaves children in (a segment's
// calls reach them in the order they made them).
func adoptKids(s *segNode, g *Node, a *treeAlloc) {
	if s.nkids == 0 {
		return
	}
	if g.Children == nil {
		g.Children = a.slice(int(s.nkids))[:0]
	}
	for sc := s.firstKid(); sc != nil; sc = s.nextKid(sc) {
		g.Children = append(g.Children, sc)
		adopt(sc, g, a)
	}
}

// adopt makes segment node n, which g has just taken as a child, a real
// node, with its subtree: the counts are the segment's, its NodeInfo
// (from a's slab) says it is real (locate).
func adopt(n *segNode, g *Node, a *treeAlloc) {
	n.Parent, n.NodeInfo = g, a.info()
	n.Depth = g.Depth + 1
	adoptKids(n, n, a)
}

// mergeCounts adds a segment node's calls and first position to the
// real node's.
func mergeCounts(sc *segNode, gc *Node) {
	gc.Count += sc.Count
	if sc.First < gc.First {
		gc.First, gc.FirstTid = sc.First, sc.FirstTid
	}
}

// locateOK is locate for a node that may hang below a base the
// stitching could not place (nil then).
func locateOK(n *segNode, at map[*segNode]*Node) *Node {
	for m := n; ; m = m.Parent {
		if _, ok := at[m]; ok || m.adopted() {
			return locate(n, at, nil)
		}
		if m.Parent == nil {
			return nil
		}
	}
}

// locate finds the real node of a segment node, through its base: the
// node itself when stitching adopted it (merge).
func locate(n *segNode, at map[*segNode]*Node, a *treeAlloc) *Node {
	if n.adopted() {
		return n
	}
	if g, ok := at[n]; ok {
		return g
	}
	g := locate(n.Parent, at, a).childIn(key{n.Site, n.Entry, 0}, a)
	at[n] = g
	return g
}

// finish names the nodes, totals them and orders children by first
// position.
func (p *Profile) finish(sym Symbolizer) {
	if p.syms == nil {
		p.syms = []Symbolizer{sym}
	}
	p.imgs = map[*Node]int{}
	// names and sites name each image's functions and call sites once:
	// sort -n's 2.4 million paths have a few hundred sites, and naming
	// each path's from DWARF, with a string of its own, was 5% of its
	// ttd calls.
	// Images that share a Symbolizer (useTree: a tree's 40 bash) share
	// them too: each named the same functions and sites from DWARF
	// again (dwarfFunc and dwarfLine, 2% of the tree's ttd calls).
	names := make([]map[uint64]string, len(p.syms))
	sites := make([]map[uint64]string, len(p.syms))
	// canon[i] is the first image that shares image i's Symbolizer:
	// the tag of its names in the memos.
	canon := make([]int32, len(p.syms))
	first := map[Symbolizer]int{}
	for i, sym := range p.syms {
		if k, ok := first[sym]; ok {
			names[i], sites[i], canon[i] = names[k], sites[k], int32(k)
			continue
		}
		first[sym], canon[i] = i, int32(i)
		names[i], sites[i] = map[uint64]string{}, map[uint64]string{}
	}
	// The memos answer most paths before the maps: sort -n's 1.2
	// million paths have a few hundred functions and sites, and two
	// map lookups a path made finish 0.053-0.063 s of its user CPU,
	// 0.038-0.052 so (perf, two runs each).
	var funcMemo, siteMemo nameMemo
	img := 0
	var walk func(n *Node) uint64
	walk = func(n *Node) uint64 {
		if n.Depth > 0 {
			tag := canon[img] + 1
			if n.Site == sigSite || n.Site == unknownSite {
				n.Func = funcName(sym, names[img], n)
			} else if e := funcMemo.slot(n.Entry); e.tag == tag && e.pc == n.Entry {
				n.Func = e.name
			} else {
				n.Func = funcName(sym, names[img], n)
				*e = memoSlot{tag, n.Entry, n.Func}
			}
			if e := siteMemo.slot(n.Site); e.tag == tag && e.pc == n.Site {
				n.SiteName = e.name
			} else {
				s, ok := sites[img][n.Site]
				if !ok {
					s = siteName(sym, n.Site)
					sites[img][n.Site] = s
				}
				n.SiteName = s
				*e = memoSlot{tag, n.Site, s}
			}
		}
		n.Total = n.Self
		for _, c := range n.Children {
			n.Total += walk(c)
		}
		sortChildren(n)
		return n.Total
	}
	for _, th := range p.Threads {
		sym, img, p.imgs[th.Root] = p.syms[th.img], th.img, th.img
		walk(th.Root)
		pruneUnknown(th.Root)
	}
}

// nameMemo is a direct-mapped cache of names by address, in front of
// finish's maps: a slot holds the name of one address of the images
// whose tag it has (0: none).
type nameMemo [1 << nameMemoBits]memoSlot

type memoSlot struct {
	tag  int32
	pc   uint64
	name string
}

const nameMemoBits = 9

// slot is where m keeps pc's name.
func (m *nameMemo) slot(pc uint64) *memoSlot {
	return &m[(pc*0x9e3779b97f4a7c15)>>(64-nameMemoBits)]
}

// sortChildren orders n's children by first position, and those first
// entered at the same position (stitched in from a map) by site and
// entry, so the output is the same on every run. Children already in
// strictly increasing order (no two equal: the only order any sort
// gives them) are left alone: sort.Slice allocates, and sort -n's
// trees have 2.4 million nodes, most with one or two children.
func sortChildren(n *Node) {
	c := n.Children
	for i := 1; i < len(c); i++ {
		if !childBefore(c[i-1], c[i]) {
			sort.Slice(c, func(i, j int) bool { return childBefore(c[i], c[j]) })
			return
		}
	}
}

// childBefore is sortChildren's order.
func childBefore(a, b *Node) bool {
	if a.First != b.First {
		return a.First < b.First
	}
	if a.Site != b.Site {
		return a.Site < b.Site
	}
	return a.Entry < b.Entry
}

// pruneUnknown drops a thread's "[frames before the recording showed
// them]" node when nothing ran under it: stitching makes it for a ret
// below the stack the recording showed, before it knows whether
// anything will be counted there.
func pruneUnknown(root *Node) {
	kept := root.Children[:0]
	for _, c := range root.Children {
		if c.Site == unknownSite && c.Total == 0 && len(c.Children) == 0 {
			delete(root.kids, key{c.Site, c.Entry, 0})
			continue
		}
		kept = append(kept, c)
	}
	clear(root.Children[len(kept):])
	root.Children = kept
}

func funcName(sym Symbolizer, names map[uint64]string, n *Node) string {
	switch n.Site {
	case sigSite:
		return fmt.Sprintf("[signal %d]", n.Entry)
	case unknownSite:
		return "[frames before the recording showed them]"
	}
	if s, ok := names[n.Entry]; ok {
		return s
	}
	s := fmt.Sprintf("%#x", n.Entry)
	if sym != nil {
		if name, entry, ok := dwarfFunc(sym, n.Entry); ok && entry == n.Entry {
			s = name
		} else if name, entry, ok := sym.PCToFunc(n.Entry); ok && entry == n.Entry {
			s = name // an ELF symbol DWARF puts inside another function (foo.cold)
		}
	}
	names[n.Entry] = s
	return s
}

// dwarfNamer is a Symbolizer that names from DWARF although it was
// loaded without (Load's tables: symbols.Table with SymbolsOnly), by
// indexing only the compile units of the addresses it is asked about:
// the hooks need only ELF symbols (function entries), and the few
// hundred names and call sites of a result do not pay for indexing all
// of libc's DWARF (0.5-0.6 s of CPU).
type dwarfNamer interface {
	UnitFuncForPC(pc uint64) (symbols.Func, bool)
	UnitPCToLine(pc uint64) (file string, line int, ok bool)
}

// dwarfFunc is sym.PCToFunc, with DWARF's name where sym can give it.
func dwarfFunc(sym Symbolizer, pc uint64) (string, uint64, bool) {
	if d, ok := sym.(dwarfNamer); ok {
		f, ok := d.UnitFuncForPC(pc)
		return f.Name, f.Entry, ok
	}
	return sym.PCToFunc(pc)
}

// dwarfLine is sym.PCToLine, through DWARF where sym can read it.
func dwarfLine(sym Symbolizer, pc uint64) (string, int, bool) {
	if d, ok := sym.(dwarfNamer); ok {
		return d.UnitPCToLine(pc)
	}
	return sym.PCToLine(pc)
}

func siteName(sym Symbolizer, pc uint64) string {
	if pc == 0 || pc == sigSite || pc == unknownSite {
		return ""
	}
	if sym != nil {
		if file, line, ok := dwarfLine(sym, pc); ok {
			if i := strings.LastIndexByte(file, '/'); i >= 0 {
				file = file[i+1:]
			}
			return fmt.Sprintf("%s:%d", file, line)
		}
		if name, entry, ok := dwarfFunc(sym, pc); ok {
			return fmt.Sprintf("%s+%#x", name, pc-entry)
		}
	}
	return fmt.Sprintf("%#x", pc)
}

// Merged is the call tree of all threads together: paths with the same
// functions and call sites added up.
func (p *Profile) Merged() *Node {
	root := newRoot()
	mergeThreads(root, p.Threads)
	return root
}

// addTree adds src's counts and paths below dst, finding each child of
// image img again or making it (from a). A child it makes takes src's
// subtree as copyChildren copies it, as finding each of its nodes again
// would have made them: sort -n's second thread brings paths the first
// did not have, and each was looked for among its new parent's children
// first (addTree with Node.childIn, 3.7% of its ttd calls' samples).
func addTree(src, dst *Node, img int, a *treeAlloc) {
	dst.Self += src.Self
	dst.Total += src.Total
	for _, c := range src.Children {
		had := len(dst.Children)
		d := dst.childIn(key{c.Site, c.Entry, img}, a)
		if d.Func == "" {
			d.Func, d.SiteName, d.FirstTid = c.Func, c.SiteName, c.FirstTid
		}
		d.Count += c.Count
		if c.First < d.First {
			d.First, d.FirstTid = c.First, c.FirstTid
		}
		if len(dst.Children) > had {
			// d is new: below it, src's paths alone.
			d.Self, d.Total = c.Self, c.Total
			d.Children = a.copyChildren(c, d, img)
			continue
		}
		addTree(c, d, img, a)
	}
}

// mergeThreads adds the trees of threads below root. The first is
// copied, not merged: sort -n's two threads hold 1.2 million paths, and
// finding each again as a child cost a third of the merged tree; with
// one thread the copy is the tree, already in order.
func mergeThreads(root *Node, threads []*Thread) {
	if len(threads) == 0 {
		return
	}
	var a treeAlloc
	root.Self += threads[0].Root.Self
	root.Total += threads[0].Root.Total
	root.Children = a.copyChildren(threads[0].Root, root, threads[0].img)
	if len(threads) == 1 {
		return // finish ordered the thread's tree
	}
	for _, th := range threads[1:] {
		addTree(th.Root, root, th.img, &a)
	}
	sortTree(root)
}

// sortTree orders the children of n and of every node below it
// (sortChildren).
func sortTree(n *Node) {
	sortChildren(n)
	for _, c := range n.Children {
		sortTree(c)
	}
}

// treeAlloc hands out Nodes and Children slices from blocks: a copy of a
// tree of a million paths makes two allocations per thousand nodes
// instead of two per node.
type treeAlloc struct {
	nodes []Node
	infos []NodeInfo
	kids  []*Node
}

const allocBlock = 1024

// node is a new Node (not zeroed: the caller sets every field); a nil
// a allocates it alone.
func (a *treeAlloc) node() *Node {
	if a == nil {
		return new(Node)
	}
	return take(&a.nodes)
}

// info is a new, zeroed NodeInfo; a nil a allocates it alone.
func (a *treeAlloc) info() *NodeInfo {
	if a == nil {
		return new(NodeInfo)
	}
	return take(&a.infos)
}

// take is the next element of block *s, from a new block of allocBlock
// (zeroed) when it is used up.
func take[T any](s *[]T) *T {
	if len(*s) == 0 {
		*s = make([]T, allocBlock)
	}
	d := &(*s)[0]
	*s = (*s)[1:]
	return d
}

// slice is a Children slice of length and capacity n: appending beyond
// n moves it to the heap.
func (a *treeAlloc) slice(n int) []*Node {
	if len(a.kids) < n {
		a.kids = make([]*Node, max(n, allocBlock))
	}
	out := a.kids[:n:n]
	a.kids = a.kids[n:]
	return out
}

// copyChildren copies src's children, and theirs, below dst (of program
// image img), as dst.child would have made them: the same fields, in
// the same order.
func (a *treeAlloc) copyChildren(src, dst *Node, img int) []*Node {
	n := len(src.Children)
	if n == 0 {
		return nil
	}
	out := a.slice(n)
	for i, c := range src.Children {
		d := a.node()
		*d = Node{Entry: c.Entry, Site: c.Site, Count: c.Count, Self: c.Self, First: c.First,
			FirstTid: c.FirstTid, Parent: dst, NodeInfo: a.info()}
		*d.NodeInfo = NodeInfo{Func: c.Func, SiteName: c.SiteName, Total: c.Total, Depth: dst.Depth + 1, img: int32(img)}
		d.Children = a.copyChildren(c, d, img)
		out[i] = d
	}
	return out
}

// FlowTree is the call tree of one flow (Options.FlowOf): the paths it
// ran in, with its calls, instructions and first positions, all its
// threads merged; nil if the flow ran nothing.
func (p *Profile) FlowTree(flow int) *Node {
	m := p.Flows[flow]
	if len(m) == 0 {
		return nil
	}
	root := newRoot()
	var place func(n *Node) *Node
	place = func(n *Node) *Node {
		if n.Depth == 0 {
			return root
		}
		parent := place(n.Parent)
		c := parent.child(key{n.Site, n.Entry, p.imgs[rootOf(n)]})
		if c.Func == "" {
			c.Func, c.SiteName = n.Func, n.SiteName
		}
		return c
	}
	for n, st := range m {
		c := place(n)
		c.Count += st.Count
		c.Self += st.Self
		if st.First < c.First {
			c.First, c.FirstTid = st.First, n.FirstTid
		}
	}
	var fix func(n *Node) (uint64, uint64)
	fix = func(n *Node) (uint64, uint64) {
		n.Total = n.Self
		for _, c := range n.Children {
			t, f := fix(c)
			n.Total += t
			if f < n.First && n.Count == 0 {
				// A frame the flow only ran in: it shows where its
				// first call below was.
				n.First = f
			}
		}
		sortChildren(n)
		return n.Total, n.First
	}
	fix(root)
	return root
}

// Thread returns the call tree of thread tid, or nil.
func (p *Profile) Thread(tid int) *Thread {
	for _, th := range p.Threads {
		if th.Tid == tid {
			return th
		}
	}
	return nil
}

func rootOf(n *Node) *Node {
	for n.Parent != nil {
		n = n.Parent
	}
	return n
}
