package probe

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"ttd/symbols"
	"ttd/ttd"
	"ttd/x86"
)

// Programs of a process tree. The processes of a recorded tree (sh -c
// './a; ./b', a fork and an exec) run different programs, often at the
// same addresses (two PIEs). Probes therefore bind once per program
// (space): a program's fn, line and usdt probes, at its code addresses,
// under its names, and its symbols for ustack, %a, func() and `globals.
// The program an event runs in comes from its process and position:
// over a recording from the trace's program images (ttd.Programs, the
// images the debugger's per-process symbols use); live from the address
// space of the process (Live.AddModuleIn). A recording of one program
// has one space, the whole symbol table, and pays nothing for this.

// space is the probes of one program: its symbol table and the code
// addresses its fn, line and usdt probes fire at.
type space struct {
	syms      *symbols.Table
	mainMod   string
	funcs     []symbols.FuncSymbol     // while binding
	demangled bool                     // the C++ names of funcs are demangled
	addr      map[uint64][]*boundProbe // entry, offset, line and usdt probes
	addrs     []uint64                 // sorted keys of addr
	rets      []retRange               // return probes' code, sorted by lo
	// casts and members are the script's types resolved in this
	// program's table, when the target runs several (bindTypes).
	casts   map[*Cast]dtype
	members map[*Member]*memberPlan
}

func newSpace(syms *symbols.Table) *space {
	return &space{syms: syms, addr: map[uint64][]*boundProbe{}}
}

// finish sorts the space's addresses once its probes are bound.
func (sp *space) finish() {
	sp.funcs = nil
	sp.addrs = sp.addrs[:0]
	for a := range sp.addr {
		sp.addrs = append(sp.addrs, a)
	}
	sort.Slice(sp.addrs, func(i, j int) bool { return sp.addrs[i] < sp.addrs[j] })
	sort.Slice(sp.rets, func(i, j int) bool { return sp.rets[i].lo < sp.rets[j].lo })
}

// hooks reports whether any program has code probes.
func (b *Bound) hooks() bool {
	for _, sp := range b.spaces {
		if len(sp.addrs) > 0 || len(sp.rets) > 0 {
			return true
		}
	}
	return false
}

// usesPrograms reports whether the script depends on the program an
// event runs in: code probes, or symbols read as it runs.
func (p *Program) usesPrograms() bool {
	for _, cl := range p.Script.Clauses {
		for _, pr := range cl.Probes {
			switch pr.Prov {
			case "fn", "line", "usdt":
				return true
			}
			if len(pr.Prov) >= 3 && pr.Prov[:3] == "pid" {
				return true
			}
		}
	}
	return p.NeedsDWARF()
}

// loadPrograms gives a recording of a process tree that ran several
// programs one space per program.
func (b *Bound) loadPrograms() error {
	t := b.T
	if t.Syms == nil || t.Trace == nil || !b.P.usesPrograms() || ttd.OneProgram(t.Trace) {
		return nil // (before Modules, which decodes every chunk)
	}
	refs, err := t.Trace.Modules()
	if err != nil {
		return err
	}
	// A module that cannot be loaded is missing from the tree-wide
	// table too, and the caller reported it (OpenTarget's symErr). The
	// programs' modules are mostly the tree-wide table's, at the same
	// addresses: loaded through the same cache, they load once (the bash
	// x40 + python3 tree's Bind loaded each again, 40 ms of its 80-100).
	images := t.images
	if images == nil {
		images = &symbols.ImageCache{}
	}
	progs, _ := ttd.ReadPrograms(t.Trace, refs, images, !b.P.NeedsDWARF())
	if progs == nil || progs.Len() == 0 {
		return nil
	}
	b.progs = progs
	b.spaces = b.spaces[:0]
	for i := 0; i < progs.Len(); i++ {
		b.spaces = append(b.spaces, newSpace(progs.Table(i)))
	}
	b.sp = b.spaces[0]
	b.none = newSpace(nil)
	b.pick = func(s *segEval, mem *x86.Memory, tid int, pos uint64) *space {
		pid := 0
		if s.r != nil {
			pid = s.r.Pid(tid)
		}
		if pid == 0 {
			pid = s.b.pid
		}
		if i := s.b.progs.At(pid, pos); i >= 0 {
			return s.b.spaces[i]
		}
		return s.b.none
	}
	return nil
}

// spaceOf is the program that thread tid, running on c (nil: not known),
// runs at pos. A process's address space runs one program until it
// execs (which gives it another), so the last answer is kept by address
// space.
func (s *segEval) spaceOf(c *x86.CPU, tid int, pos uint64) *space {
	b := s.b
	if b.pick == nil {
		return b.sp
	}
	var mem *x86.Memory
	if c != nil {
		mem = c.Mem
	} else if s.memOf != nil {
		mem = s.memOf()
	}
	if mem != nil && mem == s.spMem {
		return s.spLast
	}
	sp := b.pick(s, mem, tid, pos)
	if mem != nil {
		s.spMem, s.spLast = mem, sp
	}
	return sp
}

// evSpace is the program an event fired in.
func (s *segEval) evSpace(ev *event) *space {
	if s.b.pick == nil || ev == nil {
		return s.b.sp
	}
	if ev.sp != nil {
		return ev.sp
	}
	return s.spaceOf(ev.cpu, ev.tid, ev.pos)
}

// syms is the symbol table of the program the running clause's event
// fired in (the first program's outside a clause).
func (s *segEval) syms() *symbols.Table {
	if s.b.pick == nil || s.cr.ev == nil {
		return s.b.T.Syms
	}
	if sp := s.evSpace(s.cr.ev); sp.syms != nil {
		return sp.syms
	}
	return nil
}

// markAddrKeys marks the keys printa's conversions cs print with %a or
// %A (the keys are its first arguments, after any * width or precision).
func (d *aggDecl) markAddrKeys(cs []conv) {
	ai := 0
	for _, c := range cs {
		if c.verb == 0 || c.agg {
			continue
		}
		ai += strings.Count(c.width+c.prec, "*")
		if (c.verb == 'a' || c.verb == 'A') && ai < d.NKeys {
			if d.addrKeys == nil {
				d.addrKeys = make([]bool, d.NKeys)
			}
			d.addrKeys[ai] = true
		}
		ai++
	}
}

// symKeys symbolises the keys of d that printa prints as code
// addresses, in the program the running clause's event fired in, when
// the target runs several (the table printa has is the first
// program's; an address means another function in another program).
// The key becomes %a's text, which %a and %A print as it is.
func (s *segEval) symKeys(d *aggDecl, keys []Value) {
	if d.addrKeys == nil || s.b.pick == nil {
		return
	}
	for k, addr := range d.addrKeys {
		if addr && k < len(keys) && keys[k].K == KInt {
			keys[k] = strVal(symAddr(s.syms(), uint64(keys[k].I), true))
		}
	}
}

// bindWatchIn binds a watch probe given by a symbol in every program
// that defines it, at that program's address: it fires for the
// accesses of processes running that program (watchedIn). A symbol no
// program defines matches nothing.
func (b *Bound) bindWatchIn(pr ProbeSpec, cl *Clause, get func(string, func() *boundProbe) *boundProbe, attach func(*boundProbe, *Clause)) int {
	size, _ := strconv.ParseUint(pr.Func, 0, 64)
	n := 0
	for si, sp := range b.spaces {
		if sp.syms == nil {
			continue
		}
		lo, _, ok := sp.syms.LookupSymbol(pr.Mod)
		if !ok {
			continue
		}
		bp := get(fmt.Sprintf("%d:%s", si, pr.Text), func() *boundProbe {
			bp := &boundProbe{Prov: "watch", Mod: pr.Mod, Func: pr.Func, Name: pr.Name, wlo: lo, whi: lo + size,
				wr: pr.Name != "write", ww: pr.Name != "read", sp: sp}
			b.watch = append(b.watch, bp)
			return bp
		})
		attach(bp, cl)
		n++
	}
	return n
}

// watchedIn reports whether watch probe w, bound in one program's
// symbols (bindWatchIn), applies to an access of thread tid on c at pos.
// It asks pick, not spaceOf's answer kept by address space: an exec's
// kernel writes come at the position before it, when the address space
// already runs the new program (keeping the old one's answer for it
// lost every probe of the new program).
func (s *segEval) watchedIn(w *boundProbe, c *x86.CPU, tid int, pos uint64) bool {
	if w.sp == nil || s.b.pick == nil {
		return true
	}
	var mem *x86.Memory
	if c != nil {
		mem = c.Mem
	}
	return s.b.pick(s, mem, tid, pos) == w.sp
}
