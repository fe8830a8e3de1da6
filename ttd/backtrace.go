package ttd

import (
	"fmt"

	"ttd/symbols"
	"ttd/x86"
)

// Frame is one frame of a backtrace.
type Frame struct {
	// PC is the current instruction of the innermost frame and the
	// return address of the others.
	PC uint64
	// CFA is the frame's canonical frame address (the caller's rsp
	// after the return), or the frame pointer it was found through; 0
	// when unknown.
	CFA uint64
	// Function is the function's name and offset ("main+0x1f"), File
	// and Line its source position, when known.
	Function string
	File     string
	Line     int
	// Inlined marks a call the compiler inlined into the next frame.
	Inlined bool
	// Note says why the backtrace ends after this frame, if it ends for
	// a reason other than reaching the outermost frame.
	Note string
}

// Backtrace methods.
const (
	BacktraceCFI = "CFI unwinding (.eh_frame, .debug_frame; frame pointers where a function has none)"
	BacktraceFP  = "frame-pointer chain from rbp: functions built without frame pointers are missed or end the chain"
)

// unwinder is what package symbols' Table offers for backtraces.
type unwinder interface {
	Unwind(regs symbols.Regs, mem symbols.MemReader, max int) []symbols.Frame
}

// maxStack bounds how far above rsp a frame pointer may point.
const maxStack = 64 << 20

// Backtrace returns thread tid's call stack at the current position (tid
// 0: the current thread), innermost first, at most max frames, and how it
// was found. With the symbol table's CFI it unwinds as a debugger does;
// without, it follows the chain of saved frame pointers. Memory the
// recording never saw ends the stack honestly, never with invented
// frames.
func (s *Session) Backtrace(tid, max int) ([]Frame, string, error) {
	r, err := s.Registers(tid)
	if err != nil {
		return nil, "", err
	}
	sy, _ := s.ThreadSymbols(tid)
	if u, ok := sy.(unwinder); ok {
		var regs symbols.Regs
		copy(regs[:16], r.GPR[:])
		regs[symbols.RIP] = r.RIP
		mem := func(addr uint64, buf []byte) ([]bool, error) {
			m, err := s.ReadMemory(addr, len(buf))
			if err != nil {
				return nil, err
			}
			copy(buf, m.Data)
			return m.Known, nil
		}
		var out []Frame
		for _, f := range u.Unwind(regs, mem, max) {
			fr := Frame{PC: f.PC, CFA: f.CFA, Function: f.Func, File: f.File, Line: f.Line, Inlined: f.Inlined}
			if f.Func != "" && f.PC != f.Entry && !f.Inlined {
				fr.Function = fmt.Sprintf("%s+%#x", f.Func, f.PC-f.Entry)
			}
			out = append(out, fr)
		}
		if len(out) > 0 {
			return out, BacktraceCFI, nil
		}
	}
	return s.framePointerChain(r, sy, max), BacktraceFP, nil
}

// framePointerChain follows [rbp] (the caller's rbp) and [rbp+8] (the
// return address). At a function's entry the return address is still at
// [rsp]. The chain ends at unknown memory, at a frame pointer outside the
// stack, or at a return address outside executable memory.
func (s *Session) framePointerChain(r Registers, sy Symbolizer, max int) []Frame {
	name := func(f *Frame, caller bool) {
		if sy == nil {
			return
		}
		look := f.PC
		if caller {
			look-- // inside the call, not after it
		}
		if n, entry, ok := sy.PCToFunc(look); ok {
			f.Function = n
			if f.PC != entry {
				f.Function = fmt.Sprintf("%s+%#x", n, f.PC-entry)
			}
		}
		f.File, f.Line, _ = sy.PCToLine(look)
	}
	frames := []Frame{{PC: r.RIP}}
	word := func(a uint64) (uint64, bool) {
		m, err := s.ReadMemory(a, 8)
		if err != nil {
			return 0, false
		}
		return m.Uint(8)
	}
	isCode := func(pc uint64) bool {
		prot, ok := s.cur.Mapping(pc)
		return ok && prot&4 != 0
	}
	rsp, fp := r.GPR[x86.RSP], r.GPR[x86.RBP]
	if sy != nil {
		if _, entry, ok := sy.PCToFunc(r.RIP); ok && (r.RIP == entry || r.RIP == entry+4) {
			// At the entry (or after endbr64): the frame is not set up.
			if ret, ok := word(rsp); ok && isCode(ret) {
				frames = append(frames, Frame{PC: ret, CFA: rsp + 8})
			}
		}
	}
	for len(frames) < max {
		last := &frames[len(frames)-1]
		if fp < rsp || fp-rsp > maxStack {
			if fp != 0 {
				last.Note = "rbp does not point into the stack (no frame pointers here?)"
			}
			break
		}
		next, ok1 := word(fp)
		ret, ok2 := word(fp + 8)
		if !ok1 || !ok2 {
			last.Note = "the saved frame pointer or return address is unknown memory"
			break
		}
		if ret == 0 {
			break
		}
		if !isCode(ret) {
			last.Note = "the word after the saved rbp is not a return address (no frame pointers here?)"
			break
		}
		frames = append(frames, Frame{PC: ret, CFA: fp})
		if next <= fp {
			break
		}
		fp = next
	}
	for i := range frames {
		name(&frames[i], i > 0)
	}
	return frames
}
