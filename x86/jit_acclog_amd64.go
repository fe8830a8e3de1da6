package x86

import (
	"unsafe"

	as "ttd/internal/amd64asm"
)

// Offsets of the access log (acclog.go) in CPU.
var (
	offAccN   = int32(unsafe.Offsetof(CPU{}.acc) + unsafe.Offsetof(accLog{}.n))
	offAccLog = int32(unsafe.Offsetof(CPU{}.acc) + unsafe.Offsetof(accLog{}.log))
	offAccTLB = int32(unsafe.Offsetof(CPU{}.acc) + unsafe.Offsetof(accLog{}.tlb))
)

// tlbOffset is where the prologue of translated code finds the read TLB:
// CPU.rtlb, or while logging accesses Memory's own (accLog.tlb), since
// the interpreter's handlers then miss on purpose (syncTLB) so that
// every access of theirs reaches the Observer.
func (t *jitT) tlbOffset() int32 {
	if t.acclog {
		return offAccTLB
	}
	return offRTLB
}

// logAccess appends the access of size bytes at RSI, which has just
// passed its TLB check, to CPU.acc (jitModeTrack), or leaves before the
// instruction when the log is full: Go drains it and the interpreter
// runs the instruction. Clobbers RAX, RDX and the flags, as tlb does.
func (t *jitT) logAccess(write bool, size int) {
	if !t.acclog {
		return
	}
	a := &t.a
	info := int64(size)
	if write {
		info |= accWrite
	}
	a.MovRM(8, as.RAX, as.M(hCPU, offAccN))
	a.ALURI(as.CMP, 8, as.RAX, accLogSize)
	a.Jcc(3, t.exit()) // jae: full
	a.Lea(8, as.RDX, as.M(as.RAX, 1))
	a.MovMR(8, as.M(hCPU, offAccN), as.RDX)
	a.ShiftRI(as.SHL, 8, as.RAX, 4) // 16 bytes an entry
	a.MovMR(8, as.Mem{Base: hCPU, Index: as.RAX, Disp: offAccLog}, as.RSI)
	a.MovMI(8, as.Mem{Base: hCPU, Index: as.RAX, Disp: offAccLog + 8}, info)
}
