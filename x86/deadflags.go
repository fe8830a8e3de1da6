package x86

import "golang.org/x/arch/x86/x86asm"

// Dead-flag elimination. Most flag results are never read: an add whose
// flags the next cmp overwrites, the rotates and shifts of a hash round.
// markDeadFlags walks a decoded block backwards, tracking which arithmetic
// flags are still to be read, and gives each register-only ALU, shift,
// rotate, inc or dec whose flags are all dead a flag-free variant, through
// Inst.ID: only the dispatch loop's switch (runInsts) uses it. Inst.Fn
// stays the exact handler, for observed execution and for blocks cut short
// by the instruction budget.
//
// The state stays exact wherever anyone can see it:
//   - at the end of the block every flag is live;
//   - an instruction that may fault or leave the loop (any memory operand,
//     division, syscall…), and any instruction this file does not know,
//     counts as reading every flag, so a signal handler, a debugger stop or
//     the recorder's key frame sees the flags the hardware would have;
//   - a block that runs only in part (budget) runs every instruction's Fn.

// flagUse reports the arithmetic flags in reads and the flags it always
// writes, for the purposes of liveness. Unknown instructions read all.
func flagUse(in *Inst) (reads, writes uint64) {
	switch in.Op {
	case x86asm.LEA, x86asm.NOP:
		return 0, 0 // a memory operand, but no access
	}
	for i := 0; i < int(in.NArgs); i++ {
		switch in.Args[i].Kind {
		case KReg, KReg8H, KImm:
		default:
			return ArithFlags, 0
		}
	}
	switch in.Op {
	case x86asm.ADD, x86asm.SUB, x86asm.AND, x86asm.OR, x86asm.XOR, x86asm.CMP, x86asm.TEST, x86asm.NEG:
		return 0, ArithFlags
	case x86asm.ADC, x86asm.SBB:
		return FlagCF, ArithFlags
	case x86asm.INC, x86asm.DEC:
		return 0, ArithFlags &^ FlagCF
	case x86asm.IMUL:
		// mulFlags sets all six (SF, ZF, PF from the result, AF clear).
		if in.NArgs >= 2 {
			return 0, ArithFlags
		}
		return 0, 0
	case x86asm.MUL:
		return 0, ArithFlags // mulFlags too
	case x86asm.SHL, x86asm.SHR, x86asm.SAR, x86asm.ROL, x86asm.ROR:
		k, ok := shiftImm(in)
		if !ok || k == 0 {
			// A count of zero leaves the flags alone: no definite write.
			return 0, 0
		}
		if in.Op == x86asm.ROL || in.Op == x86asm.ROR {
			return 0, FlagCF | FlagOF
		}
		return 0, ArithFlags
	case x86asm.MOV, x86asm.MOVZX, x86asm.MOVSX, x86asm.MOVSXD, x86asm.LEA, x86asm.NOP,
		x86asm.NOT, x86asm.BSWAP, x86asm.CDQE, x86asm.CWDE, x86asm.CDQ, x86asm.CQO:
		return 0, 0
	}
	return ArithFlags, 0
}

// shiftImm returns the masked count of a shift or rotate by an immediate
// with a register destination.
func shiftImm(in *Inst) (uint64, bool) {
	if in.NArgs != 2 || in.Args[1].Kind != KImm || in.Args[0].Kind != KReg {
		return 0, false
	}
	if in.Args[0].Size == 8 {
		return in.Args[1].Imm & 63, true
	}
	return in.Args[1].Imm & 31, true
}

// noFlagVariant returns the flag-free handler for in, or nil.
func noFlagVariant(in *Inst) Handler {
	if in.Lock || in.NArgs == 0 || in.Args[0].Kind != KReg {
		return nil
	}
	var sz int
	switch in.Args[0].Size {
	case 4:
		sz = 0
	case 8:
		sz = 1
	default:
		return nil
	}
	switch in.Op {
	case x86asm.ADD, x86asm.SUB, x86asm.AND, x86asm.OR, x86asm.XOR:
		if in.NArgs != 2 {
			return nil
		}
		form := 0
		switch in.Args[1].Kind {
		case KReg:
			if in.Args[1].Size != in.Args[0].Size {
				return nil
			}
		case KImm:
			form = 1
		default:
			return nil
		}
		return noFlagALU[aluIndex[in.Op]][form][sz]
	case x86asm.SHL, x86asm.SHR, x86asm.SAR, x86asm.ROL, x86asm.ROR:
		if _, ok := shiftImm(in); !ok {
			return nil
		}
		return noFlagShift[shiftIndex[in.Op]][sz]
	case x86asm.IMUL:
		if in.NArgs < 2 || in.Args[1].Kind != KReg {
			return nil
		}
		if in.NArgs == 2 {
			return noFlagImul[0][sz]
		}
		if in.Args[2].Kind != KImm {
			return nil
		}
		return noFlagImul[1][sz]
	case x86asm.MUL:
		if in.NArgs != 1 || sz != 1 {
			return nil
		}
		return mulR64nf
	case x86asm.INC, x86asm.DEC:
		if in.NArgs != 1 {
			return nil
		}
		if in.Op == x86asm.INC {
			return noFlagIncDec[0][sz]
		}
		return noFlagIncDec[1][sz]
	}
	return nil
}

var (
	aluIndex   = map[x86asm.Op]int{x86asm.ADD: 0, x86asm.SUB: 1, x86asm.AND: 2, x86asm.OR: 3, x86asm.XOR: 4}
	shiftIndex = map[x86asm.Op]int{x86asm.SHL: shShl, x86asm.SHR: shShr, x86asm.SAR: shSar, x86asm.ROL: shRol, x86asm.ROR: shRor}
)

// markDeadFlags sets the ID of each instruction of b whose flags are dead
// to its flag-free variant's case.
func markDeadFlags(b *Block) {
	live := uint64(ArithFlags)
	for i := len(b.Insts) - 1; i >= 0; i-- {
		in := &b.Insts[i]
		reads, writes := flagUse(in)
		if writes != 0 && writes&live == 0 {
			if h := noFlagVariant(in); h != nil {
				if id := handlerID(h); id != 0 {
					in.ID = id
				}
			}
		}
		live = live&^writes | reads
	}
}
