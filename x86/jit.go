package x86

import (
	"os"
	"strconv"
	"sync/atomic"
	"unsafe"
)

// Block translation ("JIT"): a block that has run jitThreshold times in
// full is translated to host code (jit_amd64.go) that does what the
// interpreter's handlers do for its instructions, without the dispatch
// loop, the decoded-operand loads and the lazy-flag bookkeeping: the guest's
// flags live in the host's RFLAGS between a flag-setting instruction and
// its reader.
//
// The translated code is a leaf: it calls nothing, so Go's stack unwinding
// never has to cross it (a profile shows its time as runtime._ExternalCode),
// and it runs only while no observer needs to see each instruction (Run's
// fast loop), or in the blocks a BlockFilter declines, chained only to
// other declined blocks (filter.go). Guest registers live in the CPU
// struct; under `ttd run` (no prediction cache) a block keeps those it
// uses more than once in host registers, loaded at their first use and
// stored back at the ways out if written (jit_regs_amd64.go). Memory
// accesses check the TLBs and, while recording or replaying, the
// prediction cache inline.
// A block's exit jumps to the translation of the block that follows
// (chaining), within Run's instruction budget.
//
// Anything translated code cannot do — a TLB miss, a write to a page
// holding code, a read the cache misses while replaying that the reader
// has not handed over (ReadFeeder), a full log while recording
// (ReadLogger), an instruction it does not translate — leaves it *before*
// that instruction, with every earlier instruction's effects committed and
// none of its own; the interpreter runs that instruction, and the
// translation takes up again after it (resume entries). The result is the
// interpreter's, bit for bit: the flags that the hardware leaves undefined
// (shift AF and OF, multiply SF, ZF, AF and PF, what bsf and bt keep) are
// set the interpreter's way wherever they can be seen, and the reads are
// counted as the interpreter counts them, so that a recording and its
// replay agree whichever of the two ran a block. The differential tests
// (diff_test.go) check all of it against the interpreter.

// jitBlock is a block's translation state, made for the blocks that are
// translated or given a filter's verdict (Block.jx).
type jitBlock struct {
	entry uintptr // start of the host code, entered from Go; 0 when none
	chain uintptr // its entry from another translation (chaining)
	id    uint32  // index in CodeCache.jitBlocks
	// mode is what the code does with the prediction cache (jitMode*).
	mode uint8
	// slots are the jumps of the block's chaining exits to the blocks
	// that follow it, linked to the chain entry of that block or not
	// (return to Go).
	slots []jitLink
	// incoming are the slots of other blocks linked to chain.
	incoming []*jitLink
	// resume holds, by instruction, the entries into the translation
	// after an instruction the interpreter ran (0: none).
	resume []uintptr
	// hooks are the instructions before which the translation leaves
	// for an Instruction call, each with its entry after that exit in
	// hresume, and beyond those it does not reach (the interpreter runs
	// them) (filter.go); the filter's verdict is the block's
	// blockVerdict.
	hooks   uint64
	beyond  uint64
	hresume []uintptr
	// logged and steps are what the translation logs, and whether in
	// narrow records, win its windows of them (nil: none) (hooklog.go).
	logged uint64
	steps  bool
	win    *stepWindows
	// fileXl is the block's translation as the code file keeps it: taken
	// from the file with the block, or kept when translate made it
	// (codefile.go); nil: none.
	fileXl *fileXlat
}

// jitLink is a chaining exit's jump (a jmp rel32 in the translation;
// site is its displacement, at its address): to miss, the exit's way back
// to Go, until it is linked to the chain entry of the block that follows
// (qemu's goto_tb). Both are in one arena chunk or near enough for a
// rel32 (the arena's chunks are mapped near each other); one that is not
// stays unlinked.
type jitLink struct {
	site     *int32
	at, miss uintptr
}

// link makes the jump go to target; false if target is out of its reach.
func (l *jitLink) link(target uintptr) bool {
	rel := int64(target) - int64(l.at+4)
	if l.site == nil || rel != int64(int32(rel)) {
		return false
	}
	// One aligned store: the jump goes either way, never elsewhere.
	atomic.StoreInt32(l.site, int32(rel))
	return true
}

// unlink makes the jump return to Go.
func (l *jitLink) unlink() { l.link(l.miss) }

// jitTabBits sizes the table of translations by guest address through
// which a return or an indirect jump finds the translation of its target.
const jitTabBits = 14

type jitTabEntry struct {
	pc    uint64
	chain uintptr
}

// jitTable maps guest addresses to chain entries, direct-mapped; one per
// code cache and mode (with or without the prediction cache).
type jitTable [1 << jitTabBits]jitTabEntry

func jitTabIndex(pc uint64) uint64 { return (pc ^ pc>>jitTabBits) & (1<<jitTabBits - 1) }

// unlinkJIT makes the translations chained to b's return to Go instead
// (b is invalidated or translated again).
func (cc *CodeCache) unlinkJIT(b *Block) {
	j := b.jit
	if j == nil {
		return // never translated: nothing links to it
	}
	for _, p := range j.incoming {
		p.unlink()
	}
	j.incoming = j.incoming[:0]
	for _, t := range cc.jitTab {
		if t != nil {
			if e := &t[jitTabIndex(b.PC)]; e.pc == b.PC && e.chain == j.chain {
				*e = jitTabEntry{}
			}
		}
	}
}

// unlinkAllJIT makes every translation return to Go at its exits and
// empties the tables of translations by address (CodeCache.NewEpoch).
func (cc *CodeCache) unlinkAllJIT() {
	for _, b := range cc.jitBlocks {
		if b != nil {
			for i := range b.jit.slots {
				b.jit.slots[i].unlink()
			}
			b.jit.incoming = b.jit.incoming[:0]
		}
	}
	for _, t := range cc.jitTab {
		if t != nil {
			clear(t[:])
		}
	}
}

// relinkJIT puts b's translation back in the table of translations by
// address after unlinkAllJIT (its exits link again as they miss).
func (cc *CodeCache) relinkJIT(b *Block) {
	if j := b.jit; j != nil && j.entry != 0 && b.valid && cc.linkable(b) {
		cc.jitTab[j.mode][jitTabIndex(b.PC)] = jitTabEntry{b.PC, j.chain}
	}
}

// jitThreshold is the number of full runs of a block before it is
// translated; jitEnabled turns translation on. TTD_JIT=off disables it and
// TTD_JIT=N sets the threshold (N=0 translates every block at once: the
// tests run that way to exercise the translator on everything).
var jitThreshold, jitEnabled = func() (uint32, bool) {
	v := os.Getenv("TTD_JIT")
	if v == "off" || !jitSupported {
		return 0, false
	}
	if n, err := strconv.ParseUint(v, 10, 32); err == nil {
		return uint32(n), true
	}
	return 50, true
}()

// jitFileThreshold is the threshold of blocks the code file keeps
// (Block.forFile: file-backed code that was never writable) under ttd
// run, lower than jitThreshold's: the file carries their translations to
// the next run, which adopts each at its first run instead of
// interpreting it (codefile.go). python3 -c pass, second run: 0.29 M
// instructions interpreted instead of 1.3 M. Not while recording: a
// recording's translations are larger and dearer to make (ttd record
// python3 -c pass with the file emptied took 1.3x the CPU at 10, its
// file 51 MB rather than 35). TTD_JITFILE=N sets it (for measurements);
// it never exceeds jitThreshold.
var jitFileThreshold = func() uint32 {
	if n, err := strconv.ParseUint(os.Getenv("TTD_JITFILE"), 10, 32); err == nil {
		return uint32(n)
	}
	return 10
}()

// cold reports whether b has not yet run often enough to be translated
// on c: jitThreshold runs, or jitFileThreshold for a block the code file
// keeps when c runs without recording.
func (c *CPU) cold(b *Block) bool {
	return b.heat < jitThreshold && (!b.forFile || !runMode(c.jitMode) || b.heat < jitFileThreshold)
}

// SetJIT turns block translation on or off and sets its threshold (for
// tests and benchmarks); it reports the previous settings.
func SetJIT(on bool, threshold uint32) (wasOn bool, was uint32) {
	wasOn, was = jitEnabled, jitThreshold
	jitEnabled, jitThreshold = on && jitSupported, threshold
	return
}

// runBlock runs all of b: through its translation when it has one (or has
// earned one), then the interpreter from wherever the translation left.
// Translations chain to the translations of the blocks that follow them
// without returning, up to budget instructions: runBlock leaves c.blk and
// c.blkLen describing the last block that ran (as far as it ran) and
// returns the instructions of the blocks before it, which it has added to
// c.Icount. from is the block
// whose chaining slot missed just before (c.jitMiss): runBlock links it to
// b.
func (c *CPU) runBlock(b *Block, budget uint64, from *Block) (before uint64) {
	j := b.jit
	miss := c.jitMiss
	c.jitMiss = 0
	if j == nil || j.entry == 0 || j.mode != c.jitMode {
		// A translation another cache made (codestore.go) is adopted
		// when the block is hot here too (translate): adopting at the
		// first run made replay --segments of a Go program 2.7x slower
		// (each interval's cache copied every block it ran once).
		if !c.jitOK || b.declined || c.cold(b) {
			b.heat++
			c.runInsts(b.Insts, 0)
			if StatsOn {
				c.statRan(b, 0)
			}
			return 0
		}
		c.cache.unlinkJIT(b)
		c.translate(b)
		if j = b.jit; j == nil || j.entry == 0 {
			c.runInsts(b.Insts, 0)
			if StatsOn {
				c.statRan(b, 0)
			}
			return 0
		}
	}
	if from != nil && miss != 0 && from.valid && from.jit != nil && from.jit.mode == j.mode && from.jit.entry != 0 && c.cache.linkable(b) {
		if p := &from.jit.slots[miss-1]; p.link(j.chain) {
			j.incoming = append(j.incoming, p)
		}
	} else if e := &c.cache.jitTab[j.mode][jitTabIndex(b.PC)]; e.pc != b.PC && b.valid && c.cache.linkable(b) {
		// Reached from Go, perhaps after a return or an indirect jump
		// missed it in the table (another block took its entry): it
		// takes the entry back, so that the hotter of two blocks that
		// share one holds it most of the time.
		*e = jitTabEntry{b.PC, j.chain}
	}
	return c.runJIT(b, j.entry, budget, 0)
}

// runJIT runs translated code from entry, an entry into last's
// translation, as runBlock does, and returns the instructions of the
// blocks before the last one that ran, added to before.
func (c *CPU) runJIT(last *Block, entry uintptr, budget, before uint64) uint64 {
	// keep: the translation takes up after a hook exit with the reads
	// fed before it (feeding them anew cost more than the exit).
	keep := false
	for {
		c.materialize() // the translation takes the flags from c.flags
		if !keep {
			c.consumeFed()
			if c.jitPred != nil {
				// One less, so that the translated code compares Reads
				// with it before counting the read (none for Stop 0).
				c.jitStop = c.jitPred.Stop - 1
			}
			if c.jitFeeder != nil {
				n, after := c.jitFeeder.FeedReads(c, c.jitFeed[:])
				c.jitFeedN, c.jitFeedI, c.jitFeedAfter = uint64(n), 0, after
			}
		}
		keep = false
		c.jitStart = int64(min(budget-before, 1<<62)) - maxBlockInsts
		c.jitLeft = c.jitStart
		r := jitCall(entry, unsafe.Pointer(c))
		if StatsOn {
			c.statCall(r)
		}
		if c.acc.n > 0 {
			c.drainLog() // accesses and logged hooks (hooklog.go)
		}
		if c.jitLogN > 0 {
			c.Obs.(ReadLogger).LoggedReads(c, c.jitLog[:c.jitLogN])
			c.jitLogN = 0
		}
		hook := r != jitChained && r&jitHookExit != 0
		if !hook {
			c.consumeFed()
		}
		// The blocks before the last one retired (before a fault in
		// the interpreter's part of it unwinds this).
		retired := uint64(c.jitStart - c.jitLeft)
		if r == jitChained {
			retired -= c.jitDone // the last block's, taken at its exit
		}
		c.Icount += retired
		before += retired
		last = c.cache.jitBlocks[c.jitLast]
		n := len(last.Insts)
		c.blk = last
		c.blkLen = n
		if r == jitChained {
			// The last block ended at a chaining exit (a taken jump may
			// end it early) whose successor did not run.
			c.blkLen = int(c.jitDone)
			c.blkIdx = c.blkLen - 1
			return before
		}
		if r&jitHookExit != 0 {
			// Before a hooked instruction (filter.go).
			if entry = c.hookExit(last, int(r&^jitHookExit)); entry != 0 {
				keep = c.jitFeedI < c.jitFeedN
				continue
			}
			c.consumeFed()
			return before
		}
		k := int(r)
		if k >= n {
			return before
		}
		// The interpreter runs instruction k, and the translation the
		// rest if it can take up there.
		c.blkIdx = k
		entry = 0
		if lj := last.jit; k+1 < n && lj.resume != nil && last.valid && lj.mode == c.jitMode {
			entry = lj.resume[k+1]
		}
		if entry == 0 {
			if entry = c.runRest(last, k, k+1); entry != 0 {
				continue
			}
			if StatsOn {
				c.statRan(last, k)
			}
			return before
		}
		in := &last.Insts[k]
		in.Fn(c, in)
		if StatsOn {
			statInsts(statLeft, last.Insts, k, k+1)
		}
		if c.blkLen != n || c.exit.Reason != ExitNone || !last.valid {
			// It ended the block (a taken jump, an exit) or changed
			// its code.
			if c.blkLen > k+1 {
				c.blkIdx = k + 1
				if entry = c.runRest(last, k+1, k+1); entry != 0 {
					continue
				}
			}
			return before
		}
	}
}

// What translated code does with the prediction cache.
const (
	jitModeRun    = iota // no cache (ttd run)
	jitModeReplay        // check it, leave on a miss (the reader)
	jitModeRecord        // check it, log a miss itself (the recorder: ReadLogger)
	jitModeTrack         // as jitModeReplay, and log every access (AccessLogger)
	// as jitModeRecord, and log every access (an AccessLogger that is
	// also a ReadLogger: the recorder building the access summaries)
	jitModeRecordTrack
	// as jitModeRun, and reads take no TLB check: the host faults
	// where the guest may not read (the address space's window is in
	// host-fault mode: winfault_linux.go)
	jitModeFault
	// as jitModeRun, and log every access (an AccessLogger whose
	// memory is the program's: RunAccessLogger)
	jitModeRunTrack
	jitModes // how many there are
)

// faultMode reports whether c's address space is in host-fault mode
// (winfault_linux.go), turning it over when c has run winFaultAfter
// instructions in it (another thread of the process may have), or
// earlier once its code has settled (winSettled).
func (c *CPU) faultMode() bool {
	m := c.Mem
	if m.winFaulting() {
		return true
	}
	if c.ranMem != m || c.Icount < c.ranFrom {
		c.ranMem, c.ranFrom = m, c.Icount
		c.ranCheck, c.ranXlats = winSettleFirst, 0
	}
	ran := c.Icount - c.ranFrom
	if ran >= winFaultAfter || c.winSettled(ran) {
		return m.toFault()
	}
	return false
}

// winSettleFirst is the instruction count of a process at which
// faultMode first counts its translations (winSettled); it checks again
// at each doubling.
const winSettleFirst = 1 << 22

// winSettleXlats is the most translations a process may make between
// two checks of winSettled (2^k and 2^(k+1) instructions) for its code
// to count as settled. Counted at 2^22 and 2^23 instructions (session
// 33): xz -6 and -3 made 2 and 9, bzip2 -9 0, so they go over at 2^23;
// python3 -c pass made 1,472 (it ends before 2^25), gcc's cc1 607 and
// 5,000 up to 2^25, 506 from 2^25 to 2^26 (76M in all: it never goes
// over); python3's arith loop 0 from 2^25 to 2^26.
const winSettleXlats = 32

// winSettled reports whether c's process, which has run ran
// instructions, has reached a check (ranCheck) with few translations
// made since the one before it: its hot code is then what it will run
// on, so going over to host faults costs few translations again in
// jitModeFault, and the rest of its run gains (xz -6 of 512 KB spent a
// quarter of its run before 2^27). Off when TTD_WINFAULT_AFTER sets the
// switch (winSettleOn).
func (c *CPU) winSettled(ran uint64) bool {
	if !winSettleOn || ran < c.ranCheck {
		return false
	}
	n := c.cache.Translated + c.cache.Adopted
	settled := c.ranCheck > winSettleFirst && n-c.ranXlats < winSettleXlats
	c.ranCheck, c.ranXlats = c.ranCheck*2, n
	return settled
}

// runMode reports whether mode is one of `ttd run`'s, without the
// prediction cache.
func runMode(mode uint8) bool { return mode == jitModeRun || mode == jitModeFault }

// ReadLogger, when an Observer that sets CPU.Pred implements it, lets
// translated code log the reads the prediction cache does not predict
// without leaving: it enters their values into the cache and counts them,
// as MemRead would, and LoggedReads receives them, in order, before
// anything else happens in Go.
type ReadLogger interface {
	LoggedReads(c *CPU, reads []LoggedRead)
}

// LoggedRead is a read the prediction cache did not predict: Reads is the
// cache's count before it, Val its value (Size bytes), or for a byte read
// the whole aligned word around it, which the cache took
// (predict.Cache.ReadWord), with Size 8. Size 0 marks a
// synchronising instruction instead (Observer.Sync), which translated
// code ran after logging it there: Reads is the CPU's count of retired
// instructions before it (CPU.Retired) and Val its kind (LogLocked,
// LogFence).
type LoggedRead struct {
	Reads uint64
	Val   uint64
	Size  uint64
}

// The kinds of synchronising instructions in a LoggedRead.
const (
	LogLocked = 1 // lock-prefixed or implicitly locked
	LogFence  = 2 // mfence, lfence, sfence
)

// jitLogSize is how many reads translated code logs before it returns to
// Go to hand them over.
const jitLogSize = 1024

// ReadFeeder, when the Observer of a replay implements it, hands
// translated code the values of the logged reads to come, so that it
// need not return to Go for each: it enters each into the cache and into
// memory, and counts it, as MemRead does with a logged read.
type ReadFeeder interface {
	// FeedReads fills buf with the next logged reads of c's thread in
	// order, and returns how many, and the number of the first logged
	// read after them (0: none).
	FeedReads(c *CPU, buf []FedRead) (n int, after uint64)
	// ConsumedReads reports that the first n of them were made.
	ConsumedReads(c *CPU, n int)
}

// FedRead is a logged read: Reads is its number (the cache's count of
// reads once it is made), Val its value, or a byte read's word
// (LoggedRead), which memory and the cache take.
type FedRead struct {
	Reads, Val uint64
}

// jitFeedSize is how many logged reads runBlock hands translated code.
const jitFeedSize = 64

// DropPred detaches c from its prediction cache, and the translated
// code's copies of its address with it, so that the cache can be freed
// while c lives on (the CPU of a thread that ended, which the recorder
// and the reader keep until their next checkpoint). Run syncs them
// again.
func (c *CPU) DropPred() { c.Pred, c.jitPred, c.jitSlots = nil, nil, nil }

// syncJIT prepares the translated code's view of the CPU for a Run.
func (c *CPU) syncJIT() {
	c.jitOK = jitEnabled && (c.Obs == nil || c.Pred != nil || c.blind())
	c.jitPred = c.Pred
	c.jitMode = jitModeRun
	if c.Pred == nil && c.jitOK && winFault && c.faultMode() {
		c.jitMode = jitModeFault
	}
	c.jitFeeder = nil
	if c.Pred != nil {
		c.jitMode = jitModeReplay
		if _, ok := c.Obs.(ReadLogger); ok {
			c.jitMode = jitModeRecord
		}
		c.jitFeeder, _ = c.Obs.(ReadFeeder)
	}
	if c.Pred != nil {
		c.jitSlots, c.jitSlotMask = c.Pred.Words()
	}
	c.syncAccessLog()
}

// jx is b's translation state, made when b first needs one (translated).
func (b *Block) jx() *jitBlock {
	if b.jit == nil {
		b.jit = new(jitBlock)
	}
	return b.jit
}

// noJIT is the state of a block that has none yet: read, never written.
var noJIT jitBlock

// jv is b's translation state for reading: noJIT's zeros when it has
// none (as a block's state was before it was made).
func (b *Block) jv() *jitBlock {
	if b.jit == nil {
		return &noJIT
	}
	return b.jit
}

// Slab sizes of keepZero's allocations for translation state and the
// code file's blocks.
const (
	linkSlabLen  = 1024
	entrySlabLen = 4096
	blockSlabLen = 256
)

// entrySlice returns n zeroed resume entries (jitBlock.resume).
func (cc *CodeCache) entrySlice(n int) []uintptr {
	return keepZero(&cc.entrySlab, n, entrySlabLen)
}
