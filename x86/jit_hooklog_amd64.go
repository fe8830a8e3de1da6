package x86

import (
	"unsafe"

	"golang.org/x/arch/x86/x86asm"

	as "ttd/internal/amd64asm"
)

// Offset of the hook guard (hooklog.go) in CPU.
var offHookGuard = int32(unsafe.Offsetof(CPU{}.hlog) + unsafe.Offsetof(hookLog{}.guard))

// logHook appends the record of instruction t.k (hooklog.go) to the
// access log, or jumps to exit (the hook's exit for an exact Instruction
// call) when the log has no room for it or the instruction is guarded
// and RSP is at or above the guard. The flags are saved (hookExit);
// clobbers RAX and RDX.
func (t *jitT) logHook(exit as.Label) {
	a := &t.a
	in := &t.b.Insts[t.k]
	a.MovRM(8, as.RAX, as.M(hCPU, offAccN))
	a.ALURI(as.CMP, 8, as.RAX, accLogSize-hookRecEntries)
	a.Jcc(7, exit) // ja: full
	if t.guarded>>t.k&1 != 0 {
		a.MovRM(8, as.RDX, t.gregN(RSP))
		a.ALURM(as.CMP, 8, as.RDX, as.M(hCPU, offHookGuard))
		a.Jcc(3, exit) // jae
	}
	a.Lea(8, as.RDX, as.M(as.RAX, hookRecEntries))
	a.MovMR(8, as.M(hCPU, offAccN), as.RDX)
	a.ShiftRI(as.SHL, 8, as.RAX, 4) // 16 bytes an entry
	word := func(w int32) as.Mem { return as.Mem{Base: hCPU, Index: as.RAX, Disp: offAccLog + 8*w} }
	put := func(w int32, src as.Mem) {
		a.MovRM(8, as.RDX, src)
		a.MovMR(8, word(w), as.RDX)
	}
	// Retired less Icount: the blocks chained before this one, and k.
	a.MovRM(8, as.RDX, as.M(hCPU, offJitRetired))
	a.Lea(8, as.RDX, as.M(as.RDX, int32(t.k)))
	a.MovMR(8, word(0), as.RDX)
	a.MovRI(as.RDX, uint64(t.b.jit.id)<<32|uint64(t.k)<<16|accHook)
	a.MovMR(8, word(1), as.RDX)
	put(2, t.gregN(RSP))
	put(3, t.gregN(RAX))
	put(4, t.gregN(RBP))
	if in.Op == x86asm.CALL && in.Args[0].Kind == KReg && in.Args[0].Size == 8 {
		put(5, t.gregN(in.Args[0].Reg))
	} else {
		a.MovMI(8, word(5), 0)
	}
	for i, r := range ArgRegs {
		put(6+int32(i), t.gregN(uint8(r)))
	}
}
