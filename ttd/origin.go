package ttd

import (
	"errors"
	"fmt"
	"io"

	"golang.org/x/arch/x86/x86asm"

	"ttd/reader"
	"ttd/x86"
)

// Value origin (Pernosco's dataflow): where did the bytes at an address
// come from? Origin starts from the last write of the bytes before a
// position and follows the data backwards, one link at a time: a store
// of a register leads to the instruction that last wrote that register
// in the same thread; a load of memory, a pop or a string move
// (memcpy/memmove's rep movs) leads to the last write of the memory they
// read; a register-to-register move leads to the other register. So the
// chain goes through stack spills, copies and function arguments (passed
// in registers, spilled by the callee's prologue) alike. It ends where
// the value was made or came in: a constant, an instruction that
// computed it (arithmetic, an address), a syscall (its result register
// or the buffer the kernel wrote), a signal frame, or memory no
// instruction of the recording wrote (the program's image, or before the
// window of a ring-buffer trace).

// OriginKind says what one link of an origin chain did.
type OriginKind int

// Origin link kinds.
const (
	OriginStore    OriginKind = iota + 1 // a store of a register to memory
	OriginLoad                           // a load of memory into a register (pop included)
	OriginMove                           // a register copied to another
	OriginCopy                           // memory copied to memory (movs)
	OriginConstant                       // an immediate (or a register zeroed by itself): the end
	OriginComputed                       // an instruction computed the value: the end
	OriginSyscall                        // a syscall's result or output buffer: the end
	OriginSignal                         // written by a signal delivery: the end
	OriginUnseen                         // no write in the recording: the end
	OriginLimit                          // the chain was cut at MaxOriginLinks
)

var originKindNames = [...]string{OriginStore: "store", OriginLoad: "load", OriginMove: "move", OriginCopy: "copy",
	OriginConstant: "constant", OriginComputed: "computed", OriginSyscall: "syscall", OriginSignal: "signal",
	OriginUnseen: "never written", OriginLimit: "cut"}

func (k OriginKind) String() string {
	if k > 0 && int(k) < len(originKindNames) {
		return originKindNames[k]
	}
	return fmt.Sprintf("OriginKind(%d)", int(k))
}

// OriginLink is one link of an origin chain: the instruction at Position
// put the value where Into says (a register, or memory at Addr), taking
// it from From.
type OriginLink struct {
	Kind     OriginKind
	Position uint64 // the instruction's position (the state before it)
	Tid      int
	PC       uint64
	Disasm   string
	// Into and From describe the locations: "rax", "xmm0",
	// "[0x7ffe1234]:4"; From is empty at the end of the chain.
	Into, From string
	// Value holds the bytes the instruction put there (little-endian).
	Value []byte
}

// MaxOriginLinks bounds an origin chain.
const MaxOriginLinks = 64

// loc is where a value is: memory [addr, addr+size), or a register.
type loc struct {
	mem        bool
	addr, size uint64
	reg        uint8 // x86 register number (GPR 0..15)
	xmm        bool
}

func (l loc) String() string {
	switch {
	case l.mem:
		return fmt.Sprintf("[%#x]:%d", l.addr, l.size)
	case l.xmm:
		return fmt.Sprintf("xmm%d", l.reg)
	}
	return gprNames[l.reg&15]
}

var gprNames = [16]string{"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"}

// Origin follows the value of [addr, addr+size) at position at back to
// where it came from (see above). The chain starts with the last write
// before at. The current position does not change.
func (s *Session) Origin(addr, size, at uint64) ([]OriginLink, error) {
	if size == 0 || size > 64 || addr+size < addr {
		return nil, fmt.Errorf("origin: bad range of %d bytes at %#x", size, addr)
	}
	pos := s.pos
	defer s.Seek(pos)
	cur := loc{mem: true, addr: addr, size: size}
	from, tid := min(at, s.end), 0
	var chain []OriginLink
	for len(chain) < MaxOriginLinks {
		var l OriginLink
		var next loc
		var more bool
		var err error
		if cur.mem {
			l, next, more, err = s.originOfMemory(cur, from)
		} else {
			l, next, more, err = s.originOfRegister(cur, tid, from)
		}
		if err != nil {
			return chain, err
		}
		chain = append(chain, l)
		if !more {
			return chain, nil
		}
		cur, from, tid = next, l.Position, l.Tid
	}
	chain = append(chain, OriginLink{Kind: OriginLimit})
	return chain, nil
}

// originOfMemory is the link that last wrote l before from.
func (s *Session) originOfMemory(l loc, from uint64) (OriginLink, loc, bool, error) {
	f, err := s.Find(Backward, AccessWrite, l.addr, l.size, from)
	if errors.Is(err, ErrNotFound) {
		return OriginLink{Kind: OriginUnseen, Position: from, Into: l.String()}, loc{}, false, nil
	}
	if err != nil {
		return OriginLink{}, loc{}, false, err
	}
	link := OriginLink{Position: f.Position, Tid: f.Tid, PC: f.PC, Disasm: f.Disasm, Into: l.String(), Value: f.After.Data}
	switch f.Source {
	case reader.AccessSyscall:
		link.Kind = OriginSyscall
		return link, loc{}, false, nil
	case reader.AccessSignal:
		link.Kind = OriginSignal
		return link, loc{}, false, nil
	}
	in := x86.Decode(f.PC, f.Code)
	if in.Len == 0 {
		link.Kind = OriginComputed
		return link, loc{}, false, nil
	}
	switch in.Op {
	case x86asm.MOVSB, x86asm.MOVSW, x86asm.MOVSD, x86asm.MOVSQ:
		// A string move (memcpy, memmove): the bytes came from the
		// source, at the same offset from its read as l from its write.
		accs, err := s.instAccesses(f.Position)
		if err != nil {
			return OriginLink{}, loc{}, false, err
		}
		if w, r := firstAccess(accs, true), firstAccess(accs, false); w != nil && r != nil {
			next := loc{mem: true, addr: r.Addr + (l.addr - w.Addr), size: l.size}
			link.Kind, link.From = OriginCopy, next.String()
			return link, next, true, nil
		}
	case x86asm.PUSH:
		return valueSource(link, in.Args[0])
	}
	if isMove(in.Op) && in.NArgs >= 2 && in.Args[0].Kind == x86.KMem {
		return valueSource(link, in.Args[1])
	}
	link.Kind = OriginComputed
	return link, loc{}, false, nil
}

// firstAccess returns the first write (or read) of accs.
func firstAccess(accs []reader.Access, write bool) *reader.Access {
	for i := range accs {
		if accs[i].Write == write {
			return &accs[i]
		}
	}
	return nil
}

// valueSource continues a store's link with its source operand.
func valueSource(link OriginLink, src x86.Operand) (OriginLink, loc, bool, error) {
	switch src.Kind {
	case x86.KImm:
		link.Kind = OriginConstant
		link.From = fmt.Sprintf("$%#x", src.Imm)
		return link, loc{}, false, nil
	case x86.KReg:
		next := loc{reg: src.Reg}
		link.Kind, link.From = OriginStore, next.String()
		return link, next, true, nil
	case x86.KXMM:
		next := loc{reg: src.Reg, xmm: true}
		link.Kind, link.From = OriginStore, next.String()
		return link, next, true, nil
	}
	link.Kind = OriginComputed
	return link, loc{}, false, nil
}

// isMove reports whether op copies its source operand unchanged (or
// extended) into its destination.
func isMove(op x86asm.Op) bool {
	switch op {
	case x86asm.MOV, x86asm.MOVZX, x86asm.MOVSX, x86asm.MOVSXD, x86asm.MOVQ, x86asm.MOVD,
		x86asm.MOVUPS, x86asm.MOVAPS, x86asm.MOVUPD, x86asm.MOVAPD, x86asm.MOVDQU, x86asm.MOVDQA,
		x86asm.MOVSS, x86asm.MOVLPS, x86asm.MOVHPS, x86asm.MOVLPD, x86asm.MOVHPD, x86asm.MOVNTI,
		x86asm.MOVNTDQ, x86asm.MOVNTPS, x86asm.LDDQU:
		return true
	}
	return false
}

// writesReg reports whether in writes register l (as its destination
// operand, or implicitly for the few instructions that do).
func writesReg(in *x86.Inst, l loc) bool {
	if l.xmm {
		return in.NArgs > 0 && in.Args[0].Kind == x86.KXMM && in.Args[0].Reg == l.reg && !readsOnly(in.Op)
	}
	switch in.Op {
	case x86asm.SYSCALL, x86asm.CPUID, x86asm.RDTSC, x86asm.RDTSCP:
		return l.reg == x86.RAX || l.reg == x86.RDX && in.Op != x86asm.SYSCALL || l.reg == x86.RCX && in.Op == x86asm.SYSCALL
	case x86asm.POP:
		return in.Args[0].Kind == x86.KReg && in.Args[0].Reg == l.reg
	case x86asm.CALL, x86asm.RET, x86asm.PUSH:
		return false
	case x86asm.XCHG, x86asm.XADD, x86asm.CMPXCHG:
		for _, a := range in.Args[:in.NArgs] {
			if a.Kind == x86.KReg && a.Reg == l.reg {
				return true
			}
		}
		return in.Op == x86asm.CMPXCHG && l.reg == x86.RAX
	case x86asm.MUL, x86asm.IMUL, x86asm.DIV, x86asm.IDIV:
		if in.NArgs == 1 {
			return l.reg == x86.RAX || l.reg == x86.RDX
		}
	case x86asm.CQO, x86asm.CDQ, x86asm.CWD:
		return l.reg == x86.RDX
	case x86asm.CDQE, x86asm.CWDE, x86asm.CBW:
		return l.reg == x86.RAX
	}
	if in.NArgs == 0 || readsOnly(in.Op) {
		return false
	}
	d := in.Args[0]
	return (d.Kind == x86.KReg || d.Kind == x86.KReg8H) && d.Reg == l.reg
}

// readsOnly reports instructions whose first operand is not written.
func readsOnly(op x86asm.Op) bool {
	switch op {
	case x86asm.CMP, x86asm.TEST, x86asm.BT, x86asm.UCOMISS, x86asm.UCOMISD, x86asm.COMISS, x86asm.COMISD,
		x86asm.JMP, x86asm.PTEST:
		return true
	}
	return false
}

// originOfRegister is the link that last wrote register l in thread tid
// before from.
func (s *Session) originOfRegister(l loc, tid int, from uint64) (OriginLink, loc, bool, error) {
	if _, err := s.Seek(from); err != nil {
		return OriginLink{}, loc{}, false, err
	}
	st, err := s.Search(Backward, func(t int, c *x86.CPU, in *x86.Inst) bool {
		return t == tid && writesReg(in, l)
	})
	if err != nil {
		return OriginLink{}, loc{}, false, err
	}
	if st.Reason != StopMatch {
		// The thread never wrote it in the recording: set before
		// the recording (at the start of a ring-buffer window) or by
		// the kernel at the thread's start.
		return OriginLink{Kind: OriginUnseen, Position: from, Tid: tid, Into: l.String()}, loc{}, false, nil
	}
	pc, code, text, err := s.InstructionAt()
	if err != nil {
		return OriginLink{}, loc{}, false, err
	}
	link := OriginLink{Position: st.Position, Tid: st.Tid, PC: pc, Disasm: text, Into: l.String()}
	// The value the instruction left there.
	if _, err := s.Seek(st.Position + 1); err == nil {
		if regs, err := s.Registers(tid); err == nil && !l.xmm {
			v := regs.GPR[l.reg]
			for i := 0; i < 8; i++ {
				link.Value = append(link.Value, byte(v>>(8*i)))
			}
		}
	}
	in := x86.Decode(pc, code)
	switch {
	case in.Op == x86asm.SYSCALL:
		link.Kind = OriginSyscall
		return link, loc{}, false, nil
	case in.Op == x86asm.XOR && in.NArgs == 2 && in.Args[1].Kind == in.Args[0].Kind && in.Args[1].Reg == in.Args[0].Reg,
		in.Op == x86asm.PXOR && in.NArgs == 2 && in.Args[1].Kind == in.Args[0].Kind && in.Args[1].Reg == in.Args[0].Reg,
		in.Op == x86asm.XORPS && in.NArgs == 2 && in.Args[1].Kind == in.Args[0].Kind && in.Args[1].Reg == in.Args[0].Reg:
		link.Kind, link.From = OriginConstant, "$0"
		return link, loc{}, false, nil
	case in.Op == x86asm.POP || (isMove(in.Op) || in.Op == x86asm.MOVSD_XMM) && in.NArgs >= 2 && in.Args[1].Kind == x86.KMem:
		accs, err := s.instAccesses(st.Position)
		if err != nil {
			return OriginLink{}, loc{}, false, err
		}
		for _, a := range accs {
			if !a.Write {
				next := loc{mem: true, addr: a.Addr, size: uint64(a.Size)}
				link.Kind, link.From = OriginLoad, next.String()
				return link, next, true, nil
			}
		}
	case (isMove(in.Op) || in.Op == x86asm.MOVSD_XMM) && in.NArgs >= 2 && in.Args[1].Kind == x86.KImm:
		link.Kind, link.From = OriginConstant, fmt.Sprintf("$%#x", in.Args[1].Imm)
		return link, loc{}, false, nil
	case (isMove(in.Op) || in.Op == x86asm.MOVSD_XMM) && in.NArgs >= 2 && (in.Args[1].Kind == x86.KReg || in.Args[1].Kind == x86.KXMM):
		next := loc{reg: in.Args[1].Reg, xmm: in.Args[1].Kind == x86.KXMM}
		link.Kind, link.From = OriginMove, next.String()
		return link, next, true, nil
	}
	link.Kind = OriginComputed
	return link, loc{}, false, nil
}

// instAccesses re-simulates the instruction at pos and returns its
// memory accesses, in order.
func (s *Session) instAccesses(pos uint64) ([]reader.Access, error) {
	k := s.segOf(pos)
	u := unit{seg: k, win: -1, start: s.cps[k].Position, end: pos + 1}
	if fl := s.fine[k]; fl != nil {
		for j := len(fl.snaps) - 1; j >= 0; j-- {
			if fl.snaps[j].Position() <= pos {
				u.win, u.start = j, fl.snaps[j].Position()
				break
			}
		}
	}
	r, err := s.openUnit(u)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []reader.Access
	r.Watch([]reader.Range{{Lo: 0, Hi: ^uint64(0)}})
	r.Access = func(a *reader.Access) {
		if a.Position == pos {
			out = append(out, *a)
		}
	}
	if err := r.RunTo(pos + 1); err != nil && err != reader.ErrEnd && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	return out, nil
}
