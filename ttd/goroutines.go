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

// gview is the goroutines at one position.
type gview struct {
	pos  uint64
	gs   []symbols.Goroutine
	byID map[int64]*symbols.Goroutine
	// onThread maps a goroutine to the OS thread running on its stack,
	// ofThread the other way.
	onThread map[int64]int
	ofThread map[int]int64
}

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
	v := &gview{pos: pos, byID: map[int64]*symbols.Goroutine{}, onThread: map[int64]int{}, ofThread: map[int]int64{}}
	t.gv = v
	gs, err := t.syms.Goroutines(t.ReadMemory)
	if err != nil || len(gs) == 0 {
		return v
	}
	sort.SliceStable(gs, func(i, j int) bool { return gs[i].ID < gs[j].ID })
	v.gs = gs
	for i := range v.gs {
		v.byID[v.gs[i].ID] = &v.gs[i]
	}
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
	for _, tid := range tids {
		r, err := t.s.Registers(tid)
		if err != nil {
			continue
		}
		sp := r.GPR[symbols.RSP]
		for _, g := range v.gs {
			if g.StackLo <= sp && sp < g.StackHi {
				if _, taken := v.onThread[g.ID]; !taken {
					v.onThread[g.ID] = tid
					v.ofThread[tid] = g.ID
				}
				break
			}
		}
	}
	return v
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
func (t *Target) goroutine(id int) (g *symbols.Goroutine, tid int) {
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
	if tid, ok := v.onThread[g.ID]; ok {
		return nil, tid
	}
	return g, 0
}

// schedRegs are a parked goroutine's registers: pc, sp and bp of g.sched.
func schedRegs(g *symbols.Goroutine) symbols.Regs {
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
	var out []TargetThread
	for i := range v.gs {
		g := &v.gs[i]
		name := fmt.Sprintf("[Go %d] %s", g.ID, t.goroutineFunc(g))
		if tid, ok := v.onThread[g.ID]; ok {
			name += fmt.Sprintf(" (Thread %d)", tid)
		}
		out = append(out, TargetThread{ID: int(g.ID), Name: name})
	}
	if tid, err := t.s.CurrentThread(); err == nil && tid != 0 {
		if _, ok := v.ofThread[tid]; !ok {
			out = append(out, TargetThread{ID: tid, Name: fmt.Sprintf("Thread %d", tid)})
		}
	}
	return out
}

// goroutineFunc names what a goroutine runs: its innermost function
// outside the runtime's internals (delve's user current location), else
// the function it was started with.
func (t *Target) goroutineFunc(g *symbols.Goroutine) string {
	regs, err := t.symRegs(int(g.ID))
	if err == nil {
		for _, f := range t.syms.Unwind(regs, t.memReader(int(g.ID)), 50) {
			if f.Func != "" && !privateRuntime(f.Func) {
				return f.Func
			}
		}
	}
	if fn, ok := t.syms.FuncForPC(g.StartPC); ok {
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
