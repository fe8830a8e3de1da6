package x86

// Logged hooks: an Instruction call that translated code records instead
// of leaving for it. A filter that observes a function's entry, a call or
// a ret (InstFilter) makes translated code leave before each of them
// (jitHookExit): Go makes the Instruction call and enters the
// translation again, two host calls and the loads and stores of the
// guest state around them, per hooked instruction. A consumer that needs
// only what translated code can store cheaply — the position (Retired),
// the instruction, the stack pointer, RAX, RBP, the argument registers,
// the target of a call through a register — can have a record instead:
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
// full; the consumer must treat both the same. A guarded one (LogInsts'
// second mask) is logged only while its RSP is below the CPU's hook
// guard (SetHookGuard) and leaves for an exact call otherwise: a
// consumer whose HookGate may open after a ret that leaves the frames it
// knows sets the guard to the lowest of their stack slots.
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
	// those whose Instruction call may be a record (logged), and among
	// those the ones logged only below the hook guard (guarded).
	LogInsts(b *Block) (logged, guarded uint64)
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
	// Target is the register's value for a call through a register
	// (0 otherwise: a direct call's target is Inst.Args[0].Imm).
	Target uint64
}

// ArgRegs are the registers of HookRecord.Args, in order.
var ArgRegs = [6]int{RDI, RSI, RDX, RCX, R8, R9}

// accHook tags the first entry of a hook record in the access log
// (LoggedAccess.Info: an access has its size there, never 0); the
// entry's Info holds the block's id and the instruction's index too.
const accHook = 1 << 9

// hookRecEntries is the number of log entries a hook record takes:
// Retired less the CPU's Icount at the Run's jitCall, the tag, RSP, RAX,
// RBP, the six argument registers and the target (12 words).
const hookRecEntries = 6

// hookLog is a CPU's side of logged hooks.
type hookLog struct {
	// logger is the Run's HookLogger (nil: none; records are dropped).
	logger HookLogger
	// guard is the stack pointer at and above which guarded
	// instructions leave for an exact call (SetHookGuard).
	guard uint64
	recs  [accLogSize / hookRecEntries]HookRecord
}

// SetHookGuard sets the stack pointer at and above which the guarded
// instructions of a HookLogger leave for an exact Instruction call
// instead of being logged (0, a new CPU's: always; ^0: never). Call it
// from Instruction and LoggedHooks: translated code reads it as it runs.
func (c *CPU) SetHookGuard(sp uint64) { c.hlog.guard = sp }

// askLog asks a HookLogger which of the instructions the verdict on b
// observes it lets translated code log (jitBlock.flog) and guard
// (fguard).
func (cc *CodeCache) askLog(bf BlockFilter, b *Block) {
	j := &b.jit
	j.flog, j.fguard = 0, 0
	if hl, ok := bf.(HookLogger); ok && j.fmask != 0 {
		l, g := hl.LogInsts(b)
		j.flog = l & j.fmask
		j.fguard = g & j.flog
	}
}

// hooksCover reports whether b's translation does what the current
// verdict asks before each instruction it observes: leaves (or does not
// reach it: the interpreter runs it), or logs it where the verdict lets
// it, guarded where the verdict guards it.
func (j *jitBlock) hooksCover() bool {
	return j.fmask&(j.hooks|j.beyond) == j.fmask && j.logged&^j.flog == 0 && j.fguard&j.logged&^j.guarded == 0
}

// syncHookLog sets the Run's HookLogger.
func (c *CPU) syncHookLog(bf BlockFilter) {
	c.hlog.logger = nil
	if bf != nil {
		c.hlog.logger, _ = bf.(HookLogger)
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
	c.acc.n = 0
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
		n := 0
		for i < len(log) && log[i].Info&accHook != 0 {
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

// hookRecord decodes a record of the log into r, or reports false when
// the current filter does not observe its instruction.
func (c *CPU) hookRecord(r *HookRecord, e []LoggedAccess) bool {
	info := e[0].Info
	id, k := uint32(info>>32), int(info>>16&0xff)
	b := c.cache.jitBlocks[id]
	j := &b.jit
	if c.hlog.logger == nil || !c.hooking || j.fgen != c.cache.filter.gen || j.fmask>>k&1 == 0 {
		return false
	}
	*r = HookRecord{
		Retired: c.Icount + e[0].Addr,
		Inst:    &b.Insts[k],
		RSP:     e[1].Addr, RAX: e[1].Info,
		RBP: e[2].Addr, Target: e[2].Info,
		Args: [6]uint64{e[3].Addr, e[3].Info, e[4].Addr, e[4].Info, e[5].Addr, e[5].Info},
	}
	return true
}
