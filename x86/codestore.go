package x86

import (
	"bytes"
	"slices"
	"sync"
	"sync/atomic"
)

// CodeStore keeps the decoded blocks of the code caches of one emulation
// (the address spaces of a process tree: fork children, and execs of the
// same files, whose code is the same bytes at the same addresses), so that
// a cache that needs a block another cache decoded from the same bytes
// takes its instructions instead of decoding them again: the 40 bash
// start-ups behind a pyenv shim decode bash, ld.so and libc once.
//
// Only what decoding made is shared: the instructions and the code bytes,
// which nothing writes after decodeBlock. A cache that takes a block makes
// it its own Block, with its own validity, successors, epoch and
// translation, which its own page invalidation drops, so a write to code
// in one address space never leaves another running stale code. A block
// is taken only while the bytes its decoder saw are the taking space's
// executable bytes, byte for byte: the block's own, and the rest of its
// last instruction's fetch window (up to 14 bytes after it, or up to an
// unfetchable byte, which must be unfetchable in the taking space too),
// decoded for the same Features. Decoding is a function of those, so the
// block taken is the block decodeBlock would make. Blocks cut short by an
// unmapped page (truncated) are not kept.
//
// Translations are shared too (storedXlat): the host code a cache made
// for a stored block, as the translator emitted it (unlinked), is kept
// with the block, one per mode (run, replay, record…), and a cache that
// runs a block it took adopts that code when the block has earned a
// translation instead of translating it again: it
// copies the code into its own arena and patches the two things in it
// that are the cache's (the block's id in its exits and the address of
// its table of translations by guest address). The copy is the cache's
// own from then on, linked to its own blocks' copies, dropped by its own
// invalidation. A translation made for a BlockFilter (hooks, logged
// hooks) is kept apart (storedBlock.hx), with the verdict it was made
// for, and adopted only by a cache whose own verdict on the block is the
// same (hookXlat): a tree's programs under ttd calls. Translations for
// LegacyReads are neither kept nor adopted.
//
// The store is bounded: it keeps two generations of at most storeGenInsts
// instructions and storeGenCode bytes of translations each; when the young one fills, the old one is let go (the
// collector frees the blocks no cache still holds) and a block taken from
// the old one moves to the young one. A CodeStore is safe for concurrent
// use (a reader's trace may serve several replays).
type CodeStore struct {
	// dormant: the store neither keeps nor gives blocks until
	// CodeCache.WakeStore (NewDormantCodeStore).
	dormant    atomic.Bool
	mu         sync.Mutex
	young, old map[uint64]*storedBlock
	youngInsts int
	// youngCode is the bytes of translations kept since the young
	// generation began.
	youngCode int
	// Taken counts the blocks caches took from the store, Kept the
	// blocks it was given; XlatKept the translations it was given.
	Taken, Kept, XlatKept uint64
	// xlatTaken counts the translations caches adopted.
	xlatTaken atomic.Uint64
	// codeSlab, offSlab and xlSlab are where keepXlat keeps
	// translations.
	codeSlab []byte
	offSlab  []int32
	xlSlab   []storedXlat
}

// The sizes of the slabs of translations (CodeStore.keepXlat).
const (
	xlatCodeSlab = 64 << 10
	xlatOffSlab  = 4 << 10
	xlatSlab     = 64
)

// XlatTaken returns the number of translations caches adopted from s.
func (s *CodeStore) XlatTaken() uint64 { return s.xlatTaken.Load() }

// storedBlock is a decoded block as the store keeps it: its instructions,
// and the bytes its decoder fetched: the block's, then win[:nwin], the
// rest of its last instruction's fetch window.
type storedBlock struct {
	insts    []Inst
	code     []byte
	win      [14]byte
	nwin     uint8
	cut      bool // the window ended at an unfetchable byte
	features Features
	next     *storedBlock // another block at the same address
	// xl are the block's translations by mode (jitModeRun…), set once;
	// hx its translations made for a BlockFilter, one by mode, for the
	// verdict each holds (storedXlat.hook).
	xl, hx [jitModes]atomic.Pointer[storedXlat]
}

// storedXlat is a translation as the store keeps it: the host code as
// the translator emitted it (entry at 0, every chaining exit unlinked),
// and where in it the things are that are the translating cache's own,
// for an adopting cache to patch: the block's id (a 32-bit immediate
// at each of idSites) and the address of the table of translations by
// address (a 64-bit immediate at each of tabSites). The rest are the
// offsets translate turns into the jitBlock's addresses. declined: the
// translator found nothing to translate (code is nil).
type storedXlat struct {
	code              []byte
	chainOff          int32
	linkSite, linkMis []int32
	resumeK, resumeAt []int32
	idSites, tabSites []int32
	beyond            uint64
	declined          bool
	// hot: the translation came from the code file (codefile.go), made
	// in an earlier run in which the block was hot: a block taken from
	// the store adopts it at its first run.
	hot bool
	// hook is what a translation made for a BlockFilter was made for,
	// and hresK, hresAt its hook exits' instructions and the entries
	// after them (jitBlock.hresume).
	hook          hookXlat
	hresK, hresAt []int32
}

// hookXlat is what a translation made for a BlockFilter depends on
// besides the block and the mode (CodeCache.hooksFor, logsFor): a cache
// adopts it only when its own verdict on the block asks the same.
type hookXlat struct {
	hooks, logged uint64
	steps, hasWin bool
	win           stepWindows
}

// hookXlatOf is the key of a translation of b that cc makes now.
func (cc *CodeCache) hookXlatOf(b *Block) hookXlat {
	h := hookXlat{hooks: cc.hooksFor(b)}
	var win *stepWindows
	h.logged, h.steps, win = cc.logsFor(b, h.hooks)
	if win != nil {
		h.hasWin, h.win = true, *win
	}
	return h
}

// size is what x takes in the store's bound (storeGenCode).
func (x *storedXlat) size() int {
	return len(x.code) + 4*(len(x.linkSite)+len(x.linkMis)+len(x.resumeK)+len(x.resumeAt)+len(x.idSites)+len(x.tabSites)+len(x.hresK)+len(x.hresAt)) + 128
}

// xlat returns the translation kept for mode, or nil (sb may be nil).
func (sb *storedBlock) xlat(mode uint8) *storedXlat {
	if sb == nil {
		return nil
	}
	return sb.xl[mode].Load()
}

// storeGenInsts bounds a generation of the store: 262,144 instructions
// (24 MiB of Inst) hold the code python3 -c pass runs (236,000), and
// bash's start-up takes about 40,000.
const storeGenInsts = 1 << 18

// storeGenCode bounds the translations a generation keeps: python3 -c
// pass translates 7.4 MB with every block translated at once (TTD_JIT=0),
// far less at the default threshold.
const storeGenCode = 16 << 20

// NewCodeStore returns an empty store.
func NewCodeStore() *CodeStore {
	return &CodeStore{young: make(map[uint64]*storedBlock)}
}

// NewDormantCodeStore returns an empty store that keeps and gives no
// blocks until a cache that shares through it calls WakeStore: the
// address space of a process that never forks or execs has no one to
// share with, and keeping its blocks and translations was 7% of the CPU
// time of `ttd run python3 -c pass` (CodeStore.keep, keepXlat).
func NewDormantCodeStore() *CodeStore {
	s := NewCodeStore()
	s.dormant.Store(true)
	return s
}

// active reports whether s keeps and gives blocks (s may be nil).
func (s *CodeStore) active() bool { return s != nil && !s.dormant.Load() }

// WakeStore makes cc's store, if dormant, keep and give blocks from now
// on, and keeps in it the blocks cc decoded while it slept, to share
// them with the address space about to be made (a fork child, or the
// image an exec loads). Their translations are not kept: the store
// keeps a translation as it was emitted, before chaining patched it.
// A block whose last instruction's fetch window reaches the next page
// is not kept either: keep compares the window's bytes as they are now,
// and a write to that page does not invalidate the block, so they may
// no longer be the bytes its decoder saw.
func (cc *CodeCache) WakeStore() {
	s := cc.store
	if s == nil || !s.dormant.Load() {
		return
	}
	s.dormant.Store(false)
	pcs := make([]uint64, 0, len(cc.blocks))
	for pc, b := range cc.blocks {
		if b.valid && !b.truncated && len(b.Insts) > 0 && (b.End+14-1)>>PageShift == b.lastPage() {
			pcs = append(pcs, pc)
		}
	}
	slices.Sort(pcs) // the same store from run to run
	for _, pc := range pcs {
		s.keep(cc, cc.blocks[pc])
	}
}

// ShareWith makes the cache take the blocks it would decode from s when
// s has them, and keep in s the blocks it decodes (nil: share nothing).
func (cc *CodeCache) ShareWith(s *CodeStore) { cc.store = s }

// Store returns the store the cache shares its blocks through, or nil.
func (cc *CodeCache) Store() *CodeStore { return cc.store }

// adoptable returns the store's translation of b for mode that cc would
// adopt (translate), or nil.
func (cc *CodeCache) adoptable(b *Block, mode uint8) *storedXlat {
	if cc.LegacyReads {
		return nil
	}
	if cc.filter.owner != nil {
		// One made for the same verdict (the 40 bash of a tree under
		// ttd calls translated each of their blocks again: 22,000
		// translations, 72 MB, where the replay made 3,700).
		if b.stored == nil {
			return nil
		}
		if x := b.stored.hx[mode].Load(); x != nil && x.hook == cc.hookXlatOf(b) {
			return x
		}
		return nil
	}
	if x := b.stored.xlat(mode); x != nil {
		return x
	}
	if j := b.jit; j != nil && j.fileXl != nil && j.fileXl.mode == mode {
		return &j.fileXl.x // the code file's (codefile.go)
	}
	// The file's translation for the mode a CPU went over to since it
	// took the block (jitModeFault, toFault): without it, gcc's cc1
	// translated 1,100 of its blocks again on each run.
	if mode != jitModeFault {
		return nil
	}
	if fx := cc.file.xlatOf(cc, b, mode); fx != nil {
		return &fx.x
	}
	return nil
}

// take returns a block at pc from the store that cc's memory holds the
// bytes of, as a new Block of cc's, or nil.
func (s *CodeStore) take(cc *CodeCache, pc uint64) *Block {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.find(s.young, cc, pc)
	if sb == nil {
		if sb = s.find(s.old, cc, pc); sb == nil {
			return nil
		}
		// Still wanted: into the young generation.
		young := &storedBlock{insts: sb.insts, code: sb.code, win: sb.win, nwin: sb.nwin, cut: sb.cut, features: sb.features}
		s.add(pc, young)
		for m := range sb.xl {
			if x := sb.xl[m].Load(); x != nil {
				young.xl[m].Store(x)
				s.youngCode += x.size()
			}
			if x := sb.hx[m].Load(); x != nil {
				young.hx[m].Store(x)
				s.youngCode += x.size()
			}
		}
		sb = young
	}
	s.Taken++
	end := pc + uint64(len(sb.code))
	b := &Block{PC: pc, End: end, Insts: sb.insts, Bytes: sb.code, stored: sb,
		setsRIP: sb.insts[len(sb.insts)-1].Flags&InstSetsRIP != 0}
	if c := cc.running; c != nil {
		if x := sb.xl[c.jitMode].Load(); x != nil && x.hot {
			b.heat = jitThreshold // as a block taken from the code file
		}
	}
	return b
}

// find returns the block of gen at pc whose bytes cc's memory holds.
func (s *CodeStore) find(gen map[uint64]*storedBlock, cc *CodeCache, pc uint64) *storedBlock {
	for sb := gen[pc]; sb != nil; sb = sb.next {
		end := pc + uint64(len(sb.code))
		if sb.features == cc.Features && cc.mem.codeIs(pc, sb.code) && cc.mem.codeIs(end, sb.win[:sb.nwin]) &&
			(!sb.cut || !cc.mem.fetchable(end+uint64(sb.nwin))) {
			return sb
		}
	}
	return nil
}

// keep adds b, which cc just decoded, to the store.
func (s *CodeStore) keep(cc *CodeCache, b *Block) {
	if b.truncated || len(b.Insts) == 0 {
		return
	}
	// The rest of the last instruction's fetch window (decodeBlock
	// fetches 15 bytes from each instruction, or up to an unfetchable
	// byte).
	sb := &storedBlock{insts: b.Insts, code: b.Bytes, features: cc.Features}
	if j := b.jit; j != nil && j.fileXl != nil {
		// The code file's translation of the block, for the caches
		// that take it from the store (a process tree of one program).
		sb.xl[j.fileXl.mode].Store(&j.fileXl.x)
	}
	want := 15 - int(b.Insts[len(b.Insts)-1].Len)
	var f pageFetcher
	got := f.fetch(cc.mem, b.End, sb.win[:want])
	sb.nwin, sb.cut = uint8(got), got < want
	s.mu.Lock()
	s.add(b.PC, sb)
	s.Kept++
	s.mu.Unlock()
	b.stored = sb
}

// keepXlat keeps a copy of x as sb's translation for mode, unless it has
// one: x's code and offsets are copied into the store's slabs, so that
// keeping a translation seldom allocates.
func (s *CodeStore) keepXlat(sb *storedBlock, mode uint8, x storedXlat, hooked bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	to := &sb.xl[mode]
	if hooked {
		to = &sb.hx[mode] // the first verdict's (a tree's programs share one)
	}
	if to.Load() != nil {
		return
	}
	x.code = keep(&s.codeSlab, x.code, xlatCodeSlab)
	for _, o := range []*[]int32{&x.linkSite, &x.linkMis, &x.resumeK, &x.resumeAt, &x.idSites, &x.tabSites, &x.hresK, &x.hresAt} {
		*o = keep(&s.offSlab, *o, xlatOffSlab)
	}
	if len(s.xlSlab) == cap(s.xlSlab) {
		s.xlSlab = make([]storedXlat, 0, xlatSlab)
	}
	s.xlSlab = append(s.xlSlab, x)
	to.Store(&s.xlSlab[len(s.xlSlab)-1])
	s.XlatKept++
	if s.youngCode += x.size(); s.youngCode > storeGenCode {
		s.rotate()
	}
}

// rotate starts a new young generation; the young one becomes the old.
func (s *CodeStore) rotate() {
	s.old, s.young, s.youngInsts, s.youngCode = s.young, make(map[uint64]*storedBlock, len(s.young)), 0, 0
}

// add puts sb first at pc in the young generation, which it starts anew
// when full.
func (s *CodeStore) add(pc uint64, sb *storedBlock) {
	if s.youngInsts+len(sb.insts) > storeGenInsts {
		s.rotate()
	}
	s.youngInsts += len(sb.insts)
	sb.next = s.young[pc]
	s.young[pc] = sb
	// Code rewritten in place (a JIT's) would make a long list: keep
	// the newest few.
	for i, o := 1, sb; o != nil; i, o = i+1, o.next {
		if i == storeVariants {
			o.next = nil
		}
	}
}

// storeVariants bounds the blocks kept at one address.
const storeVariants = 4

// Insts returns the number of instructions the store holds (for tests and
// statistics; blocks held by both generations count twice).
func (s *CodeStore) Insts() int {
	n, _ := s.held()
	return n
}

// XlatBytes returns the bytes of translations the store holds (as
// storedXlat.size counts them; for tests and statistics).
func (s *CodeStore) XlatBytes() int {
	_, n := s.held()
	return n
}

func (s *CodeStore) held() (insts, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, gen := range [2]map[uint64]*storedBlock{s.young, s.old} {
		for _, sb := range gen {
			for ; sb != nil; sb = sb.next {
				insts += len(sb.insts)
				for m := range sb.xl {
					if x := sb.xl[m].Load(); x != nil {
						code += x.size()
					}
					if x := sb.hx[m].Load(); x != nil {
						code += x.size()
					}
				}
			}
		}
	}
	return insts, code
}

// codeIs reports whether the bytes at pc are code, executable here, and
// equal to code.
func (m *Memory) codeIs(pc uint64, code []byte) bool {
	for len(code) > 0 {
		e := m.at(pc >> PageShift)
		if e.page == nil || e.perm&PermExec == 0 {
			return false
		}
		off := pc & pageMask
		n := min(uint64(len(code)), PageSize-off)
		if !bytes.Equal(e.page.Data[off:off+n], code[:n]) {
			return false
		}
		code, pc = code[n:], pc+n
	}
	return true
}

// fetchable reports whether the byte at a can be fetched as code.
func (m *Memory) fetchable(a uint64) bool {
	e := m.at(a >> PageShift)
	return e.page != nil && e.perm&PermExec != 0
}
