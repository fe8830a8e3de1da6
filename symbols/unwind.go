package symbols

import (
	"debug/dwarf"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/go-delve/delve/pkg/dwarf/frame"
	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/go-delve/delve/pkg/dwarf/op"
	"github.com/go-delve/delve/pkg/dwarf/reader"
)

// Regs is the general-purpose register set in x86 encoding order (RAX,
// RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8–R15) followed by RIP: the order of
// the x86 package's CPU.R, so a CPU state converts by copying.
type Regs [17]uint64

// Register indexes into Regs.
const (
	RAX = iota
	RCX
	RDX
	RBX
	RSP
	RBP
	RSI
	RDI
	R8
	R9
	R10
	R11
	R12
	R13
	R14
	R15
	RIP
)

// AllKnown is the Known mask of a complete register set.
const AllKnown = 1<<17 - 1

var regNames = [17]string{"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"}

// RegisterName returns the name of register i of Regs ("rax"…"rip").
func RegisterName(i int) string { return regNames[i] }

// RegisterIndex returns the Regs index of a register name ("rax", "RSP",
// "$rip", also "pc", "sp", "fp").
func RegisterIndex(name string) (int, bool) {
	name = strings.ToLower(strings.TrimPrefix(name, "$"))
	switch name {
	case "pc":
		return RIP, true
	case "sp":
		return RSP, true
	case "fp":
		return RBP, true
	}
	for i, n := range regNames {
		if n == name {
			return i, true
		}
	}
	return 0, false
}

// dwarfReg maps Regs indexes to DWARF register numbers, and back.
var (
	dwarfReg   = [17]uint64{0, 2, 1, 3, 7, 6, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	fromDwarf  = [17]int{RAX, RDX, RCX, RBX, RSI, RDI, RBP, RSP, R8, R9, R10, R11, R12, R13, R14, R15, RIP}
	calleeSave = uint32(1<<RBX | 1<<RBP | 1<<R12 | 1<<R13 | 1<<R14 | 1<<R15)
)

// MemReader reads len(buf) bytes of the program's memory at addr into buf.
// known reports for each byte whether it is known; nil means all are. A
// recording reports the bytes it never observed as not known (their
// content in buf does not matter). err is for memory that cannot be read
// at all, e.g. an unmapped address.
type MemReader func(addr uint64, buf []byte) (known []bool, err error)

// Frame is one frame of a backtrace.
type Frame struct {
	Index int
	// PC is the current instruction for frame 0 (and for a frame a
	// signal interrupted) and the return address for the frames above
	// it; an inlined frame has the PC of the frame it is inlined into.
	PC  uint64
	CFA uint64 // canonical frame address: the caller's RSP after return
	// Func is the function's name, "" if no module covers PC.
	Func   string
	Entry  uint64 // entry address of Func
	File   string // source position ("" and 0 without line information)
	Line   int
	Module string
	// Inlined reports a call inlined into the next frame: the two share
	// registers and CFA.
	Inlined bool
	// Regs holds the registers as they are in this frame; Known tells
	// which were recovered (bit i for Regs[i]). Above frame 0 the
	// caller-saved registers are unknown unless the CFI saved them.
	Regs  Regs
	Known uint32
	// TP is the thread pointer (fs_base) of the frame's thread, for its
	// thread-local variables; 0 when unknown (the caller sets it).
	TP uint64
	// ModuleTLS, when set, finds the address of offset off in the
	// thread-local block of the shared library loaded at loadAddr
	// (Module.LoadAddr) for the frame's thread, as the C library keeps
	// it; the caller sets it. Without it, a library's __thread
	// variables cannot be read.
	ModuleTLS func(loadAddr, off uint64) (uint64, error)

	img   *image
	fn    *function
	scope *godwarf.Tree // subprogram or inlined subroutine; nil without DWARF
	look  uint64        // address for lookups: PC, or PC-1 above frame 0
	up    *Frame        // the frame that called this one's function, for entry values
}

// Reg returns register i of the frame and whether it is known.
func (f *Frame) Reg(i int) (uint64, bool) { return f.Regs[i], f.Known&(1<<i) != 0 }

// String formats the frame as a backtrace line.
func (f *Frame) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d 0x%016x in ", f.Index, f.PC)
	switch {
	case f.Func == "":
		b.WriteString("??")
	case f.Inlined || f.PC == f.Entry:
		b.WriteString(f.Func)
	default:
		fmt.Fprintf(&b, "%s+%#x", f.Func, f.PC-f.Entry)
	}
	if f.File != "" {
		fmt.Fprintf(&b, " at %s:%d", f.File, f.Line)
	} else if f.Module != "" {
		fmt.Fprintf(&b, " from %s", f.Module)
	}
	return b.String()
}

// Unwind returns up to max frames of the stack described by regs and mem,
// innermost first. It follows the CFI of .eh_frame and .debug_frame
// (delve's pkg/dwarf/frame), falls back to the frame-pointer chain where a
// function has none, and stops where the return address is undefined
// (_start, a thread's entry), unknown, outside every module, or where the
// stack would not grow. Calls inlined by the compiler appear as frames of
// their own with Inlined set, as gdb shows them.
func (t *Table) Unwind(regs Regs, mem MemReader, max int) []Frame {
	var frames []Frame
	cur, known := regs, uint32(AllKnown)
	interrupted := true // frame 0, and a frame a signal interrupted, are not at a return address
	for len(frames) < max {
		pc := cur[RIP]
		look := pc
		if !interrupted {
			look = pc - 1 // inside the call instruction, not after it
		}
		img := t.imageFor(look)
		for _, f := range t.framesAt(img, pc, look, cur, known) {
			if len(frames) < max {
				f.Index = len(frames)
				frames = append(frames, f)
			}
		}
		if img == nil {
			break
		}
		// The CFA comes from unwinding this frame: done for the last
		// frame returned too, so that every frame has its CFA (the
		// frame base of -O0 code).
		caller, cknown, cfa, ok, signal := t.step(img, look, interrupted, cur, known, mem)
		interrupted = signal
		for i := len(frames) - 1; i >= 0 && frames[i].CFA == 0 && frames[i].PC == pc; i-- {
			frames[i].CFA = cfa
		}
		if len(frames) >= max || !ok || cknown&(1<<RIP) == 0 || caller[RIP] == 0 || cknown&(1<<RSP) == 0 || caller[RSP] <= cur[RSP] {
			break
		}
		if t.imageFor(caller[RIP]-1) == nil {
			break
		}
		cur, known = caller, cknown
	}
	// Link each frame to the one its physical function returns to.
	for i := range frames {
		j := i
		for j < len(frames) && frames[j].Inlined {
			j++
		}
		if j+1 < len(frames) {
			frames[i].up = &frames[j+1]
		}
	}
	return frames
}

// framesAt describes the physical frame at pc: one Frame, preceded by one
// per inlined call that contains look.
func (t *Table) framesAt(img *image, pc, look uint64, regs Regs, known uint32) []Frame {
	f := Frame{PC: pc, Regs: regs, Known: known, img: img, look: look}
	if img == nil {
		return []Frame{f}
	}
	f.Module = img.path
	if fi, ok := t.FuncForPC(look); ok {
		f.Func, f.Entry = fi.Name, fi.Entry
	}
	f.File, f.Line, _ = t.PCToLine(look)
	fn := img.funcAt(look)
	if fn == nil {
		return []Frame{f}
	}
	f.fn = fn
	tree, err := img.tree(fn.off)
	if err != nil {
		return []Frame{f}
	}
	f.scope = tree
	stack := reader.InlineStack(tree, look)
	if len(stack) == 0 {
		return []Frame{f}
	}
	out := make([]Frame, 0, len(stack)+1)
	file, ln := f.File, f.Line
	for _, n := range stack {
		g := f
		g.Inlined = true
		g.scope = n
		g.Func, _ = n.Val(dwarf.AttrName).(string)
		if len(n.Ranges) > 0 {
			g.Entry = n.Ranges[0][0]
		}
		g.File, g.Line = file, ln
		out = append(out, g)
		cf, _ := n.Val(attrCallFile).(int64)
		cl, _ := n.Val(attrCallLine).(int64)
		file, ln = fn.cu.fileName(cf), int(cl)
	}
	f.File, f.Line = file, ln
	return append(out, f)
}

// tree returns the DIE tree of the function at off, cached.
func (img *image) tree(off dwarf.Offset) (*godwarf.Tree, error) {
	img.typeMu.Lock()
	if tr, ok := img.trees[off]; ok {
		img.typeMu.Unlock()
		return tr, nil
	}
	img.typeMu.Unlock()
	tr, err := img.loadTree(off)
	if err != nil {
		return nil, err
	}
	img.typeMu.Lock()
	if img.trees == nil {
		img.trees = map[dwarf.Offset]*godwarf.Tree{}
	}
	img.trees[off] = tr
	img.typeMu.Unlock()
	return tr, nil
}

// step computes the caller's registers from the frame at look. signal
// reports a signal trampoline (CIE augmentation "S"): its caller was
// interrupted, not calling.
func (t *Table) step(img *image, look uint64, top bool, cur Regs, known uint32, mem MemReader) (caller Regs, cknown uint32, cfa uint64, ok, signal bool) {
	if fde, err := img.frames.FDEForPC(look); err == nil {
		if ctx := establish(fde, look); ctx != nil {
			caller, cknown, cfa, ok = t.stepCFI(ctx, cur, known, mem)
			return caller, cknown, cfa, ok, strings.Contains(fde.CIE.Augmentation, "S")
		}
	}
	caller, cknown, cfa, ok = t.stepFP(img, look, top, cur, known, mem)
	return caller, cknown, cfa, ok, false
}

func establish(fde *frame.FrameDescriptionEntry, pc uint64) (ctx *frame.FrameContext) {
	defer func() {
		if recover() != nil {
			ctx = nil
		}
	}()
	ctx, err := fde.EstablishFrame(pc)
	if err != nil {
		return nil
	}
	return ctx
}

// dwarfRegs converts a register set to delve's form; unknown registers
// are left out.
func dwarfRegs(r Regs, known uint32, cfa uint64, bias uint64) op.DwarfRegisters {
	list := make([]*op.DwarfRegister, 17)
	for i := range r {
		if known&(1<<i) != 0 {
			list[dwarfReg[i]] = op.DwarfRegisterFromUint64(r[i])
		}
	}
	regs := op.NewDwarfRegisters(bias, list, binary.LittleEndian, 16, 7, 6, 0)
	regs.CFA = int64(cfa)
	return *regs
}

// readU64 reads a known 8-byte word.
func (t *Table) readU64(mem MemReader, addr uint64) (uint64, bool) {
	var b [8]byte
	known, err := t.readMem(mem, addr, b[:])
	if err != nil || known != nil {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b[:]), true
}

// memFunc adapts mem to delve's expression evaluator, failing on unknown
// bytes.
func (t *Table) memFunc(mem MemReader) op.ReadMemoryFunc {
	return func(b []byte, addr uint64) (int, error) {
		known, err := t.readMem(mem, addr, b)
		if err != nil {
			return 0, err
		}
		if known != nil {
			return 0, errUnknown
		}
		return len(b), nil
	}
}

func (t *Table) stepCFI(ctx *frame.FrameContext, cur Regs, known uint32, mem MemReader) (Regs, uint32, uint64, bool) {
	var cfa uint64
	switch ctx.CFA.Rule {
	case frame.RuleCFA:
		i := fromDwarfNum(ctx.CFA.Reg)
		if i < 0 || known&(1<<i) == 0 {
			return cur, 0, 0, false
		}
		cfa = uint64(int64(cur[i]) + ctx.CFA.Offset)
	case frame.RuleExpression, frame.RuleValExpression:
		v, _, err := execLocation(dwarfRegs(cur, known, 0, 0), ctx.CFA.Expression, t.memFunc(mem))
		if err != nil {
			return cur, 0, 0, false
		}
		cfa = uint64(v)
	default:
		return cur, 0, 0, false
	}
	var out Regs
	var ok uint32
	for i := range out {
		rule, has := ctx.Regs[dwarfReg[i]]
		if !has {
			switch {
			case i == RSP:
				out[i], ok = cfa, ok|1<<i
			case calleeSave&(1<<i) != 0:
				out[i], ok = cur[i], ok|known&(1<<i)
			}
			continue
		}
		if rule.Rule == frame.RuleSameVal {
			out[i], ok = cur[i], ok|known&(1<<i)
			continue
		}
		v, good := t.applyRule(rule, cfa, cur, known, mem)
		if good {
			out[i], ok = v, ok|1<<i
		}
	}
	if ctx.RetAddrReg != 16 {
		if rule, has := ctx.Regs[ctx.RetAddrReg]; has {
			v, good := t.applyRule(rule, cfa, cur, known, mem)
			out[RIP] = v
			if good {
				ok |= 1 << RIP
			} else {
				ok &^= 1 << RIP
			}
		}
	}
	return out, ok, cfa, true
}

func fromDwarfNum(n uint64) int {
	if n < uint64(len(fromDwarf)) {
		return fromDwarf[n]
	}
	return -1
}

// applyRule computes a caller's register from its CFI rule.
func (t *Table) applyRule(rule frame.DWRule, cfa uint64, cur Regs, known uint32, mem MemReader) (uint64, bool) {
	withCFA := func() (int64, error) {
		// DWARF pushes the CFA before running a register's expression.
		expr := append([]byte{byte(op.DW_OP_call_frame_cfa)}, rule.Expression...)
		v, _, err := execLocation(dwarfRegs(cur, known, cfa, 0), expr, t.memFunc(mem))
		return v, err
	}
	switch rule.Rule {
	case frame.RuleOffset:
		return t.readU64(mem, uint64(int64(cfa)+rule.Offset))
	case frame.RuleValOffset:
		return uint64(int64(cfa) + rule.Offset), true
	case frame.RuleRegister:
		i := fromDwarfNum(rule.Reg)
		if i < 0 || known&(1<<i) == 0 {
			return 0, false
		}
		return cur[i], true
	case frame.RuleExpression:
		a, err := withCFA()
		if err != nil {
			return 0, false
		}
		return t.readU64(mem, uint64(a))
	case frame.RuleValExpression:
		v, err := withCFA()
		return uint64(v), err == nil
	case frame.RuleCFA:
		i := fromDwarfNum(rule.Reg)
		if i < 0 || known&(1<<i) == 0 {
			return 0, false
		}
		return uint64(int64(cur[i]) + rule.Offset), true
	}
	return 0, false
}

// stepFP unwinds a function without CFI: at its entry the return address
// is at [rsp]; after "push %rbp" at [rsp+8]; after "mov %rsp,%rbp" the
// frame-pointer chain holds the caller's rbp at [rbp] and the return
// address at [rbp+8].
func (t *Table) stepFP(img *image, look uint64, top bool, cur Regs, known uint32, mem MemReader) (Regs, uint32, uint64, bool) {
	out := cur
	ok := known & calleeSave
	cfa := uint64(0)
	off := -1
	if fi, found := t.FuncForPC(look); top && found && look >= fi.Entry && look-fi.Entry < 16 {
		var b [5]byte
		kn := make([]bool, len(b))
		img.readStatic(fi.Entry, b[:], kn)
		p := 0
		if b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa { // endbr64
			p = 4
		}
		switch d := int(look - fi.Entry); {
		case d == 0 || d == p:
			off = 0
		case d == p+1 && b[p] == 0x55 && kn[p]: // after push %rbp
			off = 8
		}
	}
	switch {
	case off >= 0 && known&(1<<RSP) != 0:
		cfa = cur[RSP] + uint64(off) + 8
		if off == 8 {
			v, good := t.readU64(mem, cur[RSP])
			out[RBP] = v
			if !good {
				ok &^= 1 << RBP
			}
		}
	case known&(1<<RBP) != 0 && cur[RBP] >= cur[RSP]:
		cfa = cur[RBP] + 16
		v, good := t.readU64(mem, cur[RBP])
		if !good {
			return cur, 0, 0, false
		}
		out[RBP] = v
	default:
		return cur, 0, 0, false
	}
	ra, good := t.readU64(mem, cfa-8)
	if !good || t.imageFor(ra-1) == nil {
		return cur, 0, 0, false
	}
	out[RIP], out[RSP] = ra, cfa
	return out, ok | 1<<RIP | 1<<RSP, cfa, true
}
