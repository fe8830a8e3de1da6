package calls

import (
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"ttd/reader"
	"ttd/symbols"
	"ttd/x86"
)

// The filter's questions as they were asked before verdictOf kept the
// answers, one lookup per instruction each: the reference.

func refCallsAndRets(s *segment, b *x86.Block) (m uint64) {
	for i := range b.Insts {
		in := &b.Insts[i]
		switch in.Op {
		case x86asm.CALL, x86asm.RET:
			m |= 1 << i
		default:
			if e := s.fn.lookup(in.PC); e.ok && e.entry == in.PC {
				m |= 1 << i
			}
		}
	}
	return m
}

func refLoggable(s *segment, b *x86.Block) (logged uint64) {
	for i := range b.Insts {
		in := &b.Insts[i]
		switch in.Op {
		case x86asm.CALL:
			if a := &in.Args[0]; a.Kind == x86.KRel || a.Kind == x86.KMem || a.Kind == x86.KReg && a.Size == 8 {
				logged |= 1 << i
			}
		case x86asm.RET:
			logged |= 1 << i
		default:
			if e := s.fn.lookup(in.PC); e.ok && e.entry == in.PC && !e.tramp {
				logged |= 1 << i
			}
		}
	}
	return logged
}

func refMerges(s *segment, b *x86.Block) (m uint64) {
	for i := range b.Insts {
		in := &b.Insts[i]
		if in.Op == x86asm.RET || in.Op == x86asm.CALL && in.Args[0].Kind == x86.KRel {
			if e := s.fn.lookup(in.PC); !e.ok || e.entry != in.PC {
				m |= 1 << i
			}
		}
	}
	return m
}

func refWindows(s *segment, b *x86.Block) (soft, open, shut uint64) {
	for i := range b.Insts {
		in := &b.Insts[i]
		switch k := s.callWindow(in); {
		case k == x86.StepShut:
			shut |= 1 << i
		case k == x86.StepOpen:
			open |= 1 << i
		case in.Op != x86asm.CALL && in.Op != x86asm.RET:
			if e := s.fn.lookup(in.PC); e.ok && e.entry == in.PC && !e.tramp {
				soft |= 1 << i
			}
		}
	}
	return soft, open, shut
}

// TestVerdictsAsInstructions: the verdicts verdictOf makes in one pass
// and keeps are, for every block programs that bind lazily (a
// trampoline's entry), call through memory and registers, longjmp and
// run threads ask about, what the questions asked one instruction at a
// time answered: the hooks, the logged instructions, the merges and the
// windows; a block asked about again (after each checkpoint interval)
// gets them from the table.
func TestVerdictsAsInstructions(t *testing.T) {
	progs := append(hardPrograms, hardProgram{"testdata/lazybind.c", 7919}, hardProgram{"testdata/jitcall.c", 7919})
	for _, c := range progs {
		exe := buildC(t, c.src, "-pthread")
		tr, sym := open(t, record(t, exe, c.every))
		cps, tree := checkpointsAndTree(t, tr)
		r, err := tr.NewReplayAt(cps[0])
		if err != nil {
			t.Fatal(err)
		}
		s, ref := newSegment(sym), newSegment(sym)
		s.useTree(tree, []Symbolizer{sym})
		s.r = r
		var asked, kept, bad, tramps int
		r.Hook = func(*reader.Replay, *x86.CPU, *x86.Inst) {}
		r.HookInsts = func(b *x86.Block) uint64 {
			asked++
			for _, v := range s.verdictSet(b) {
				if len(b.Insts) > 0 && v.insts == &b.Insts[0] {
					kept++
				}
			}
			v := s.verdictOf(b)
			soft, open, shut := refWindows(ref, b)
			want := verdict{hooks: refCallsAndRets(ref, b), logged: refLoggable(ref, b), merge: refMerges(ref, b), soft: soft, open: open, shut: shut}
			got := *v
			got.insts, got.n, got.img = nil, 0, 0
			if got != want && bad < 5 {
				bad++
				t.Errorf("%s: block %#x (%d instructions): verdict %+v, one instruction at a time %+v", c.src, b.PC, len(b.Insts), got, want)
			}
			for i := range b.Insts {
				if e := ref.fn.lookup(b.Insts[i].PC); e.tramp && e.entry == b.Insts[i].PC {
					tramps++
				}
			}
			return v.hooks
		}
		for _, at := range append(positions(cps[1:]), tr.End()) {
			if err := r.RunTo(at); err == reader.ErrEnd {
				break
			} else if err != nil {
				t.Fatal(err)
			}
		}
		r.Close()
		if asked < 100 || kept == 0 {
			t.Errorf("%s: %d verdicts asked, %d of them kept: want more", c.src, asked, kept)
		}
		if c.src == "testdata/lazybind.c" && tramps == 0 {
			t.Errorf("%s: no trampoline's entry in the blocks asked about", c.src)
		}
		t.Logf("%s: %d verdicts asked, %d kept, %d trampoline entries", c.src, asked, kept, tramps)
	}
}

// TestImagesShareSymbols: program images that map the same files at the
// same addresses (in any order, one of them named again under another
// path at the same address) get one id, so one Symbolizer; an image
// with a file at another address does not.
func TestImagesShareSymbols(t *testing.T) {
	var tabs [5]*symbols.Table
	for i := range tabs {
		tabs[i] = new(symbols.Table)
	}
	part := func(lo, hi uint64, tab int) symPart { return symPart{lo: lo, hi: hi, delta: lo, tab: tabs[tab]} }
	a := &imageSyms{parts: visibleParts([]symPart{part(0x1000, 0x9000, 1), part(0x70000, 0x78000, 2), part(0x60000, 0x68000, 3)})}
	b := &imageSyms{parts: visibleParts([]symPart{part(0x1000, 0x9000, 1), part(0x70000, 0x78000, 2), part(0x1000, 0x9000, 4), part(0x60000, 0x68000, 3)})}
	c := &imageSyms{parts: visibleParts([]symPart{part(0x60000, 0x68000, 3), part(0x1000, 0x9000, 1), part(0x70000, 0x78000, 2)})}
	d := &imageSyms{parts: visibleParts([]symPart{part(0x1000, 0x9000, 1), part(0x70000, 0x78000, 2), part(0x50000, 0x58000, 3)})}
	if a.id() != b.id() || a.id() != c.id() {
		t.Errorf("ids differ:\n%s\n%s\n%s", a.id(), b.id(), c.id())
	}
	if a.id() == d.id() {
		t.Errorf("a file at another address, the same id %s", a.id())
	}
	// Parts that meet without overlapping are ordered too.
	f := &imageSyms{parts: visibleParts([]symPart{part(0x9000, 0xa000, 2), part(0x1000, 0x9000, 1)})}
	g := &imageSyms{parts: visibleParts([]symPart{part(0x1000, 0x9000, 1), part(0x9000, 0xa000, 2)})}
	if f.id() != g.id() {
		t.Errorf("parts that meet: ids differ:\n%s\n%s", f.id(), g.id())
	}
	// Overlapping parts keep their order: the first covers.
	e := visibleParts([]symPart{part(0x5000, 0x9000, 1), part(0x1000, 0x6000, 2)})
	if len(e) != 2 || e[0].tab != tabs[1] {
		t.Errorf("overlapping parts reordered: %+v", e)
	}
}

func positions(cps []reader.Checkpoint) (out []uint64) {
	for _, cp := range cps {
		out = append(out, cp.Position)
	}
	return out
}

// TestVerdictsPerImage: one block (the same decoded instructions, as two
// programs' code caches share them) gets each image's verdict: an
// instruction at a function's entry in one program and inside one in
// the other is hooked in the first only, and a verdict kept for one
// image is not the other's.
func TestVerdictsPerImage(t *testing.T) {
	const base = 0x400000
	a := &fakeSyms{entries: []uint64{base, base + 0x40}, names: []string{"f", "g"}, size: 0x100}
	b := &fakeSyms{entries: []uint64{base}, names: []string{"f"}, size: 0x100}
	s := newSegment(a)
	s.fn.syms, s.fn.caches, s.fn.canon = []Symbolizer{a, b}, []map[uint64]entryOf{{}, {}}, []int{0, 1}
	blk := &x86.Block{PC: base + 0x40, End: base + 0x44, Insts: []x86.Inst{{PC: base + 0x40, Op: x86asm.MOV, Len: 3}, {PC: base + 0x43, Op: x86asm.RET, Len: 1}}}
	for _, img := range []int{0, 1, 0, 1} {
		s.fn.use(img)
		want := uint64(0b11)
		if img == 1 {
			want = 0b10
		}
		if got := s.verdictOf(blk).hooks; got != want {
			t.Errorf("image %d: hooks %b, want %b", img, got, want)
		}
	}
}

// TestExitedThreadsLetGoOfTheirCPU: a segment keeps no CPU of a thread
// that exited (nor, through it, its address space and translations).
func TestExitedThreadsLetGoOfTheirCPU(t *testing.T) {
	s := threadsSignalsSegment(t)
	let := 0
	for _, st := range s.threads {
		if st.cpu == nil {
			let++
		}
	}
	if let == 0 || s.curCPU != nil && func() bool {
		for _, st := range s.threads {
			if st.cpu == s.curCPU {
				return false
			}
		}
		return true
	}() {
		t.Errorf("%d of %d threads let go of their CPU; the current CPU is an exited thread's: %v", let, len(s.threads), s.curCPU != nil)
	}
}

// threadsSignalsSegment runs the whole of a recording of the corpus's
// threads_signals.c as one segment.
func threadsSignalsSegment(t *testing.T) *segment {
	t.Helper()
	exe := buildC(t, "../testdata/corpus/threads_signals.c", "-pthread")
	tr, sym := open(t, record(t, exe, 50021))
	cps, tree := checkpointsAndTree(t, tr)
	s, err := runSegment(tr, sym, cps, 0, len(cps), &Options{tree: tree, syms: []Symbolizer{sym}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSegmentLetsGoOfTheReplay: a segment done keeps nothing of its
// replay (its CPUs, their address spaces and translations), whose
// memory stitching then takes for its Nodes, and counts the slabs of
// nodes it made, by which Analyze decides to collect first (manyNodes).
func TestSegmentLetsGoOfTheReplay(t *testing.T) {
	s := threadsSignalsSegment(t)
	if s.r != nil || s.curCPU != nil {
		t.Errorf("the segment keeps its replay (%v) or a CPU (%v)", s.r != nil, s.curCPU != nil)
	}
	nodes := 0
	var count func(n *segNode)
	count = func(n *segNode) {
		n.eachChild(func(_ segKey, c *segNode) { nodes++; count(c) })
	}
	for _, st := range s.threads {
		if st.cpu != nil {
			t.Errorf("thread %d keeps its CPU", st.tid)
		}
		if st.root != nil {
			count(st.root)
		}
	}
	if want := (nodes + nodeSlab - 1) / nodeSlab; nodes == 0 || s.slabs != want {
		t.Errorf("%d nodes in %d slabs, want %d", nodes, s.slabs, want)
	}
	few := []*segment{{slabs: collectBeforeStitch/nodeSlab - 1}}
	if manyNodes(few) || !manyNodes(append(few, &segment{slabs: 1})) {
		t.Errorf("manyNodes: %v at %d slabs, %v at one more (the bound is %d)", manyNodes(few),
			few[0].slabs, !manyNodes(append(few, &segment{slabs: 1})), collectBeforeStitch/nodeSlab)
	}
}

// TestVerdictSetsKeepTwo: two blocks whose verdicts share a set of the
// table, asked about in turn, both stay (a direct-mapped table made
// each again every time: verdictSlots); a third evicts the one asked
// about longest ago, and a block of other instructions at the same PC
// is no hit.
func TestVerdictSetsKeepTwo(t *testing.T) {
	s := newSegment(nil)
	block := func(pc uint64) *x86.Block {
		return &x86.Block{PC: pc, Insts: []x86.Inst{{PC: pc, Op: x86asm.RET, Len: 1}}}
	}
	a, b, c := block(0x401000), block(0x401000|1<<40), block(0x401000|1<<41)
	if &s.verdictSet(a)[0] != &s.verdictSet(b)[0] || &s.verdictSet(a)[0] != &s.verdictSet(c)[0] {
		t.Fatal("the blocks' verdicts are not in one set: the test tests nothing")
	}
	in := func(x *x86.Block) bool {
		for _, v := range s.verdictSet(x) {
			if v.insts == &x.Insts[0] {
				return true
			}
		}
		return false
	}
	for _, x := range []*x86.Block{a, b, a, b} {
		if v := s.verdictOf(x); v.insts != &x.Insts[0] || v.hooks != 1 {
			t.Fatalf("block %#x: verdict %+v", x.PC, *v)
		}
	}
	if !in(a) || !in(b) || s.verdictsMade != 2 {
		t.Fatalf("after a, b, a, b: a kept %v, b kept %v, %d verdicts made (want 2)", in(a), in(b), s.verdictsMade)
	}
	s.verdictOf(c)
	if !in(c) || !in(b) || in(a) {
		t.Fatalf("after c: a kept %v (want false), b %v, c %v", in(a), in(b), in(c))
	}
	if d := block(c.PC); s.verdictOf(d).insts != &d.Insts[0] {
		t.Fatal("another block's instructions at c's PC took c's verdict")
	}
}
