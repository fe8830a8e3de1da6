package x86

import (
	"encoding/binary"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/arch/x86/x86asm"
	"golang.org/x/sys/cpu"
	"golang.org/x/sys/unix"

	as "ttd/internal/amd64asm"
	"ttd/predict"
)

const jitSupported = true

// The host's optional instructions the translator uses. TTD_HOSTISA=0
// turns them all off, as on a baseline x86-64 host: a trace must replay
// the same either way (translations do exactly what the interpreter
// does), and tests check it.
var (
	jitHostISA                   = os.Getenv("TTD_HOSTISA") != "0"
	jitBMI1, jitPOPCNT, jitSSSE3 = jitHostISA && cpu.X86.HasBMI1, jitHostISA && cpu.X86.HasPOPCNT, jitHostISA && cpu.X86.HasSSSE3
	jitSSE41, jitSSE42           = jitHostISA && cpu.X86.HasSSE41, jitHostISA && cpu.X86.HasSSE42
	// jitRorx: the TLB check takes its index with rorx (tlb).
	jitRorx = jitHostISA && cpu.X86.HasBMI2
)

// jitCall runs translated code at entry with c in R15 and returns the
// index of the instruction at which it left the block (len: all of it).
//
//go:noescape
func jitCall(entry uintptr, c unsafe.Pointer) uint64

// jitArena is executable memory for translations, bump-allocated in
// chunks. A translation whose block is invalidated is not reclaimed; the
// arena stops translating once it holds jitArenaMax bytes.
type jitArena struct {
	mu     sync.Mutex
	chunks [][]byte
	used   int // bytes used in the last chunk
	total  int
}

const (
	// jitChunk is one huge page: chunks are advised MADV_HUGEPAGE (as
	// Linux aligns anonymous mappings of 2 MiB), so the 7.4 MB python3
	// -c pass translates take 4 page faults rather than 1,900 (16 µs
	// of CPU each on the machines ttd is measured on).
	jitChunk    = 2 << 20
	jitArenaMax = 64 << 20
)

// alloc copies code into executable memory and returns its address (16
// bytes aligned) and the copy, or 0 when the arena is full or mapping
// fails.
func (ar *jitArena) alloc(code []byte) (uintptr, []byte) {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	n := (len(code) + 15) &^ 15
	if n > jitChunk {
		return 0, nil
	}
	if len(ar.chunks) == 0 || ar.used+n > jitChunk {
		if ar.total+jitChunk > jitArenaMax {
			return 0, nil
		}
		m := jitFree.take()
		if m != nil {
			jitResReuse(m)
		}
		if m == nil && winFault {
			// Translated code's faults are told by their RIP
			// (winfault_linux.go).
			if m = jitResChunk(); m == nil {
				return 0, nil
			}
		}
		if m == nil {
			var err error
			m, err = unix.Mmap(-1, 0, jitChunk, unix.PROT_READ|unix.PROT_WRITE|unix.PROT_EXEC, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
			if err != nil {
				return 0, nil
			}
			unix.Madvise(m, unix.MADV_HUGEPAGE) // only advice: no error matters
		}
		ar.chunks = append(ar.chunks, m)
		ar.used = 0
		ar.total += jitChunk
	}
	m := ar.chunks[len(ar.chunks)-1]
	copy(m[ar.used:], code)
	p := uintptr(unsafe.Pointer(&m[ar.used]))
	c := m[ar.used : ar.used+len(code)]
	ar.used += n
	if winFault {
		fileFaults(m, p, code)
	}
	return p, c
}

// free gives the arena's chunks back, to the arenas made after it
// (jitFree) or to the system.
func (ar *jitArena) free() {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	for _, m := range ar.chunks {
		if !jitFree.give(m) && !jitResRelease(m) {
			unix.Munmap(m)
		}
	}
	ar.chunks = nil
}

// jitFree keeps the chunks of freed arenas (their code caches were
// collected) for the next arenas: each process of a tree has an arena,
// and a new chunk's first touch has the kernel zero a huge page (2 MiB)
// for the 100-700 KB a shell or a coreutil translates, 0.27 s of the
// 2.8 s that `ttd run` of 200 processes took. A chunk's old code is
// never run again: nothing reaches it once its cache is gone, and new
// code is written over it before an entry leads there.
var jitFree jitChunks

// jitFreeMax bounds the chunks jitFree keeps (16 MiB).
const jitFreeMax = 8

type jitChunks struct {
	mu     sync.Mutex
	chunks [][]byte
}

// take returns a kept chunk, or nil.
func (f *jitChunks) take() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.chunks)
	if n == 0 {
		return nil
	}
	m := f.chunks[n-1]
	f.chunks = f.chunks[:n-1]
	return m
}

// give keeps m for a later arena, unless enough are kept already.
func (f *jitChunks) give(m []byte) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.chunks) >= jitFreeMax {
		return false
	}
	f.chunks = append(f.chunks, m)
	return true
}

// translate gives b a translation for mode (jitMode*), or marks it
// declined.
func (cc *CodeCache) translate(b *Block, mode uint8) {
	if cc.adopt(b, mode) { // jitshare_amd64.go
		return
	}
	cc.jitPrepare(b, mode)
	t := jitPool.Get().(*jitT)
	defer jitPool.Put(t)
	j := b.jit // jitPrepare made it
	t.tab = cc.jitTab[mode]
	t.legacy = cc.LegacyReads
	t.hooks = cc.hooksFor(b)
	t.logged, t.steps, t.win = cc.logsFor(b, t.hooks)
	t.pendTarget = false
	if !t.block(b, mode) {
		b.declined = true
		cc.shareXlat(b, mode, t, false)
		if StatsOn {
			statCount(&stats.declined, 1)
		}
		return
	}
	if StatsOn {
		statCount(&stats.xlated, 1)
		statCount(&stats.xbytes, uint64(len(t.a.Buf)))
	}
	if e, code := cc.jit.alloc(t.a.Buf); e != 0 {
		if perfMapOn {
			perfMapAdd(e, len(t.a.Buf), b.PC)
		}
		j.entry, j.chain, j.mode = e, e+uintptr(t.chainOff), mode
		for i, l := range t.links {
			j.slots[i] = jitLink{site: (*int32)(unsafe.Pointer(&code[l.site])), at: e + uintptr(l.site), miss: e + uintptr(l.miss)}
		}
		if len(t.resumes) > 0 {
			if j.resume == nil {
				j.resume = cc.entrySlice(len(b.Insts))
			}
			clear(j.resume)
			for _, r := range t.resumes {
				j.resume[r.k] = e + uintptr(r.off)
			}
		} else if j.resume != nil {
			clear(j.resume)
		}
		t.keepHooks(j, e, cc)
		cc.jitTab[mode][jitTabIndex(b.PC)] = jitTabEntry{b.PC, j.chain}
		cc.Translated++
		cc.shareXlat(b, mode, t, true)
	} else {
		b.declined = true
	}
}

// jitSlots is the number of chaining exits a block's translation may have:
// one per conditional jump and one at its end.
func jitSlots(b *Block) int {
	n := 1
	for i := range b.Insts {
		if jitIsJcc(b.Insts[i].Op) {
			n++
		}
	}
	return n
}

var jitPool = sync.Pool{New: func() any { return new(jitT) }}

// Host registers of translated code. RAX and RDX are scratch for the
// checks; RSI holds a guest address and RDI the host address it maps to;
// R9 a value loaded from guest memory, R8 and RCX operands; RBX the
// prediction-cache byte a store updates.
const (
	hCPU   = as.R15 // the *CPU
	hRTLB  = as.R14 // the read TLB translated code checks (tlbOffset)
	hMark  = as.R13 // k+1 when instruction k of this run of the block read across words (jitCross)
	hSlots = as.R12 // the prediction cache's words
	hReads = as.R11 // the prediction cache's Reads, kept here while the code runs
	hFlags = as.R10 // saved guest flags: AH (SF ZF AF PF CF) and AL (OF), as lahf+seto leave them
)

// offPageCode is the offset of Page.code from the page's data.
var offPageCode = int32(unsafe.Offsetof(Page{}.code))

// wtlbOffset is the distance from Memory's read TLB to its write TLB,
// which translated code reaches through the read TLB's register.
const wtlbOffset = tlbSize << tlbEntryShift

// Offsets in CPU that translated code uses.
var (
	offR        = int32(unsafe.Offsetof(CPU{}.R))
	offRIP      = int32(unsafe.Offsetof(CPU{}.RIP))
	offFlags    = int32(unsafe.Offsetof(CPU{}.flags))
	offCCOp     = int32(unsafe.Offsetof(CPU{}.cc) + unsafe.Offsetof(lazyFlags{}.op))
	offFSBase   = int32(unsafe.Offsetof(CPU{}.FSBase))
	offGSBase   = int32(unsafe.Offsetof(CPU{}.GSBase))
	offRTLB     = int32(unsafe.Offsetof(CPU{}.rtlb))
	offJitPred  = int32(unsafe.Offsetof(CPU{}.jitPred))
	offJitSlots = int32(unsafe.Offsetof(CPU{}.jitSlots))
	offJitMask  = int32(unsafe.Offsetof(CPU{}.jitSlotMask))

	offJitStart     = int32(unsafe.Offsetof(CPU{}.jitStart))
	offJitLeft      = int32(unsafe.Offsetof(CPU{}.jitLeft))
	offJitLast      = int32(unsafe.Offsetof(CPU{}.jitLast))
	offJitDone      = int32(unsafe.Offsetof(CPU{}.jitDone))
	offJitMiss      = int32(unsafe.Offsetof(CPU{}.jitMiss))
	offJitLogN      = int32(unsafe.Offsetof(CPU{}.jitLogN))
	offJitLog       = int32(unsafe.Offsetof(CPU{}.jitLog))
	offIcount       = int32(unsafe.Offsetof(CPU{}.Icount))
	offJitFeed      = int32(unsafe.Offsetof(CPU{}.jitFeed))
	offJitFeedN     = int32(unsafe.Offsetof(CPU{}.jitFeedN))
	offJitFeedI     = int32(unsafe.Offsetof(CPU{}.jitFeedI))
	offJitFeedAfter = int32(unsafe.Offsetof(CPU{}.jitFeedAfter))

	offReads = int32(unsafe.Offsetof(predict.Cache{}.Reads))
	offStop  = int32(unsafe.Offsetof(CPU{}.jitStop))
)

// Where the guest flags are at a point of the translated code: a block
// begins with them in hFlags.
const (
	fsHost  = iota // in the host's RFLAGS
	fsSaved        // in hFlags
)

type jitExit struct {
	l  as.Label
	k  int
	st uint8
	// taken: a conditional jump was taken to target: the block ends
	// after it (instruction k-1), at a chaining exit.
	taken  bool
	target uint64
	// reads: the reads of the block before instruction k, which hReads
	// does not count (jitT.sreads); extra: the reads instruction k's
	// read across words added to hReads, if it made one (hMark).
	reads, extra int32
	// regs: where the guest registers are at the exit.
	regs jitRegState
}

// jitResumeMin is the number of instructions that must follow an
// instruction the translator does not handle, in its block, for the
// translation to take up again after it rather than end there: leaving
// translated code and entering it again costs a few interpreted
// instructions.
const jitResumeMin = 4

// jitChained is jitCall's result when the last block ran left at a
// chaining exit whose successor did not run (CPU.jitDone says how many of
// its instructions ran); any other result is the index of the instruction
// at which the interpreter takes over the last block.
const jitChained = 1 << 32

// jitT translates one block.
type jitT struct {
	a    as.Asm
	b    *Block
	pred bool
	// log: a miss of the prediction cache is logged here (ReadLogger),
	// by the out-of-line code of misses.
	log bool
	// acclog: every access is logged (jitModeTrack, jit_acclog_amd64.go).
	acclog  bool
	accLogs []jitAccLog // jit_acclog_amd64.go
	// marks: an access is marked in place where it can be (markAccess:
	// the observer is an AccessMarker).
	marks bool
	// rmw: the access being emitted belongs to a read-modify-write
	// (loadRMW).
	rmw     bool
	misses  []jitMiss
	crosses []jitCross
	// repWordsList: the replay's aligned reads of words that take their
	// Stop read from the feed (jit_repcross_amd64.go).
	repWordsList []jitRepWords
	st           uint8
	exits        []jitExit
	// faults are the ranges of code after the read checks of `ttd
	// run`'s translations with winFault, where a host fault leaves by
	// the check's exit (faultTable); faultOpen says the last one has
	// no end yet.
	faults    []jitFaultRange
	faultOpen bool
	// fault: reads take no TLB check (jitModeFault).
	fault bool
	// codeLen is the length of the code in a.Buf, before the fault
	// table.
	codeLen int
	// nslot counts the chaining exits emitted, links their jumps;
	// chainOff is the offset of the chain entry (the entry from Go is
	// at 0).
	nslot    int
	links    []jitLinkOff
	chainOff int
	resumes  []jitResume
	// hooks are the instructions to leave before for an Instruction
	// call, hresumes the entries after those exits, and hooked the
	// instructions the translation leaves before or does not reach
	// (jit_hook_amd64.go).
	hooks, hooked uint64
	hresumes      []jitResume
	// logged are the hooks logged instead (hooklog.go), in narrow
	// records if steps, with the windows win; pendTarget: a logged call through memory
	// (instruction pendK) whose target the block's end writes into its
	// record.
	logged     uint64
	steps      bool
	win        *stepWindows
	pendTarget bool
	pendK      int
	// legacy: the code cache's LegacyReads.
	legacy bool
	// idSites and tabSites are where the code holds the block's id and
	// the table's address (jitshare_amd64.go); -1 in tabSites: the
	// address is not a 64-bit immediate.
	idSites, tabSites []int32
	shareOffs         []int32 // shareXlat's scratch
	// syncPending: the instruction synchronises and its key frame is
	// not logged yet (syncPoint).
	syncPending bool
	// mxChecked: the code has checked that MXCSR lets floating point
	// run on the host (sseNative), since its entry or last resume entry.
	mxChecked bool
	// dynamic: the block ends with a jump to a computed address; tab is
	// the table of translations it looks that up in.
	dynamic bool
	tab     *jitTable
	live    [maxBlockInsts]uint64 // flags live after each instruction
	// ar is the register holding the address tlb checks: RSI, or the
	// host register of a guest register (eaAccess); indexed: tlb leaves
	// the host address as RDI plus ar (tlbIndexed).
	ar      as.Reg
	indexed bool
	// k is the instruction being translated, exitL its exit (made on
	// first use: hasExt).
	k      int
	exitL  as.Label
	hasExt bool
	// tailL is leaveTail's label, once an exit needs it (hasTail);
	// headL resumeHead's, once an entry needs it (hasHead).
	tailL, headL     as.Label
	hasTail, hasHead bool
	// readPending: the instruction loaded through load and has not
	// counted the read yet (commitRead).
	readPending bool
	// sreads counts the reads of the instructions translated so far,
	// one per word: hReads plus sreads is the cache's count of reads
	// (predict.Cache.Reads) at this point of the code, so that the
	// code adds to hReads only where a read crosses words and where it
	// leaves the block. kReads is sreads at instruction k's start, and
	// exitIdx its exit in exits.
	sreads, kReads int32
	exitIdx        int
	// regs says where the guest registers are at the code being emitted
	// (jit_regs_amd64.go), when regsOn; regsLive says that the code
	// being emitted runs after the block's entry. uses and banned are
	// the registers each instruction names (instRegs), resumeRegs the
	// registers at each of resumes, counted that jitCachedBlocks
	// counts this block.
	regs                      jitRegState
	regsLive, regsOn, counted bool
	uses, banned              [maxBlockInsts]uint16
	resumeRegs                []jitRegState
}

// block translates b into t.a; false when not even its first instruction
// translates.
func (t *jitT) block(b *Block, mode uint8) bool {
	t.a.Reset()
	t.a.ElideReloads = true
	t.hasTail, t.hasHead = false, false
	t.b, t.pred, t.st = b, !runMode(mode) && mode != jitModeRunTrack, fsSaved
	t.fault = mode == jitModeFault
	t.log = mode == jitModeRecord || mode == jitModeRecordTrack
	t.acclog = mode == jitModeTrack || mode == jitModeRecordTrack || mode == jitModeRunTrack
	t.marks = mode == jitModeRecordTrack || mode == jitModeRunTrack
	t.mxChecked = false
	t.misses = t.misses[:0]
	t.crosses = t.crosses[:0]
	t.repWordsList = t.repWordsList[:0]
	t.accLogs = t.accLogs[:0]
	t.exits = t.exits[:0]
	t.faults, t.faultOpen = t.faults[:0], false
	t.nslot = 0
	t.links = t.links[:0]
	t.sreads = 0
	t.idSites, t.tabSites = t.idSites[:0], t.tabSites[:0]
	t.allocRegs(b)
	n := len(b.Insts)
	live := uint64(ArithFlags) // every flag is live at the end of the block
	for i := n - 1; i >= 0; i-- {
		t.live[i] = live
		r, w := flagUse(&b.Insts[i])
		live = r | live&^w
	}
	a := &t.a
	// The entry from Go (jitCall): load the registers, and the flags
	// from c.flags, which runBlock materialized. The chain entry, from
	// another translation, follows it: the flags are in hFlags, the
	// guest registers in the CPU, and the exit that jumps there has
	// checked the budget (chain).
	t.prologue()
	t.chainOff = a.Len()
	t.regsLive = true
	t.clearMark()
	done, xl := 0, 0 // instructions done, and translated
	t.resumes, t.resumeRegs = t.resumes[:0], t.resumeRegs[:0]
	t.hresumes, t.hooked = t.hresumes[:0], 0
	for done < n {
		if done > 0 && t.hasExt {
			// The interpreter may run the instruction before and
			// come back here (runBlock): a resume entry.
			l := a.NewLabel()
			a.Bind(l)
			t.resumes = append(t.resumes, jitResume{l, done, t.st, 0, t.sreads})
			t.resumeRegs = append(t.resumeRegs, t.regs)
			t.mxChecked = false
		}
		t.k, t.hasExt, t.readPending, t.kReads = done, false, false, t.sreads
		t.ar = as.RSI
		if t.hooks>>done&1 != 0 {
			t.flushRegs() // the hook's entry finds them in the CPU
			t.hookExit()
		}
		t.regsFor(done)
		t.a.Written = 0
		pos, nexits := a.Len(), len(t.exits)
		ok := t.inst(&b.Insts[done])
		t.closeFault()
		t.wrote()
		if !ok {
			// An instruction the translator does not handle: leave
			// for the interpreter and take up again after it (a resume
			// entry), when enough of the block follows to pay for the
			// round trip through Go (jitResumeMin) and inst emitted
			// nothing.
			if n-done-1 < jitResumeMin || a.Len() != pos || len(t.exits) != nexits || b.Insts[done].Flags&InstEndsBlock != 0 {
				break
			}
			t.spill() // an exit finds the flags in hFlags (leave)
			a.Jmp(t.exit())
			done++
			continue
		}
		xl++
		done++
	}
	if len(t.resumes) > 0 && t.resumes[len(t.resumes)-1].k == done {
		t.resumes = t.resumes[:len(t.resumes)-1] // not translated
		t.resumeRegs = t.resumeRegs[:len(t.resumes)]
	}
	if xl == 0 {
		return false
	}
	t.hooked |= ^(1<<done - 1) // the interpreter runs the rest
	// The end of the translation: the block's end, where it chains to
	// the block that follows when that one is known, or its first
	// untranslated instruction.
	next, ok := t.successor()
	switch {
	case done == n && ok:
		t.chain(n, next, t.sreads)
	case done == n && t.dynamic:
		t.chainDynamic(n, t.sreads)
	default:
		t.spill()
		t.settle(t.sreads)
		t.leave(done, t.st)
	}
	for _, m := range t.misses {
		t.missCode(m)
		if m.hasFed {
			t.fedCode(m)
		}
	}
	for _, c := range t.crosses {
		t.crossCode(c)
	}
	for _, w := range t.repWordsList {
		t.repWordsCode(w)
	}
	t.accLogCode()
	for i := range t.resumes {
		t.regs = t.resumeRegs[i]
		t.resumeEntry(&t.resumes[i])
	}
	t.regs = jitRegState{} // flushRegs before each hook exit
	t.hookResumes()
	for _, e := range t.exits {
		a.Bind(e.l)
		t.st, t.regs = e.st, e.regs
		if e.taken {
			t.chain(e.k, e.target, e.reads)
			continue
		}
		if e.extra != 0 {
			// The instruction may have counted a read across words
			// before leaving: the interpreter runs it again.
			t.spill()
			skip := a.NewLabel()
			a.ALURI(as.CMP, 4, hMark, int64(e.k+1))
			a.Jcc(5, skip)
			a.ALURI(as.SUB, 8, hReads, int64(e.extra))
			a.Bind(skip)
		}
		t.settle(e.reads)
		t.leave(e.k, t.st)
	}
	if t.hasTail {
		t.leaveTail()
	}
	if t.hasHead {
		t.resumeHead()
	}
	if err := a.Finish(); err != nil {
		panic("jit: " + err.Error())
	}
	t.codeLen = a.Len()
	if winFault {
		t.faultTable()
	}
	return true
}

// successor is the address of the block that follows a fully translated
// block, when it is fixed: after a direct jump or call, the fall-through
// of a conditional jump, or the next instruction.
func (t *jitT) successor() (uint64, bool) {
	b := t.b
	last := &b.Insts[len(b.Insts)-1]
	t.dynamic = false
	switch {
	case (last.Op == x86asm.JMP || last.Op == x86asm.CALL) && last.Args[0].Kind == KRel:
		return last.Args[0].Imm, true
	case jitIsJcc(last.Op):
		return last.PC + uint64(last.Len), true
	case last.Flags&InstSetsRIP == 0:
		return b.End, true
	}
	switch last.Op {
	case x86asm.RET, x86asm.JMP, x86asm.CALL:
		t.dynamic = true // translated, so the target is in RIP
	}
	return 0, false
}

// chainDynamic emits the exit of a block that ends with a jump to the
// address in CPU.RIP (a return, an indirect jump or call): it looks the
// address up in the table of translations and jumps to the one there, or
// returns to Go.
func (t *jitT) chainDynamic(m int, reads int32) {
	a := &t.a
	t.spill()
	t.logTarget() // a logged call's target (jit_hooklog_amd64.go)
	t.settle(reads)
	t.storeRegs()
	stop := a.NewLabel()
	t.budget(m, stop)
	a.MovRM(8, as.RAX, as.M(hCPU, offRIP))
	a.MovRR(8, as.RDX, as.RAX)
	a.ShiftRI(as.SHR, 8, as.RDX, jitTabBits)
	a.ALURR(as.XOR, 8, as.RDX, as.RAX)
	a.ALURI(as.AND, 4, as.RDX, 1<<jitTabBits-1)
	a.ShiftRI(as.SHL, 4, as.RDX, 4)
	at := a.Len()
	a.MovRI(as.RCX, uint64(uintptr(unsafe.Pointer(t.tab))))
	t.tabSite(at)
	miss := a.NewLabel()
	a.ALURM(as.CMP, 8, as.RAX, as.Mem{Base: as.RCX, Index: as.RDX})
	a.Jcc(5, miss)
	a.MovRM(8, as.RAX, as.Mem{Base: as.RCX, Index: as.RDX, Disp: 8})
	a.JmpReg(as.RAX)
	a.Bind(miss)
	a.Bind(stop)
	a.MovMI(8, as.M(hCPU, offJitDone), int64(m))
	t.leaveStored(jitChained, t.st)
}

// chain emits a chaining exit after m instructions of the block, which
// made reads reads, to the block at next: RIP is set, the flags go to
// hFlags, the guest registers to the CPU, and the exit takes its
// instructions from the budget (budget) and jumps on to that block's
// chain entry, once runBlock has linked its jump there (jitLink); else it
// returns to Go (jitChained), naming the exit if it is not linked, so
// that runBlock links it.
//
// In `ttd run`'s translations RIP is set only on the way back to Go
// (jitRIPOutOfLine): nothing reads it while translated code runs on
// through linked exits (an exit in the middle of a block names its
// instruction, and the interpreter and finishBlock set RIP from that).
func (t *jitT) chain(m int, next uint64, reads int32) {
	a := &t.a
	i := t.nslot
	t.nslot++
	if !t.ripOutOfLine() {
		a.MovRI(as.RAX, next)
		a.MovMR(8, as.M(hCPU, offRIP), as.RAX)
	}
	t.spill()
	t.settle(reads)
	t.storeRegs()
	miss, stop := a.NewLabel(), a.NewLabel()
	t.budget(m, stop)
	// The jump's displacement is 4-byte aligned (the code is 16), so
	// that linking it is one atomic store.
	for (a.Len()+1)%4 != 0 {
		a.Buf = append(a.Buf, 0x90) // nop
	}
	a.Jmp(miss)
	site := a.Len() - 4
	a.Bind(miss)
	t.links = append(t.links, jitLinkOff{site: site, miss: a.Len()})
	a.MovMI(8, as.M(hCPU, offJitMiss), int64(i+1))
	a.Bind(stop)
	if t.ripOutOfLine() {
		a.MovRI(as.RAX, next)
		a.MovMR(8, as.M(hCPU, offRIP), as.RAX)
	}
	a.MovMI(8, as.M(hCPU, offJitDone), int64(m))
	t.leaveStored(jitChained, t.st)
}

// ripOutOfLine says that chaining exits set RIP only where they return to
// Go, and a direct jmp or call, or a conditional jump at the end of the
// block, leaves it to them: in `ttd run`'s translations (2 of the 10
// host instructions of a linked exit; xz and bzip2 take one every 6-11
// guest instructions). The other modes keep the stores where they were.
func (t *jitT) ripOutOfLine() bool { return !t.pred }

// budget takes the m instructions that ran of the block from CPU.jitLeft
// at a chaining exit, and jumps to stop if the block that follows might
// not fit in the budget (jitLeft is the budget less maxBlockInsts).
// Clobbers the flags.
func (t *jitT) budget(m int, stop as.Label) {
	t.a.ALUMI(as.SUB, 8, as.M(hCPU, offJitLeft), int64(m))
	t.a.Jcc(8, stop) // js
}

// retiredBefore computes into r the instructions of the blocks that ran
// before this one since the entry from Go (runJIT adds them to Icount).
func (t *jitT) retiredBefore(r as.Reg) {
	t.a.MovRM(8, r, as.M(hCPU, offJitStart))
	t.a.ALURM(as.SUB, 8, r, as.M(hCPU, offJitLeft))
}

// jitLinkOff is a chaining exit's jump in the code being emitted: the
// offsets of its displacement and of the code it jumps to unlinked.
type jitLinkOff struct{ site, miss int }

func jitIsJcc(op x86asm.Op) bool {
	// (A switch, not a map: jitSlots asks of every instruction of each
	// block translated or adopted, 1% of a warm python3 -c pass.)
	switch op {
	case x86asm.JO, x86asm.JNO, x86asm.JB, x86asm.JAE, x86asm.JE, x86asm.JNE, x86asm.JBE, x86asm.JA,
		x86asm.JS, x86asm.JNS, x86asm.JP, x86asm.JNP, x86asm.JL, x86asm.JGE, x86asm.JLE, x86asm.JG:
		return true
	}
	return false
}

// prologue loads the registers of translated code, and the flags from
// c.flags, which runBlock materialized, into hFlags.
func (t *jitT) prologue() {
	a := &t.a
	a.MovRM(8, hRTLB, as.M(hCPU, t.tlbOffset()))
	if t.pred {
		a.MovRM(8, as.RAX, as.M(hCPU, offJitPred))
		a.MovRM(8, hReads, as.M(as.RAX, offReads))
		a.MovRM(8, hSlots, as.M(hCPU, offJitSlots))
	}
	t.cpuFlags()
	t.loadRegs()
}

// jitResume is an entry into a translation at instruction k, whose code
// expects the flags where st says and hReads less the block's reads
// before k; off is the entry's offset.
type jitResume struct {
	l     as.Label
	k     int
	st    uint8
	off   int
	reads int32
}

// settle adds to hReads the reads n that the code has made and not
// counted there (jitT.sreads), before the code leaves the block; n < 0
// takes them away, at an entry (no flags).
func (t *jitT) settle(n int32) {
	if t.pred && n != 0 {
		t.a.Lea(8, hReads, as.M(hReads, n))
	}
}

// clearMark says that no instruction of this run of the block has read
// across words yet (hMark).
func (t *jitT) clearMark() {
	if t.pred {
		t.a.ALURR(as.XOR, 4, hMark, hMark)
	}
}

// leave returns to Go reporting that instruction k is next, storing saved
// flags into the CPU. With the flags saved, the way out shared by the
// block's exits (leaveTail) does the rest: an exit is its register
// stores, a move and a jump. (Inline, each of python3 -c pass's 44,000
// exits took 79 bytes, 3.4 MB of its 7.7 MB of host code.)
func (t *jitT) leave(k int, st uint8) {
	a := &t.a
	t.storeRegs()
	if st == fsSaved {
		if !t.hasTail {
			t.tailL, t.hasTail = a.NewLabel(), true
		}
		a.MovRI(as.RCX, uint64(k))
		a.Jmp(t.tailL)
		return
	}
	t.leaveFrom(st)
	a.MovRI(as.RAX, uint64(k))
	a.Ret()
}

// leaveTail emits the way out that leave's exits with saved flags jump
// to, with the next instruction's index in RCX.
func (t *jitT) leaveTail() {
	a := &t.a
	a.Bind(t.tailL)
	t.leaveFrom(fsSaved)
	a.MovRR(8, as.RAX, as.RCX)
	a.Ret()
}

// leaveFrom is leave's work after the register stores: the prediction
// cache's reads and the saved flags go into the CPU, and the block's id
// into CPU.jitLast. Clobbers RAX and RDX.
func (t *jitT) leaveFrom(st uint8) {
	a := &t.a
	if t.pred {
		a.MovRM(8, as.RDX, as.M(hCPU, offJitPred))
		a.MovMR(8, as.M(as.RDX, offReads), hReads)
	}
	if st == fsSaved {
		a.MovRR(4, as.RAX, hFlags)
		a.ShiftRI(as.SHR, 4, as.RAX, 8)
		a.ALURI(as.AND, 4, as.RAX, FlagSF|FlagZF|FlagAF|FlagPF|FlagCF)
		a.MovRR(4, as.RDX, hFlags)
		a.ALURI(as.AND, 4, as.RDX, 1)
		a.ShiftRI(as.SHL, 4, as.RDX, 11)
		a.ALURR(as.OR, 4, as.RAX, as.RDX)
		a.MovRM(8, as.RDX, as.M(hCPU, offFlags))
		a.ALURI(as.AND, 8, as.RDX, ^int64(ArithFlags))
		a.ALURR(as.OR, 8, as.RDX, as.RAX)
		a.MovMR(8, as.M(hCPU, offFlags), as.RDX)
		a.MovMI(1, as.M(hCPU, offCCOp), int64(ccEager))
	}
	a.MovMI(8, as.M(hCPU, offJitLast), int64(t.b.jit.id))
	t.idSites = append(t.idSites, int32(a.Len()-4)) // jitshare_amd64.go
}

// exit returns the label to jump to for leaving before the current
// instruction, in the current flag state.
func (t *jitT) exit() as.Label {
	if !t.hasExt {
		t.exitL = t.a.NewLabel()
		t.hasExt = true
		t.exitIdx = len(t.exits)
		t.exits = append(t.exits, jitExit{l: t.exitL, k: t.k, st: t.st, reads: t.kReads, regs: t.regs})
	}
	return t.exitL
}

// spill saves host flags holding guest flags into hFlags, before code
// that clobbers them.
func (t *jitT) spill() {
	if t.st == fsHost {
		t.a.Lahf()
		t.a.Setcc(0, as.RAX) // seto al
		t.a.Movzx(4, 2, hFlags, as.RAX)
		t.st = fsSaved
	}
}

// hostFlags makes the host's RFLAGS hold the guest's arithmetic flags, for
// an instruction that reads them or writes only some. Clobbers RAX, RDX.
func (t *jitT) hostFlags() {
	a := &t.a
	if t.st == fsHost {
		return
	}
	a.MovRR(4, as.RAX, hFlags)
	a.ALURI(as.ADD, 1, as.RAX, 0x7f) // OF from AL
	a.Sahf()
	t.st = fsHost
}

// cpuFlags loads the flags into hFlags from CPU.flags, which runBlock
// materialized. Clobbers RAX, RDX.
func (t *jitT) cpuFlags() {
	a := &t.a
	a.MovRM(8, as.RAX, as.M(hCPU, offFlags))
	a.ShiftRI(as.SHL, 4, as.RAX, 8)
	a.MovRR(4, as.RDX, as.RAX)
	a.ShiftRI(as.SHR, 4, as.RDX, 19)
	a.ALURI(as.AND, 4, as.RDX, 1)
	a.ALURR(as.OR, 4, as.RAX, as.RDX)
	a.MovRR(4, hFlags, as.RAX)
	t.st = fsSaved
}

// ea computes a memory operand's guest address into RSI (no flags).
func (t *jitT) ea(o *Operand) {
	a := &t.a
	t.ar = as.RSI
	if m, ok := t.hostEA(o); ok {
		if m != (as.Mem{Base: as.RSI, Index: as.NoIndex}) {
			a.Lea(8, as.RSI, m)
		}
		return
	}
	switch {
	case o.Base != NoReg:
		a.MovRM(8, as.RSI, t.gregN(o.Base))
		if o.Index != NoReg {
			a.MovRM(8, as.RDX, t.gregN(o.Index))
			a.Lea(8, as.RSI, as.Mem{Base: as.RSI, Index: as.RDX, Scale: o.Scale, Disp: int32(o.Imm)})
		} else if o.Imm != 0 {
			a.Lea(8, as.RSI, as.M(as.RSI, int32(o.Imm)))
		}
	default:
		a.MovRI(as.RSI, o.Imm)
		if o.Index != NoReg {
			a.MovRM(8, as.RDX, t.gregN(o.Index))
			a.Lea(8, as.RSI, as.Mem{Base: as.RSI, Index: as.RDX, Scale: o.Scale})
		}
	}
	if o.A32 {
		a.MovRR(4, as.RSI, as.RSI)
	}
	switch o.Seg {
	case SegFS:
		a.MovRM(8, as.RDX, as.M(hCPU, offFSBase))
		a.Lea(8, as.RSI, as.Mem{Base: as.RSI, Index: as.RDX})
	case SegGS:
		a.MovRM(8, as.RDX, as.M(hCPU, offGSBase))
		a.Lea(8, as.RSI, as.Mem{Base: as.RSI, Index: as.RDX})
	}
}

// eaAccess is ea for an access that tlb checks next, and nothing else
// of the instruction reads RSI: in `ttd run`'s translations an address
// that is a guest register kept in a host register, with no
// displacement, stays there (jitT.ar) rather than being copied into RSI
// (one lea less on the way to the load; bzip2's and gzip's loops
// address through bare registers). The other modes' checks read RSI.
func (t *jitT) eaAccess(o *Operand) {
	if !t.pred && o.Base != NoReg && o.Index == NoReg && o.Imm == 0 && o.Seg == SegNone && !o.A32 {
		if h, ok := t.hostReg(o.Base); ok {
			t.ar = h
			return
		}
	}
	t.ea(o)
}

// tlb translates the guest address in RSI to the host address in RDI
// through the read or write TLB, leaving for the interpreter on a miss or
// a page-crossing access. Clobbers RAX, RDX and the flags.
func (t *jitT) tlb(write bool, size int) {
	a := &t.a
	x := t.exit()
	var d int32 // Memory's wtlb follows its rtlb (wtlbOffset)
	if write {
		d = wtlbOffset
	}
	// The entry is the one of RSI's page, and its tag is compared with
	// the page of the access's last byte: an access that runs into the
	// next page misses (no entry of RSI's index holds that page), so no
	// separate check of the offset is needed. The index, scaled by the
	// entry's 32 bytes, comes from RSI in one rotate (BMI2's rorx, no
	// flags) or shift, and a mask; the host address is RSI plus the
	// entry's host field (tlbHit). 8 host instructions with rorx.
	// The address is in t.ar: RSI, or the host register eaAccess left
	// it in.
	ar := t.ar
	t.closeFault()
	if t.fault && !write && t.window() {
		// No TLB entry: the host faults where the guest may not read
		// (winfault_linux.go). An address at or past the window's end
		// leaves; one that runs past it from below faults in the guard
		// page after it.
		a.MovRR(8, as.RAX, ar)
		a.ShiftRI(as.SHR, 8, as.RAX, winBits)
		a.Jcc(5, x) // jnz
		t.faults = append(t.faults, jitFaultRange{start: int32(a.Len()), exit: x})
		t.faultOpen = true
		if !t.indexed {
			a.Lea(8, as.RDI, as.Mem{Base: hRTLB, Index: ar, Disp: winOffset})
		}
		return
	}
	if size > 1 {
		a.Lea(8, as.RAX, as.M(ar, int32(size-1)))
	} else {
		a.MovRR(8, as.RAX, ar)
	}
	a.ShiftRI(as.SHR, 8, as.RAX, PageShift)
	if jitRorx {
		a.Rorx(4, as.RDX, ar, PageShift-tlbEntryShift)
	} else {
		a.MovRR(4, as.RDX, ar)
		a.ShiftRI(as.SHR, 4, as.RDX, PageShift-tlbEntryShift)
	}
	a.ALURI(as.AND, 4, as.RDX, tlbMask<<tlbEntryShift)
	a.ALURM(as.CMP, 8, as.RAX, as.Mem{Base: hRTLB, Index: as.RDX, Disp: d})
	a.Jcc(5, x) // jne: a miss, or the access crosses into the next page
	if t.window() {
		// The host window (window_linux.go): an entry's page is shown
		// at the window's base plus the address, and the TLBs lie
		// right below the window, so the host address does not wait
		// for the entry's load.
		if !t.indexed {
			a.Lea(8, as.RDI, as.Mem{Base: hRTLB, Index: ar, Disp: winOffset})
		}
		return
	}
	a.MovRM(8, as.RDI, as.Mem{Base: hRTLB, Index: as.RDX, Disp: d + offTLBHost})
	if t.indexed {
		t.logAccess(write, size) // jitModeRunTrack's
		return
	}
	a.ALURR(as.ADD, 8, as.RDI, ar)
	t.logAccess(write, size)
}

// jitFaultRange is a range of a translation's code after a read check
// in which a host fault leaves by exit (winfault_linux.go).
type jitFaultRange struct {
	start, end int32
	exit       as.Label
}

// closeFault ends the open fault range, if any, here: at the next
// check, and at the end of the instruction (a fault past it would not
// be the check's read).
func (t *jitT) closeFault() {
	if t.faultOpen {
		t.faults[len(t.faults)-1].end = int32(t.a.Len())
		t.faultOpen = false
	}
}

// faultTable appends the translation's fault table to its code, which
// alloc files for the host's fault handler (fileFaults): start, end and
// exit of each range (12 bytes), then their number (4 bytes).
func (t *jitT) faultTable() {
	a := &t.a
	for _, f := range t.faults {
		a.Buf = binary.LittleEndian.AppendUint32(a.Buf, uint32(f.start))
		a.Buf = binary.LittleEndian.AppendUint32(a.Buf, uint32(f.end))
		a.Buf = binary.LittleEndian.AppendUint32(a.Buf, uint32(a.LabelPos(f.exit)))
	}
	a.Buf = binary.LittleEndian.AppendUint32(a.Buf, uint32(len(t.faults)))
}

// tlbIndexed is tlb for an access of `ttd run`'s translations that the
// caller emits itself: RDI is left holding the entry's host field and
// the access takes the host operand returned, [RDI + address], so that
// the address is added by the access (one add less on the way to each
// load, and one cycle of its latency).
func (t *jitT) tlbIndexed(write bool, size int) as.Mem {
	if t.pred {
		panic("jit: tlbIndexed in a translation with the prediction cache")
	}
	t.indexed = true
	t.tlb(write, size)
	t.indexed = false
	if t.window() {
		return as.Mem{Base: hRTLB, Index: t.ar, Disp: winOffset}
	}
	return as.Mem{Base: as.RDI, Index: t.ar}
}

// window reports whether the translation takes hosts addresses from the
// host window (window_linux.go): `ttd run`'s only.
func (t *jitT) window() bool { return winOn && !t.pred && !t.acclog }

// tlbEntryShift is log2 of the size of a tlbEntry, which translated code
// indexes.
const tlbEntryShift = 5

// offTLBHost is the offset of tlbEntry.host.
const offTLBHost = int32(unsafe.Offsetof(tlbEntry{}.host))

// offTLBPage is the offset of tlbEntry.page.
const offTLBPage = int32(unsafe.Offsetof(tlbEntry{}.page))

func init() {
	if unsafe.Sizeof(tlbEntry{}) != 1<<tlbEntryShift {
		panic("x86: tlbEntry is not 1<<tlbEntryShift bytes")
	}
}

// slot computes the prediction-cache byte of the address in RSI into RBX.
func (t *jitT) slot(size int, check bool) {
	t.cacheByte(as.RBX)
	if check && size > 1 {
		t.slotWrap(as.RBX, size, t.exit())
	}
	t.a.ALURR(as.ADD, 8, as.RBX, hSlots)
}

// load reads size bytes at RSI into R9 (zero-extended) with the read
// checks: TLB, and with the prediction cache, that it is predicted and not
// the replay's Stop read. The read is counted by commitRead.
func (t *jitT) load(size int) {
	a := &t.a
	t.readPending = true
	t.tlb(false, size)
	t.loadFrom(as.R9, as.M(as.RDI, 0), size)
	if !t.pred {
		return
	}
	x := t.exit()
	t.cacheByte(as.RDX)
	done := a.NewLabel()
	if size > 1 {
		// A read that crosses a word is two reads of the cache's
		// words (predict.Split): the cross code (out of line) checks
		// it and counts the second.
		t.cross(jitCross{size: size, extra: 1, vals: [4]as.Reg{as.R9}}, x, done)
	}
	m := jitMiss{miss: a.NewLabel(), back: done, exit: x, size: size, val: as.R9, pos: t.sreads}
	if !t.log { // a recording has no Stop read
		m.fed, m.hasFed = a.NewLabel(), true
		t.stopCheck(t.sreads, m.fed)
	}
	a.ALURM(as.CMP, size, as.R9, as.Mem{Base: hSlots, Index: as.RDX})
	if t.log && t.syncPending {
		// A synchronising instruction's key frame comes before its
		// read in the trace: the interpreter logs both.
		a.Jcc(5, x)
		a.Bind(done)
		return
	}
	a.Jcc(5, m.miss)
	a.Bind(done)
	t.misses = append(t.misses, m)
}

// cross emits the branch of a read at RSI (its cache byte in RDX) to the
// cross code c when the read crosses an 8-byte word; the cross code
// comes back to done.
func (t *jitT) cross(c jitCross, exit, done as.Label) {
	a := &t.a
	c.cross, c.back, c.exit = a.NewLabel(), done, exit
	c.reads, c.mark = t.sreads, int32(t.k+1)
	c.logMisses = t.logsCrossMisses()
	switch c.size {
	case 8, 16, 32:
		a.TestRI(4, as.RSI, 7)
		a.Jcc(5, c.cross) // jnz
	default:
		a.MovRR(4, as.RAX, as.RSI)
		a.ALURI(as.AND, 4, as.RAX, 7)
		a.ALURI(as.CMP, 4, as.RAX, int64(8-c.size))
		a.Jcc(7, c.cross) // ja
	}
	t.crosses = append(t.crosses, c)
	t.exits[t.exitIdx].extra = int32(c.extra)
}

// stopCheck jumps to l when the read that is the block's pos-th is the
// replay's Stop read (jitStop is one less).
func (t *jitT) stopCheck(pos int32, l as.Label) {
	a := &t.a
	if pos == 0 {
		a.ALURM(as.CMP, 8, hReads, as.M(hCPU, offStop))
	} else {
		a.Lea(8, as.RAX, as.M(hReads, pos))
		a.ALURM(as.CMP, 8, as.RAX, as.M(hCPU, offStop))
	}
	a.Jcc(4, l) // je
}

// fedCode emits the Stop read of a replay: the value comes from CPU.jitFeed
// (ReadFeeder) if it holds it, and goes into the cache and memory as
// Replay.MemRead puts a logged read; then the next fed read is the Stop.
// Without it, or for a read that crosses a word, the code leaves.
func (t *jitT) fedCode(m jitMiss) {
	a := &t.a
	a.Bind(m.fed)
	a.MovRM(8, as.RAX, as.M(hCPU, offJitFeedI))
	a.ALURM(as.CMP, 8, as.RAX, as.M(hCPU, offJitFeedN))
	a.Jcc(3, m.exit) // jae: not fed
	a.ShiftRI(as.SHL, 8, as.RAX, 4)
	// A byte read's logged value is the whole word around it: memory and
	// the cache take it, and the read its byte.
	n, mem := m.size, as.M(as.RDI, 0)
	if m.size == 1 {
		n, mem = 8, as.Mem{Base: as.RDI, Index: as.RDX}
		t.alignDown(as.RDX)
	}
	t.loadFrom(m.val, as.Mem{Base: hCPU, Index: as.RAX, Disp: offJitFeed + 8}, n)
	skip := a.NewLabel()
	a.ALURM(as.CMP, n, m.val, mem)
	a.Jcc(4, skip)
	t.pageNotCode(m.exit)
	a.MovMR(n, mem, m.val)
	a.Bind(skip)
	if m.size == 1 {
		t.cacheWord(as.RDX)
	}
	a.MovMR(n, as.Mem{Base: hSlots, Index: as.RDX}, m.val)
	if m.size == 1 {
		t.cacheByte(as.RDX)
		t.loadFrom(m.val, as.M(as.RDI, 0), 1)
	}
	// The next Stop: the next fed read, or the first one after them.
	t.nextFed(as.RAX, as.M(hCPU, offJitFeedI), as.M(hCPU, offStop))
	a.Jmp(m.back)
}

// nextFed emits the step past a fed read: the feed's index (at idx) goes
// up by one, and the next Stop (at stop) is the number of the fed read
// at the new index or, past the fed reads, of the first logged read
// after them (offJitFeedAfter), less one. Clobbers r.
func (t *jitT) nextFed(r as.Reg, idx, stop as.Mem) {
	a := &t.a
	fed, set := a.NewLabel(), a.NewLabel()
	a.MovRM(8, r, idx)
	a.ALURI(as.ADD, 8, r, 1)
	a.MovMR(8, idx, r)
	a.ALURM(as.CMP, 8, r, as.M(hCPU, offJitFeedN))
	a.Jcc(2, fed) // jb
	a.MovRM(8, r, as.M(hCPU, offJitFeedAfter))
	a.Jmp(set)
	a.Bind(fed)
	a.ShiftRI(as.SHL, 8, r, 4)
	a.MovRM(8, r, as.Mem{Base: hCPU, Index: r, Disp: offJitFeed})
	a.Bind(set)
	a.ALURI(as.SUB, 8, r, 1)
	a.MovMR(8, stop, r)
}

// pageNotCode jumps to exit when the page of the guest address in RSI
// holds decoded code, which a write through Memory.Poke would
// invalidate: the interpreter does that. The page is the one of RSI's
// read TLB entry, which the read being fed or predicted has just hit
// (Page.Data is out of line, so the page is not found from RDI).
func (t *jitT) pageNotCode(exit as.Label) {
	a := &t.a
	a.MovRR(4, as.RAX, as.RSI)
	a.ShiftRI(as.SHR, 4, as.RAX, PageShift-tlbEntryShift)
	a.ALURI(as.AND, 4, as.RAX, tlbMask<<tlbEntryShift)
	a.MovRM(8, as.RAX, as.Mem{Base: hRTLB, Index: as.RAX, Disp: offTLBPage})
	a.ALUMI(as.CMP, 1, as.M(as.RAX, offPageCode), 0)
	a.Jcc(5, exit)
}

// jitCross is the out-of-line code of a read that crosses an 8-byte word,
// which makes extra more reads of the cache than one per word (1 for
// load, 2 for load128). Its bytes are consecutive in the cache unless they
// would run past its last word (then the interpreter reads), and the
// interpreter also takes a read across words that is not predicted or
// that is or holds the replay's Stop read. The code counts the extra
// reads in hReads and marks instruction k (hMark = mark = k+1), whose exit
// takes them back (jitExit.extra); reads is jitT.sreads at the read, and
// vals the registers with its words.
type jitCross struct {
	cross, back, exit as.Label
	size, extra       int
	reads, mark       int32
	vals              [4]as.Reg
	// logMisses: a recording's misses are logged here, not left to the
	// interpreter (jit_reccross_amd64.go).
	logMisses bool
}

func (t *jitT) crossCode(c jitCross) {
	a := &t.a
	a.Bind(c.cross)
	t.slotWrap(as.RDX, c.size, c.exit)
	words := c.size / 8
	if words == 0 {
		words = 1
	}
	stop := c.exit
	if t.feedsCrossReads(c) {
		stop = a.NewLabel()
	}
	for i := 0; i < words+c.extra && !t.log; i++ {
		t.stopCheck(c.reads+int32(i), stop)
	}
	miss := c.exit
	if c.logMisses {
		miss = a.NewLabel()
	}
	for i := 0; i < words; i++ {
		a.ALURM(as.CMP, min(c.size, 8), c.vals[i], as.Mem{Base: hSlots, Index: as.RDX, Disp: int32(8 * i)})
		a.Jcc(5, miss)
	}
	a.Lea(8, hReads, as.M(hReads, int32(c.extra)))
	a.MovRI(hMark, uint64(c.mark))
	a.Jmp(c.back)
	if c.logMisses {
		t.recCrossCode(c, miss)
	}
	if stop != c.exit {
		t.repCrossCode(c, stop)
	}
}

// slotWrap jumps to exit when the size bytes whose first byte in the
// prediction cache is at offset r would run past its last word.
func (t *jitT) slotWrap(r as.Reg, size int, exit as.Label) {
	a := &t.a
	a.Lea(8, as.RAX, as.M(r, int32(size-1)))
	a.ALURM(as.CMP, 8, as.RAX, as.M(hCPU, offJitMask))
	a.Jcc(7, exit) // ja
}

// jitMiss is the out-of-line code of a read the prediction cache did not
// predict. While recording, it logs the read in CPU.jitLog, enters it
// into the cache and goes back; with the log full, it leaves before the
// instruction (exit) and the interpreter logs it. While replaying (a read
// that is not the Stop read), the recording read what the cache
// predicts, and memory, which lacks what the trace does not carry (the
// bytes of mapped files), is made to hold it, as Replay.MemRead does.
type jitMiss struct {
	miss, back, exit as.Label
	size             int
	val              as.Reg // the value read
	word             int32  // 0, or 1 for the second word of a 16-byte read
	// pos: the read is the block's pos-th (jitT.sreads); hReads plus
	// pos is its number.
	pos int32
	// fed: the replay's Stop read (fedCode), if hasFed.
	fed    as.Label
	hasFed bool
	off    int32 // of the word's bytes in the cache from RDX
}

// missCode emits m: the address's byte in the cache is at RDX.
func (t *jitT) missCode(m jitMiss) {
	a := &t.a
	a.Bind(m.miss)
	if !t.log {
		// The predicted value; memory takes it, unless the page holds
		// decoded code (Memory.Poke would drop that: the interpreter
		// does it).
		t.loadFrom(m.val, as.Mem{Base: hSlots, Index: as.RDX, Disp: m.off}, m.size)
		t.pageNotCode(m.exit)
		a.MovMR(m.size, as.M(as.RDI, m.off), m.val)
		a.Jmp(m.back)
		return
	}
	t.logEntry(m.exit)
	a.MovMR(8, as.M(as.RAX, 0), hReads)
	if m.pos+m.word != 0 {
		a.ALUMI(as.ADD, 8, as.M(as.RAX, 0), int64(m.pos+m.word))
	}
	if m.size != 1 {
		a.MovMR(8, as.M(as.RAX, 8), m.val)
		a.MovMI(8, as.M(as.RAX, 16), int64(m.size))
		a.MovMR(m.size, as.Mem{Base: hSlots, Index: as.RDX, Disp: m.off}, m.val)
		a.Jmp(m.back)
		return
	}
	// A byte read logs the whole aligned word around it, which enters
	// the cache (predict.Cache.ReadWord); memory holds it, the byte
	// included: nothing has written since the load.
	a.MovMI(8, as.M(as.RAX, 16), 8)
	t.alignDown(as.RDX)
	a.MovRM(8, as.RAX, as.Mem{Base: as.RDI, Index: as.RDX})
	t.cacheWord(as.RDX)
	a.MovMR(8, as.Mem{Base: hSlots, Index: as.RDX}, as.RAX)
	a.MovRM(8, as.RDX, as.M(hCPU, offJitLogN))                      // the entry again
	a.Lea(8, as.RDX, as.Mem{Base: as.RDX, Index: as.RDX, Scale: 1}) // 3*n
	a.MovMR(8, as.Mem{Base: hCPU, Index: as.RDX, Scale: 3, Disp: offJitLog - 24 + 8}, as.RAX)
	t.cacheByte(as.RDX)
	a.Jmp(m.back)
}

// alignDown sets r to minus the offset of RSI in its 8-byte word: RDI+r
// is the word's host address.
func (t *jitT) alignDown(r as.Reg) {
	t.a.MovRR(4, r, as.RSI)
	t.a.ALURI(as.AND, 4, r, 7)
	t.a.NegR(8, r)
}

// cacheWord sets r to the offset in the prediction cache of RSI's word.
func (t *jitT) cacheWord(r as.Reg) {
	t.cacheByte(r)
	t.a.ALURI(as.AND, 8, r, -8)
}

// cacheByte sets r to the offset in the prediction cache of RSI's byte
// (load leaves it in RDX).
func (t *jitT) cacheByte(r as.Reg) {
	t.a.MovRR(8, r, as.RSI)
	t.a.ALURM(as.AND, 8, r, as.M(hCPU, offJitMask))
}

// loadFrom loads size bytes at m into r, zero-extended.
func (t *jitT) loadFrom(r as.Reg, m as.Mem, size int) {
	switch size {
	case 1, 2:
		t.a.MovzxM(4, size, r, m)
	default:
		t.a.MovRM(size, r, m)
	}
}

// logEntry claims the next entry of CPU.jitLog and leaves its address in
// RAX, or jumps to exit when the log is full.
func (t *jitT) logEntry(exit as.Label) {
	a := &t.a
	a.MovRM(8, as.RAX, as.M(hCPU, offJitLogN))
	a.ALURI(as.CMP, 8, as.RAX, jitLogSize)
	a.Jcc(3, exit) // jae: full
	a.ALURI(as.ADD, 8, as.RAX, 1)
	a.MovMR(8, as.M(hCPU, offJitLogN), as.RAX)
	a.Lea(8, as.RAX, as.Mem{Base: as.RAX, Index: as.RAX, Scale: 1}) // 3*(n+1)
	a.Lea(8, as.RAX, as.Mem{Base: hCPU, Index: as.RAX, Scale: 3, Disp: offJitLog - 24})
}

// commitRead counts the predicted read of the instruction, if it made one,
// once no check of the instruction can leave: in jitT.sreads (no code).
func (t *jitT) commitRead() {
	if t.readPending && t.pred {
		t.readPending = false
		t.sreads++
	}
}

// storeCheck prepares a store of size bytes at RSI: RDI is the host
// address (write TLB: pages holding code are never in it) and RBX the
// prediction-cache byte.
func (t *jitT) storeCheck(size int, loaded bool) {
	t.tlb(true, size)
	if t.pred {
		t.slot(size, !loaded)
	}
}

// store writes size bytes of r to RDI and the prediction cache (no flags).
func (t *jitT) store(size int, r as.Reg) {
	t.a.MovMR(size, as.M(as.RDI, 0), r)
	if t.pred {
		t.a.MovMR(size, as.M(as.RBX, 0), r)
	}
}
