package live

import (
	"ttd/emu"
	"ttd/recorder"
	"ttd/x86"
)

// bare runs a live probe without a recording (no -o): the program runs
// under emu as with ttd run — translated code without prediction
// caches (x86.MemoryBlind) — and bare counts positions the way the
// recorder's Clock does, so the script sees the positions a recording
// of the run would give. Watch probes see the accesses to the watched
// pages, which stay out of the TLBs (tap.syncWatch).
type bare struct {
	t   *tap
	p   *emu.Process
	pos uint64
	cur *bareThread
	// byTid are the threads by the trace's ids; last caches rec.
	byTid   map[int]*bareThread
	lastCPU *x86.CPU
	last    *bareThread
	// watch: the script watches memory (MemRead, MemWrite, kernel
	// writes).
	watch bool
	sysPC map[*emu.Thread]uint64
}

// bareThread is a thread as the recorder's threadRec counts it.
type bareThread struct {
	recorder.ThreadCount
	tid int
}

// runBare runs cfg's program with the tap and no recording.
func runBare(cfg emu.Config, t *tap) (emu.ExitStatus, error) {
	b := &bare{t: t, byTid: map[int]*bareThread{}, watch: t.p.UsesWatch(), sysPC: map[*emu.Thread]uint64{}}
	t.watchPages = b.watch
	cfg.Observer, cfg.CPUObserver = b, b
	cfg.CheckpointEvery = 0
	cfg.FollowFirst = false // as the recorder: events of the whole tree
	t.Attach(b)
	p, err := emu.NewProcess(cfg)
	if err != nil {
		return emu.ExitStatus{}, err
	}
	b.p = p
	return p.Run()
}

// position brings pos up to date with the running thread's CPU
// (recorder.Recorder.position).
func (b *bare) position() uint64 {
	if t := b.cur; t != nil {
		b.pos = t.Count(b.pos)
	}
	return b.pos
}

// thread is th's state; a CPU that execve replaced is adopted, after
// the old one's count is in pos.
func (b *bare) thread(th *emu.Thread) *bareThread {
	t := b.byTid[th.Tid]
	if t == nil {
		t = &bareThread{tid: th.Tid}
		t.Restart(th.CPU)
		b.byTid[th.Tid] = t
	} else if t.CPU != th.CPU {
		if b.cur == t {
			b.position()
		}
		t.Restart(th.CPU)
	}
	b.lastCPU, b.last = nil, nil
	return t
}

// rec is the state of the thread running on c.
func (b *bare) rec(c *x86.CPU) *bareThread {
	if c == b.lastCPU {
		return b.last
	}
	if b.cur != nil && b.cur.CPU == c {
		b.lastCPU, b.last = c, b.cur
		return b.cur
	}
	for _, th := range b.p.Machine().Threads() {
		if th.CPU == c {
			t := b.thread(th)
			b.lastCPU, b.last = c, t
			return t
		}
	}
	t := &bareThread{}
	t.Restart(c)
	return t
}

// recorder.Clock.

func (b *bare) Position() uint64 { return b.position() }

func (b *bare) InstPosition(c *x86.CPU) uint64 {
	t := b.rec(c)
	return t.InstAt(t == b.cur, b.pos)
}

func (b *bare) Tid(th *emu.Thread) int        { return b.thread(th).tid }
func (b *bare) CPUTid(c *x86.CPU) int         { return b.rec(c).tid }
func (b *bare) MemoryBlind() bool             { return true }
func (b *bare) WantInstructions() bool        { return true }
func (b *bare) WantBlock(k *x86.Block) bool   { return b.t.WantBlock(k) }
func (b *bare) WantInsts(k *x86.Block) uint64 { return b.t.WantInsts(k) }
func (b *bare) FilterVersion() uint64         { return b.t.FilterVersion() }

// LogInsts lets translated code log the probed instructions the tap
// picks (x86.HookLogger), as a replay does: a Go call per hooked
// instruction was most of a live probe's cost on sqlite3.
func (b *bare) LogInsts(k *x86.Block) uint64                  { return b.t.LogInsts(k) }
func (b *bare) LoggedHooks(c *x86.CPU, recs []x86.HookRecord) { b.t.LoggedHooks(c, recs) }
func (b *bare) StepsOnly() bool                               { return b.t.StepsOnly() }
func (b *bare) LoggedSteps(c *x86.CPU, steps []x86.HookStep)  { b.t.LoggedSteps(c, steps) }
func (b *bare) StepWindows(k *x86.Block) (soft, open, shut, window uint64) {
	return b.t.StepWindows(k)
}

// x86.Observer: nothing to log.

func (b *bare) Instruction(c *x86.CPU, in *x86.Inst) { b.t.Instruction(c, in) }

// MemRead and MemWrite see the accesses that miss the TLBs: those of the
// watched pages among them (x86.Memory.WatchPages) fire the watch
// probes.
func (b *bare) MemRead(c *x86.CPU, addr uint64, size int, val uint64) uint64 {
	if b.watch {
		b.t.Access(c, addr, size, val, false)
	}
	return val
}
func (b *bare) MemWrite(c *x86.CPU, addr uint64, size int, val uint64) {
	if b.watch {
		b.t.Access(c, addr, size, val, true)
	}
}
func (b *bare) NonDet(c *x86.CPU, in *x86.Inst, vals []uint64) []uint64 {
	return vals
}
func (b *bare) Decoded(c *x86.CPU, k *x86.Block) {}
func (b *bare) Sync(c *x86.CPU, in *x86.Inst)    {}

// emu.Observer: positions as the recorder's, then the tap.

func (b *bare) SyscallEntry(th *emu.Thread, nr int, args *[6]uint64) {
	if b.watch {
		b.sysPC[th] = th.CPU.RIP - 2 // the pc of what it writes
	}
	b.t.SyscallEntry(th, nr, args)
}
func (b *bare) Budget(th *emu.Thread, budget uint64) uint64 { return b.t.Budget(th, budget) }
func (b *bare) Syscall(th *emu.Thread, ev *emu.SyscallEvent) {
	b.thread(th)
	if b.watch {
		for _, w := range ev.Writes {
			b.t.kernelWrite(th, b.sysPC[th], w.Addr, int(w.Len))
		}
	}
	b.t.Syscall(th, ev)
}
func (b *bare) Signal(th *emu.Thread, ev *emu.SignalEvent) {
	if b.watch && ev.Handler != 0 {
		b.t.kernelWrite(th, 0, ev.Frame, emu.SigFrameBytes)
		b.t.kernelWrite(th, 0, ev.FPState, emu.SigFPStateBytes)
	}
	b.t.Signal(th, ev)
}
func (b *bare) Mmap(th *emu.Thread, ev emu.MmapEvent) { b.t.Mmap(th, ev) }
func (b *bare) ThreadStart(th *emu.Thread) {
	t := b.thread(th)
	if b.cur == nil {
		b.cur = t // the first thread (recorder.ThreadStart)
	}
	b.t.ThreadStart(th)
}
func (b *bare) ThreadExit(th *emu.Thread, code int) { b.t.ThreadExit(th, code) }
func (b *bare) ProcessStart(child *emu.Process, parent *emu.Thread) {
	b.t.ProcessStart(child, parent)
}
func (b *bare) ProcessExec(p *emu.Process)                    { b.t.ProcessExec(p) }
func (b *bare) ProcessEnd(p *emu.Process, st emu.ExitStatus)  { b.t.ProcessEnd(p, st) }
func (b *bare) ProcessExit(p *emu.Process, st emu.ExitStatus) { b.t.ProcessExit(p, st) }
func (b *bare) Switch(th *emu.Thread) {
	b.position()
	t := b.thread(th)
	t.Restart(t.CPU)
	b.cur = t
	b.t.Switch(th)
}
func (b *bare) Checkpoint(p *emu.Process) {}

var (
	_ recorder.Clock     = (*bare)(nil)
	_ x86.HookStepLogger = (*bare)(nil)
)
