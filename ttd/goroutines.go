package ttd

import (
	"fmt"
	"sort"
	"strings"

	"ttd/symbols"
)

// Goroutines. For a Go program the target presents goroutines as its
// threads, the way delve's DAP server does: the id is the goroutine id
// and the name "[Go 1] main.main" (with " (Thread N)" for one running on
// an OS thread). A goroutine whose stack an OS thread's stack pointer is
// in has that thread's registers; any other has the registers saved in
// g.sched. Ids that are not goroutine ids still name OS threads (before
// the runtime has started, and for a thread on a system stack).

//
// In a recording of a process tree each Go program's goroutines are
// read with the symbols of the program its process runs (per image:
// images.go) from that process's memory; their ids are then
// pid<<goIDShift | goroutine id, unique across processes and above any
// thread id, and the OS threads of the processes that run no Go
// program are listed as they are without Go.

// gview is the goroutines at one position.
type gview struct {
	pos  uint64
	gs   []goroutineAt
	byID map[int64]*goroutineAt
	// onThread maps a goroutine (by its thread id) to the OS thread
	// running on its stack, ofThread the other way.
	onThread map[int64]int
	ofThread map[int]int64
	// goPids are the processes that run a Go program.
	goPids map[int]bool
}

// goroutineAt is a goroutine of a process.
type goroutineAt struct {
	symbols.Goroutine
	// id is its thread id: the goroutine id in the first process,
	// else pid<<goIDShift | goroutine id.
	id   int64
	pid  int
	syms *symbols.Table
}

// goIDShift places a tree's process ids above goroutine ids in thread
// ids (pid_max is at most 2^22, so ids stay below 2^53 for JSON).
const goIDShift = 30

// goroutines returns the goroutines at the current position, nil for a
// program without a Go runtime.
func (t *Target) goroutines() *gview {
	if !t.isGo {
		return nil
	}
	pos := t.s.Position()
	if t.gv != nil && t.gv.pos == pos {
		return t.gv
	}
	v := &gview{pos: pos, byID: map[int64]*goroutineAt{}, onThread: map[int64]int{}, ofThread: map[int]int64{},
		goPids: map[int]bool{}}
	t.gv = v
	var tids []int
	if ths, err := t.s.Threads(); err == nil {
		for _, th := range ths {
			tids = append(tids, th.Tid)
		}
	}
	if len(tids) == 0 {
		if tid, err := t.s.CurrentThread(); err == nil && tid != 0 {
			tids = append(tids, tid)
		}
	}
	tree := t.s.tr.Tree()
	byPid := map[int][]int{}
	var pids []int
	if tree {
		for _, tid := range tids {
			pid := t.s.ThreadPid(tid)
			if _, ok := byPid[pid]; !ok {
				pids = append(pids, pid)
			}
			byPid[pid] = append(byPid[pid], tid)
		}
	} else {
		pids = []int{t.s.Focus()}
		byPid[pids[0]] = tids
	}
	for _, pid := range pids {
		syms, mem := t.syms, symbols.MemReader(t.ReadMemory)
		if tree {
			sy, _ := t.s.ProcessSymbols(pid)
			syms, _ = sy.(*symbols.Table)
			mem = t.processMemReader(pid)
		}
		if !syms.IsGo() {
			continue
		}
		gs, err := syms.Goroutines(mem)
		if err != nil || len(gs) == 0 {
			continue
		}
		v.goPids[pid] = true
		sort.SliceStable(gs, func(i, j int) bool { return gs[i].ID < gs[j].ID })
		first := len(v.gs)
		for _, g := range gs {
			id := g.ID
			if pid != t.s.Pid() {
				id |= int64(pid) << goIDShift
			}
			v.gs = append(v.gs, goroutineAt{Goroutine: g, id: id, pid: pid, syms: syms})
		}
		for _, tid := range byPid[pid] {
			r, err := t.s.Registers(tid)
			if err != nil {
				continue
			}
			sp := r.GPR[symbols.RSP]
			for _, g := range v.gs[first:] {
				if g.StackLo <= sp && sp < g.StackHi {
					if _, taken := v.onThread[g.id]; !taken {
						v.onThread[g.id] = tid
						v.ofThread[tid] = g.id
					}
					break
				}
			}
		}
	}
	for i := range v.gs {
		v.byID[v.gs[i].id] = &v.gs[i]
	}
	return v
}

// processMemReader reads process pid's memory at the current position.
func (t *Target) processMemReader(pid int) symbols.MemReader {
	return func(addr uint64, buf []byte) ([]bool, error) {
		s, err := t.ProcessSession(pid)
		if err != nil {
			return nil, err
		}
		return readInto(s, addr, buf)
	}
}

// threadID is the DAP thread id of OS thread tid: the goroutine it
// runs, else tid.
func (t *Target) threadID(tid int) int {
	if v := t.goroutines(); v != nil {
		if g, ok := v.ofThread[tid]; ok {
			return int(g)
		}
	}
	return tid
}

// goroutine resolves a DAP thread id: a goroutine not running on an OS
// thread (its saved registers are used), or the OS thread to read.
func (t *Target) goroutine(id int) (g *goroutineAt, tid int) {
	if id == 0 {
		return nil, 0
	}
	v := t.goroutines()
	if v == nil {
		return nil, id
	}
	g, ok := v.byID[int64(id)]
	if !ok {
		return nil, id
	}
	if tid, ok := v.onThread[g.id]; ok {
		return nil, tid
	}
	return g, 0
}

// threadPid is the process of thread (goroutine) id, and its OS thread
// (0 for a goroutine no OS thread runs).
func (t *Target) threadPid(id int) (pid, tid int) {
	g, tid := t.goroutine(id)
	if g != nil {
		return g.pid, 0
	}
	return t.s.ThreadPid(tid), tid
}

// schedRegs are a parked goroutine's registers: pc, sp and bp of g.sched.
func schedRegs(g *goroutineAt) symbols.Regs {
	var r symbols.Regs
	r[symbols.RIP], r[symbols.RSP], r[symbols.RBP] = g.PC, g.SP, g.BP
	return r
}

// goThreads lists the goroutines as threads, and the current OS thread
// if it runs none; nil when there are no goroutines (yet).
func (t *Target) goThreads() []TargetThread {
	v := t.goroutines()
	if v == nil || len(v.gs) == 0 {
		return nil
	}
	tree := t.s.tr.Tree() && len(t.s.Processes()) > 1
	var out []TargetThread
	for i := range v.gs {
		g := &v.gs[i]
		name := fmt.Sprintf("[Go %d] %s", g.ID, t.goroutineFunc(g))
		if tid, ok := v.onThread[g.id]; ok {
			name += fmt.Sprintf(" (Thread %d)", tid)
		}
		if tree {
			name = fmt.Sprintf("%s[%d] %s", t.s.ProcessName(g.pid), g.pid, name)
		}
		out = append(out, TargetThread{ID: int(g.id), Name: name})
	}
	listed := map[int]bool{}
	if tree {
		// The threads of the processes that run no Go program.
		if ths, err := t.s.Threads(); err == nil {
			for _, th := range ths {
				if !v.goPids[t.s.ThreadPid(th.Tid)] {
					out = append(out, TargetThread{ID: th.Tid, Name: t.threadName(th.Tid)})
					listed[th.Tid] = true
				}
			}
		}
	}
	if tid, err := t.s.CurrentThread(); err == nil && tid != 0 {
		if _, ok := v.ofThread[tid]; !ok && !listed[tid] {
			out = append(out, TargetThread{ID: tid, Name: t.threadName(tid)})
		}
	}
	return out
}

// goroutineFunc names what a goroutine runs: its innermost function
// outside the runtime's internals (delve's user current location), else
// the function it was started with.
func (t *Target) goroutineFunc(g *goroutineAt) string {
	regs, err := t.symRegs(int(g.id))
	if err == nil {
		for _, f := range g.syms.Unwind(regs, t.memReader(int(g.id)), 50) {
			if f.Func != "" && !privateRuntime(f.Func) {
				return f.Func
			}
		}
	}
	if fn, ok := g.syms.FuncForPC(g.StartPC); ok {
		return fn.Name
	}
	return fmt.Sprintf("%#x", g.PC)
}

// privateRuntime reports a function of the runtime's internals.
func privateRuntime(name string) bool {
	if strings.HasPrefix(name, "internal/") {
		return true
	}
	rest, ok := strings.CutPrefix(name, "runtime.")
	return ok && rest != "" && !(rest[0] >= 'A' && rest[0] <= 'Z')
}

// OSThread is the OS thread that runs DAP thread id: the thread of a
// goroutine running on one, else id.
func (t *Target) OSThread(id int) int {
	if g, tid := t.goroutine(id); g == nil && tid != 0 {
		return tid
	}
	return id
}
