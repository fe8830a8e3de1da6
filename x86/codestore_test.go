package x86

import (
	"encoding/binary"
	"testing"

	"ttd/predict"
)

// storeCode is `mov eax, imm32; syscall`: what it returns in eax is its
// code byte at testCode+1.
var storeCode = []byte{0xb8, 1, 0, 0, 0, 0x0f, 0x05}

// runCode runs c from testCode to its syscall and returns eax.
func runCode(t *testing.T, who string, c *CPU) uint64 {
	t.Helper()
	c.RIP = testCode
	if exit := c.Run(100); exit.Reason != ExitSyscall {
		t.Fatalf("%s: exit %v (%v), want the syscall", who, exit.Reason, exit.Err)
	}
	return c.R[RAX]
}

// forkCPU returns a copy of c in a forked address space whose code cache
// shares through c's store.
func forkCPU(c *CPU) *CPU {
	m := c.Mem.Fork(nil)
	cc := NewCodeCache(m)
	cc.ShareWith(c.cache.Store())
	return c.CloneWith(m, cc)
}

// TestSharedCodeForkRewrite: a fork child takes its parent's decoded block
// (it decodes nothing), then rewrites the code: the child runs the new
// code, the parent the old, a second child of the parent the old (taken
// from the store), and a child of the rewriting child the new. A child
// that rewrites the code before it first runs it runs the new code too.
func TestSharedCodeForkRewrite(t *testing.T) {
	for _, jit := range []bool{false, true} {
		wasOn, was := SetJIT(jit, 0)
		parent := newTestCPU(t, storeCode)
		parent.cache.ShareWith(NewCodeStore())
		addWrite(parent.Mem, testCode>>PageShift)
		if got := runCode(t, "parent", parent); got != 1 {
			t.Fatalf("parent: eax %d, want 1", got)
		}

		child := forkCPU(parent)
		if got := runCode(t, "child", child); got != 1 {
			t.Fatalf("child: eax %d before its rewrite, want 1", got)
		}
		if child.cache.Decodes != 0 || child.cache.Shared != 1 {
			t.Errorf("child decoded %d blocks and took %d from the store, want 0 and 1", child.cache.Decodes, child.cache.Shared)
		}
		child.Mem.Write32(testCode+1, 2)
		if got := runCode(t, "child", child); got != 2 {
			t.Errorf("child: eax %d after its rewrite, want 2 (it ran the shared block)", got)
		}
		if got := runCode(t, "parent", parent); got != 1 {
			t.Errorf("parent: eax %d after the child's rewrite, want 1", got)
		}
		if got := runCode(t, "second child", forkCPU(parent)); got != 1 {
			t.Errorf("second child: eax %d, want 1", got)
		}
		if got := runCode(t, "grandchild", forkCPU(child)); got != 2 {
			t.Errorf("grandchild: eax %d, want 2", got)
		}

		early := forkCPU(parent)
		early.Mem.Write32(testCode+1, 3)
		if got := runCode(t, "early child", early); got != 3 {
			t.Errorf("child that rewrote first: eax %d, want 3", got)
		}
		// The parent rewrites its code after its children took it.
		parent.Mem.Write32(testCode+1, 4)
		if got := runCode(t, "parent", parent); got != 4 {
			t.Errorf("parent: eax %d after its rewrite, want 4", got)
		}
		if got := runCode(t, "child", child); got != 2 {
			t.Errorf("child: eax %d after the parent's rewrite, want 2", got)
		}
		SetJIT(wasOn, was)
	}
}

// TestSharedCodeNeedsTheWindow: a block is taken only if the bytes after
// it that its decoder fetched are fetchable in the taking space too: a
// space whose code page is followed by an unmapped page decodes the block
// itself (the same bytes would decode alike, but nothing needs to rely
// on that); nor where those bytes differ, nor by a cache for other
// Features.
func TestSharedCodeNeedsTheWindow(t *testing.T) {
	// The block ends 4 bytes before the end of its page.
	at := uint64(testCode + PageSize - 4 - len(storeCode))
	mk := func(next bool) *CPU {
		mem := NewMemory()
		mem.SetPage(testCode>>PageShift, NewPage(), PermRead|PermExec)
		if next {
			mem.SetPage(testCode>>PageShift+1, NewPage(), PermRead|PermExec)
		}
		mem.SetPage(testStack>>PageShift-1, NewPage(), PermRead|PermWrite)
		if err := mem.Poke(at, storeCode); err != nil {
			t.Fatal(err)
		}
		return NewCPU(mem, NewCodeCache(mem))
	}
	s := NewCodeStore()
	run := func(c *CPU) {
		c.cache.ShareWith(s)
		c.RIP, c.R[RSP] = at, testStack-64
		if exit := c.Run(100); exit.Reason != ExitSyscall || c.R[RAX] != 1 {
			t.Fatalf("exit %v eax %d, want the syscall and 1", exit.Reason, c.R[RAX])
		}
	}
	// b's block was decoded with its window cut at the unmapped page:
	// c, which has the page, decodes; d, which has not, takes it; e
	// takes a's.
	b, c, d := mk(false), mk(true), mk(false)
	run(b)
	run(c)
	run(d)
	if b.cache.Decodes != 1 || c.cache.Decodes != 1 || c.cache.Shared != 0 || d.cache.Shared != 1 {
		t.Errorf("decodes %d %d, taken %d %d: want the space with the next page to decode, the one without to take",
			b.cache.Decodes, c.cache.Decodes, c.cache.Shared, d.cache.Shared)
	}
	e := mk(true)
	e.cache.Features = FeaturesLegacy
	run(e)
	f := mk(true)
	run(f)
	if e.cache.Shared != 0 || f.cache.Shared != 1 {
		t.Errorf("taken %d by a cache of other features, %d by one of the same, want 0 and 1", e.cache.Shared, f.cache.Shared)
	}
	// Other bytes in the window after the block: decoded afresh.
	g := mk(true)
	if err := g.Mem.Poke(at+uint64(len(storeCode))+3, []byte{0x90}); err != nil {
		t.Fatal(err)
	}
	run(g)
	if g.cache.Shared != 0 {
		t.Errorf("a cache whose bytes after the block differ took it")
	}
}

// TestCodeStoreIsBounded: the store keeps at most two generations.
func TestCodeStoreIsBounded(t *testing.T) {
	c := newTestCPU(t, storeCode)
	s := NewCodeStore()
	c.cache.ShareWith(s)
	b := c.cache.decodeBlock(testCode)
	for i := 0; i < 3*storeGenInsts/len(b.Insts); i++ {
		s.add(uint64(i), &storedBlock{insts: b.Insts, code: b.Bytes})
	}
	if n := s.Insts(); n > 2*storeGenInsts {
		t.Errorf("the store holds %d instructions, more than two generations of %d", n, storeGenInsts)
	}
	for i := 0; i < 10; i++ {
		s.add(7, &storedBlock{insts: b.Insts, code: b.Bytes})
	}
	n := 0
	for sb := s.young[7]; sb != nil; sb = sb.next {
		n++
	}
	if n > storeVariants {
		t.Errorf("%d blocks at one address, want at most %d", n, storeVariants)
	}
}

// xlatCode is three blocks: A at testCode (mov eax, 1; mov ecx, B; jmp
// rcx: its translation finds B's through the table of translations by
// address), Z at testCode+32 (mov eax, 5; syscall) and B on the next page
// (add eax, 10; syscall).
func xlatCode() []byte {
	code := make([]byte, PageSize+16)
	for i := range code {
		code[i] = 0xcc
	}
	copy(code, []byte{0xb8, 1, 0, 0, 0, 0xb9, 0, 0, 0, 0, 0xff, 0xe1})
	binary.LittleEndian.PutUint32(code[6:], uint32(testCode+PageSize))
	copy(code[32:], []byte{0xb8, 5, 0, 0, 0, 0x0f, 0x05})
	copy(code[PageSize:], []byte{0x05, 10, 0, 0, 0, 0x0f, 0x05})
	return code
}

// TestSharedXlatForkRewrite: a fork child adopts its parent's
// translations (it translates nothing), with its own block ids and its own table of
// translations by address: when the child rewrites B, its A's indirect
// jump finds the new B, while the parent, still running the translations
// the child copied, keeps the old; a child forked later adopts the
// parent's, a grandchild the rewriting child's code.
func TestSharedXlatForkRewrite(t *testing.T) {
	if !jitSupported {
		t.Skip("no translator")
	}
	for _, threshold := range []uint32{0, 3} {
		wasOn, was := SetJIT(true, threshold)
		run := func(who string, c *CPU, pc, want uint64) {
			t.Helper()
			c.RIP = pc
			if exit := c.Run(100); exit.Reason != ExitSyscall {
				t.Fatalf("threshold %d: %s: exit %v (%v), want the syscall", threshold, who, exit.Reason, exit.Err)
			}
			if c.R[RAX] != want {
				t.Errorf("threshold %d: %s: eax %d, want %d", threshold, who, c.R[RAX], want)
			}
		}
		parent := newTestCPU(t, xlatCode())
		parent.cache.ShareWith(NewCodeStore())
		addWrite(parent.Mem, testCode>>PageShift+1)
		// Z takes id 0 in the parent, so that A's and B's ids differ
		// from the child's.
		for i := 0; i <= int(threshold); i++ {
			run("parent's Z", parent, testCode+32, 5)
		}
		for i := 0; i <= int(threshold)+1; i++ {
			run("parent", parent, testCode, 11)
		}
		if parent.cache.Translated != 3 || parent.cache.Adopted != 0 {
			t.Fatalf("threshold %d: parent translated %d blocks, adopted %d, want 3 and 0", threshold, parent.cache.Translated, parent.cache.Adopted)
		}
		child := forkCPU(parent)
		for i := 0; i <= int(threshold); i++ {
			run("child", child, testCode, 11)
		}
		if child.cache.Translated != 0 || child.cache.Adopted != 2 {
			t.Errorf("threshold %d: child translated %d blocks, adopted %d, want 0 and 2", threshold, child.cache.Translated, child.cache.Adopted)
		}
		run("child", child, testCode, 11)
		child.Mem.Write32(testCode+PageSize+1, 20)
		for i := 0; i <= int(threshold)+1; i++ {
			run("child after its rewrite", child, testCode, 21)
			run("parent after the child's rewrite", parent, testCode, 11)
		}
		run("second child", forkCPU(parent), testCode, 11)
		grandchild := forkCPU(child)
		for i := 0; i <= int(threshold); i++ {
			run("grandchild", grandchild, testCode, 21)
		}
		if grandchild.cache.Translated != 0 || grandchild.cache.Adopted != 2 {
			t.Errorf("threshold %d: grandchild translated %d blocks, adopted %d, want 0 and 2", threshold, grandchild.cache.Translated, grandchild.cache.Adopted)
		}
		parent.Mem.Write32(testCode+PageSize+1, 40)
		run("parent after its rewrite", parent, testCode, 41)
		run("child after the parent's rewrite", child, testCode, 21)
		run("grandchild after the parent's rewrite", grandchild, testCode, 21)
		SetJIT(wasOn, was)
	}
}

// TestSharedXlatNotForLegacy: a cache with LegacyReads neither
// adopts the store's translations nor gives it its own.
func TestSharedXlatNotForLegacy(t *testing.T) {
	if !jitSupported {
		t.Skip("no translator")
	}
	defer SetJIT(SetJIT(true, 0))
	a := newTestCPU(t, storeCode)
	s := NewCodeStore()
	a.cache.ShareWith(s)
	a.cache.LegacyReads = true
	runCode(t, "legacy", a)
	if a.cache.Translated != 1 || s.XlatKept != 0 {
		t.Errorf("a legacy cache translated %d blocks and gave the store %d, want 1 and 0", a.cache.Translated, s.XlatKept)
	}
	b := newTestCPU(t, storeCode)
	b.cache.ShareWith(s)
	runCode(t, "plain", b)
	c := newTestCPU(t, storeCode)
	c.cache.ShareWith(s)
	c.cache.LegacyReads = true
	runCode(t, "legacy", c)
	if b.cache.Adopted != 0 || c.cache.Adopted != 0 || s.XlatKept != 1 || c.cache.Translated != 1 {
		t.Errorf("adopted %d and %d (the legacy cache), kept %d, translated %d: want 0, 0, 1 and 1",
			b.cache.Adopted, c.cache.Adopted, s.XlatKept, c.cache.Translated)
	}
}

// TestCodeStoreBoundsTranslations: the translations a store keeps count
// towards its generations: at most two of storeGenCode bytes.
func TestCodeStoreBoundsTranslations(t *testing.T) {
	c := newTestCPU(t, storeCode)
	s := NewCodeStore()
	c.cache.ShareWith(s)
	b := c.cache.decodeBlock(testCode)
	x := storedXlat{code: make([]byte, 64<<10)}
	for i := 0; i < 3*storeGenCode/x.size(); i++ {
		sb := &storedBlock{insts: b.Insts, code: b.Bytes}
		s.mu.Lock()
		s.add(uint64(i), sb)
		s.mu.Unlock()
		s.keepXlat(sb, jitModeRun, x, false)
	}
	if n := s.XlatBytes(); n > 2*storeGenCode || n < storeGenCode/2 {
		t.Errorf("the store holds %d bytes of translations, want at most two generations of %d (and not nothing)", n, storeGenCode)
	}
	if s.XlatKept != uint64(3*storeGenCode/x.size()) {
		t.Errorf("kept %d translations, want %d", s.XlatKept, 3*storeGenCode/x.size())
	}
}

// TestSharedXlatKeepsModesApart: a translation is adopted only for the
// mode it was made for: a cache running with a prediction cache
// (replaying) translates a block whose run-mode translation the store
// holds, and a second such cache adopts that one.
func TestSharedXlatKeepsModesApart(t *testing.T) {
	if !jitSupported {
		t.Skip("no translator")
	}
	defer SetJIT(SetJIT(true, 0))
	s := NewCodeStore()
	mk := func(replay bool) *CPU {
		c := newTestCPU(t, storeCode)
		c.cache.ShareWith(s)
		if replay {
			c.Pred, c.Obs = predict.New(6), &predObserver{replay: true}
		}
		runCode(t, "cpu", c)
		return c
	}
	run, replay, replay2 := mk(false), mk(true), mk(true)
	if run.cache.Translated != 1 || replay.cache.Adopted != 0 || replay.cache.Translated != 1 || replay2.cache.Adopted != 1 {
		t.Errorf("translated %d (run) and %d (replay), adopted %d and %d (replays): want 1, 1, 0 and 1",
			run.cache.Translated, replay.cache.Translated, replay.cache.Adopted, replay2.cache.Adopted)
	}
}

// TestSharedXlatWithAFilter: a translation made for a filter (BlockFilter:
// calls, probes) is kept apart from those made without: a cache that
// runs without a filter neither adopts it nor gives it its own; another
// cache whose filter has the same verdict on the block adopts it, and
// one whose verdict differs makes its own.
func TestSharedXlatWithAFilter(t *testing.T) {
	if !jitSupported {
		t.Skip("no translator")
	}
	defer SetJIT(SetJIT(true, 0))
	s := NewCodeStore()
	mk := func(obs Observer) *CPU {
		c := newTestCPU(t, storeCode)
		c.cache.ShareWith(s)
		c.Pred, c.Obs = predict.New(6), obs
		runCode(t, "cpu", c)
		return c
	}
	first := mk(instObserver{&filterObserver{name: "none"}})
	plain := mk(&predObserver{replay: true})
	same := mk(instObserver{&filterObserver{name: "none"}})
	other := mk(instObserver{&filterObserver{name: "mov", want: []uint64{testCode}}})
	if first.cache.Translated != 1 || plain.cache.Adopted != 0 || plain.cache.Translated != 1 ||
		same.cache.Adopted != 1 || same.cache.Translated != 0 || other.cache.Adopted != 0 || other.cache.Translated != 1 || s.XlatKept != 2 {
		t.Errorf("translated %d (filtered), %d (plain), %d (another verdict); adopted %d (plain), %d (same verdict), %d (another verdict); kept %d: want 1, 1, 1; 0, 1, 0; 2",
			first.cache.Translated, plain.cache.Translated, other.cache.Translated,
			plain.cache.Adopted, same.cache.Adopted, other.cache.Adopted, s.XlatKept)
	}
}

// TestDormantStoreWakes: a dormant store keeps and gives nothing; woken,
// it keeps the blocks its cache decoded while it slept, which a fork
// child then takes (and still runs its own code once it rewrites it),
// except a block whose last instruction's fetch window reaches the next
// page (keep would compare bytes a write there does not invalidate it
// for).
func TestDormantStoreWakes(t *testing.T) {
	for _, jit := range []bool{false, true} {
		wasOn, was := SetJIT(jit, 0)
		parent := newTestCPU(t, storeCode)
		s := NewDormantCodeStore()
		parent.cache.ShareWith(s)
		addWrite(parent.Mem, testCode>>PageShift)
		if got := runCode(t, "parent", parent); got != 1 {
			t.Fatalf("parent: eax %d, want 1", got)
		}
		early := forkCPU(parent)
		if got := runCode(t, "early child", early); got != 1 || s.Kept != 0 || early.cache.Shared != 0 {
			t.Errorf("dormant: eax %d, kept %d, taken %d, want 1, 0, 0", got, s.Kept, early.cache.Shared)
		}
		parent.cache.WakeStore()
		parent.cache.WakeStore() // a second wake keeps nothing twice
		if s.Kept != 1 {
			t.Errorf("woken: kept %d blocks, want 1", s.Kept)
		}
		child := forkCPU(parent)
		if got := runCode(t, "child", child); got != 1 || child.cache.Decodes != 0 || child.cache.Shared != 1 {
			t.Errorf("child: eax %d, decoded %d, took %d, want 1, 0, 1", got, child.cache.Decodes, child.cache.Shared)
		}
		child.Mem.Write32(testCode+1, 2)
		if got := runCode(t, "child", child); got != 2 {
			t.Errorf("child: eax %d after its rewrite, want 2", got)
		}
		if got := runCode(t, "parent", parent); got != 1 {
			t.Errorf("parent: eax %d after the child's rewrite, want 1", got)
		}
		SetJIT(wasOn, was)
	}
	// The window's last byte (End+13, for a last instruction of one
	// byte) on the block's page: kept; one byte further: not.
	for _, c := range []struct {
		gap  uint64 // bytes from the block's end to its page's end
		kept uint64
	}{{14, 1}, {13, 0}} {
		at := testCode + PageSize - c.gap - uint64(len(storeCode))
		mem := NewMemory()
		mem.SetPage(testCode>>PageShift, NewPage(), PermRead|PermExec)
		mem.SetPage(testCode>>PageShift+1, NewPage(), PermRead|PermExec)
		mem.SetPage(testStack>>PageShift-1, NewPage(), PermRead|PermWrite)
		if err := mem.Poke(at, storeCode); err != nil {
			t.Fatal(err)
		}
		cpu := NewCPU(mem, NewCodeCache(mem))
		s := NewDormantCodeStore()
		cpu.cache.ShareWith(s)
		cpu.RIP, cpu.R[RSP] = at, testStack-64
		if exit := cpu.Run(100); exit.Reason != ExitSyscall || cpu.R[RAX] != 1 {
			t.Fatalf("exit %v eax %d, want the syscall and 1", exit.Reason, cpu.R[RAX])
		}
		cpu.cache.WakeStore()
		if s.Kept != c.kept {
			t.Errorf("block ending %d bytes before its page's end: woken store kept %d, want %d", c.gap, s.Kept, c.kept)
		}
	}
}

// hookedXlats counts the translations made for a filter that s holds.
func (s *CodeStore) hookedXlats() (n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, gen := range [2]map[uint64]*storedBlock{s.young, s.old} {
		for _, sb := range gen {
			for ; sb != nil; sb = sb.next {
				for m := range sb.hx {
					if sb.hx[m].Load() != nil {
						n++
					}
				}
			}
		}
	}
	return n
}

// TestStoreMovesHookedXlats: a block taken from the old generation moves
// to the young one with its translations, those made for a filter too.
func TestStoreMovesHookedXlats(t *testing.T) {
	c := newTestCPU(t, storeCode)
	s := NewCodeStore()
	c.cache.ShareWith(s)
	b := c.cache.decodeBlock(testCode)
	if b.stored == nil {
		s.keep(c.cache, b)
	}
	s.keepXlat(b.stored, jitModeReplay, storedXlat{code: []byte{0xc3}, hook: hookXlat{hooks: 1}}, true)
	s.rotate()
	if tb := s.take(c.cache, testCode); tb == nil || tb.stored.hx[jitModeReplay].Load() == nil || tb.stored.hx[jitModeReplay].Load().hook.hooks != 1 {
		t.Errorf("the block taken from the old generation lost its translation made for a filter")
	}
}
