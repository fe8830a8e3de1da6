package x86

import (
	"slices"
	"sync/atomic"
)

// Block is a straight-line run of decoded instructions that ends at a
// control transfer, an exit instruction or a size limit.
type Block struct {
	PC, End uint64
	Insts   []Inst
	// succ caches the blocks that followed this one, so hot loops chain
	// without a lookup.
	succ [2]*Block
	// Bytes are the code bytes the block was decoded from.
	Bytes []byte
	// epoch is the CodeCache epoch in which the observer last heard of
	// the block (Observer.Decoded); truncated: decoding stopped at an
	// unmapped page, so the block may be longer once that page is
	// mapped.
	epoch uint32
	// heat counts the block's full runs until it is translated;
	// declined: translation found nothing to translate (or no room), do
	// not retry. Both stay in the block, which the interpreter runs
	// without a jitBlock.
	heat  uint32
	valid bool
	// setsRIP: the last instruction's handler sets RIP (a branch).
	setsRIP   bool
	truncated bool
	declined  bool
	// forFile: the code file may keep the block (CodeCache.cacheable,
	// asked when it was decoded or taken from the file).
	forFile bool
	// jit is the block's translation state, made when first needed
	// (jx): nil for most blocks, of which only the hot ones are
	// translated (python3 -c pass decodes 19,600 and translates 3,500).
	jit *jitBlock
	// verdict is the BlockFilter's verdict on the block (filter.go),
	// made when first asked: apart from jit, as a filter asks of every
	// block that runs (the bash x40 + python3 tree: 281,000 jitBlocks,
	// 58 MB, made to hold verdicts, for 3,700 translations).
	verdict *blockVerdict
	// stored is the block as the code store keeps it, whose
	// translations the block may adopt (codestore.go); nil: none.
	stored *storedBlock
}

// firstPage and lastPage are the page numbers the block's bytes span
// (fields no more: the 16 bytes hold verdict, in Block's 128).
func (b *Block) firstPage() uint64 { return b.PC >> PageShift }
func (b *Block) lastPage() uint64  { return (b.End - 1) >> PageShift }

// Valid reports whether the block still matches guest memory.
func (b *Block) Valid() bool { return b.valid }

const fastBits = 14

// CodeCache maps guest addresses to decoded blocks. Threads of a process
// share it; it is invalidated page by page when guest code is written.
type CodeCache struct {
	mem     *Memory
	fast    [1 << fastBits]*Block
	blocks  map[uint64]*Block
	byPage  map[uint64][]*Block
	running *CPU
	// insts and code are decodeBlock's scratch buffers.
	insts []Inst
	code  []byte
	// instSlab and codeSlab are where decodeBlock keeps what it decoded
	// (keep).
	instSlab []Inst
	// verdictSlab is where vx takes new blocks' verdicts from.
	verdictSlab []blockVerdict
	codeSlab    []byte
	// Decodes counts decoded blocks (for statistics and tests), Reused
	// the instructions they took from blocks already decoded, Shared the
	// blocks taken from store instead of decoded (codestore.go).
	Decodes, Reused, Shared uint64
	store                   *CodeStore
	// file is the persistent file of decoded blocks decodeBlock takes
	// from (codefile.go), fileCode the addresses whose blocks it keeps;
	// FromFile counts the blocks taken from it, FileMisses the blocks
	// decoded that it could keep.
	file     *CodeFile
	fileCode func(pc uint64) bool
	// fileOrder holds the blocks the code file may keep in the order
	// they were first inserted, the order SaveCodeFile writes them in.
	fileOrder            []*Block
	FromFile, FileMisses uint64
	// FileXlats counts the translations kept for the file, made here;
	// fileCodeSlab and fileOffSlab hold them, fileOffs is scratch
	// (keepFileXlat).
	FileXlats    uint64
	fileCodeSlab []byte
	fileOffSlab  []int32
	fileOffs     []int32
	fileXlSlab   []fileXlat
	// jit holds the host code of translated blocks (jit_amd64.go), and
	// jitBlocks the blocks by jitBlock.id.
	jit       *jitArena
	jitBlocks []*Block
	// linkSlab, entrySlab, blockSlab and jitSlab are where jitPrepare,
	// adopt and translate take chaining slots and resume entries from,
	// and CodeFile.take its blocks and their translation state
	// (keepZero).
	linkSlab  []jitLink
	entrySlab []uintptr
	blockSlab []Block
	jitSlab   []jitBlock
	// jitTab finds translations by address, one table per mode
	// (jitModeRun…).
	jitTab [jitModes]*jitTable
	// filter is the BlockFilter whose verdicts the blocks hold
	// (filter.go).
	filter filterState
	// Translated counts blocks translated to host code, Adopted the
	// translations taken from the store instead (codestore.go).
	Translated, Adopted uint64
	// epoch numbers the intervals NewEpoch starts; the observer hears
	// of each block the first time it runs in each (Observer.Decoded).
	epoch uint32
	// LegacyReads makes the SSE fast paths' fallbacks read their memory
	// operand a second time, as ttd did before traces said "fpreads":
	// "once" (ssefast.go); the reader sets it to replay such traces.
	LegacyReads bool
	// Features are the instruction-set extensions the guest CPU has
	// (features.go); instructions of others are #UD.
	Features Features
}

// NewCodeCache returns an empty cache for code in mem and hooks mem's
// writes to invalidate it.
func NewCodeCache(mem *Memory) *CodeCache {
	cc := &CodeCache{mem: mem, blocks: make(map[uint64]*Block), byPage: make(map[uint64][]*Block), epoch: 1,
		Features: FeaturesImplemented}
	mem.codeWritten = cc.InvalidatePage
	return cc
}

func fastIndex(pc uint64) uint64 { return (pc ^ pc>>fastBits) & (1<<fastBits - 1) }

// lookup returns the cached valid block at pc, or nil.
func (cc *CodeCache) lookup(pc uint64) *Block {
	if b := cc.fast[fastIndex(pc)]; b != nil && b.PC == pc {
		return b
	}
	b := cc.blocks[pc]
	if b != nil {
		cc.fast[fastIndex(pc)] = b
	}
	return b
}

func (cc *CodeCache) insert(b *Block) {
	b.valid = true
	if StatsOn {
		statCount(&stats.blocks, 1)
		statCount(&stats.insts, uint64(len(b.Insts)))
	}
	cc.blocks[b.PC] = b
	cc.fast[fastIndex(b.PC)] = b
	if b.forFile && cc.file != nil {
		if len(cc.fileOrder) >= 2*len(cc.blocks)+1024 {
			cc.compactFileOrder() // (a program that maps and unmaps libraries in a loop)
		}
		cc.fileOrder = append(cc.fileOrder, b)
	}
	for pn, last := b.firstPage(), b.lastPage(); pn <= last; pn++ {
		cc.byPage[pn] = append(cc.byPage[pn], b)
		if p := cc.mem.Lookup(pn); p != nil && !p.code {
			p.code = true
			cc.mem.wtlb[pn&tlbMask] = tlbEntry{tag: noTag}
		}
	}
	if OnFirstDecode != nil && !firstDecodeSeen.Load() && !firstDecodeSeen.Swap(true) {
		OnFirstDecode()
	}
}

// OnFirstDecode, if set, is called once in the life of the process, when
// a code cache decodes its first block: guest code is about to run, and
// process-wide preparations for it that would only slow commands that
// run none can be made (cmd/ttd backs the heap with huge pages then).
var OnFirstDecode func()

var firstDecodeSeen atomic.Bool

// InvalidatePage drops every block decoded from page pn.
func (cc *CodeCache) InvalidatePage(pn uint64) {
	bs := cc.byPage[pn]
	if len(bs) == 0 {
		return
	}
	delete(cc.byPage, pn)
	for _, b := range bs {
		cc.drop(b)
	}
	if p := cc.mem.Lookup(pn); p != nil && p.cow == 0 {
		// (A page shared with another address space keeps the mark:
		// that one's cache may hold blocks from it.)
		p.code = false
	}
}

// CloneWith returns a copy of the CPU's architectural state that runs
// in mem with the code cache cc (a forked process's first thread).
func (c *CPU) CloneWith(mem *Memory, cc *CodeCache) *CPU {
	n := c.Clone()
	n.Mem = mem
	n.cache = cc
	return n
}

// drop makes b invalid: nothing finds or reaches it any more.
func (cc *CodeCache) drop(b *Block) {
	if !b.valid {
		return
	}
	b.valid = false
	cc.unlinkJIT(b)
	if b.jit != nil && b.jit.slots != nil {
		// Nothing reaches its translation any more: let the block
		// go (its code stays in the arena, which is bounded).
		cc.jitBlocks[b.jit.id] = nil
	}
	if cc.blocks[b.PC] == b {
		delete(cc.blocks, b.PC)
	}
	if i := fastIndex(b.PC); cc.fast[i] == b {
		cc.fast[i] = nil
	}
	if c := cc.running; c != nil && c.blk == b && c.blkLen > c.blkIdx+1 {
		// The running block modified itself: stop after the
		// current instruction and decode again.
		c.blkLen = c.blkIdx + 1
	}
}

// NewEpoch starts a new epoch: the observer hears again of each block
// (Observer.Decoded) the first time it runs from now on, as if the cache
// had been flushed, but the blocks keep their decoding and their
// translations. The recorder starts one at each checkpoint, so that the
// trace holds after it the code that runs after it.
//
// A block cut short by an unmapped page is dropped: decoded afresh, it
// may run on into a page mapped since. Blocks no longer lead to their
// successors (Block.succ), nor translations chain to each other or are
// found by address, until the blocks have run in the new epoch.
func (cc *CodeCache) NewEpoch() {
	cc.epoch++
	for _, bs := range cc.byPage {
		for _, b := range bs {
			b.succ = [2]*Block{}
			if b.truncated {
				cc.drop(b)
			}
		}
	}
	cc.unlinkAllJIT()
}

// enter tells c's observer of b if it has not heard of it in this epoch.
func (cc *CodeCache) enter(c *CPU, b *Block) {
	b.epoch = cc.epoch
	if c.Obs != nil {
		c.Obs.Decoded(c, b)
	}
	cc.relinkJIT(b)
}

// Flush drops all cached code (after munmap of a code region, say).
func (cc *CodeCache) Flush() {
	for pn := range cc.byPage {
		cc.InvalidatePage(pn)
	}
}

// compactFileOrder drops from fileOrder the blocks that are no longer
// cc's (dropped, or inserted again later).
func (cc *CodeCache) compactFileOrder() {
	seen := make(map[*Block]bool, len(cc.blocks))
	cc.fileOrder = slices.DeleteFunc(cc.fileOrder, func(b *Block) bool {
		drop := cc.blocks[b.PC] != b || seen[b]
		seen[b] = true
		return drop
	})
}

// Discard drops all cached code of an address space that goes away (its
// last process exited or exec'd): as Flush, but without unlinking each
// translation from the others and deleting each block from the maps one
// by one, which nothing needs when no code of the cache runs again (2% of
// the CPU time of `ttd run python3 -c pass`, at its exit). The cache
// stays usable: it is empty, and no table leads into the old
// translations.
//
// The translations' memory goes back to the next code cache (jitFree)
// here, not when the GC collects this one: a tree of 40 bash processes
// (3 GCs) took a fresh 2 MiB chunk for nearly every process, a huge page
// the kernel zeroed on the first copy into it (a quarter of the tree's
// CPU time, in adopt).
func (cc *CodeCache) Discard() {
	if cc.jit != nil {
		cc.jit.free()
		cc.jit = nil
	}
	for pn, bs := range cc.byPage {
		for _, b := range bs {
			b.valid = false
		}
		if p := cc.mem.Lookup(pn); p != nil && p.cow == 0 {
			p.code = false // as InvalidatePage
		}
	}
	cc.blocks = make(map[uint64]*Block)
	cc.byPage = make(map[uint64][]*Block)
	cc.fileOrder = nil
	clear(cc.fast[:])
	clear(cc.jitBlocks)
	for _, t := range cc.jitTab {
		if t != nil {
			clear(t[:])
		}
	}
	if c := cc.running; c != nil && c.blk != nil && c.blkLen > c.blkIdx+1 {
		c.blkLen = c.blkIdx + 1 // as drop: stop after the current instruction
	}
}
