package probe

import (
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"ttd/internal/linux"
	"ttd/reader"
	"ttd/symbols"
	"ttd/ttd"
	"ttd/x86"
)

// Target is one recording to evaluate a program over.
type Target struct {
	// Name identifies the trace in records and partial results.
	Name  string
	Trace *reader.Trace
	// Syms is the program's symbol table (nil: only syscall, proc,
	// thread, signal, profile, watch with addresses, BEGIN and END).
	Syms *symbols.Table
	// Index, when set, gives the memory earlier segments learned
	// (scripts that read memory see bytes written before their segment).
	Index *ttd.Index
	// images, when set, is the cache Syms's modules were loaded through:
	// the tables of a process tree's programs take theirs from it.
	images *symbols.ImageCache
}

// boundProbe is one probe of a target that some clause enabled.
type boundProbe struct {
	ID                    int
	Prov, Mod, Func, Name string
	Addr, Size            uint64 // fn, line: where; return: the function
	clauses               []*Clause
	// watch
	wlo, whi uint64
	wr, ww   bool
	// usdt: the static probe, whose operands are its arguments
	usdt *symbols.USDTProbe
	// sp is the program whose code fn, line and usdt probes are in.
	sp *space
}

func (bp *boundProbe) label() string {
	if bp.Prov == "" {
		return bp.Name
	}
	return bp.Prov + ":" + bp.Mod + ":" + bp.Func + ":" + bp.Name
}

// retRange is code of a function with a return probe: its body, or a
// part the compiler split off (f.cold).
type retRange struct {
	lo, hi uint64
	bp     *boundProbe
}

// Bound is a program bound to one target: its probes resolved to code
// addresses, syscall numbers and events. It is safe for concurrent use
// by segment evaluations.
type Bound struct {
	P      *Program
	T      *Target
	cps    []reader.Checkpoint
	probes []*boundProbe

	begin, end []*Clause
	// sp is the program of a recording of one program, and the first
	// program of a tree; spaces are every program's (spaces.go), with
	// their code addresses; pick finds the program of an event.
	sp        *space
	spaces    []*space
	progs     *ttd.Programs
	pick      func(s *segEval, mem *x86.Memory, tid int, pos uint64) *space
	none      *space // of a process running no known program
	sysEntry  map[int][]*boundProbe
	sysReturn map[int][]*boundProbe
	proc      map[string][]*boundProbe // exec, fork, exit
	thread    map[string][]*boundProbe // start, exit
	signal    []*boundProbe
	profile   []*boundProbe // Addr holds the period
	watch     []*boundProbe

	// needMemory: a usdt probe's operands live in memory (the segment
	// tracks memory as for a script that reads it).
	needMemory bool

	pid        int
	execname   string
	procs      map[int]*procInfo // proc.go
	procEvents []procEvent
	casts      map[*Cast]dtype // ctypes.go
	members    map[*Member]*memberPlan
	// typeErr: live, a type no program bound so far defines (bindTypes).
	typeErr  error
	created  int64    // walltimestamp at position 0, ns
	warnings []string // usdt.go
	// mem, when set, reads a live program's memory (live.go).
	mem func(addr uint64, buf []byte, known []bool)
}

// Bind resolves the program's probes on a target. A probe description
// that matches nothing is an error naming it, with its line:column.
func (p *Program) Bind(t *Target) (*Bound, error) {
	cps, err := t.Trace.Checkpoints()
	if err != nil {
		return nil, err
	}
	b := newBound(p, t)
	b.cps = cps
	h := t.Trace.File().Header()
	b.execname = filepath.Base(h.ProgramPath)
	b.created = h.Created.UnixNano()
	if ps := t.Trace.Processes(); len(ps) > 0 {
		b.pid = ps[0].Pid
	} else if r, err := t.Trace.NewReplayAt(cps[0]); err == nil {
		// A trace recorded before Process records.
		b.pid, _ = r.Current()
		r.Close()
	}
	if err := b.loadProcesses(); err != nil {
		return nil, err
	}
	if err := b.loadPrograms(); err != nil {
		return nil, err
	}
	if err := b.bindProbes(nil); err != nil {
		return nil, err
	}
	b.checkSemaphores()
	return b, nil
}

// newBound is a Bound with empty probe tables.
func newBound(p *Program, t *Target) *Bound {
	b := &Bound{P: p, T: t, sysEntry: map[int][]*boundProbe{},
		sysReturn: map[int][]*boundProbe{}, proc: map[string][]*boundProbe{}, thread: map[string][]*boundProbe{}}
	b.sp = newSpace(t.Syms)
	b.spaces = []*space{b.sp}
	return b
}

// bindProbes resolves every probe description of the program. With
// matched nil, one that matches nothing is an error; else matched
// counts the probes each description matched (a live program's modules
// come as it runs: live.go).
func (b *Bound) bindProbes(matched map[*ProbeSpec]int) error {
	p := b.P
	for _, sp := range b.spaces {
		if sp.syms != nil {
			sp.funcs = sp.syms.FuncSymbols()
			sp.mainMod = sp.syms.MainModule()
		}
	}
	// One boundProbe per distinct probe; clauses attach in script order.
	byKey := map[string]*boundProbe{}
	get := func(key string, mk func() *boundProbe) *boundProbe {
		if bp := byKey[key]; bp != nil {
			return bp
		}
		bp := mk()
		bp.ID = len(b.probes) + 1
		byKey[key] = bp
		b.probes = append(b.probes, bp)
		return bp
	}
	attach := func(bp *boundProbe, cl *Clause) {
		if n := len(bp.clauses); n == 0 || bp.clauses[n-1] != cl {
			bp.clauses = append(bp.clauses, cl)
		}
	}
	for _, cl := range p.Script.Clauses {
		for i := range cl.Probes {
			pr := &cl.Probes[i]
			n, err := b.bindSpec(*pr, cl, get, attach)
			if err != nil {
				return err
			}
			if matched != nil {
				matched[pr] += n
			} else if n == 0 {
				return errAt(pr.P, "probe description %s does not match any probes", pr.Text)
			}
		}
	}
	b.casts, b.members = map[*Cast]dtype{}, map[*Member]*memberPlan{}
	if err := b.bindTypes(); err != nil {
		return err
	}
	for _, sp := range b.spaces {
		sp.finish()
	}
	return nil
}

func glob(pat, s string) bool {
	if pat == "" || pat == "*" {
		return true
	}
	m, _ := path.Match(pat, s)
	return m
}

// moduleMatch matches a module pattern: its base name, or a.out for the
// program's main executable.
func (sp *space) moduleMatch(pat, mod string) bool {
	if pat == "a.out" {
		return mod == sp.mainMod
	}
	return glob(pat, filepath.Base(mod))
}

func (b *Bound) bindSpec(pr ProbeSpec, cl *Clause, get func(string, func() *boundProbe) *boundProbe, attach func(*boundProbe, *Clause)) (int, error) {
	n := 0
	prov := pr.Prov
	if strings.HasPrefix(prov, "pid") {
		prov = "fn"
	}
	switch prov {
	case "":
		if pr.Name == "BEGIN" {
			b.begin = append(b.begin, cl)
		} else {
			b.end = append(b.end, cl)
		}
		return 1, nil
	case "fn":
		if b.T.Syms == nil {
			return 0, errAt(pr.P, "fn probes need the program's symbols, and this trace has none")
		}
		for si, sp := range b.spaces {
			n += b.bindFn(pr, cl, si, sp, get, attach)
		}
	case "syscall":
		for nr := 0; nr < 512; nr++ {
			name := linux.SyscallName(nr)
			if strings.HasPrefix(name, "syscall_") || !glob(pr.Func, name) {
				continue
			}
			for _, kind := range []string{"entry", "return"} {
				if !glob(pr.Name, kind) {
					continue
				}
				bp := get("s"+kind+name, func() *boundProbe {
					bp := &boundProbe{Prov: "syscall", Func: name, Name: kind}
					if kind == "entry" {
						b.sysEntry[nr] = append(b.sysEntry[nr], bp)
					} else {
						b.sysReturn[nr] = append(b.sysReturn[nr], bp)
					}
					return bp
				})
				attach(bp, cl)
				n++
			}
		}
	case "proc", "thread":
		for _, kind := range providers[prov] {
			if !glob(pr.Name, kind) {
				continue
			}
			bp := get(prov+kind, func() *boundProbe {
				bp := &boundProbe{Prov: prov, Name: kind}
				if prov == "proc" {
					b.proc[kind] = append(b.proc[kind], bp)
				} else {
					b.thread[kind] = append(b.thread[kind], bp)
				}
				return bp
			})
			attach(bp, cl)
			n++
		}
	case "signal":
		bp := get("signal", func() *boundProbe {
			bp := &boundProbe{Prov: "signal", Name: "deliver"}
			b.signal = append(b.signal, bp)
			return bp
		})
		attach(bp, cl)
		n++
	case "profile":
		every, _ := strconv.ParseUint(strings.TrimPrefix(pr.Name, "profile-"), 10, 64)
		bp := get("p"+pr.Name, func() *boundProbe {
			bp := &boundProbe{Prov: "profile", Name: pr.Name, Addr: every}
			b.profile = append(b.profile, bp)
			return bp
		})
		attach(bp, cl)
		n++
	case "line":
		if b.T.Syms == nil {
			return 0, errAt(pr.P, "line probes need the program's DWARF, and this trace has no symbols")
		}
		ln, _ := strconv.Atoi(pr.Name)
		for si, sp := range b.spaces {
			if sp.syms == nil {
				continue
			}
			addrs, _ := sp.syms.BreakpointLine(pr.Func, ln)
			for _, a := range addrs {
				fn, _, _ := sp.syms.PCToFunc(a)
				bp := get(fmt.Sprintf("%d:l%x", si, a), func() *boundProbe {
					bp := &boundProbe{Prov: "line", Mod: pr.Func, Func: fn, Name: pr.Name, Addr: a, sp: sp}
					sp.addr[a] = append(sp.addr[a], bp)
					return bp
				})
				attach(bp, cl)
				n++
			}
		}
	case "watch":
		var lo uint64
		if v, err := strconv.ParseUint(pr.Mod, 0, 64); err == nil {
			lo = v
		} else if b.pick != nil {
			return b.bindWatchIn(pr, cl, get, attach), nil
		} else if b.T.Syms != nil {
			a, _, ok := b.T.Syms.LookupSymbol(pr.Mod)
			if !ok && b.mem != nil {
				return 0, nil // live: the module defining it may come later
			}
			if !ok {
				return 0, errAt(pr.P, "watch probe: no symbol %q in the program", pr.Mod)
			}
			lo = a
		} else {
			return 0, errAt(pr.P, "watch probe: %q is not an address and the trace has no symbols", pr.Mod)
		}
		size, _ := strconv.ParseUint(pr.Func, 0, 64)
		bp := get(pr.Text, func() *boundProbe {
			bp := &boundProbe{Prov: "watch", Mod: pr.Mod, Func: pr.Func, Name: pr.Name, wlo: lo, whi: lo + size,
				wr: pr.Name != "write", ww: pr.Name != "read"}
			b.watch = append(b.watch, bp)
			return bp
		})
		attach(bp, cl)
		n++
	case "usdt":
		return b.bindUSDT(pr, cl, get, attach)
	}
	return n, nil
}

// retAt finds the return probe range whose code holds pc (function
// bodies do not overlap, so the last range starting at or before pc is
// the only candidate... nearly: nested symbols are looked through).
func (sp *space) retAt(pc uint64) *retRange {
	j := sort.Search(len(sp.rets), func(j int) bool { return sp.rets[j].lo > pc })
	for k := j - 1; k >= 0 && k >= j-4; k-- {
		if pc < sp.rets[k].hi {
			return &sp.rets[k]
		}
	}
	return nil
}

// Segments is the number of checkpoint segments of the target.
func (b *Bound) Segments() int { return len(b.cps) }

// segmentRange is [from, to) of segment k.
func (b *Bound) segmentRange(k int) (uint64, uint64) {
	to := b.T.Trace.End()
	if k+1 < len(b.cps) {
		to = b.cps[k+1].Position
	}
	return b.cps[k].Position, to
}

// bindFn binds an fn probe description in program si, and counts the
// probes it matched there.
func (b *Bound) bindFn(pr ProbeSpec, cl *Clause, si int, sp *space, get func(string, func() *boundProbe) *boundProbe, attach func(*boundProbe, *Clause)) int {
	if sp.syms == nil {
		return 0
	}
	n := 0
	if !sp.demangled {
		// Only scripts with fn probes pay for demangling.
		sp.syms.DemangleFuncs(sp.funcs)
		sp.demangled = true
	}
	names := []string{"entry", "return"}
	if pr.Name != "" && pr.Name != "*" && pr.Name != "entry" && pr.Name != "return" {
		names = []string{pr.Name}
	} else if pr.Name == "entry" || pr.Name == "return" {
		names = []string{pr.Name}
	}
	for _, f := range sp.funcs {
		if !sp.moduleMatch(pr.Mod, f.Module) {
			continue
		}
		// C++: the mangled name, or demangled with or without
		// parameters (c++filt's "geo::scale(long)", "geo::scale").
		fname, dm := f.Name, f.Demangled
		if dm.Full != "" {
			fname = dm.Full
		}
		if !glob(pr.Func, f.Name) && (dm.Full == "" || !glob(pr.Func, dm.Full) && !glob(pr.Func, dm.Short)) {
			continue
		}
		mod := filepath.Base(f.Module)
		for _, name := range names {
			switch name {
			case "entry":
				bp := get(fmt.Sprintf("%d:e%x", si, f.Addr), func() *boundProbe {
					bp := &boundProbe{Prov: "fn", Mod: mod, Func: fname, Name: "entry", Addr: f.Addr, Size: f.Size, sp: sp}
					sp.addr[f.Addr] = append(sp.addr[f.Addr], bp)
					return bp
				})
				attach(bp, cl)
				n++
			case "return":
				if f.Size == 0 {
					continue
				}
				bp := get(fmt.Sprintf("%d:r%x", si, f.Addr), func() *boundProbe {
					bp := &boundProbe{Prov: "fn", Mod: mod, Func: fname, Name: "return", Addr: f.Addr, Size: f.Size, sp: sp}
					sp.rets = append(sp.rets, retRange{f.Addr, f.Addr + f.Size, bp})
					for _, g := range sp.funcs {
						if g.Module == f.Module && g.Name == f.Name+".cold" && g.Size > 0 {
							sp.rets = append(sp.rets, retRange{g.Addr, g.Addr + g.Size, bp})
						}
					}
					return bp
				})
				attach(bp, cl)
				n++
			default:
				off, _ := strconv.ParseUint(name, 16, 64)
				if off >= f.Size {
					continue
				}
				a := f.Addr + off
				bp := get(fmt.Sprintf("%d:o%x", si, a), func() *boundProbe {
					bp := &boundProbe{Prov: "fn", Mod: mod, Func: fname, Name: strconv.FormatUint(off, 16), Addr: a, Size: f.Size, sp: sp}
					sp.addr[a] = append(sp.addr[a], bp)
					return bp
				})
				attach(bp, cl)
				n++
			}
		}
	}
	return n
}
