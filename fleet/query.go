package fleet

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"golang.org/x/arch/x86/x86asm"

	"ttd/internal/linux"
	"ttd/reader"
	"ttd/symbols"
	"ttd/x86"
)

// The typed rows of the queries. Every row carries the recording it
// came from (Trace, as listed), the position of the event, the process
// and the thread.

// CallEvent is a function entry or return, as re-simulation sees it in
// one segment. SP is the stack pointer at the entry (pointing at the
// return address) and at the return instruction: equal for the entry
// and the return of one call, which is how PairCalls pairs them.
type CallEvent struct {
	Trace  string
	Func   string
	Pos    uint64
	Pid    int
	Tid    int
	SP     uint64
	Return bool
	Args   []uint64 // at entry: rdi, rsi, rdx, rcx, r8, r9 (SysV ABI)
	Retval uint64   // at return: rax
}

// Call is one call of a function: its entry and, when the recording
// holds it, its return (Returned). Return is the position of the return
// instruction.
type Call struct {
	Trace    string
	Func     string
	Pid      int
	Tid      int
	Entry    uint64
	Return   uint64
	Returned bool
	Args     []uint64
	Retval   uint64
}

// Syscall is one completed syscall.
type Syscall struct {
	Trace string
	Name  string
	Nr    int
	Pos   uint64
	Pid   int
	Tid   int
	Args  []uint64
	Ret   int64
	Errno int // -Ret for a failed syscall, else 0
}

// Access is one memory access to a watched range.
type Access struct {
	Trace  string
	Pos    uint64
	Pid    int
	Tid    int
	PC     uint64 // the accessing instruction (0 for a signal frame)
	Write  bool
	Addr   uint64
	Size   int
	Value  uint64 // the bytes read or written, little-endian
	Source string // "instruction", "syscall" or "signal delivery"
}

func init() {
	register.DoFn3x1[context.Context, Segment, func(CallEvent), error](&callsFn{})
	register.Emitter1[CallEvent]()
	register.DoFn3x1[context.Context, Segment, func(Syscall), error](&syscallsFn{})
	register.Emitter1[Syscall]()
	register.DoFn3x1[context.Context, Segment, func(Access), error](&memoryFn{})
	register.Emitter1[Access]()
	register.Function2x0(keyCallFn)
	register.Emitter2[string, CallEvent]()
	register.Function3x0(pairFn)
	register.Iter1[CallEvent]()
	register.Emitter1[Call]()
}

// Calls gives one row per call of the named functions (ELF or DWARF
// names: "malloc", "main.work") across the recordings, entries and
// returns paired. Only the functions' own code is hooked during
// re-simulation; the rest runs at full speed. A function that a
// recording does not have gives no rows for it.
func (rs Recordings) Calls(s beam.Scope, funcs ...string) (beam.PCollection, error) {
	ev, err := rs.CallEvents(s, funcs...)
	if err != nil {
		return beam.PCollection{}, err
	}
	return PairCalls(s, ev), nil
}

// CallEvents gives the entries and returns of the named functions,
// unpaired (one row per event).
func (rs Recordings) CallEvents(s beam.Scope, funcs ...string) (beam.PCollection, error) {
	if len(funcs) == 0 {
		return beam.PCollection{}, fmt.Errorf("fleet: Calls: no function named")
	}
	for _, f := range funcs {
		if strings.TrimSpace(f) == "" {
			return beam.PCollection{}, fmt.Errorf("fleet: Calls: an empty function name")
		}
	}
	s = s.Scope("fleet.Calls")
	return beam.ParDo(s, &callsFn{Funcs: funcs}, rs.Segments), nil
}

// Syscalls gives one row per completed syscall of the named kinds
// ("write", "openat"; none: all of them).
func (rs Recordings) Syscalls(s beam.Scope, names ...string) (beam.PCollection, error) {
	var nrs []int
	for _, n := range names {
		nr, ok := linux.SyscallNumber(n)
		if !ok {
			return beam.PCollection{}, fmt.Errorf("fleet: Syscalls: no syscall named %q", n)
		}
		nrs = append(nrs, nr)
	}
	s = s.Scope("fleet.Syscalls")
	return beam.ParDo(s, &syscallsFn{Nrs: nrs}, rs.Segments), nil
}

// Watch says which memory accesses Memory reports.
type Watch struct {
	// Ranges are ADDR:LEN, SYMBOL (its size) or SYMBOL:LEN; an address
	// may be SYMBOL+OFF. Symbols resolve in each recording.
	Ranges      []string
	Read, Write bool
}

// Memory gives one row per access to the watched ranges. Only those
// ranges are watched during re-simulation.
func (rs Recordings) Memory(s beam.Scope, w Watch) (beam.PCollection, error) {
	if len(w.Ranges) == 0 {
		return beam.PCollection{}, fmt.Errorf("fleet: Memory: no range to watch")
	}
	if !w.Read && !w.Write {
		return beam.PCollection{}, fmt.Errorf("fleet: Memory: neither reads nor writes asked for")
	}
	for _, r := range w.Ranges {
		if _, _, err := splitRange(r); err != nil {
			return beam.PCollection{}, fmt.Errorf("fleet: Memory: %w", err)
		}
	}
	s = s.Scope("fleet.Memory")
	return beam.ParDo(s, &memoryFn{Ranges: w.Ranges, Read: w.Read, Write: w.Write}, rs.Segments), nil
}

// splitRange splits ADDR[:LEN] (LEN 0: the symbol's size).
func splitRange(spec string) (addr string, n uint64, err error) {
	addr = spec
	if i := strings.LastIndexByte(spec, ':'); i >= 0 {
		addr = spec[:i]
		n, err = strconv.ParseUint(spec[i+1:], 0, 64)
		if err != nil || n == 0 {
			return "", 0, fmt.Errorf("range %q: bad length %q", spec, spec[i+1:])
		}
	}
	if strings.TrimSpace(addr) == "" {
		return "", 0, fmt.Errorf("range %q: no address", spec)
	}
	return addr, n, nil
}

// funcRange is a hooked function: its entry, and the extent [lo, hi) in
// which a ret instruction is its return.
type funcRange struct {
	name   string
	lo, hi uint64
}

// callsFn re-simulates a segment with the named functions hooked.
type callsFn struct {
	Funcs []string
}

// resolveFuncs finds the functions in a recording's symbols.
func resolveFuncs(syms *symbols.Table, funcs []string) []funcRange {
	var out []funcRange
	for _, name := range funcs {
		entry, ok := syms.FunctionEntry(name)
		if !ok {
			continue
		}
		fr := funcRange{name: name, lo: entry, hi: entry + 1}
		if addr, size, ok := syms.LookupSymbol(name); ok && addr == entry && size > 0 {
			fr.hi = entry + size
		}
		out = append(out, fr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].lo < out[j].lo })
	return out
}

func (f *callsFn) ProcessElement(ctx context.Context, sg Segment, emit func(CallEvent)) error {
	return Replay(ctx, sg, func(ot *Opened, r *reader.Replay) error {
		syms, err := ot.Symbols()
		if err != nil {
			return err
		}
		fns := resolveFuncs(syms, f.Funcs)
		if len(fns) == 0 {
			return nil
		}
		find := func(pc uint64) *funcRange {
			i := sort.Search(len(fns), func(i int) bool { return fns[i].hi > pc })
			if i < len(fns) && fns[i].lo <= pc {
				return &fns[i]
			}
			return nil
		}
		// Hooked: the blocks holding a function's entry or one of its
		// rets; the rest of the functions' code runs translated.
		r.HookBlock = func(b *x86.Block) bool {
			for i := range b.Insts {
				in := &b.Insts[i]
				if fr := find(in.PC); fr != nil && (in.PC == fr.lo || in.Op == x86asm.RET) {
					return true
				}
			}
			return false
		}
		r.Hook = func(r *reader.Replay, c *x86.CPU, in *x86.Inst) {
			fr := find(in.PC)
			if fr == nil {
				return
			}
			tid, _ := r.Current()
			ev := CallEvent{Trace: sg.Trace, Func: fr.name, Pos: r.InstPosition(c), Pid: sg.Pid, Tid: tid, SP: c.R[x86.RSP]}
			switch {
			case in.PC == fr.lo:
				ev.Args = []uint64{c.R[x86.RDI], c.R[x86.RSI], c.R[x86.RDX], c.R[x86.RCX], c.R[x86.R8], c.R[x86.R9]}
			case in.Op == x86asm.RET && fr.hi > fr.lo+1:
				ev.Return, ev.Retval = true, c.R[x86.RAX]
			default:
				return
			}
			emit(ev)
		}
		return nil
	})
}

// syscallsFn re-simulates a segment reporting the asked syscalls.
type syscallsFn struct {
	Nrs []int // none: all
}

func (f *syscallsFn) ProcessElement(ctx context.Context, sg Segment, emit func(Syscall)) error {
	want := map[int]bool{}
	for _, nr := range f.Nrs {
		want[nr] = true
	}
	return Replay(ctx, sg, func(ot *Opened, r *reader.Replay) error {
		r.OnEvent = func(ev *reader.Event) {
			if ev.Kind != reader.EventSyscall {
				return
			}
			sc := ev.Record.Syscall
			if len(want) > 0 && !want[sc.Nr] {
				return
			}
			row := Syscall{Trace: sg.Trace, Name: linux.SyscallName(sc.Nr), Nr: sc.Nr, Pos: ev.Position,
				Pid: sg.Pid, Tid: ev.Tid, Args: append([]uint64(nil), sc.Args[:]...), Ret: sc.Result}
			if sc.Result < 0 && sc.Result > -4096 {
				row.Errno = int(-sc.Result)
			}
			emit(row)
		}
		return nil
	})
}

// memoryFn re-simulates a segment with the asked ranges watched.
type memoryFn struct {
	Ranges      []string
	Read, Write bool
}

func (f *memoryFn) ProcessElement(ctx context.Context, sg Segment, emit func(Access)) error {
	return Replay(ctx, sg, func(ot *Opened, r *reader.Replay) error {
		ranges, err := f.resolve(ot)
		if err != nil {
			return err
		}
		r.Watch(ranges)
		r.Access = func(a *reader.Access) {
			if a.Write && !f.Write || !a.Write && !f.Read {
				return
			}
			emit(Access{Trace: sg.Trace, Pos: a.Position, Pid: sg.Pid, Tid: a.Tid, PC: a.PC, Write: a.Write,
				Addr: a.Addr, Size: a.Size, Value: a.Value, Source: a.Source.String()})
		}
		return nil
	})
}

// resolve turns the range specs into addresses in one recording.
func (f *memoryFn) resolve(ot *Opened) ([]reader.Range, error) {
	var out []reader.Range
	for _, spec := range f.Ranges {
		addrText, n, err := splitRange(spec)
		if err != nil {
			return nil, err
		}
		addr, err := strconv.ParseUint(addrText, 0, 64)
		if err != nil || n == 0 {
			syms, serr := ot.Symbols()
			if serr != nil {
				return nil, serr
			}
			addr, err = syms.ParseAddr(addrText)
			if err != nil {
				return nil, fmt.Errorf("range %q: %w", spec, err)
			}
			if n == 0 {
				_, size, ok := syms.LookupSymbol(addrText)
				if !ok || size == 0 {
					return nil, fmt.Errorf("range %q: the size of %s is unknown; give ADDR:LEN", spec, addrText)
				}
				n = size
			}
		}
		out = append(out, reader.Range{Lo: addr, Hi: addr + n})
	}
	return out, nil
}

// PairCalls pairs the entries and returns of CallEvents into Calls: the
// events of one thread at one stack pointer, in position order, are
// entry, return, entry, return... An entry followed by another entry (a
// longjmp or an exception unwound the call) or by nothing has no return.
func PairCalls(s beam.Scope, events beam.PCollection) beam.PCollection {
	s = s.Scope("fleet.PairCalls")
	keyed := beam.ParDo(s, keyCallFn, events)
	return beam.ParDo(s, pairFn, beam.GroupByKey(s, keyed))
}

func keyCallFn(ev CallEvent, emit func(string, CallEvent)) {
	emit(fmt.Sprintf("%s\x00%d\x00%x\x00%s", ev.Trace, ev.Tid, ev.SP, ev.Func), ev)
}

func pairFn(_ string, iter func(*CallEvent) bool, emit func(Call)) {
	var evs []CallEvent
	var ev CallEvent
	for iter(&ev) {
		evs = append(evs, ev)
	}
	for _, c := range Pair(evs) {
		emit(c)
	}
}

// Pair pairs the entries and returns of one function, thread and stack
// pointer (PairCalls does the grouping), in position order.
func Pair(evs []CallEvent) []Call {
	sort.Slice(evs, func(i, j int) bool { return evs[i].Pos < evs[j].Pos })
	var out []Call
	var open *Call
	for _, ev := range evs {
		if !ev.Return {
			if open != nil {
				out = append(out, *open)
			}
			open = &Call{Trace: ev.Trace, Func: ev.Func, Pid: ev.Pid, Tid: ev.Tid, Entry: ev.Pos, Args: ev.Args}
			continue
		}
		if open == nil {
			continue // the call began before the recording did
		}
		open.Return, open.Returned, open.Retval = ev.Pos, true, ev.Retval
		out = append(out, *open)
		open = nil
	}
	if open != nil {
		out = append(out, *open)
	}
	return out
}
