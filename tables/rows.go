package tables

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"golang.org/x/arch/x86/x86asm"

	"ttd/reader"
	"ttd/symbols"
	"ttd/x86"
)

// CallRow is one call of a function (TTD.Calls).
type CallRow struct {
	Function string `parquet:"function"`
	Thread   int64  `parquet:"thread"`
	// EntryPos is the position of the function's first instruction;
	// ReturnPos the position just after its return (0 with Returned
	// false: the call never returned in the recording).
	EntryPos  uint64   `parquet:"entry_pos"`
	ReturnPos uint64   `parquet:"return_pos"`
	Returned  bool     `parquet:"returned"`
	Args      []uint64 `parquet:"args,list" table:"hex"` // rdi, rsi, rdx, rcx, r8, r9 at entry
	RetVal    uint64   `parquet:"retval" table:"hex"`    // rax at return
	Caller    string   `parquet:"caller"`                // function+offset of the return address
	ReturnTo  uint64   `parquet:"return_address" table:"hex"`
}

// MemoryRow is one memory access (TTD.Memory).
type MemoryRow struct {
	Position uint64 `parquet:"position"`
	Thread   int64  `parquet:"thread"`
	PC       uint64 `parquet:"pc" table:"hex"`
	Access   string `parquet:"access"` // "r" or "w"
	Source   string `parquet:"source"` // instruction, syscall, signal delivery
	Address  uint64 `parquet:"address" table:"hex"`
	Size     int32  `parquet:"size"`
	Value    uint64 `parquet:"value" table:"hex"`
}

// ErrNoFunction is returned by Calls for a name no module defines.
var ErrNoFunction = errors.New("no such function")

// Calls re-simulates the trace once, from its start, and returns every
// call of the named function in order of entry. A call is its entry (the
// function's first instruction executing) and its return (the
// instruction at the return address executing with the stack pointer the
// call had before it): recursion, threads and calls that never return
// (longjmp, exit) are told apart. It is sequential: a call may return in
// a later checkpoint segment than the one it entered in.
func Calls(tr *reader.Trace, sy *symbols.Table, name string) ([]CallRow, error) {
	if sy == nil {
		return nil, fmt.Errorf("%s: %w (the trace has no symbols)", name, ErrNoFunction)
	}
	entry, ok := sy.FunctionEntry(name)
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, ErrNoFunction)
	}
	r, err := tr.NewReplay(0)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	type open struct {
		row int
		tid int
		sp  uint64 // rsp after the return
	}
	var rows []CallRow
	var pending []open
	rets := map[uint64]int{} // return address -> calls waiting there
	// Hooked: the entry's block, and the blocks that may leave to a
	// return address (a ret, an indirect jump: longjmp); the block there
	// is hooked when execution comes to it with a call pending there
	// (HookGate), the others run translated.
	r.HookBlock = func(b *x86.Block) bool {
		if b.PC <= entry && entry < b.End {
			return true
		}
		last := &b.Insts[len(b.Insts)-1]
		return last.Op == x86asm.RET || last.Op == x86asm.JMP && last.Args[0].Kind != x86.KRel
	}
	r.HookGate = func(r *reader.Replay, c *x86.CPU) bool { return len(rets) > 0 && rets[c.RIP] > 0 }
	var buf [8]byte
	r.Hook = func(r *reader.Replay, c *x86.CPU, in *x86.Inst) {
		tid, _ := r.Current()
		if n := rets[in.PC]; n > 0 {
			sp := c.R[x86.RSP]
			for i := len(pending) - 1; i >= 0; i-- {
				p := pending[i]
				if p.tid != tid || p.sp != sp || rows[p.row].ReturnTo != in.PC {
					continue
				}
				rows[p.row].ReturnPos = r.InstPosition(c)
				rows[p.row].Returned = true
				rows[p.row].RetVal = c.R[x86.RAX]
				pending = slices.Delete(pending, i, i+1)
				if rets[in.PC]--; rets[in.PC] == 0 {
					delete(rets, in.PC)
				}
				break
			}
		}
		if in.PC == entry {
			sp := c.R[x86.RSP]
			var ret uint64
			if r.Memory().Peek(sp, buf[:]) == nil {
				ret = binary.LittleEndian.Uint64(buf[:])
			}
			row := CallRow{Function: name, Thread: int64(tid), EntryPos: r.InstPosition(c), ReturnTo: ret,
				Args: []uint64{c.R[x86.RDI], c.R[x86.RSI], c.R[x86.RDX], c.R[x86.RCX], c.R[x86.R8], c.R[x86.R9]}}
			if fn, fe, ok := sy.PCToFunc(ret); ok {
				row.Caller = fmt.Sprintf("%s+%#x", fn, ret-fe)
			}
			// Calls of this thread deeper in the stack than this one
			// that never returned (longjmp) are abandoned.
			for i := len(pending) - 1; i >= 0; i-- {
				if p := pending[i]; p.tid == tid && p.sp <= sp {
					if rets[rows[p.row].ReturnTo]--; rets[rows[p.row].ReturnTo] <= 0 {
						delete(rets, rows[p.row].ReturnTo)
					}
					pending = slices.Delete(pending, i, i+1)
				}
			}
			rows = append(rows, row)
			pending = append(pending, open{row: len(rows) - 1, tid: tid, sp: sp + 8})
			rets[ret]++
		}
	}
	err = r.RunTo(tr.End())
	if err != nil && err != reader.ErrEnd && !errors.Is(err, io.ErrUnexpectedEOF) {
		return rows, err
	}
	return rows, nil
}

// Memory returns every access to [addr, addr+n) of the kinds asked for
// (read, write), in position order. Checkpoint segments re-simulate in
// parallel, workers at a time (0: one per CPU).
func Memory(tr *reader.Trace, addr, n uint64, read, write bool, workers int) ([]MemoryRow, error) {
	cps, err := tr.Checkpoints()
	if err != nil {
		return nil, err
	}
	per := make([][]MemoryRow, len(cps))
	errs := make([]error, len(cps))
	reader.Parallel(len(cps), workers, func(k int) {
		r, err := tr.NewReplayAt(cps[k])
		if err != nil {
			errs[k] = err
			return
		}
		defer r.Close()
		r.Watch([]reader.Range{{Lo: addr, Hi: addr + n}})
		// Shared memory's accesses by every process (each through its
		// own mapping), at the focus's addresses.
		r.WatchShared()
		r.Access = func(a *reader.Access) {
			if a.Write && !write || !a.Write && !read {
				return
			}
			acc := "r"
			if a.Write {
				acc = "w"
			}
			per[k] = append(per[k], MemoryRow{Position: a.Position, Thread: int64(a.Tid), PC: a.PC, Access: acc,
				Source: a.Source.String(), Address: a.Addr, Size: int32(a.Size), Value: a.Value})
		}
		end := tr.End()
		if k+1 < len(cps) {
			end = cps[k+1].Position
		}
		err = r.RunTo(end)
		if err != nil && err != reader.ErrEnd && !errors.Is(err, io.ErrUnexpectedEOF) {
			errs[k] = err
		}
	})
	var out []MemoryRow
	for k := range per {
		if errs[k] != nil {
			return out, fmt.Errorf("segment %d: %w", k, errs[k])
		}
		out = append(out, per[k]...)
	}
	return out, nil
}
