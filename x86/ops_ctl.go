package x86

import (
	"golang.org/x/arch/x86/x86asm"
)

// Control transfers. Every handler here sets RIP and ends its block;
// a conditional jump ends it only when taken.

func next(in *Inst) uint64 { return in.PC + uint64(in.Len) }

func opJmpRel(c *CPU, in *Inst) { c.RIP = in.Args[0].Imm }
func opJmpInd(c *CPU, in *Inst) { c.RIP = c.get(&in.Args[0]) }

func opJcc(c *CPU, in *Inst) { jump(c, in, c.cond(uint8(in.Aux))) }

// Conditional jumps specialised by condition: after a cmp or sub (ccSub)
// the unsigned and signed comparisons come straight from the operands, and
// ZF from any lazy result; everything else goes through cond.
var jccFast = [16]Handler{2: opJB, 3: opJAE, 4: opJE, 5: opJNE, 6: opJBE, 7: opJA,
	0xc: opJL, 0xd: opJGE, 0xe: opJLE, 0xf: opJG}

// jump finishes a conditional jump. Jumps may sit in the middle of a
// block: a taken one ends the block after itself.
func jump(c *CPU, in *Inst, taken bool) {
	if taken {
		c.RIP = in.Args[0].Imm
		c.blkLen = c.blkIdx + 1
	} else {
		c.RIP = next(in)
	}
}

func opJE(c *CPU, in *Inst) {
	if c.cc.op != ccEager {
		jump(c, in, c.cc.res == 0)
	} else {
		jump(c, in, c.flags&FlagZF != 0)
	}
}

func opJNE(c *CPU, in *Inst) {
	if c.cc.op != ccEager {
		jump(c, in, c.cc.res != 0)
	} else {
		jump(c, in, c.flags&FlagZF == 0)
	}
}

func opJB(c *CPU, in *Inst) {
	if l := &c.cc; l.op == ccSub {
		jump(c, in, l.src1 < l.src2)
	} else if l.op == ccEager {
		jump(c, in, c.flags&FlagCF != 0) // after comisd and friends
	} else {
		jump(c, in, c.cond(2))
	}
}

func opJAE(c *CPU, in *Inst) {
	if l := &c.cc; l.op == ccSub {
		jump(c, in, l.src1 >= l.src2)
	} else if l.op == ccEager {
		jump(c, in, c.flags&FlagCF == 0) // after comisd and friends
	} else {
		jump(c, in, c.cond(3))
	}
}

func opJBE(c *CPU, in *Inst) {
	if l := &c.cc; l.op == ccSub {
		jump(c, in, l.src1 <= l.src2)
	} else if l.op == ccEager {
		jump(c, in, c.flags&(FlagCF|FlagZF) != 0) // after comisd and friends
	} else {
		jump(c, in, c.cond(6))
	}
}

func opJA(c *CPU, in *Inst) {
	if l := &c.cc; l.op == ccSub {
		jump(c, in, l.src1 > l.src2)
	} else if l.op == ccEager {
		jump(c, in, c.flags&(FlagCF|FlagZF) == 0) // after comisd and friends
	} else {
		jump(c, in, c.cond(7))
	}
}

func opJL(c *CPU, in *Inst) {
	if l := &c.cc; l.op == ccSub {
		jump(c, in, sx(l.src1, l.size) < sx(l.src2, l.size))
	} else {
		jump(c, in, c.cond(0xc))
	}
}

func opJGE(c *CPU, in *Inst) {
	if l := &c.cc; l.op == ccSub {
		jump(c, in, sx(l.src1, l.size) >= sx(l.src2, l.size))
	} else {
		jump(c, in, c.cond(0xd))
	}
}

func opJLE(c *CPU, in *Inst) {
	if l := &c.cc; l.op == ccSub {
		jump(c, in, sx(l.src1, l.size) <= sx(l.src2, l.size))
	} else {
		jump(c, in, c.cond(0xe))
	}
}

func opJG(c *CPU, in *Inst) {
	if l := &c.cc; l.op == ccSub {
		jump(c, in, sx(l.src1, l.size) > sx(l.src2, l.size))
	} else {
		jump(c, in, c.cond(0xf))
	}
}

// The stack operations of the hot handlers spell out the memory fast path
// (see "Guest memory access" in inst.go).

func opCallRel(c *CPU, in *Inst) {
	sp, v := c.R[RSP]-8, next(in)
	if !c.tryStore64(sp, v) || c.Pred != nil && !c.Pred.Put(sp, 8, v) {
		c.storeSlow(sp, 8, v)
	}
	c.R[RSP] = sp
	c.RIP = in.Args[0].Imm
}

func opCallInd(c *CPU, in *Inst) {
	t := c.get(&in.Args[0])
	c.push(next(in))
	c.RIP = t
}

func opRet(c *CPU, in *Inst) {
	sp := c.R[RSP]
	t, ok := c.tryLoad64(sp)
	if !ok || c.Pred != nil && !c.Pred.Hit(sp, 8, t) {
		t = c.loadSlow(sp, 8)
	}
	c.R[RSP] = sp + 8
	if in.NArgs > 0 {
		c.R[RSP] += in.Args[0].Imm & 0xffff
	}
	c.RIP = t
}

func opLoop(c *CPU, in *Inst) {
	var cnt uint64
	if in.Flags&InstAddr32 != 0 {
		cnt = uint64(uint32(c.R[RCX] - 1))
		c.R[RCX] = cnt
	} else {
		cnt = c.R[RCX] - 1
		c.R[RCX] = cnt
	}
	take := cnt != 0
	switch in.Op {
	case x86asm.LOOPE:
		take = take && c.cond(4)
	case x86asm.LOOPNE:
		take = take && c.cond(5)
	}
	if take {
		c.RIP = in.Args[0].Imm
	} else {
		c.RIP = next(in)
	}
}

func opJrcxz(c *CPU, in *Inst) {
	v := c.R[RCX]
	if in.Op == x86asm.JECXZ {
		v = uint64(uint32(v))
	}
	if v == 0 {
		c.RIP = in.Args[0].Imm
	} else {
		c.RIP = next(in)
	}
}

// Stack.

func opPush(c *CPU, in *Inst) {
	s := &in.Args[0]
	size := s.Size
	if s.Kind == KImm {
		size = in.OpSize
	}
	if s.Kind == KSeg {
		c.push(0)
		return
	}
	v := c.get(s)
	if size == 2 {
		sp := c.R[RSP] - 2
		c.store(sp, 2, v)
		c.R[RSP] = sp
		return
	}
	c.push(v)
}

func opPushReg(c *CPU, in *Inst) {
	sp, v := c.R[RSP]-8, c.R[in.Args[0].Reg]
	if !c.tryStore64(sp, v) || c.Pred != nil && !c.Pred.Put(sp, 8, v) {
		c.storeSlow(sp, 8, v)
	}
	c.R[RSP] = sp
}

func opPopReg(c *CPU, in *Inst) {
	sp := c.R[RSP]
	v, ok := c.tryLoad64(sp)
	if !ok || c.Pred != nil && !c.Pred.Hit(sp, 8, v) {
		v = c.loadSlow(sp, 8)
	}
	c.R[RSP] = sp + 8
	c.R[in.Args[0].Reg] = v // after RSP: pop %rsp loads RSP
}

func buildPush(in *Inst) Handler {
	if in.Args[0].Kind == KReg && in.Args[0].Size == 8 {
		return opPushReg
	}
	return opPush
}

func buildPop(in *Inst) Handler {
	d := &in.Args[0]
	if d.Kind == KReg && d.Size == 8 {
		return opPopReg
	}
	return func(c *CPU, in *Inst) {
		d := &in.Args[0]
		if d.Size == 2 {
			v := c.load(c.R[RSP], 2)
			if d.Kind == KMem {
				c.store(c.eaAfterPop(d, 2), 2, v)
			} else {
				c.setReg(d, v)
			}
			c.R[RSP] += 2
			return
		}
		v := c.load64(c.R[RSP])
		if d.Kind == KMem {
			// pop computes the address with rsp already incremented.
			c.store64(c.eaAfterPop(d, 8), v)
		} else if d.Kind == KSeg {
			c.raise(ExitGP, SIKernel)
		}
		c.R[RSP] += 8
	}
}

func (c *CPU) eaAfterPop(d *Operand, n uint64) uint64 {
	c.R[RSP] += n
	a := c.ea(d)
	c.R[RSP] -= n
	return a
}

func opPushf(c *CPU, in *Inst) {
	// RF and VM are cleared in the pushed image.
	c.push(c.Rflags() &^ (1<<16 | 1<<17))
}

func opPopf(c *CPU, in *Inst) {
	c.SetRflags(c.pop())
}

func opLeave(c *CPU, in *Inst) {
	v := c.load64(c.R[RBP])
	c.R[RSP] = c.R[RBP] + 8
	c.R[RBP] = v
}

func opEnter(c *CPU, in *Inst) {
	size := in.Args[0].Imm & 0xffff
	level := in.Args[1].Imm & 31
	c.push(c.R[RBP])
	frame := c.R[RSP]
	for i := uint64(1); i < level; i++ {
		c.push(c.load64(c.R[RBP] - i*8))
	}
	if level > 0 {
		c.push(frame)
	}
	c.R[RBP] = frame
	c.R[RSP] -= size
}

// Exits to the operating system or the signal layer.

func opSyscall(c *CPU, in *Inst) {
	c.R[RCX] = next(in)
	c.R[R11] = c.Rflags() &^ (1 << 16) // RF is cleared
	c.RIP = next(in)
	c.setExit(ExitSyscall)
}

func opInt(c *CPU, in *Inst) {
	if in.Args[0].Imm&0xff == 3 {
		c.raise(ExitBreakpoint, 0x80)
	}
	// int n from user mode: #GP (Linux sends SIGSEGV).
	c.raise(ExitGP, SIKernel)
}

// opPrivileged is a privileged instruction (hlt, in, cli, rdmsr...): from
// user mode the processor raises #GP and Linux sends SIGSEGV with
// SI_KERNEL. Programs probe with them under a SIGSEGV handler: lscpu's
// VMware check executes in.
func opPrivileged(c *CPU, in *Inst) { c.raise(ExitGP, SIKernel) }
func opUd(c *CPU, in *Inst)         { c.raise(ExitIllegal, ILLIllOpn) }

// Non-deterministic instructions go through the environment and the
// observer (the recorder logs their results).

func opCpuid(c *CPU, in *Inst) {
	var a, b, cc, d uint32
	if c.Env != nil {
		a, b, cc, d = c.Env.CPUID(uint32(c.R[RAX]), uint32(c.R[RCX]))
	}
	vals := [4]uint64{uint64(a), uint64(b), uint64(cc), uint64(d)}
	out := vals[:]
	if c.Obs != nil {
		out = c.Obs.NonDet(c, in, out)
	}
	c.R[RAX], c.R[RBX], c.R[RCX], c.R[RDX] = out[0], out[1], out[2], out[3]
}

func opRdtsc(c *CPU, in *Inst) {
	var t uint64
	if c.Env != nil {
		t = c.Env.Rdtsc()
	}
	vals := [2]uint64{t, 0}
	out := vals[:]
	if c.Obs != nil {
		out = c.Obs.NonDet(c, in, out)
	}
	t = out[0]
	c.R[RAX] = t & 0xffffffff
	c.R[RDX] = t >> 32
	if in.Op == x86asm.RDTSCP {
		c.R[RCX] = out[1] & 0xffffffff
	}
}

func opXgetbv(c *CPU, in *Inst) {
	if uint32(c.R[RCX]) != 0 {
		c.raise(ExitGP, SIKernel)
	}
	c.R[RAX] = c.XCR0()
	c.R[RDX] = 0
}

func opXlat(c *CPU, in *Inst) {
	v := c.load8(c.R[RBX] + c.R[RAX]&0xff)
	c.R[RAX] = c.R[RAX]&^0xff | v
}

// privileged are the instructions that raise #GP at CPL 3 (with IOPL 0,
// CR4.PCE clear: Linux's defaults).
var privileged = [...]x86asm.Op{x86asm.HLT, x86asm.IN, x86asm.OUT, x86asm.INSB, x86asm.INSW, x86asm.INSD,
	x86asm.OUTSB, x86asm.OUTSW, x86asm.OUTSD, x86asm.CLI, x86asm.STI, x86asm.LGDT, x86asm.LIDT, x86asm.LLDT,
	x86asm.LTR, x86asm.LMSW, x86asm.CLTS, x86asm.INVD, x86asm.WBINVD, x86asm.INVLPG, x86asm.RDMSR, x86asm.WRMSR,
	x86asm.SWAPGS, x86asm.SYSRET, x86asm.SYSEXIT, x86asm.RDPMC, x86asm.XSETBV, x86asm.INVPCID}

func init() {
	terminator(x86asm.JMP, x86asm.CALL, x86asm.RET, x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE,
		x86asm.JRCXZ, x86asm.JECXZ, x86asm.JCXZ, x86asm.SYSCALL, x86asm.INT, x86asm.HLT, x86asm.UD2,
		x86asm.UD0, x86asm.UD1, x86asm.LCALL, x86asm.LJMP, x86asm.LRET, x86asm.IRET, x86asm.IRETQ, x86asm.IRETD,
		x86asm.SYSENTER, x86asm.SYSEXIT, x86asm.SYSRET)
	setsRIP := func(h Handler) Builder {
		return func(in *Inst) Handler { in.Flags |= InstSetsRIP; return h }
	}
	register(x86asm.JMP, func(in *Inst) Handler {
		in.Flags |= InstSetsRIP
		if in.Args[0].Kind == KRel {
			return opJmpRel
		}
		return opJmpInd
	})
	register(x86asm.CALL, func(in *Inst) Handler {
		in.Flags |= InstSetsRIP
		if in.Args[0].Kind == KRel {
			return opCallRel
		}
		return opCallInd
	})
	register(x86asm.RET, setsRIP(opRet))
	register(x86asm.LOOP, setsRIP(opLoop))
	register(x86asm.LOOPE, setsRIP(opLoop))
	register(x86asm.LOOPNE, setsRIP(opLoop))
	register(x86asm.JRCXZ, setsRIP(opJrcxz))
	register(x86asm.JECXZ, setsRIP(opJrcxz))
	register(x86asm.SYSCALL, setsRIP(opSyscall))
	jccs := []x86asm.Op{x86asm.JO, x86asm.JNO, x86asm.JB, x86asm.JAE, x86asm.JE, x86asm.JNE, x86asm.JBE, x86asm.JA,
		x86asm.JS, x86asm.JNS, x86asm.JP, x86asm.JNP, x86asm.JL, x86asm.JGE, x86asm.JLE, x86asm.JG}
	// A conditional jump does not end its block: the block goes on along
	// the fall-through path, and a taken jump leaves it (see jump). Hot
	// loops then run as one block instead of several short ones.
	for i, op := range jccs {
		cc := uint32(i)
		register(op, func(in *Inst) Handler {
			in.Aux = cc
			in.Flags |= InstSetsRIP
			if h := jccFast[cc]; h != nil {
				return h
			}
			return opJcc
		})
	}
	register(x86asm.PUSH, buildPush)
	register(x86asm.POP, buildPop)
	handle(x86asm.PUSHF, opPushf)
	handle(x86asm.PUSHFQ, opPushf)
	handle(x86asm.POPF, opPopf)
	handle(x86asm.POPFQ, opPopf)
	handle(x86asm.LEAVE, opLeave)
	handle(x86asm.ENTER, opEnter)
	handle(x86asm.INT, opInt)
	for _, op := range privileged {
		handle(op, opPrivileged)
	}
	handle(x86asm.MONITOR, opUd) // #UD at CPL 3 unless an MSR enables them
	handle(x86asm.MWAIT, opUd)
	handle(x86asm.UD2, opUd)
	handle(x86asm.UD0, opUd)
	handle(x86asm.UD1, opUd)
	handle(x86asm.NOP, opNop)
	handle(x86asm.CPUID, opCpuid)
	handle(x86asm.RDTSC, opRdtsc)
	handle(x86asm.RDTSCP, opRdtsc)
	handle(x86asm.XGETBV, opXgetbv)
	handle(x86asm.XSAVE, opXsave)
	handle(x86asm.XSAVE64, opXsave)
	handle(x86asm.XRSTOR, opXrstor)
	handle(x86asm.XRSTOR64, opXrstor)
	handle(x86asm.XSAVEOPT, opXsaveopt)
	handle(x86asm.XSAVEOPT64, opXsaveopt)
	handle(x86asm.XSAVEC, opXsavec)
	handle(x86asm.XSAVEC64, opXsavec)
	handle(x86asm.XLATB, opXlat)
}
