package x86

import (
	"fmt"
	"ttd/predict"
	"unsafe"

	"ttd/x86/f80"
)

// General-purpose register numbers, in the hardware's encoding order.
const (
	RAX = iota
	RCX
	RDX
	RBX
	RSP
	RBP
	RSI
	RDI
	R8
	R9
	R10
	R11
	R12
	R13
	R14
	R15
)

// RegNames are the 64-bit names of the general registers, by number.
var RegNames = [16]string{"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"}

// RFLAGS bits.
const (
	FlagCF = 1 << 0
	FlagPF = 1 << 2
	FlagAF = 1 << 4
	FlagZF = 1 << 6
	FlagSF = 1 << 7
	FlagTF = 1 << 8
	FlagIF = 1 << 9
	FlagDF = 1 << 10
	FlagOF = 1 << 11
	FlagAC = 1 << 18
	FlagID = 1 << 21

	// ArithFlags are the flags set by arithmetic instructions.
	ArithFlags = FlagCF | FlagPF | FlagAF | FlagZF | FlagSF | FlagOF
)

// XMM is one 128-bit SSE register as two little-endian 64-bit lanes.
type XMM [2]uint64

// X87 is the x87 FPU state. Registers are stored by physical index;
// ST(i) is Regs[(Top+i)&7].
type X87 struct {
	Regs [8]f80.F80
	Top  uint8
	Tag  uint8 // abridged tag: bit i set when physical register i is valid
	CW   uint16
	SW   uint16 // status word without the TOP field (bits 11-13)
	FOP  uint16
	FIP  uint64
	FDP  uint64
}

// CPU is the architectural state of one guest thread plus the execution
// bookkeeping of the interpreter. Threads of one process share a Memory.
type CPU struct {
	R [16]uint64
	// rzero must follow R: ea reads it as register NoReg.
	rzero uint64
	RIP   uint64

	// Lazy flags: the arithmetic flags are a function of the last
	// flag-setting operation (see flags.go). flags holds the other bits
	// of RFLAGS, and the arithmetic ones when cc.op is ccEager.
	flags uint64
	cc    lazyFlags

	FSBase, GSBase uint64

	X     [16]XMM
	MXCSR uint32
	FPU   X87
	// YH are the upper halves (bits 128-255) of the YMM registers
	// (AVX): YMMi is X[i] and YH[i].
	YH [16]XMM
	// mxDefer makes mxFinish collect flags in mxPending (the two lanes
	// of a 256-bit instruction raise #XM as one).
	mxDefer   bool
	mxPending uint32

	Mem *Memory
	// rtlb and wtlb are the TLBs of the handlers' fast paths (syncTLB).
	rtlb, wtlb *[tlbSize]tlbEntry

	// Obs receives execution events; nil costs nothing in the hot loop.
	Obs Observer
	// Pred, when an observer sets it, is the thread's prediction cache
	// (seeds/idna-nirvana.txt §3): the CPU compares a read with it and
	// calls Obs.MemRead only for a read it does not predict (or its Stop
	// read), and enters a write into it instead of calling Obs.MemWrite.
	// An observer that sets Pred must do exactly what Pred does for the
	// reads and writes it then no longer sees: the recorder, and the
	// reader, which keeps memory holding what the program read so that a
	// read Hit predicts has the value the recording saw. Translated code
	// records only for an observer that is a ReadLogger (the recorder);
	// for any other it replays: a read other than the Stop read takes the
	// cache's prediction, and memory takes it too (as Replay.MemRead
	// does), without MemRead.
	Pred *predict.Cache

	// Icount is the number of instructions this CPU has retired.
	Icount uint64

	// Execution loop state.
	exit   Exit
	blk    *Block
	blkIdx int // index of the executing instruction in blk
	blkLen int // instructions of blk to run; shortened on self-modifying code
	// blkStart is the index in blk of the first instruction this pass
	// runs: 0, or where a block a budget stop interrupted resumes.
	blkStart int
	// resumeBlk and resumeAt: the block the last Run's budget ran out
	// inside, and the index of its next instruction (Run resumes it).
	resumeBlk *Block
	resumeAt  int
	cache     *CodeCache
	// Env answers cpuid and rdtsc; nil gives zeros.
	Env     Env
	scratch [64]byte
	// pin is a memory operand an SSE fast path read, for the exact
	// handler it falls back to (fallback in ssefast.go).
	pin    XMM
	pinned bool

	// The translated code's view (jit.go, set by syncJIT): whether Run
	// may use translations, and the prediction cache's words and the mask
	// of an address's byte in them.
	jitOK bool
	// hooking: a filtered Run, whose Instruction calls Go makes where
	// translated code leaves for them; gate is its HookGate (filter.go).
	hooking     bool
	gate        HookGate
	jitPred     *predict.Cache
	jitSlots    unsafe.Pointer
	jitSlotMask uint64
	// Chaining state, shared by Go and the translated code (runJIT):
	// jitLeft is the budget less maxBlockInsts at the entry from Go
	// (jitStart) less the instructions of the blocks that chained on
	// since, which each chaining exit takes away before it goes on (and
	// does not go on once it is negative: the next block might not fit);
	// jitLast is the id of the block that returned to Go, jitDone how
	// many of its instructions ran when it left at a chaining exit, and
	// jitMiss which exit that was if it was not linked (1-based; 0 none).
	jitStart, jitLeft         int64
	jitLast, jitDone, jitMiss uint64
	// jitStop is Pred.Stop-1, as the translated code compares it
	// (runBlock).
	jitStop uint64
	jitMode uint8
	// ranMem is the address space this CPU ran in since Icount was
	// ranFrom (faultMode).
	ranMem  *Memory
	ranFrom uint64
	// ranCheck is the instruction count (from ranFrom) at which
	// faultMode next asks whether the process's code has settled, and
	// ranXlats the code cache's translations at the check before it
	// (winSettle).
	ranCheck, ranXlats uint64
	// jitLog holds the reads translated code logged (ReadLogger).
	jitLogN uint64
	jitLog  [jitLogSize]LoggedRead
	// jitFeed holds the logged reads to come while replaying
	// (ReadFeeder): jitFeedN of them, jitFeedI made so far, and the
	// number of the first one after them.
	jitFeeder                        ReadFeeder
	jitFeedN, jitFeedI, jitFeedAfter uint64
	jitFeed                          [jitFeedSize]FedRead
	// acc is the log of translated code's accesses (acclog.go).
	acc accLog
	// hlog is the CPU's side of logged hooks (hooklog.go).
	hlog hookLog
}

// NewCPU returns a CPU in the state Linux gives a new process (before the
// ELF loader sets rip and rsp), executing in mem with the code cache cc.
// Threads of one process share mem and cc.
func NewCPU(mem *Memory, cc *CodeCache) *CPU {
	c := &CPU{Mem: mem, cache: cc}
	if mem != nil {
		c.syncTLB() // (no observer yet: Mem's own; Run syncs again)
	} else {
		c.rtlb, c.wtlb = missTLB(), missTLB()
	}
	c.flags = 0x202
	c.MXCSR = 0x1f80
	c.FPU.CW = 0x37f
	return c
}

// Clone returns a copy of the CPU's architectural state sharing its memory
// and code cache (for a new thread).
func (c *CPU) Clone() *CPU {
	n := *c
	n.Obs = c.Obs
	n.Pred = nil // each thread has its own; the observer sets it
	n.exit = Exit{}
	n.blk = nil
	n.resumeBlk = nil
	return &n
}

// Rflags returns RFLAGS with the lazily computed arithmetic flags.
func (c *CPU) Rflags() uint64 {
	return c.flags&^ArithFlags | c.arithFlags() | 2
}

// SetRflags replaces RFLAGS (only the bits user mode may change).
func (c *CPU) SetRflags(v uint64) {
	const user = ArithFlags | FlagTF | FlagDF | FlagAC | FlagID | FlagIF
	c.flags = c.flags&^user | v&user | 2
	c.cc.op = ccEager
}

func (c *CPU) String() string {
	s := ""
	for i, n := range RegNames {
		s += fmt.Sprintf("%s=%#x ", n, c.R[i])
	}
	return s + fmt.Sprintf("rip=%#x rflags=%#x", c.RIP, c.Rflags())
}
