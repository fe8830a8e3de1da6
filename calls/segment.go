package calls

import (
	"strings"

	"golang.org/x/arch/x86/x86asm"

	"ttd/reader"
	"ttd/tracefile"
	"ttd/x86"
)

// key identifies a call path's last step below its parent: the call
// instruction (the call site) and the function called. Thread roots have
// site 0; a signal handler's frame has site sigSite and the signal
// number as entry; frames a segment could not place have site
// unknownSite.
type key struct {
	Site, Entry uint64
	img         int // the program image (merged views of a process tree)
}

const (
	sigSite     = ^uint64(0)
	unknownSite = ^uint64(0) - 1
	noPos       = ^uint64(0)
)

// segKey is a segment's key: a segment runs in one program image at a
// time, so its paths need no image (key.img).
type segKey struct {
	Site, Entry uint64
}

// segNode is a call path of one segment, below a thread's root or below
// one of the frames open at the segment's checkpoint: a Node, of which
// the segment sets the keys, Count, Self, First, FirstTid and Parent
// (its parent in the segment) and its own fields (last to next), all
// in the Node's first 88 bytes; its NodeInfo is nil. Stitching adopts
// it as the result's node (giving it a NodeInfo) or adds it into one
// (merge).
type segNode = Node

// segKidsInline is how many children child looks through in the
// sibling list before it asks childCache.many.
const segKidsInline = 4

// numChildren is how many children n has.
func (n *segNode) numChildren() int { return int(n.nkids) }

// eachChild calls fn with each child of n and its key, the first made
// first.
func (n *segNode) eachChild(fn func(k segKey, c *segNode)) {
	for c := n.firstKid(); c != nil; c = n.nextKid(c) {
		fn(c.skey(), c)
	}
}

// firstKid is n's first child made, nil if none.
func (n *segNode) firstKid() *segNode {
	if n.kid == nil {
		return nil
	}
	return n.kid.next
}

// nextKid is the child of n made after c, nil after the last.
func (n *segNode) nextKid(c *segNode) *segNode {
	if c == n.kid {
		return nil
	}
	return c.next
}

// kidKey is a child's key in childCache.many: its parent and its key.
type kidKey struct {
	parent *segNode
	segKey
}

// nodeSlab is how many segNodes childCache.make allocates at a time
// (104 KB): one allocation instead of a thousand.
const nodeSlab = 1024

// childID is the id of the child of n made after its first k.
func childID(n *segNode, k uint32) uint32 { return (n.id + k + 1) * 0x9e3779b9 }

// make finds n's child k, or makes it.
func (c *childCache) make(n *segNode, k segKey) *segNode {
	if n.nkids <= segKidsInline {
		for x := n.firstKid(); x != nil; x = n.nextKid(x) {
			if x.skey() == k {
				return x
			}
		}
	} else if x := c.many[kidKey{n, k}]; x != nil {
		return x
	}
	if len(c.slab) == 0 {
		c.slab = make([]segNode, nodeSlab)
		c.slabs++
	}
	x := &c.slab[0]
	c.slab = c.slab[1:]
	*x = segNode{Site: k.Site, Entry: k.Entry, Parent: n, First: noPos, id: childID(n, n.nkids)}
	if n.kid == nil {
		x.next = x
	} else {
		x.next, n.kid.next = n.kid.next, x
	}
	n.kid = x
	n.nkids++
	if n.nkids > segKidsInline {
		if c.many == nil {
			c.many = map[kidKey]*segNode{}
		}
		if n.nkids == segKidsInline+1 {
			for y := n.firstKid(); y != nil; y = n.nextKid(y) {
				c.many[kidKey{n, y.skey()}] = y
			}
		} else {
			c.many[kidKey{n, k}] = x
		}
	}
	return x
}

// childCache is a direct-mapped cache of segNode.child, by parent and key: a
// call entering a path the segment knows costs a hash of three words and
// three compares instead of a map lookup (the map, hashing its 24-byte
// keys, was 5-7% of ttd calls on gzip -9). A slot holds the child alone,
// checked by its own parent and key, which lie in the line of the node
// that following the call touches anyway (segNode): 8 bytes a slot
// where a copy of the parent and key made 32, a 128 KB table that
// missed the cache on two lookups in three on jq (perf annotate).
type childCache struct {
	slots [1 << childBits]*segNode
	// tags holds a few more bits of each slot's hash (tagOf): a slot
	// whose tag differs holds another path's child, which lookup then
	// does not read. sort -n's merge sort makes a million paths through
	// the 8192 slots: of its lookups below a node with children, 36k of
	// 39k found another path's child there, each a cache miss on a node
	// for nothing (perf annotate: 55-60% of lookup on sort -n and the
	// bash+python3 tree). 32 KB beside the slots' 64.
	tags [1 << childBits]uint32
	// many finds the children of nodes with more than segKidsInline.
	many map[kidKey]*segNode
	// slab is where make takes new nodes from; slabs counts them.
	slab  []segNode
	slabs int
	// named remembers the children that naming a frame found
	// (pathMemo).
	named [1 << pathMemoBits]pathMemo
}

// pathMemo is a direct-mapped memo of the child a frame was named as:
// below its parent, of the call at its site to target, named by the
// function of an instruction run in it, pc (resolve: the frame's first
// call or ret; leaf: a leaf call's ret), kind telling leaf's from
// resolve's. The child is a function of these alone (with the symbols
// of the image the parent's thread runs, the same for all of its
// paths), and segment nodes live as long as the segment: a hit needs
// neither the function lookups that name the callee (funcs.find: two
// for a leaf call to no symbol's entry) nor the child's lookup, which
// misses where a frame calls several functions in turn (gzip -9's
// deflate: longest_match and send_bits). The parent and the site are
// the child's own (Parent, Site), read from the line its count is
// added to: a slot is 32 bytes.
type pathMemo struct {
	child            *segNode
	target, pc, kind uint64
}

// pathMemoBits sizes the memo: perl's interpreter names frames by
// 10 million distinct keys, and 1024 slots missed on 1.4 million of
// them, 4096 on 0.13 million (2048: 64 KB).
const pathMemoBits = 11

// memo is the slot of the frame below parent, called at site to
// target and named by pc, of every kind (hit tells them apart): a call
// instruction's leaf records have one kind, and a frame is seldom
// named by resolve at its leaf call's ret.
func (c *childCache) memo(parent *segNode, site, target, pc uint64) *pathMemo {
	h := (uint64(parent.id) ^ site*0xbf58476d1ce4e5b9 ^ target*0x9e3779b97f4a7c15 ^ pc) * 0x94d049bb133111eb
	return &c.named[h>>(64-pathMemoBits)]
}

// hit reports whether m holds the child of that frame.
func (m *pathMemo) hit(parent *segNode, site, target, pc, kind uint64) bool {
	return m.child != nil && m.target == target && m.pc == pc && m.kind == kind &&
		m.child.Parent == parent && m.child.Site == site
}

const childBits = 13

// child is n.child(k), through the cache.
func (c *childCache) child(n *segNode, k segKey) *segNode {
	if x := n.last; x != nil && x.skey() == k {
		return x
	}
	x := c.lookup(n, k)
	n.last = x
	return x
}

// slot is where the cache keeps n's child k, and the child's tag there.
func (c *childCache) slot(n *segNode, k segKey) (int, uint32) {
	h := (uint64(n.id) ^ k.Site*0xbf58476d1ce4e5b9 ^ k.Entry) * 0x94d049bb133111eb
	return int(h >> (64 - childBits)), uint32(h>>(32-childBits)) | 1
}

func (c *childCache) lookup(n *segNode, k segKey) *segNode {
	i, tag := c.slot(n, k)
	// A node with no children has none in the slot: the check would
	// read another path's node for nothing (sort -n's merge sort makes
	// most of its 1.2 million paths below a node with none yet).
	if n.nkids != 0 && c.tags[i] == tag {
		if x := c.slots[i]; x.Parent == n && x.skey() == k {
			return x
		}
	}
	x := c.make(n, k)
	c.slots[i], c.tags[i] = x, tag
	return x
}

// frame is a call a segment saw: its node is nil until the function it
// entered is known (see resolve).
type frame struct {
	node   *segNode
	parent *segNode
	site   uint64
	slot   uint64 // the address of the return address (^0: a thread root)
	pos    uint64
	target uint64 // the first instruction run in the frame
	// pendSelf holds the instructions run while the function was not
	// known (an interval that ends inside a PLT stub).
	pendSelf uint64
}

// segThread is one thread's calls in a segment.
type segThread struct {
	tid   int
	start uint64 // the position where it was first seen (Thread.start)
	key   int    // tid and the execs of its process (Tree.threadKey)
	img   int    // the program image it runs
	cpu   *x86.CPU
	fresh bool     // the thread started in this segment
	root  *segNode // fresh threads: the parent of the thread's first frame
	// bases[b] stands for the frame b levels below the top of the stack
	// at the checkpoint; b is how many of them rets have popped.
	bases []*segNode
	b     int
	// baseRets are the stack pointers of the rets that popped base
	// frames, and the slots of the calls that may have left some
	// (basePop): stitching pops the real frames whose return-address
	// slot is at or below each, as one pass would (longjmp skips
	// frames).
	baseRets []basePop
	// r0 is the stack pointer at the checkpoint: the top frame's slot
	// is at or above it.
	r0    uint64
	stack []frame
	// pending: the top frame's function is not known yet; tramp: frame
	// trampAt is in a lazy-binding trampoline, which will jump to the
	// function really called.
	flow           int // the flow the thread works for (Options.FlowOf)
	pending, tramp bool
	trampAt        int
	// look is how many more instructions watch looks at (lookLimit),
	// all of them hooked by the gate. After a direct call, lookTo
	// bounds them instead (by Retired), and the gate stays closed:
	// watch sees the hooked ones only, among which, by callsAndRets,
	// every function entry (all watch acts on while it looks). After a
	// call whose target is not known (through memory, the interpreter
	// making it), look is 1 (the callee's first instruction gives the
	// target) and lookTo bounds the rest.
	look   int
	lookTo uint64
	// baseLook is how many more instructions watch looks at for a jump
	// from a frame open at the checkpoint to a function's entry, right
	// after a ret popped the frames above it: a lazy-binding trampoline
	// entered in an earlier interval reaching the function called
	// (stitching decides, knowing whether the frame is a trampoline).
	// jumps are those jumps by base level: the instructions after one
	// go to its node. After a ret that returned to a frame open at the
	// checkpoint, baseLookTo bounds them instead (by Retired), the gate
	// closed: watch sees the hooked ones only, among which every
	// function entry, all it acts on while it looks. (A jump from a
	// frame that is not a trampoline's costs nothing: stitching gives
	// its instructions to the frame.) So no ret needs the gate open
	// after it, and translated code logs every ret (hooklog.go).
	baseLook   int
	baseLookTo uint64
	// baseJmp is the Retired right after a trampoline's jump through a
	// register that watch saw last (0: the last record was none).
	baseJmp uint64
	jumps   map[int]*baseJump
	last    uint64
	// basePending: the frame on top at the checkpoint may be one the
	// previous interval could not name yet; baseEntry is the function
	// this interval found it in (0: none), baseTarget the first
	// instruction it ran there.
	basePending           bool
	baseEntry, baseTarget uint64
	baseNoSym             bool
}

// push opens a frame of zeros on the stack and returns it: filled in
// place, where appending a frame built in a variable stalled on
// forwarding its stores to the copy (a quarter of step on sqlite3).
func (st *segThread) push() *frame {
	if len(st.stack) == cap(st.stack) {
		st.stack = append(st.stack, frame{})
	} else {
		st.stack = st.stack[:len(st.stack)+1]
		st.stack[len(st.stack)-1] = frame{}
	}
	return &st.stack[len(st.stack)-1]
}

// retFloor is the least RSP of a ret that can pop every frame on the
// stack: the oldest frame's slot, or 0 with none. Only such a ret can
// return to a frame open at the checkpoint, where watch looks for a
// lazy-binding trampoline's jump to a function's entry (baseLookTo), so
// translated code opens the window of soft records (windows) only after
// those (x86.CPU.SetRetFloor): sqlite3 entered a function within 32
// instructions of 4 million rets, lua of 6 million, for nothing. A
// fresh thread's root frame (slot ^0) is never popped.
func (st *segThread) retFloor() uint64 {
	if len(st.stack) == 0 {
		return 0
	}
	return st.stack[0].slot
}

func (st *segThread) base(b int) *segNode {
	if j := st.jumps[b]; j != nil {
		return j.node
	}
	for len(st.bases) <= b {
		st.bases = append(st.bases, &segNode{First: noPos})
	}
	return st.bases[b]
}

// basePop is a point where frames open at the checkpoint may end: a ret
// with the stack pointer at sp, or a call whose return address goes to
// sp, at or above the frames the program left by longjmp.
type basePop struct {
	sp   uint64
	call bool
}

// floor is a lower bound of the return-address slot of the frame open
// at the checkpoint that the thread runs in now: a call below it cannot
// have left that frame. The frame on top at the checkpoint may be one
// the program already left (by longjmp) without a ret: no bound.
func (st *segThread) floor() uint64 {
	if st.b == 0 {
		return 0
	}
	return st.baseRets[st.b-1].sp + 1
}

// baseJump is a jump from base frame b to a function's entry.
type baseJump struct {
	entry uint64
	node  *segNode
}

// segment is the calls of one checkpoint interval.
type segment struct {
	threads map[int]*segThread
	order   []int // tids in the order the segment met them
	cur     *segThread
	curCPU  *x86.CPU
	fn      funcs
	// flowOf and sent are Options.FlowOf and Options.Sent; flows holds
	// what each flow spent in each call path.
	flowOf func(tid int, pos uint64) int
	sent   func(ev *reader.Event) uint64
	flows  map[flowKey]*FlowStat
	// tree is the recording's processes; keys the key each thread has
	// now (an exec gives it a new one); forks the stacks forking
	// threads had when they forked a process (process.go).
	tree  *Tree
	keys  map[int]threadID
	forks []forkSnap
	// r is the replay the segment follows (for verdictOf); askImg is
	// the image of thread askTid when keysSet was askKeys.
	r                *reader.Replay
	askTid, askImg   int
	askKeys, keysSet uint64
	// verdicts keeps callsAndRets' answers (nil once the segment is
	// done).
	verdicts *[verdictSlots]verdict
	// verdictsMade counts the verdicts verdictOf made for its table.
	verdictsMade int
	// children caches the children of nodes (nil once the segment is
	// done).
	children *childCache
	// slabs is how many slabs of nodes the segment made (childCache).
	slabs int
	// leaves counts the leaf calls' records followed (leafCalls),
	// leafNamings those that named the frame they were made from
	// (leaf).
	leaves, leafNamings uint64
}

// funcs finds function entries, through a per-segment cache of the shared
// symbol table.
type funcs struct {
	sym   Symbolizer
	cache map[uint64]entryOf
	// syms and caches are every program image's; sym and cache the
	// image of the thread that runs (use).
	syms   []Symbolizer
	caches []map[uint64]entryOf
	img    int
	// canon[i] is the first image named by image i's Symbolizer, whose
	// cache (and img in recent) i shares; nil: every image its own.
	canon []int
	// recent holds the last entries looked up, direct-mapped by pc, in
	// front of cache: watch looks up every instruction it sees while it
	// searches for a callee's function, and the map was 14% of
	// sqlite3's ttd calls.
	recent [1 << recentBits]recentEntry
}

const recentBits = 12

// recentEntry is one pc's entry in one program image's symbols, in 16
// bytes (40 with the entryOf, an int image and a flag: a 160 KB table
// that the replay's own work evicted between two batches of records,
// where lookups came once a record on jq and sort -n): img1 is the
// image (funcs.img) plus one, 0 for an empty slot (a tree's programs
// share addresses); off holds pc less the entry below recentOK and
// recentTramp (entryOf.ok, entryOf.tramp). An entry more than
// recentOffMax below pc is not kept here (the map has it).
type recentEntry struct {
	pc   uint64
	img1 int32
	off  uint32
}

const (
	recentOK     = 1 << 31
	recentTramp  = 1 << 30
	recentOffMax = recentTramp - 1
)

// entryOf unpacks r (funcs.lookup's hit).
func (r *recentEntry) entryOf() entryOf {
	e := entryOf{tramp: r.off&recentTramp != 0}
	if r.off&recentOK != 0 {
		e.entry, e.ok = r.pc-uint64(r.off&recentOffMax), true
	}
	return e
}

// keep puts pc's entry e into r, unless its offset does not fit.
func (r *recentEntry) keep(pc uint64, img int, e entryOf) {
	var off uint64
	if e.ok {
		off = pc - e.entry
		if off > recentOffMax || e.entry > pc {
			return
		}
		off |= recentOK
	} else if e.entry != 0 {
		return
	}
	if e.tramp {
		off |= recentTramp
	}
	*r = recentEntry{pc, int32(img + 1), uint32(off)}
}

type entryOf struct {
	entry uint64
	ok    bool
	// tramp: a lazy-binding trampoline (_dl_runtime_resolve_*), which
	// binds a PLT entry and then jumps to the function called.
	tramp bool
}

func (f *funcs) entry(pc uint64) (uint64, bool) {
	e := f.lookup(pc)
	return e.entry, e.ok
}

func (f *funcs) lookup(pc uint64) entryOf { return f.find(pc, true) }

// probe is lookup for a pc that will seldom be asked about again (an
// instruction of a block makeVerdict judges): the answer is not kept
// in the map. The tree's verdicts put 450,000 such pcs in it (21 MB of
// map, its growth and its misses), where the ones the hooks ask about
// again (calls' targets, entries) are a few thousand.
func (f *funcs) probe(pc uint64) entryOf { return f.find(pc, false) }

// find is lookup, which keeps a new answer in the map if keep.
func (f *funcs) find(pc uint64, keep bool) entryOf {
	r := &f.recent[(pc^pc>>recentBits)&(1<<recentBits-1)]
	if r.pc == pc && r.img1 == int32(f.img+1) {
		return r.entryOf()
	}
	if e, ok := f.cache[pc]; ok {
		r.keep(pc, f.img, e)
		return e
	}
	var e entryOf
	if f.sym != nil {
		var name string
		name, e.entry, e.ok = f.sym.PCToFunc(pc)
		e.tramp = strings.HasPrefix(name, "_dl_runtime_resolve")
	}
	if keep {
		f.cache[pc] = e
	}
	r.keep(pc, f.img, e)
	return e
}

func newSegment(sym Symbolizer) *segment {
	c := map[uint64]entryOf{}
	return &segment{threads: map[int]*segThread{}, keys: map[int]threadID{}, children: new(childCache), verdicts: new([verdictSlots]verdict),
		fn: funcs{sym: sym, cache: c, syms: []Symbolizer{sym}, caches: []map[uint64]entryOf{c}}}
}

func (s *segment) thread(tid int, c *x86.CPU, fresh bool, pos uint64) *segThread {
	id := s.keyOf(tid)
	st := s.threads[id.key]
	if st == nil {
		st = &segThread{tid: tid, key: id.key, img: id.img, cpu: c, fresh: fresh, start: pos}
		if c != nil {
			st.last = c.Retired()
		}
		if fresh {
			st.root = &segNode{First: noPos}
			st.stack = append(st.stack, frame{parent: st.root, slot: ^uint64(0), pos: pos})
			st.pending = true
		} else {
			st.basePending = true
			st.baseLook = 2 * lookLimit
		}
		if fresh {
			st.look = lookLimit
		}
		if c != nil {
			c.SetRetFloor(st.retFloor())
		}
		s.threads[id.key] = st
		s.order = append(s.order, id.key)
	}
	if c != nil {
		st.cpu = c
	}
	return st
}

// top returns the node instructions run in now, naming a pending frame
// by pc (an instruction inside it) if it must.
func (s *segment) top(st *segThread, pc uint64) *segNode {
	if len(st.stack) == 0 {
		if st.basePending && st.b == 0 && pc != 0 {
			s.resolveBase(st, pc, true)
		}
		return st.base(st.b)
	}
	f := &st.stack[len(st.stack)-1]
	if f.node == nil {
		s.resolve(st, f, pc)
	}
	return f.node
}

// resolveBase names the frame on top at the checkpoint, in case the
// previous interval left it unnamed: pc is an instruction run in it, at
// its entry unless force.
func (s *segment) resolveBase(st *segThread, pc uint64, force bool) {
	if st.baseTarget == 0 {
		st.baseTarget = pc
	}
	e := s.fn.lookup(pc)
	switch {
	case e.ok && (force || e.entry == pc):
		st.baseEntry = e.entry
	case force:
		// No symbol: an unnamed function is named by its first
		// instruction, which the previous interval may have seen.
		st.baseEntry, st.baseNoSym = st.baseTarget, true
	default:
		return
	}
	st.basePending = false
}

// resolve names a pending frame: by the function containing pc, or by
// the address the frame began at when no symbol covers it.
func (s *segment) resolve(st *segThread, f *frame, pc uint64) {
	if f.target == 0 {
		f.target = pc
	}
	m := s.children.memo(f.parent, f.site, f.target, pc)
	if m.hit(f.parent, f.site, f.target, pc, 0) {
		s.entered(st, f, m.child)
		return
	}
	entry, ok := s.fn.entry(pc)
	if !ok {
		entry = f.target
	}
	s.enter(st, f, entry)
	*m = pathMemo{f.node, f.target, pc, 0}
}

func (s *segment) enter(st *segThread, f *frame, entry uint64) {
	k, p := segKey{f.site, entry}, f.parent
	n := p.last
	if n == nil || n.skey() != k {
		n = s.children.child(p, k)
	}
	s.entered(st, f, n)
}

// entered is enter once the frame's node n is known.
func (s *segment) entered(st *segThread, f *frame, n *segNode) {
	n.Count++
	if f.pos < n.First {
		n.First, n.FirstTid = f.pos, st.tid
	}
	f.node = n
	st.pending = false
	if s.flowOf != nil {
		fs := s.flowStat(st, n)
		fs.Count++
		fs.First = min(fs.First, f.pos)
	}
}

// flowStat is what flow spent in a call path of the segment. Out of
// line: only ttd flows asks it, and inlined in credit it made the frames
// of leaf, step and account bigger for ttd calls too.
//
//go:noinline
func (s *segment) flowStat(st *segThread, n *segNode) *FlowStat {
	k := flowKey{st.flow, st.key, n}
	fs := s.flows[k]
	if fs == nil {
		fs = &FlowStat{First: noPos}
		s.flows[k] = fs
	}
	return fs
}

type flowKey struct {
	flow, tid int // tid: the thread's key
	node      *segNode
}

// credit gives delta instructions to node, and to the thread's flow.
func (s *segment) credit(st *segThread, node *segNode, delta uint64) {
	node.Self += delta
	if s.flowOf != nil && delta != 0 {
		s.flowStat(st, node).Self += delta
	}
}

// syscall follows the flows: the instructions up to a syscall belong to
// the flow the thread was in, the bytes a send-like syscall sent to its
// call path, and the thread may switch flows there (a receive).
func (s *segment) syscall(r *reader.Replay, ev *reader.Event) {
	st := s.threads[s.keyOf(ev.Tid).key]
	if st == nil || st.cpu == nil {
		return
	}
	s.settle(st, st.cpu.Retired())
	st.flow = s.flowOf(ev.Tid, ev.Position)
	if s.sent != nil {
		if n := s.sent(ev); n > 0 {
			s.flowStat(st, s.settled(st)).Sent += n
		}
	}
}

// settled is the node the thread's instructions go to now, without
// naming a pending frame (its caller's then).
func (s *segment) settled(st *segThread) *segNode {
	if len(st.stack) == 0 {
		return st.base(st.b)
	}
	if f := &st.stack[len(st.stack)-1]; f.node != nil {
		return f.node
	} else {
		return f.parent
	}
}

// account gives the instructions the thread retired since the last call
// or ret, up to n, to the top frame.
func (s *segment) account(st *segThread, n uint64, pc uint64) *segNode {
	var top *segNode
	if k := len(st.stack) - 1; k >= 0 && st.stack[k].node != nil {
		top = st.stack[k].node // top's common case, without a call
	} else {
		top = s.top(st, pc)
	}
	if n >= st.last { // a thread's CPU reset at its end counts nothing
		s.credit(st, top, n-st.last)
	}
	st.last = n
	return top
}

// settle gives the instructions run since the last call or ret to the
// top frame at the end of the interval, without naming it: a frame the
// interval could not name is named by the next one.
func (s *segment) settle(st *segThread, n uint64) {
	if n >= st.last {
		if f := len(st.stack) - 1; f >= 0 && st.stack[f].node == nil {
			st.stack[f].pendSelf += n - st.last
		} else {
			s.credit(st, s.settled(st), n-st.last)
		}
	}
	st.last = n
}

// lookLimit bounds the instructions a frame's start is searched for its
// function's entry (a PLT stub is three, the lazy-binding path a few
// more); past it a frame is named at its first call or ret. Looking at
// every instruction of a frame entered mid-function (the frame on top at
// a checkpoint) made the analysis of a loop-heavy program 3x slower.
const lookLimit = 16

// watch names frames from their first instructions: a call's callee at
// its entry, the frame on top at the checkpoint if the previous interval
// left it unnamed, and the function a lazy-binding trampoline jumps to.
func (s *segment) watch(st *segThread, h *x86.HookStep) {
	pc := h.PC
	if st.baseLook > 0 || st.baseLookTo != 0 {
		inWindow := st.baseLook > 0 || h.Retired < st.baseLookTo
		if st.baseLook > 0 {
			st.baseLook--
		}
		if !inWindow {
			st.baseLookTo = 0
		} else if len(st.stack) == 0 && st.jumps[st.b] == nil {
			pendingBase := st.b == 0 && st.basePending
			if pendingBase && st.baseTarget == 0 {
				st.baseTarget = pc
			}
			// A function's entry reached from a frame open at the
			// checkpoint: that frame was a PLT stub's call (named
			// here), a trampoline's (which becomes this function's)
			// or neither: stitching knows.
			// A trampoline's jump through a register may reach the
			// function past its entry as far as the hooks show (the
			// entry's record is not made after such a jump in
			// translated code): the first record after the jump is in
			// the function it jumped to, whose instructions begin
			// right after the jump (baseJmp).
			e := s.entryAt(h)
			jumped := st.baseJmp
			st.baseJmp = 0
			if e.ok && e.tramp && h.Kind&x86.StepOpMask == x86.StepJmpReg {
				st.baseJmp = h.Retired + 1
			}
			if e.ok && !e.tramp && (e.entry == pc || jumped != 0) {
				n := h.Retired
				if e.entry != pc {
					n = jumped
					jumpsPastEntry.Add(1)
				}
				if pendingBase {
					st.baseEntry, st.basePending = e.entry, false
				}
				s.account(st, n, 0)
				if st.jumps == nil {
					st.jumps = map[int]*baseJump{}
				}
				st.jumps[st.b] = &baseJump{entry: e.entry, node: &segNode{First: noPos}}
				st.baseLook, st.baseLookTo = 0, 0
				return
			}
		}
	}
	if st.look > 0 || st.lookTo != 0 {
		inWindow := st.look > 0 || h.Retired < st.lookTo
		if st.look > 0 {
			st.look--
		}
		if !inWindow || !st.pending {
			st.look, st.lookTo = 0, 0
		} else {
			f := &st.stack[len(st.stack)-1]
			if f.target == 0 {
				f.target = pc
			}
			// The callee's first instruction is its entry; a PLT stub
			// is not a function's entry, and the frame stays pending
			// through it.
			if e := s.entryAt(h); e.ok && e.entry == pc {
				s.enter(st, f, e.entry)
				st.look, st.lookTo = 0, 0
				if e.tramp {
					st.tramp, st.trampAt = true, len(st.stack)-1
				}
			}
		}
	}
	if st.tramp && st.trampAt == len(st.stack)-1 && !st.pending {
		// The trampoline jumps to the function called: the frame is
		// that function's from here on.
		if e := s.entryAt(h); e.ok && e.entry == pc && !e.tramp {
			f := &st.stack[st.trampAt]
			s.account(st, h.Retired, pc)
			s.enter(st, f, e.entry)
			st.tramp = false
		}
	}
}

// callsAndRets hooks the calls and rets of a block, and its
// instructions at a function's entry: where watch names the frame a
// direct call pushed, the gate closed (lookTo), and where the gate
// usually closes after an indirect call: the rest of the block, and the
// blocks that follow, run translated (x86.InstFilter).
//
// A block's verdicts are kept (verdictOf) for the next code cache that
// takes the same decoded instructions from the code store (x86.CodeStore:
// a tree's 40 bash share theirs) or asks again after a RunTo: a lookup
// for each instruction of each block was 13% of the tree's ttd calls.
func (s *segment) callsAndRets(b *x86.Block) uint64 { return s.verdictOf(b).hooks }

// verdict is what the x86 filter asks of a block (callsAndRets,
// loggable, windows, merges), for the block whose instructions start at
// insts (n of them: decoded instructions are shared, never written, and
// blocks that share an array's tail end with it), under the symbols of
// image img (funcs.img).
type verdict struct {
	insts                                  *x86.Inst
	n, img                                 int32
	hooks, logged, merge, soft, open, shut uint64
}

// verdictSlots is the size of the table of verdicts (4 MiB), in sets
// of two by block address: a new verdict takes the first slot of its
// set, the one there moves to the second. Direct-mapped, the tree's
// 32,700 verdicts (of 40 bash processes, python3 and their libraries)
// collided in the 65,536 slots enough that 27,600 of its 60,300
// verdicts made were made again after another had evicted them.
const (
	verdictBits  = 16
	verdictSlots = 1 << verdictBits
)

// verdictOf is b's verdict, from the table or made now.
func (s *segment) verdictOf(b *x86.Block) *verdict {
	if len(b.Insts) == 0 {
		return &noVerdict
	}
	// The symbols of the thread that runs b, which need not be the
	// thread the hook saw last (s.cur): a block is asked about before
	// its thread's first hook.
	img := s.fn.img
	if s.r != nil {
		if tid, _ := s.r.Current(); tid != s.askTid || s.askKeys != s.keysSet {
			s.askTid, s.askKeys = tid, s.keysSet
			s.askImg = s.fn.canonOf(s.keyOf(tid).img)
		}
		img = s.askImg
	}
	if s.verdicts == nil {
		v := s.verdictIn(b, img)
		return &v
	}
	set := s.verdictSet(b)
	for i := range set {
		if v := &set[i]; v.insts == &b.Insts[0] && v.n == int32(len(b.Insts)) && v.img == int32(img) {
			return v
		}
	}
	s.verdictsMade++
	set[1] = set[0]
	set[0] = s.verdictIn(b, img)
	return &set[0]
}

// verdictSet is the set of the table b's verdict is kept in.
func (s *segment) verdictSet(b *x86.Block) []verdict {
	return s.verdicts[(b.PC^b.PC>>verdictBits)<<1&(verdictSlots-1):][:2]
}

// verdictIn makes b's verdict with the symbols of image img.
func (s *segment) verdictIn(b *x86.Block, img int) verdict {
	was := s.fn.img
	s.fn.use(img)
	v := s.makeVerdict(b)
	s.fn.use(was)
	return v
}

// noVerdict is an empty block's.
var noVerdict verdict

// makeVerdict makes b's verdict, instruction by instruction: the calls
// and rets, and the instructions at a function's entry, are hooked; all
// but indirect calls of other sizes than 8 and entries of a lazy-binding
// trampoline may be logged; the direct calls and rets at no function's
// entry may merge (merges); the window classes as windows gives them.
func (s *segment) makeVerdict(b *x86.Block) verdict {
	v := verdict{insts: &b.Insts[0], n: int32(len(b.Insts)), img: int32(s.fn.img)}
	for i := range b.Insts {
		in := &b.Insts[i]
		bit := uint64(1) << i
		switch in.Op {
		case x86asm.CALL, x86asm.RET:
			v.hooks |= bit
			a := &in.Args[0]
			if in.Op == x86asm.RET || a.Kind == x86.KRel || a.Kind == x86.KMem || a.Kind == x86.KReg && a.Size == 8 {
				v.logged |= bit
			}
			if in.Op == x86asm.RET || a.Kind == x86.KRel {
				if e := s.fn.probe(in.PC); !e.ok || e.entry != in.PC {
					v.merge |= bit
				}
			}
			if s.callsEntry(in) {
				v.shut |= bit
			} else {
				v.open |= bit
			}
		default:
			if e := s.fn.probe(in.PC); e.ok && e.entry == in.PC {
				v.hooks |= bit
				if !e.tramp {
					v.logged |= bit
					v.soft |= bit
				}
			}
		}
	}
	return v
}

// gate hooks the instructions callsAndRets does not mark while the thread that runs
// them has watch look at its instructions (the first instructions of a
// frame, a trampoline's jump). That state changes only in instruction and
// event, as x86.HookGate requires. An unknown thread is hooked: its
// first instruction makes its state.
func (s *segment) gate(r *reader.Replay, c *x86.CPU) bool {
	st := s.cur
	if c != s.curCPU {
		tid, _ := r.Current()
		if st = s.threads[s.keyOf(tid).key]; st == nil {
			return true
		}
	}
	return st.look > 0 || st.tramp || st.baseLook > 0
}

// instruction is the Replay hook: every instruction, a few compares
// unless it is a call or a ret, or the first of a frame.
func (s *segment) instruction(r *reader.Replay, c *x86.CPU, in *x86.Inst) {
	st := s.running(r, c)
	// What a record would hold (a function's entry is not marked soft:
	// entryAt looks it up).
	h := x86.HookStep{Retired: c.Retired(), RSP: c.R[x86.RSP], PC: in.PC, Kind: x86.StepOp(in) | s.callWindow(in)}
	var base uint64
	switch h.Kind & x86.StepOpMask {
	case x86.StepCall:
		h.Target = in.Args[0].Imm
	case x86.StepCallReg:
		h.Target = c.R[in.Args[0].Reg]
	}
	if in.Op == x86asm.CALL {
		base = r.InstPosition(c) - h.Retired
	}
	s.step(st, &h, base)
	setWindow(c, h.Kind, h.Retired)
	c.SetRetFloor(st.retFloor())
}

// running is the thread that runs on c.
func (s *segment) running(r *reader.Replay, c *x86.CPU) *segThread {
	if c != s.curCPU {
		tid, _ := r.Current()
		s.cur, s.curCPU = s.thread(tid, c, false, 0), c
		s.fn.use(s.cur.img)
	}
	return s.cur
}

// step follows one hooked instruction, from an exact Hook call or a
// logged record (hooklog.go); a call's position is base+h.Retired.
// (A HookStep is what the analysis needs of an instruction: handing a
// record over without a copy into another struct was 10% of ttd calls
// on sqlite3, mostly a stall in forwarding the copy's stores.)
func (s *segment) step(st *segThread, h *x86.HookStep, base uint64) {
	if st.look > 0 || st.tramp || st.baseLook > 0 || st.baseLookTo != 0 {
		s.watch(st, h)
	} else if st.lookTo != 0 {
		// Most often the window after a call whose callee was not
		// named at the call has passed (watch would end it).
		if h.Retired >= st.lookTo {
			st.lookTo = 0
		} else {
			s.watch(st, h)
		}
	}
	switch op := h.Kind & x86.StepOpMask; op {
	case x86.StepCall, x86.StepCallReg, x86.StepCallMem, x86.StepCallAny:
		n := h.Retired + 1
		top := s.account(st, n, h.PC)
		slot := h.RSP - 8
		// Frames whose slot the new return address goes to or below
		// are gone: the program left them by longjmp (or a thread was
		// cancelled by unwinding) without a ret.
		if k := len(st.stack) - 1; k >= 0 && st.stack[k].slot <= slot || k < 0 && slot >= st.floor() {
			top = s.leave(st, slot, h.PC)
		}
		f := st.push()
		f.parent, f.site, f.slot, f.pos = top, h.PC, slot, base+h.Retired
		st.pending, st.look, st.lookTo = true, lookLimit, 0
		// A call whose target the registers tell (not one through
		// memory, which the replay may not know yet): the callee's
		// first instructions are looked at through the hooks
		// callsAndRets sets at function entries, the gate closed.
		// (h.Target of a call through memory: from its record, when
		// translated code made the call: hooklog.go.)
		if op != x86.StepCall && op != x86.StepCallReg && h.Target == 0 {
			// The gate opens for the callee's first instruction only,
			// which tells the target (watch: f.target) and may be its
			// entry; past it watch acts on function entries alone,
			// which are hooked, so the rest of the window is bounded
			// by Retired, the gate closed, as after a direct call to
			// no entry. Open for all lookLimit instructions, it made
			// perl's 156k calls through memory that the interpreter
			// ran 2.5 million exact Hook calls.
			st.look, st.lookTo = 1, h.Retired+1+lookLimit
			break
		}
		target := h.Target
		f.target = target
		// The callee's first instruction is its entry: named now, as
		// watch would at that instruction. A direct call's window
		// class says whether it is (callWindow).
		var named bool
		switch {
		case h.Kind&x86.StepEntry != 0:
			// The callee's entry, a soft record folded into the
			// call's within lookLimit (useLog): watch would name
			// the frame there, with no record between.
			named = true
		case op == x86.StepCall && h.Kind&(x86.StepShut|x86.StepOpen) != 0:
			named = h.Kind&x86.StepShut != 0
		default:
			e := s.fn.lookup(target)
			named = e.ok && e.entry == target && !e.tramp
		}
		if named {
			s.enter(st, f, target)
			st.look = 0
			break
		}
		st.look, st.lookTo = 0, h.Retired+1+lookLimit
	case x86.StepRet:
		n := h.Retired + 1
		s.account(st, n, h.PC)
		rsp := h.RSP
		exact := false
		for len(st.stack) > 0 && st.stack[len(st.stack)-1].slot <= rsp {
			exact = st.stack[len(st.stack)-1].slot == rsp
			st.stack = st.stack[:len(st.stack)-1]
		}
		st.pending = len(st.stack) > 0 && st.stack[len(st.stack)-1].node == nil
		if st.tramp && st.trampAt >= len(st.stack) {
			st.tramp = false
		}
		if len(st.stack) == 0 {
			// Back in a frame open at the checkpoint: if it is a
			// lazy-binding trampoline's, it jumps to the function
			// called next (watch).
			st.baseLookTo = n + 2*lookLimit
			if !exact {
				st.b++
				st.baseRets = append(st.baseRets, basePop{sp: rsp})
			}
		}
	}
}

// leave pops the frames a call at slot shows the program left, and
// returns the frame the call is made from. A signal handler's frame is
// no exception: a call inside the handler puts its return address below
// the handler's, on whichever stack the handler runs; one above it means
// the handler was left by longjmp (siglongjmp, thread cancellation).
func (s *segment) leave(st *segThread, slot, pc uint64) *segNode {
	for k := len(st.stack) - 1; k >= 0 && st.stack[k].slot <= slot; k-- {
		st.stack = st.stack[:k]
	}
	if len(st.stack) == 0 && slot >= st.floor() {
		// Maybe frames open at the checkpoint too: stitching knows.
		st.b++
		st.baseRets = append(st.baseRets, basePop{sp: slot, call: true})
	}
	st.pending = len(st.stack) > 0 && st.stack[len(st.stack)-1].node == nil
	if st.tramp && st.trampAt >= len(st.stack) {
		st.tramp = false
	}
	return s.top(st, pc)
}

// event follows thread starts and signal deliveries.
func (s *segment) event(r *reader.Replay, ev *reader.Event) {
	switch ev.Kind {
	case reader.EventThreadStart:
		st := s.threadStart(r, ev)
		if s.flowOf != nil {
			st.flow = s.flowOf(ev.Tid, ev.Position)
		}
	case reader.EventSyscall:
		if s.flowOf != nil {
			s.syscall(r, ev)
		}
	case reader.EventSignal:
		c := cpuOf(r, ev.Tid)
		if c == nil {
			return
		}
		st := s.thread(ev.Tid, c, false, 0)
		s.fn.use(st.img)
		defer s.useCur()
		n := c.Retired()
		if st.pending {
			f := &st.stack[len(st.stack)-1]
			s.resolve(st, f, f.target)
		}
		top := s.account(st, n, st.baseTarget)
		f := frame{parent: top, site: sigSite, slot: c.R[x86.RSP], pos: ev.Position}
		s.enter(st, &f, uint64(ev.Record.Signal.Signo))
		st.stack = append(st.stack, f)
	case reader.EventThreadExit:
		if st := s.threads[s.keyOf(ev.Tid).key]; st != nil && st.cpu != nil {
			s.finish(st)
			// The CPU is done with: let its address space, code cache
			// and translations go, for the next process to reuse (a
			// tree's 42 processes kept alive to the segment's end made
			// 110,000 page faults where the replay makes 21,000).
			if s.curCPU == st.cpu {
				s.cur, s.curCPU = nil, nil
			}
			st.cpu = nil
		}
	case reader.EventProcess:
		if ev.Process.Event == tracefile.ProcessExeced {
			s.exec(r, ev)
		}
	}
}

// finish gives the top frame the instructions run since the last call
// or ret, at the end of the interval or of the thread.
func (s *segment) finish(st *segThread) {
	if st.cpu == nil {
		return
	}
	if st.pending {
		if f := &st.stack[len(st.stack)-1]; f.target == 0 {
			f.target = st.cpu.RIP
		}
	}
	s.settle(st, st.cpu.Retired())
}

func cpuOf(r *reader.Replay, tid int) *x86.CPU {
	tids, cpus := r.Threads()
	for i, t := range tids {
		if t == tid {
			return cpus[i]
		}
	}
	return nil
}

// skey is n's key in its segment.
func (n *Node) skey() segKey { return segKey{n.Site, n.Entry} }
