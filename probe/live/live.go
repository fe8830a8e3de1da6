package live

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"

	"ttd/emu"
	"ttd/probe"
	"ttd/reader"
	"ttd/recorder"
	"ttd/x86"
)

// Result is what a live run gives: the script's outcome and how the
// program ended.
type Result struct {
	Outcome *probe.Outcome
	Status  emu.ExitStatus
	Stats   recorder.Stats
	// SymbolError is what went wrong loading the modules' symbols.
	SymbolError error
	// Unmatched is the first probe description that matched nothing
	// over the modules the program mapped.
	Unmatched error
	// Semaphores counts the usdt semaphores raised.
	Semaphores int
}

// Output is where a live run prints its records as the events happen
// (nil Stdout: nowhere; Result.Outcome.Print then prints them all).
type Output struct {
	Stdout, Stderr io.Writer
}

// Run runs cfg's program under the recorder (opts.Path is the trace)
// with p evaluated live, printing each record to out as its event
// happens. Without opts.Path nothing is recorded: the program runs as
// under ttd run, with the positions a recording would give (bare.go),
// watch probes included (doc.go). A script error found when the
// program's modules are bound (a DWARF type it names is missing) stops
// the run before the program's first instruction.
func Run(cfg emu.Config, p *probe.Program, opts recorder.Options, out Output) (*Result, error) {
	t := &tap{p: p, steps: p.CountsOnly(), exec: cfg.Path, modules: map[module]bool{}, raised: map[semKey]bool{}, profiled: map[*emu.Thread]uint64{}, out: out}
	var st emu.ExitStatus
	var stats recorder.Stats
	var err error
	if opts.Path == "" {
		st, err = runBare(cfg, t)
	} else {
		if opts.Path == "" {
			dir, derr := os.MkdirTemp("", "ttd-probe-")
			if derr != nil {
				return nil, derr
			}
			defer os.RemoveAll(dir)
			opts.Path = filepath.Join(dir, filepath.Base(cfg.Path)+".ttd")
		}
		opts.Tap = t
		st, stats, err = recorder.Record(cfg, opts)
	}
	if t.err != nil {
		return nil, t.err
	}
	res := &Result{Status: st, Stats: stats, Semaphores: t.semaphores}
	if t.l == nil {
		if err == nil {
			err = fmt.Errorf("%s: the program never started", cfg.Path)
		}
		return nil, err
	}
	// END reads the memory the program left (kept at its exit).
	t.mem = t.endMem
	res.Outcome = t.l.Finish(t.end)
	res.SymbolError = t.l.SymbolError()
	res.Unmatched = t.l.Unmatched()
	return res, err
}

type semKey struct {
	mem  *x86.Memory
	addr uint64
}

// tap is the recorder.Tap that drives probe.Live.
type tap struct {
	p     *probe.Program
	out   Output
	exec  string
	clock recorder.Clock
	l     *probe.Live
	err   error
	first *emu.Process
	cur   *emu.Thread
	mem   *x86.Memory // of the event's process
	// endMem is a copy-on-write copy of the first process's memory as
	// it exits, for END's reads (its own is released).
	endMem *x86.Memory
	// modules mapped before the program started (the loader's)
	pending []module
	early   []emu.MmapEvent
	modules map[module]bool // by address space and path
	raised  map[semKey]bool
	// profiled is each thread's count when profile probes last looked.
	profiled map[*emu.Thread]uint64
	// semaphores counts the semaphores raised; killed: exit() killed
	// the program; exited: threads that ended; end: the last position.
	semaphores int
	killed     bool
	exited     map[int]bool
	end        uint64
	// kw are the watched ranges the current syscall or signal delivery
	// of thread kwTh (pc kwPC) wrote, their bytes in kwBytes
	// (flushWrites).
	kw      []reader.KernelWrite
	kwBytes []byte
	kwTh    *emu.Thread
	kwPC    uint64
	// watchPages: keep the watched pages out of the TLBs of every
	// process's memory, mems (a run without a trace: syncWatch). mems
	// counts the processes using each, when the script watches memory.
	watchPages bool
	pns        []uint64
	mems       map[*x86.Memory]int
	// execRegions are the regions of execP, a process with a memory of
	// its own, at its execve's entry; ranges the watched ranges
	// (execAccesses).
	execRegions []emu.Region
	execP       *emu.Process
	execMem     *x86.Memory // the memory an exec leaves
	ranges      []reader.Range
	// steps: the script only counts at its fn probes (StepsOnly).
	steps bool
}

// module is an ELF file an address space mapped at offset 0 (mem nil:
// before the program started, the first process's).
type module struct {
	mem  *x86.Memory
	path string
	addr uint64
}

func (t *tap) Attach(c recorder.Clock) { t.clock = c }

// memory reads the event's process's memory, a page at a time.
func (t *tap) memory(addr uint64, buf []byte, known []bool) {
	m := t.mem
	if m == nil {
		return
	}
	for i := 0; i < len(buf); {
		a := addr + uint64(i)
		n := min(len(buf)-i, int(x86.PageSize-a&(x86.PageSize-1)))
		if m.Peek(a, buf[i:i+n]) == nil {
			for j := i; j < i+n; j++ {
				known[j] = true
			}
		}
		i += n
	}
}

// on sets the process whose memory the probes read and, after the
// event, kills the program once the script called exit().
func (t *tap) on(th *emu.Thread) bool {
	if t.l == nil || t.err != nil {
		return false
	}
	if th != nil {
		t.mem = th.P.MM.Mem
	}
	return true
}

func (t *tap) after() {
	t.l.Flush()
	if t.l.Stopped() && !t.killed && t.first != nil {
		t.killed = true
		t.first.Interrupt(unix.SIGKILL)
	}
}

func (t *tap) start(th *emu.Thread) {
	t.first = th.P
	t.exited = map[int]bool{}
	l, err := t.p.NewLive(probe.LiveInfo{Name: t.exec, Pid: th.P.PID, Exec: t.exec, Clock: t.clock, Memory: t.memory,
		AddressSpace: func() *x86.Memory { return t.mem }, Stdout: t.out.Stdout, Stderr: t.out.Stderr})
	if err != nil {
		t.fail(err)
		return
	}
	t.l = l
	t.mem = th.P.MM.Mem
	for _, m := range t.pending {
		m.mem = th.P.MM.Mem
		t.modules[module{mem: m.mem, path: m.path}] = true
		t.addModule(m)
	}
	t.pending = nil
	t.useMemory(th.P.MM.Mem)
	t.syncWatch()
	for i := range t.early {
		t.raise(th.P.MM.Mem, &t.early[i])
	}
	t.early = nil
}

// fail stops the run before the program goes on: a script error.
func (t *tap) fail(err error) {
	if t.err == nil {
		t.err = err
		t.killed = true
		if t.first != nil {
			t.first.Interrupt(unix.SIGKILL)
		}
	}
}

func (t *tap) addModule(m module) {
	if err := t.l.AddModuleIn(m.mem, m.path, m.addr); err != nil {
		t.fail(err)
	}
	t.syncWatch()
}

// syncWatch keeps the pages of the watched ranges out of the TLBs of
// every process's memory, so that the accesses to them, and only those,
// reach bare's MemRead and MemWrite (x86.Memory.WatchPages); the rest of
// the program runs translated. Called whenever the ranges may have
// changed (a module bound, an exec); useMemory does it for a new memory.
func (t *tap) syncWatch() {
	if !t.watchPages || t.l == nil || t.first == nil {
		return
	}
	t.pns = t.l.WatchedPages(t.pns[:0])
	for m := range t.mems {
		m.WatchPages(t.pns)
	}
}

// useMemory counts one more process using m (a start, a fork, an exec)
// and keeps the watched pages out of its TLBs; dropMemory one fewer (an
// exec, an exit), forgetting m when none is left.
func (t *tap) useMemory(m *x86.Memory) {
	if m == nil || !t.p.UsesWatch() {
		return
	}
	if t.mems == nil {
		t.mems = map[*x86.Memory]int{}
	}
	t.mems[m]++
	if t.mems[m] == 1 && t.l != nil && t.watchPages {
		t.pns = t.l.WatchedPages(t.pns[:0])
		m.WatchPages(t.pns)
	}
}

func (t *tap) dropMemory(m *x86.Memory) {
	if t.mems[m] == 0 {
		return
	}
	if t.mems[m]--; t.mems[m] == 0 {
		delete(t.mems, m)
	}
}

// raise adds one to the semaphores of the bound usdt probes that lie in
// ev, a writable mapping of mem, once per address space, as systemtap
// does.
func (t *tap) raise(mem *x86.Memory, ev *emu.MmapEvent) {
	for _, a := range t.l.USDTSemaphores(mem) {
		k := semKey{mem, a}
		if t.raised[k] {
			continue
		}
		if a < ev.Addr || a+2 > ev.Addr+ev.Len || ev.Prot&unix.PROT_WRITE == 0 {
			continue
		}
		var b [2]byte
		if mem.Peek(a, b[:]) != nil {
			continue
		}
		binary.LittleEndian.PutUint16(b[:], binary.LittleEndian.Uint16(b[:])+1)
		if mem.Poke(a, b[:]) == nil {
			t.raised[k] = true
			t.semaphores++
		}
	}
}

// recorder.Tap.

func (t *tap) WantBlock(b *x86.Block) bool { return t.WantInsts(b) != 0 }

// WantInsts passes the probes' instruction verdicts on (x86.InstFilter).
func (t *tap) WantInsts(b *x86.Block) uint64 {
	if t.l == nil || t.err != nil {
		return 0
	}
	if t.cur != nil {
		t.mem = t.cur.P.MM.Mem // the program decoding b
	}
	return t.l.WantInsts(b)
}

func (t *tap) FilterVersion() uint64 {
	if t.l == nil {
		return 0
	}
	return t.l.FilterVersion()
}

func (t *tap) Instruction(c *x86.CPU, in *x86.Inst) {
	if t.l == nil || t.err != nil {
		return
	}
	if t.cur != nil && t.cur.CPU == c {
		t.mem = t.cur.P.MM.Mem
	} else {
		t.mem = c.Mem
	}
	t.l.Instruction(c, in)
	t.after()
}

// LogInsts passes the probes' choice of logged instructions on
// (x86.HookLogger; the run without a trace only: bare.go).
func (t *tap) LogInsts(b *x86.Block) uint64 {
	if t.l == nil || t.err != nil || !reader.HookLogOn() {
		return 0
	}
	return t.l.LogInsts(b)
}

// LoggedHooks fires the probes of the logged instructions.
func (t *tap) LoggedHooks(c *x86.CPU, recs []x86.HookRecord) {
	if t.l == nil || t.err != nil {
		return
	}
	t.l.LoggedHooks(c, recs)
	t.after()
}

// StepsOnly, StepWindows and LoggedSteps pass the probes' narrow
// records on (x86.HookStepLogger; bare.go): a script that only counts
// at its fn probes.
func (t *tap) StepsOnly() bool { return t.steps }

func (t *tap) StepWindows(b *x86.Block) (soft, open, shut, window uint64) { return 0, 0, 0, 0 }

func (t *tap) LoggedSteps(c *x86.CPU, steps []x86.HookStep) {
	if t.l == nil || t.err != nil {
		return
	}
	t.l.LoggedSteps(c, steps)
	t.after()
}

func (t *tap) Syscall(th *emu.Thread, ev *emu.SyscallEvent) {
	t.flushWrites()
	if !t.on(th) {
		return
	}
	t.l.Syscall(t.clock.Position(), t.clock.Tid(th), th.CPU, ev.Nr, int64(ev.Ret))
	if ev.Nr == unix.SYS_EXIT_GROUP || ev.Nr == unix.SYS_EXIT && len(th.P.Threads()) == 1 {
		t.keepMemory(th.P)
	}
	t.after()
}

// SyscallEntry fires the entry probes of a syscall as it begins
// (emu.SyscallEntryObserver), so that they print before a blocking
// read waits.
func (t *tap) SyscallEntry(th *emu.Thread, nr int, args *[6]uint64) {
	if !t.on(th) {
		return
	}
	if (nr == unix.SYS_EXECVE || nr == unix.SYS_EXECVEAT) && t.p.UsesWatch() {
		// The regions an exec replaces (execAccesses), unless the
		// memory is another process's too (a vfork child's exec
		// leaves it to its parent; reader: process.shares).
		t.execRegions, t.execP = t.execRegions[:0], nil
		if t.mems[th.P.MM.Mem] <= 1 {
			t.execRegions, t.execP = th.P.MM.Regions(t.execRegions), th.P
		}
		t.execMem = th.P.MM.Mem
	}
	t.l.SyscallEntry(t.clock.Position(), t.clock.Tid(th), th.CPU, nr, args)
	t.after()
}

// Budget stops each thread at the multiples of the profile probes'
// periods and fires them there (emu.BudgetObserver).
func (t *tap) Budget(th *emu.Thread, budget uint64) uint64 {
	if t.l == nil || t.err != nil || !t.l.Profiling() {
		return budget
	}
	n := th.CPU.Retired()
	if last, ok := t.profiled[th]; n > 0 && (!ok || last != n) {
		t.profiled[th] = n
		if t.on(th) {
			t.l.Profile(t.clock.Position(), t.clock.Tid(th), th.CPU, n)
			t.after()
		}
	}
	return min(budget, t.l.ProfileBudget(n))
}

// recorder.AccessTap: live watch probes.

// WantAccesses asks for every memory access when the script watches
// memory.
func (t *tap) WantAccesses() bool { return t.p.UsesWatch() }

// Access fires the watch probes of an instruction's access, in any
// process (reader.Replay.AccessAllProcesses).
func (t *tap) Access(c *x86.CPU, addr uint64, size int, val uint64, write bool) {
	if t.l == nil || t.err != nil || !t.l.Watched(addr, size) {
		return
	}
	var pc uint64
	if in := c.CurrentInst(); in != nil {
		pc = in.PC
	}
	t.mem = c.Mem
	t.l.Access(t.clock.InstPosition(c), t.clock.CPUTid(c), c, pc, addr, size, val, write)
	t.after()
}

// KernelWrite keeps what a syscall or a signal delivery wrote, in any
// process, for flushWrites.
func (t *tap) KernelWrite(th *emu.Thread, pc, addr uint64, b []byte) {
	if t.l == nil || t.err != nil || !t.l.Watched(addr, len(b)) {
		return
	}
	start := len(t.kwBytes)
	t.kwBytes = append(t.kwBytes, b...)
	t.kw = append(t.kw, reader.KernelWrite{Addr: addr, Bytes: t.kwBytes[start:len(t.kwBytes):len(t.kwBytes)]})
	t.kwTh, t.kwPC = th, pc
}

// kernelWrite is KernelWrite of the n bytes at addr, read from th's
// memory (a run without a trace: bare.go).
func (t *tap) kernelWrite(th *emu.Thread, pc, addr uint64, n int) {
	if t.l == nil || t.err != nil || !t.l.Watched(addr, n) {
		return
	}
	start := len(t.kwBytes)
	t.kwBytes = slices.Grow(t.kwBytes, n)[:start+n]
	if th.P.MM.Mem.Peek(addr, t.kwBytes[start:]) != nil {
		t.kwBytes = t.kwBytes[:start]
		return
	}
	t.kw = append(t.kw, reader.KernelWrite{Addr: addr, Bytes: t.kwBytes[start:len(t.kwBytes):len(t.kwBytes)]})
	t.kwTh, t.kwPC = th, pc
}

// flushWrites fires the watch probes of the kept kernel writes, in the
// pieces and the order a replay reports them (reader.KernelPieces), at
// the position before the event's (the syscall's completion or the
// delivery).
func (t *tap) flushWrites() {
	if len(t.kw) == 0 {
		return
	}
	th := t.kwTh
	if t.on(th) {
		pos := t.clock.Position()
		if pos > 0 {
			pos--
		}
		tid := t.clock.Tid(th)
		reader.KernelPieces(t.kw, func(a uint64, n int, v uint64) {
			if t.l.Watched(a, n) {
				t.l.Access(pos, tid, th.CPU, t.kwPC, a, n, v, true)
			}
		})
		t.after()
	}
	t.kw, t.kwBytes, t.kwTh = t.kw[:0], t.kwBytes[:0], nil
}

// execAccesses fires the watch probes of an exec (by thread tid) of a
// process with a memory of its own: the watched bytes of the regions it replaced (kept at
// the execve's entry) get one read and one write each, at the position
// before the exec, in the pieces a replay reports (reader.ExecPieces).
func (t *tap) execAccesses(tid int) {
	if !t.p.UsesWatch() || len(t.execRegions) == 0 {
		return
	}
	pos := t.clock.Position()
	if pos > 0 {
		pos--
	}
	t.ranges = t.l.WatchRanges(t.ranges[:0])
	for _, g := range t.execRegions {
		if g.Prot == 0 {
			continue
		}
		reader.ExecPieces(g.Start, g.End, t.ranges, func(a uint64, n int) {
			t.l.Access(pos, tid, nil, 0, a, n, 0, false)
			t.l.Access(pos, tid, nil, 0, a, n, 0, true)
		})
	}
	t.execRegions = t.execRegions[:0]
}

// keepMemory keeps the first process's memory as it ends, for END.
func (t *tap) keepMemory(p *emu.Process) {
	if p == t.first && t.endMem == nil && t.p.NeedsMemory() {
		t.endMem = p.MM.Mem.Fork(nil)
	}
}

func (t *tap) Signal(th *emu.Thread, ev *emu.SignalEvent) {
	t.flushWrites()
	if !t.on(th) || ev.Ptrace {
		return
	}
	t.l.Signal(t.clock.Position(), t.clock.Tid(th), int(ev.Info.Signo), ev.Info.Addr)
	if ev.Fatal {
		t.keepMemory(th.P)
	}
	t.after()
}

// Mmap adds each ELF file mapped at offset 0 as a module (as the
// recorder's Module records) and raises the semaphores a writable
// mapping brings.
func (t *tap) Mmap(th *emu.Thread, ev emu.MmapEvent) {
	var mem *x86.Memory
	if th != nil && t.l != nil {
		mem = th.P.MM.Mem
	}
	if k := (module{mem: mem, path: ev.Path}); ev.Path != "" && ev.Offset == 0 && !t.modules[k] {
		if f, err := elf.Open(ev.Path); err == nil {
			f.Close()
			t.modules[k] = true
			m := module{mem, ev.Path, ev.Addr}
			if t.l == nil {
				t.pending = append(t.pending, m)
			} else if t.err == nil {
				t.addModule(m)
			}
		}
	}
	switch {
	case t.l == nil:
		t.early = append(t.early, ev)
	case t.err == nil && th != nil:
		t.raise(th.P.MM.Mem, &ev)
	}
}

func (t *tap) ThreadStart(th *emu.Thread) {
	if t.l == nil && t.err == nil {
		// The program's first thread: thread:::start fires for the
		// threads it creates (as over a recording, and as DTrace's
		// lwp-create).
		t.start(th)
		return
	}
	if !t.on(th) {
		return
	}
	parent := 0
	if t.cur != nil {
		parent = t.clock.Tid(t.cur)
	}
	t.l.ThreadStart(t.clock.Position(), t.clock.Tid(th), parent)
	t.after()
}

func (t *tap) ThreadExit(th *emu.Thread, code int) {
	if !t.on(th) {
		return
	}
	tid := t.clock.Tid(th)
	if t.exited[tid] {
		return
	}
	t.exited[tid] = true
	t.l.ThreadExit(t.clock.Position(), tid, code)
	t.after()
}

func (t *tap) ProcessStart(child *emu.Process, parent *emu.Thread) {
	if !t.on(parent) {
		return
	}
	t.l.ShareProgram(child.MM.Mem, parent.P.MM.Mem)
	t.useMemory(child.MM.Mem)
	t.l.Fork(t.clock.Position(), parent.P.PID, t.clock.Tid(parent), child.PID)
	t.after()
}

func (t *tap) ProcessExec(p *emu.Process) {
	if !t.on(nil) {
		return
	}
	tid := 0
	if ts := p.Threads(); len(ts) > 0 {
		tid = t.clock.Tid(ts[0])
	}
	if t.cur != nil && t.cur.P == p {
		// The execing thread, by the tid it had (the trace's Process
		// record's): emu gives it the leader's after this call, and
		// the recorder already did.
		tid = t.cur.Tid
	}
	// The leader ended before (its thread:::exit fired); the execing
	// thread takes its tid and fires thread:::exit again at its end.
	delete(t.exited, p.PID)
	if p == t.execP {
		t.execAccesses(tid)
	}
	t.execP = nil
	t.dropMemory(t.execMem)
	t.execMem = nil
	t.useMemory(p.MM.Mem)
	t.l.Exec(t.clock.Position(), p.PID, tid, p.Exe())
	t.after()
}

func exitCode(st emu.ExitStatus) int64 {
	if st.Signal != 0 {
		return 128 + int64(st.Signal)
	}
	return int64(st.Code)
}

func (t *tap) ProcessEnd(p *emu.Process, st emu.ExitStatus) {
	if p.MM != nil {
		t.dropMemory(p.MM.Mem)
	}
	if !t.on(nil) {
		return
	}
	t.l.ProcessEnd(t.clock.Position(), p.PID, p.PID, exitCode(st))
	t.after()
}

func (t *tap) ProcessExit(p *emu.Process, st emu.ExitStatus) {
	t.end = t.clock.Position()
	if p.MM != nil {
		t.dropMemory(p.MM.Mem)
	}
	if !t.on(nil) {
		return
	}
	tid := p.PID
	if t.cur != nil && t.cur.P == p {
		tid = t.clock.Tid(t.cur)
	}
	t.l.ProcessEnd(t.end, p.PID, tid, exitCode(st))
}

func (t *tap) Switch(th *emu.Thread) { t.cur = th }

func (t *tap) Checkpoint(p *emu.Process) {}
