package x86

import "golang.org/x/arch/x86/x86asm"

// Logged hooks: an Instruction call that translated code records instead
// of leaving for it. A filter that observes a function's entry, a call or
// a ret (InstFilter) makes translated code leave before each of them
// (jitHookExit): Go makes the Instruction call and enters the
// translation again, two host calls and the loads and stores of the
// guest state around them, per hooked instruction. A consumer that needs
// only what translated code can store cheaply — the position (Retired),
// the instruction, the stack pointer, RAX, RBP, the argument registers,
// the target of a call or jump through a register — can have a record
// instead:
// the translation appends it to the CPU's log and goes on, chaining to
// the blocks that follow, and Go hands the records to the consumer,
// in order, whenever the translation returns, before anything else
// happens in Go (an event, an exact Instruction call, the next Run).
//
// The records share the access log (acclog.go): one buffer, one count,
// one drain point in runJIT, so that a replay that tracks accesses
// receives its accesses and its hook records in the order they were
// made. A record takes hookRecEntries entries of the log, the first of
// which is tagged (accHook) where an access has its size.
//
// A logged instruction still gets an exact Instruction call wherever Go
// runs it (the interpreter, a gate that is open) and when the log is
// full; the consumer must treat both the same.
//
// A consumer that needs of a record only the position, the
// instruction's PC and kind, RSP and the target (HookStepLogger: ttd
// calls) has narrow records of hookStepEntries entries (32 bytes instead
// of 96) made, and receives them as HookSteps: fewer stores in
// translated code, a smaller log to drain, more records between two
// drains, and no decoded block or instruction to read for each.
//
// Such a consumer may also need some records only for a while after
// others (ttd calls: a function's entry only soon after a call whose
// callee it does not know yet, or a ret): StepWindows marks them soft,
// and the instructions that open a window of them (open) or close it
// (shut). Translated code keeps the window's end (hookLog.until, in
// Retired) and skips a soft record past it; the consumer sets the end
// itself where Go runs an open or shut instruction (SetHookUntil).
//
// What keeps it exact: a record's consumer must not change what its
// HookGate answers (translated code runs on without asking it), nor
// need memory as it was at the instruction (the memory it sees is the
// state when the translation returned); everything else it needs is in
// the record.

// HookLogger, when an Observer that is an InstFilter implements it, lets
// translated code log the Instruction calls of the instructions
// LogInsts picks instead of leaving for them.
type HookLogger interface {
	// LogInsts picks, among the instructions WantInsts observes in b,
	// those whose Instruction call may be a record.
	LogInsts(b *Block) uint64
	// LoggedHooks receives the records of the instructions translated
	// code logged, in order, as soon as it returns to Go. The CPU's
	// registers are those of a later instruction: a record holds the
	// values at its own.
	LoggedHooks(c *CPU, recs []HookRecord)
}

// HookRecord is a logged Instruction call: the state before Inst ran.
type HookRecord struct {
	// Retired is what c.Retired() was (the position of Inst in the
	// thread's instructions).
	Retired uint64
	Inst    *Inst
	// RSP, RAX and RBP, and Args, the argument registers of the SysV
	// ABI: RDI, RSI, RDX, RCX, R8, R9.
	RSP, RAX, RBP uint64
	Args          [6]uint64
	// Target is the register's value for a call or a jump through a
	// register; for a call through memory, the address it called, or 0
	// when translated code did not run the call (the interpreter did,
	// right after the record was handed over); 0 for the others (a
	// direct one's target is Inst.Args[0].Imm).
	Target uint64
}

// HookStepLogger is a HookLogger that may need of each record only
// what a HookStep holds: while StepsOnly reports true, translated code
// makes narrow records and LoggedSteps receives them instead of
// LoggedHooks. StepsOnly is asked with LogInsts, once per block and
// filter generation, and must not change within one.
type HookStepLogger interface {
	HookLogger
	StepsOnly() bool
	// StepWindows picks among the logged instructions of b the soft
	// ones, whose records translated code makes only while
	// Retired < hookLog.until, those that set until to their own
	// Retired+1+window (open), and those that set it to 0 (shut); window
	// is the same for every block, at most 1<<30.
	StepWindows(b *Block) (soft, open, shut, window uint64)
	// LoggedSteps receives the narrow records, in order, as LoggedHooks
	// does the wide ones.
	LoggedSteps(c *CPU, steps []HookStep)
}

// HookStep is a narrow logged Instruction call (HookStepLogger): the
// fields of HookRecord that following calls and rets needs, and what
// the consumer would otherwise look up in the instruction: its PC and
// its Kind. A record names no Inst, so that following it touches the
// log only, never the decoded blocks (their cache misses were most of
// the cost of ttd calls' records).
type HookStep struct {
	Retired uint64
	RSP     uint64
	// Target is as in HookRecord, and for a direct call its target
	// (Inst.Args[0].Imm).
	Target uint64
	PC     uint64
	// Ret, RetPC and RetKind are, in a leaf call's record (Kind has
	// StepLeaf), the Retired, PC and StepKind of the ret's record,
	// which it stands for: its RSP is the call's RSP less 8.
	Ret, RetPC uint64
	// More is how many more times the same call, at the same RSP,
	// called a leaf that returned through the same ret, after this
	// one (LeafMerger); MoreCallee the instructions run between those
	// calls and their rets (the call's Retired+1 to the ret's
	// Retired+1, added up), Last the last such ret's Retired.
	More, MoreCallee, Last uint64
	Kind                   StepKind
	RetKind                StepKind
}

// EntryFolder is a HookStepLogger that takes a soft instruction's
// record as part of a call's: where the log ends with a call's narrow
// record and a soft instruction comes at most FoldWindow instructions
// after the call (its Retired less the call's), translated code puts
// the instruction's PC in the call's Target and marks its Kind
// StepEntry, instead of a record of its own; the call's record stays
// the last, so a ret may still fold into it (Leaf calls). ttd calls
// makes function entries soft: a call to a PLT stub, which jumps to the
// function, then names its callee in one record. Asked with
// StepWindows, and must not change within a filter generation either
// (0: no folding). A soft instruction after that, while the call's
// record still ends the log, makes no record at all: the consumer must
// ignore it, having named the callee by the first (ttd calls does).
type EntryFolder interface {
	FoldWindow() uint64
}

// LeafMerger is a HookStepLogger that may take a run of leaf calls as
// one record (HookStep.More): MergeLeaves picks, among the logged
// instructions of b, the direct calls and the rets whose leaf calls'
// records may be merged. Translated code merges a leaf call into the
// record of the same call instruction, at the same RSP, returning
// through the same ret, when that record is one of the last two of a
// run of such records at that RSP that nothing else interrupted (no
// other record, no return to Go): the calls in between are leaves of
// the same frame, so only the order of their calls changes. Asked with
// StepWindows, and must not change within a filter generation either.
type LeafMerger interface {
	MergeLeaves(b *Block) uint64
}

// StepKind is what a HookStep's instruction is (StepOp), and the
// StepWindows classes it is in (StepSoft, StepOpen, StepShut; those
// of a record made where the consumer's StepWindows named it: an exact
// Instruction call's consumer computes them itself).
type StepKind uint8

const (
	StepOther   StepKind = iota // none of the following
	StepCall                    // a direct call (KRel)
	StepCallReg                 // a call through a 64-bit register
	StepCallMem                 // a call through memory
	StepCallAny                 // another call (a 16- or 32-bit register)
	StepRet
	StepJmpReg // a jump through a 64-bit register
	// StepEntry marks a call's record whose Target is the PC of a soft
	// instruction folded into it (EntryFolder): the callee's entry.
	StepEntry StepKind = 1 << 3
	StepSoft  StepKind = 1 << 4
	StepOpen  StepKind = 1 << 5
	StepShut  StepKind = 1 << 6
	// StepLeaf marks a leaf call's record: the callee returned with
	// no record made in between, and the ret's record was folded into
	// the call's (HookStep.Ret, RetPC, RetKind; see "Leaf calls").
	StepLeaf StepKind = 1 << 7
	// StepOpMask selects StepOp's part of a StepKind.
	StepOpMask StepKind = StepEntry - 1
)

// Leaf calls. Most calls of a hot loop call a function that calls none
// (gzip's longest_match: all but 0.3% of the calls of a gzip -9 trace):
// their records come in pairs, the call's and, next in the log, the
// ret's with the call's RSP less 8. Translated code folds such a ret
// into the call's record (jit_hooklog_amd64.go): where the last entries
// of the log are a call's narrow record (hookLog.lastCall) and RSP is
// its slot, it appends one entry (the ret's Retired, and its PC and
// StepKind packed as in a tag) and marks the call's tag StepLeaf,
// instead of a record of two entries. A HookStepLogger receives one
// HookStep for the two, and must follow it as the call's and then the
// ret's (x86 tests unfold it; ttd calls follows a leaf call at once).
// Nothing runs in Go between the two records: the log is drained, and
// lastCall forgotten, whenever translated code returns.

// stepEntries is the number of log entries of the narrow record tagged
// info: one more for a leaf call's, three for one that may be merged
// into (accHookRun).
func stepEntries(info uint64) int {
	if info&accHookRun != 0 {
		return hookStepEntries + 3
	}
	return hookStepEntries + int(info>>7&1)
}

// accHookPicked marks the tag of a call's narrow record that
// LeafMerger picked; accHookRun a leaf call's record of such a call and
// a ret it picked too, which has two more entries: the last ret's
// Retired less Icount, the calls merged into it, and their callees'
// instructions.
const (
	accHookRun    = 1 << 11
	accHookPicked = 1 << 12
)

// StepOp is in's StepKind without the window classes.
func StepOp(in *Inst) StepKind {
	a := &in.Args[0]
	switch in.Op {
	case x86asm.CALL:
		switch {
		case a.Kind == KRel:
			return StepCall
		case a.Kind == KReg && a.Size == 8:
			return StepCallReg
		case a.Kind == KMem:
			return StepCallMem
		}
		return StepCallAny
	case x86asm.RET:
		return StepRet
	case x86asm.JMP:
		if a.Kind == KReg && a.Size == 8 {
			return StepJmpReg
		}
	}
	return StepOther
}

// stepKindOf is the StepKind of b.Insts[k] in a record made under the
// windows w (nil: none).
func stepKindOf(in *Inst, k int, w *stepWindows) StepKind {
	kind := StepOp(in)
	if w != nil {
		if w.soft>>k&1 != 0 {
			kind |= StepSoft
		}
		if w.open>>k&1 != 0 {
			kind |= StepOpen
		}
		if w.shut>>k&1 != 0 {
			kind |= StepShut
		}
	}
	return kind
}

// ArgRegs are the registers of HookRecord.Args, in order.
var ArgRegs = [6]int{RDI, RSI, RDX, RCX, R8, R9}

// accHook tags the first entry of a hook record in the access log
// (LoggedAccess.Info: an access has its size there, never 0); the
// entry's Info holds the block's id and the instruction's index too.
const accHook = 1 << 9

// accHookStep tags, with accHook, the first entry of a narrow record,
// whose Info holds the instruction's StepKind in its low byte and its PC
// in the bits from stepPCShift up (a canonical address: sign-extended
// from bit 47, which the arithmetic shift that takes it out restores).
const accHookStep = 1 << 10

const stepPCShift = 16

// stepEntryBit marks, in the Target word of a call's narrow record, a
// Target that is a soft instruction folded into the call's record
// (EntryFolder; StepEntry): a canonical user address never has it. It
// is there, not in the tag, so that the tag a run of leaf calls is
// found by (mergeCall) is the same with and without it; two records of
// one call merge only if their Target words are equal.
const stepEntryBit = 1 << 63

// hookRecEntries is the number of log entries a hook record takes:
// Retired less the CPU's Icount at the Run's jitCall, the tag, RSP, RAX,
// RBP, the six argument registers and the target (12 words).
const hookRecEntries = 6

// hookStepEntries is the number of log entries a narrow record takes:
// Retired less Icount, the tag (kind and PC), RSP and the target (4
// words).
const hookStepEntries = 2

// hookLog is a CPU's side of logged hooks.
type hookLog struct {
	// logger is the Run's HookLogger (nil: none; records are dropped).
	logger HookLogger
	// stepper is logger as a HookStepLogger when its StepsOnly held at
	// the Run's start (nil: none).
	stepper HookStepLogger
	// until is the end (in Retired) of the window in which translated
	// code makes the records of soft instructions (HookStepLogger).
	until uint64
	// lastCall is 1 + the access log's count right after the last
	// narrow record of a call (0: none since the log was drained);
	// while the count is still that, the record is the last thing
	// logged, and a ret may fold into it (Leaf calls).
	lastCall uint64
	// mergeAt is 1 + the byte offset in the log of the leaf call's
	// record the last call's may merge into (0: none); runEnd is 1 +
	// the log's count right after the last mergeable leaf call's
	// record (0: none), runRSP its RSP, and leafA and leafB the byte
	// offsets of the last two such records of the run (LeafMerger).
	mergeAt, runEnd, runRSP, leafA, leafB uint64
	// retFloor is the least RSP at which a ret opens the window of soft
	// records (SetRetFloor); such a ret sets it to 0, as every ret
	// opens the window after it until the consumer sets it again.
	retFloor uint64
	// target is where the end of a block that made a logged call
	// through memory writes the call's target: the record's Target
	// word, or scratch when no record was made (jit_hooklog_amd64.go).
	target  uintptr
	scratch uint64
	recs    [accLogSize / hookRecEntries]HookRecord
	steps   [accLogSize / hookStepEntries]HookStep
}

// SetHookUntil sets the Retired at which the window of soft records
// ends (HookStepLogger.StepWindows): a HookStepLogger calls it where Go
// runs an open or shut instruction (an exact Instruction call), as
// translated code does where it runs one.
func (c *CPU) SetHookUntil(retired uint64) { c.hlog.until = retired }

// SetRetFloor sets the least RSP at which a ret, an open instruction
// (HookStepLogger.StepWindows), opens the window of soft records: a ret
// at a lower RSP leaves the window as it is. The first ret at or above
// it opens the window and sets it to 0 (every ret opens it then), until
// the consumer sets it again. ttd calls sets it to the slot of the
// oldest frame it follows: only a ret that may return to a frame open
// at the checkpoint needs the entries after it. 0 (the default): every
// ret opens the window. Go's exact Instruction calls do not look at it.
func (c *CPU) SetRetFloor(rsp uint64) { c.hlog.retFloor = rsp }

// askLog asks a HookLogger which of the instructions the verdict on b
// observes it lets translated code log (blockVerdict.flog), and in which
// kind of record (fsteps).
func (cc *CodeCache) askLog(bf BlockFilter, b *Block) {
	j := cc.vx(b)
	j.flog, j.fsteps, j.fwin = 0, false, nil
	if hl, ok := bf.(HookLogger); ok && j.fmask != 0 {
		j.flog = hl.LogInsts(b) & j.fmask
		if sl, ok := hl.(HookStepLogger); ok && j.flog != 0 {
			j.fsteps = sl.StepsOnly()
			if j.fsteps {
				soft, open, shut, w := sl.StepWindows(b)
				var merge, fold uint64
				if m, ok := sl.(LeafMerger); ok {
					merge = m.MergeLeaves(b) & j.flog
				}
				if f, ok := sl.(EntryFolder); ok && soft&j.flog != 0 {
					fold = min(f.FoldWindow(), maxStepWindow)
				}
				if soft|open|shut|merge != 0 {
					w = min(w, maxStepWindow)
					j.fwin = &stepWindows{soft & j.flog, open & j.flog, shut & j.flog, w, merge, fold}
				}
			}
		}
	}
}

// maxStepWindow bounds StepWindows' window (translated code adds it as
// a 32-bit displacement).
const maxStepWindow = 1 << 30

// stepWindows is a verdict's soft, open and shut instructions of a
// block, and the window (HookStepLogger.StepWindows).
type stepWindows struct{ soft, open, shut, window, merge, fold uint64 }

// sameWindows reports whether a and b ask the same of a translation.
func sameWindows(a, b *stepWindows) bool {
	return a == b || a != nil && b != nil && *a == *b
}

// hooksCover reports whether b's translation does what the current
// verdict asks before each instruction it observes: leaves (or does not
// reach it: the interpreter runs it), or logs it where the verdict lets
// it, in the kind of record the verdict asks for.
func (b *Block) hooksCover() bool {
	j, v := b.jv(), b.vv()
	return v.fmask&(j.hooks|j.beyond) == v.fmask && j.logged&^v.flog == 0 &&
		(j.logged == 0 || j.steps == v.fsteps && sameWindows(j.win, v.fwin))
}

// syncHookLog sets the Run's HookLogger.
func (c *CPU) syncHookLog(bf BlockFilter) {
	c.hlog.logger, c.hlog.stepper = nil, nil
	if bf != nil {
		c.hlog.logger, _ = bf.(HookLogger)
		if sl, ok := bf.(HookStepLogger); ok && sl.StepsOnly() {
			c.hlog.stepper = sl
		}
	}
}

// drainLog hands the access log's entries over: the accesses to the
// AccessLogger, the hook records to the HookLogger (those of the
// instructions the current verdicts observe: a translation made for
// another filter may log more), in order.
func (c *CPU) drainLog() {
	if !c.cache.filter.hookLogs {
		c.drainAccesses()
		return
	}
	log := c.acc.log[:c.acc.n]
	c.acc.n, c.hlog.lastCall, c.hlog.runEnd = 0, 0, 0
	for i := 0; i < len(log); {
		if log[i].Info&accHook == 0 {
			k := i
			for k < len(log) && log[k].Info&accHook == 0 {
				k++
			}
			if c.acc.logger != nil {
				c.acc.logger.LoggedAccesses(c, log[i:k])
			}
			i = k
			continue
		}
		if c.hlog.stepper != nil {
			i = c.drainSteps(log, i)
			continue
		}
		n := 0
		for i < len(log) && log[i].Info&accHook != 0 {
			if log[i].Info&accHookStep != 0 {
				// A narrow record for another logger (none
				// observed now: a translation made for a
				// verdict of an earlier Run).
				i += stepEntries(log[i].Info)
				continue
			}
			if c.hookRecord(&c.hlog.recs[n], log[i:i+hookRecEntries]) {
				n++
			}
			i += hookRecEntries
		}
		if n > 0 {
			c.hlog.logger.LoggedHooks(c, c.hlog.recs[:n])
		}
	}
}

// drainSteps hands the run of records at log[i:] to the HookStepLogger,
// and returns the index after it. A narrow record is not checked against
// the current verdicts: it was made in the jitCall that just returned,
// by a translation entered or chained to under them (a new filter
// unlinks every translation, filter.go), which logs only what they
// observe (hooksCover), so it never touches its block. A wide record
// (of a translation made for an earlier verdict) gives its step too.
func (c *CPU) drainSteps(log []LoggedAccess, i int) int {
	steps := &c.hlog.steps
	n := 0
	for i < len(log) {
		info := log[i].Info
		if info&accHook == 0 {
			break
		}
		if info&accHookStep == 0 {
			if in := c.hookInst(info); in != nil {
				e := log[i : i+hookRecEntries]
				steps[n] = HookStep{Retired: c.Icount + e[0].Addr, RSP: e[1].Addr, Target: e[2].Info,
					PC: in.PC, Kind: StepOp(in)}
				n++
			}
			i += hookRecEntries
			continue
		}
		e := log[i : i+hookStepEntries]
		s := &steps[n]
		t := e[1].Info
		s.Retired, s.RSP, s.Target = c.Icount+e[0].Addr, e[1].Addr, t&^stepEntryBit
		s.PC, s.Kind = uint64(int64(info)>>stepPCShift), StepKind(info)|StepKind(t>>63)*StepEntry
		n++
		i += hookStepEntries
		if s.Kind&StepLeaf != 0 {
			// The ret's entry (Leaf calls).
			r := &log[i]
			s.Ret, s.RetPC, s.RetKind = c.Icount+r.Addr, uint64(int64(r.Info)>>stepPCShift), StepKind(r.Info)
			s.More = 0
			i++
			if info&accHookRun != 0 {
				// The calls merged into it (LeafMerger).
				s.Last, s.More, s.MoreCallee = c.Icount+log[i].Addr, log[i].Info, log[i+1].Addr
				i += 2
			}
		}
	}
	if n > 0 {
		c.hlog.stepper.LoggedSteps(c, steps[:n])
	}
	return i
}

// hookInst is the instruction of the record tagged info, or nil when the
// current filter does not observe it.
func (c *CPU) hookInst(info uint64) *Inst {
	id, k := uint32(info>>32), int(info>>16&0xff)
	b := c.cache.jitBlocks[id]
	j := b.vv()
	if c.hlog.logger == nil || !c.hooking || j.fgen != c.cache.filter.gen || j.fmask>>k&1 == 0 {
		return nil
	}
	return &b.Insts[k]
}

// hookRecord decodes a record of the log into r, or reports false when
// the current filter does not observe its instruction.
func (c *CPU) hookRecord(r *HookRecord, e []LoggedAccess) bool {
	in := c.hookInst(e[0].Info)
	if in == nil {
		return false
	}
	*r = HookRecord{
		Retired: c.Icount + e[0].Addr,
		Inst:    in,
		RSP:     e[1].Addr, RAX: e[1].Info,
		RBP: e[2].Addr, Target: e[2].Info,
		Args: [6]uint64{e[3].Addr, e[3].Info, e[4].Addr, e[4].Info, e[5].Addr, e[5].Info},
	}
	return true
}
