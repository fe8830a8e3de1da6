package recorder

import (
	"slices"

	"ttd/emu"
	"ttd/x86"
)

// Tap sees a recording as it is made, on the goroutine running the
// program: a live probe (ttd probe ... -- PROG) evaluates its script
// here while the recorder logs the run. Each emu.Observer call reaches
// the tap after the recorder handled it, so Clock's position is the
// event's position in the trace. Instruction calls come only for the
// blocks the tap's WantBlock accepts (x86.BlockFilter): the others run
// translated as in a plain recording. A tap that writes guest memory
// (a usdt semaphore) does it as a debugger would: the program's reads
// of what it wrote miss the prediction cache and are logged, so the
// trace replays what ran.
type Tap interface {
	emu.Observer
	x86.BlockFilter
	// Attach gives the tap the recording's clock, before the program
	// starts.
	Attach(c Clock)
	// Instruction is called before each instruction of the accepted
	// blocks.
	Instruction(c *x86.CPU, in *x86.Inst)
}

// AccessTap is a Tap that sees every memory access of the program (a
// live watch probe), as a replay with an Access callback does: the
// recorder then leaves the prediction cache to itself (no CPU.Pred),
// so every access of every thread reaches its MemRead and MemWrite,
// and the program runs in the interpreter.
type AccessTap interface {
	Tap
	// WantAccesses reports, before the program starts, whether the tap
	// wants Access and KernelWrite calls.
	WantAccesses() bool
	// Access is called after each data access of an instruction c runs
	// (val the value read or written, size bytes at addr, as the
	// re-simulation's MemRead and MemWrite see it).
	Access(c *x86.CPU, addr uint64, size int, val uint64, write bool)
	// KernelWrite is called for each range a syscall (pc: its
	// instruction) or a signal delivery (pc 0) of thread th wrote, in
	// the order the trace's record applies them (a replay reports them
	// so), before the tap's Syscall or Signal call.
	KernelWrite(th *emu.Thread, pc, addr uint64, b []byte)
}

// Clock tells a Tap where the recording is.
type Clock interface {
	// Position is the position of the current event: the number of
	// instructions all threads retired before it.
	Position() uint64
	// InstPosition is the position of the instruction c is about to
	// run (in a Tap's Instruction call).
	InstPosition(c *x86.CPU) uint64
	// Tid is the thread id the trace knows t by (a thread other than
	// the leader that execs takes the leader's from ProcessExec on, as
	// Linux gives it).
	Tid(t *emu.Thread) int
	// CPUTid is the trace's id of the thread running on c.
	CPUTid(c *x86.CPU) int
}

// The recorder sets x86.CPU.Pred only under these observers (accessTapped
// keeps every access on the observer path): translated code records only
// for a ReadLogger, and replays for any other observer that sets Pred.
var _, _ x86.ReadLogger = (*Recorder)(nil), (*tapped)(nil)

// tapped is the recorder with a Tap: the x86.Observer methods the tap
// does not need stay the recorder's (promoted), so translated code keeps
// the recorder's fast paths (x86.ReadLogger).
type tapped struct {
	*Recorder
	tap Tap
}

func (t *tapped) WantInstructions() bool      { return true }
func (t *tapped) WantBlock(b *x86.Block) bool { return t.tap.WantBlock(b) }

// WantInsts narrows the verdict to the instructions a tap that is an
// x86.InstFilter picks, so the rest of its blocks run translated.
func (t *tapped) WantInsts(b *x86.Block) uint64 {
	if f, ok := t.tap.(x86.InstFilter); ok {
		return f.WantInsts(b)
	}
	if t.tap.WantBlock(b) {
		return ^uint64(0)
	}
	return 0
}

func (t *tapped) FilterVersion() uint64 {
	if v, ok := t.tap.(x86.FilterVersion); ok {
		return v.FilterVersion()
	}
	return 0
}
func (t *tapped) Instruction(c *x86.CPU, in *x86.Inst) {
	if DebugInst != nil {
		t.Recorder.Instruction(c, in)
	}
	t.tap.Instruction(c, in)
}

func (t *tapped) Syscall(th *emu.Thread, ev *emu.SyscallEvent) {
	t.Recorder.Syscall(th, ev)
	t.tap.Syscall(th, ev)
}

// SyscallEntry passes a syscall's start on to a tap that wants it
// (emu.SyscallEntryObserver): the recorder logs syscalls when they
// complete.
func (t *tapped) SyscallEntry(th *emu.Thread, nr int, args *[6]uint64) {
	if e, ok := t.tap.(emu.SyscallEntryObserver); ok {
		e.SyscallEntry(th, nr, args)
	}
}

// Budget lets a tap that is an emu.BudgetObserver shorten the
// program's runs.
func (t *tapped) Budget(th *emu.Thread, budget uint64) uint64 {
	if b, ok := t.tap.(emu.BudgetObserver); ok {
		return b.Budget(th, budget)
	}
	return budget
}

func (t *tapped) Signal(th *emu.Thread, ev *emu.SignalEvent) {
	t.Recorder.Signal(th, ev)
	t.tap.Signal(th, ev)
}
func (t *tapped) Mmap(th *emu.Thread, ev emu.MmapEvent) {
	t.Recorder.Mmap(th, ev)
	t.tap.Mmap(th, ev)
}
func (t *tapped) ThreadStart(th *emu.Thread) {
	t.Recorder.ThreadStart(th)
	t.tap.ThreadStart(th)
}
func (t *tapped) ThreadExit(th *emu.Thread, code int) {
	t.Recorder.ThreadExit(th, code)
	t.tap.ThreadExit(th, code)
}
func (t *tapped) ProcessStart(child *emu.Process, parent *emu.Thread) {
	t.Recorder.ProcessStart(child, parent)
	t.tap.ProcessStart(child, parent)
}
func (t *tapped) ProcessExec(p *emu.Process) {
	t.Recorder.ProcessExec(p)
	t.tap.ProcessExec(p)
}
func (t *tapped) ProcessEnd(p *emu.Process, st emu.ExitStatus) {
	t.Recorder.ProcessEnd(p, st)
	t.tap.ProcessEnd(p, st)
}
func (t *tapped) ProcessExit(p *emu.Process, st emu.ExitStatus) {
	t.Recorder.ProcessExit(p, st)
	t.tap.ProcessExit(p, st)
}
func (t *tapped) Switch(th *emu.Thread) {
	t.Recorder.Switch(th)
	t.tap.Switch(th)
}
func (t *tapped) Checkpoint(p *emu.Process) {
	t.Recorder.Checkpoint(p)
	t.tap.Checkpoint(p)
}

// accessTapped is tapped for an AccessTap that wants the accesses.
type accessTapped struct {
	tapped
	at AccessTap
	// sysPC is the syscall instruction of each thread's syscall in
	// progress (the replay's pc for what it wrote).
	sysPC map[*emu.Thread]uint64
	buf   []byte
}

func (t *accessTapped) MemRead(c *x86.CPU, addr uint64, size int, val uint64) uint64 {
	val = t.Recorder.MemRead(c, addr, size, val)
	t.at.Access(c, addr, size, val, false)
	return val
}

func (t *accessTapped) MemWrite(c *x86.CPU, addr uint64, size int, val uint64) {
	t.Recorder.MemWrite(c, addr, size, val)
	t.at.Access(c, addr, size, val, true)
}

func (t *accessTapped) SyscallEntry(th *emu.Thread, nr int, args *[6]uint64) {
	t.sysPC[th] = th.CPU.RIP - 2
	t.tapped.SyscallEntry(th, nr, args)
}

func (t *accessTapped) Syscall(th *emu.Thread, ev *emu.SyscallEvent) {
	t.Recorder.Syscall(th, ev)
	t.kernelWrites(th, t.sysPC[th])
	t.tap.Syscall(th, ev)
}

func (t *accessTapped) Signal(th *emu.Thread, ev *emu.SignalEvent) {
	r := t.Recorder
	r.lit, r.pred, r.ranges = r.lit[:0], r.pred[:0], r.ranges[:0]
	r.Signal(th, ev)
	t.kernelWrites(th, 0)
	t.tap.Signal(th, ev)
}

// kernelWrites reports what the record just written makes a replay
// write, in its order: the spans the prediction cache held, then the
// bytes logged (Recorder.kernelWrites; r.ranges whole when it logged
// them so).
func (t *accessTapped) kernelWrites(th *emu.Thread, pc uint64) {
	r := t.Recorder
	lit := r.lit
	if len(r.lit)+len(r.pred) == 0 {
		lit = r.ranges
	}
	for _, p := range r.pred {
		t.buf = slices.Grow(t.buf[:0], int(p.Len))[:p.Len]
		if th.P.MM.Mem.Peek(p.Addr, t.buf) == nil {
			t.at.KernelWrite(th, pc, p.Addr, t.buf)
		}
	}
	for _, w := range lit {
		t.at.KernelWrite(th, pc, w.Addr, w.Bytes)
	}
}

// Clock (for a Tap).

// Position is the current event's position.
func (r *Recorder) Position() uint64 { return r.position() }

// InstPosition is the position of the instruction c is about to run.
func (r *Recorder) InstPosition(c *x86.CPU) uint64 {
	t := r.rec(c)
	return t.InstAt(t == r.cur, r.pos)
}

// Tid is the trace's id of t.
func (r *Recorder) Tid(t *emu.Thread) int { return r.thread(t).tid }

// CPUTid is the trace's id of the thread running on c.
func (r *Recorder) CPUTid(c *x86.CPU) int { return r.rec(c).tid }
