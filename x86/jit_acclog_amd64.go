package x86

import (
	"math/bits"
	"unsafe"

	as "ttd/internal/amd64asm"
)

// Offsets of the access log (acclog.go) in CPU.
var (
	offAccN     = int32(unsafe.Offsetof(CPU{}.acc) + unsafe.Offsetof(accLog{}.n))
	offAccLog   = int32(unsafe.Offsetof(CPU{}.acc) + unsafe.Offsetof(accLog{}.log))
	offAccTLB   = int32(unsafe.Offsetof(CPU{}.acc) + unsafe.Offsetof(accLog{}.tlb))
	offAccMarks = int32(unsafe.Offsetof(CPU{}.acc) + unsafe.Offsetof(accLog{}.marks))
	offAccMasks = int32(unsafe.Offsetof(CPU{}.acc) + unsafe.Offsetof(accLog{}.masks))
)

func init() {
	if unsafe.Sizeof(MarkEntry{}) != 16 || unsafe.Offsetof(MarkPage{}.RW) != 0 || unsafe.Sizeof(MarkPage{}.RW[0]) != 16 {
		panic("x86: MarkEntry or MarkPage is not laid out as markAccess expects")
	}
}

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
// runs the instruction. While recording (jitModeRecordTrack) it marks
// the access in place where the AccessMarker's table lets it
// (markAccess) and logs it, out of line, only where it does not
// (accLogCode). Clobbers RAX, RDX and the flags, as tlb does.
func (t *jitT) logAccess(write bool, size int) {
	if !t.acclog {
		return
	}
	if t.log && markable(size) {
		a := &t.a
		l := jitAccLog{in: a.NewLabel(), back: a.NewLabel(), exit: t.exit(), write: write, size: size}
		t.markAccess(write, size, l.in)
		a.Bind(l.back)
		t.accLogs = append(t.accLogs, l)
		return
	}
	t.appendAccess(write, size, t.exit())
}

// jitAccLog is the out-of-line code that logs an access markAccess could
// not mark: it starts at in, leaves at exit when the log is full and
// goes back to back.
type jitAccLog struct {
	in, back, exit as.Label
	write          bool
	size           int
}

// accLogCode emits the block's out-of-line code of logged accesses.
func (t *jitT) accLogCode() {
	for _, l := range t.accLogs {
		t.a.Bind(l.in)
		t.appendAccess(l.write, l.size, l.exit)
		t.a.Jmp(l.back)
	}
	t.accLogs = t.accLogs[:0]
}

// appendAccess appends the access of size bytes at RSI to CPU.acc, or
// jumps to exit when the log is full. Clobbers RAX, RDX and the flags.
func (t *jitT) appendAccess(write bool, size int, exit as.Label) {
	a := &t.a
	info := int64(size)
	if write {
		info |= accWrite
	}
	a.MovRM(8, as.RAX, as.M(hCPU, offAccN))
	a.ALURI(as.CMP, 8, as.RAX, accLogSize)
	a.Jcc(3, exit) // jae: full
	a.Lea(8, as.RDX, as.M(as.RAX, 1))
	a.MovMR(8, as.M(hCPU, offAccN), as.RDX)
	a.ShiftRI(as.SHL, 8, as.RAX, 4) // 16 bytes an entry
	a.MovMR(8, as.Mem{Base: hCPU, Index: as.RAX, Disp: offAccLog}, as.RSI)
	a.MovMI(8, as.Mem{Base: hCPU, Index: as.RAX, Disp: offAccLog + 8}, info)
}

// markAccess marks the access of size bytes at RSI in the MarkTable of
// an AccessMarker (accmark.go), or jumps to logIt when the table does
// not hold its page or the access runs past its line; size is
// markable. Clobbers RAX, RDX and the flags.
func (t *jitT) markAccess(write bool, size int, logIt as.Label) {
	s := int32(bits.TrailingZeros(uint(size)))
	a := &t.a
	// RDX: the entry of RSI's page (16 bytes an entry).
	a.MovRR(8, as.RAX, as.RSI)
	a.ShiftRI(as.SHR, 8, as.RAX, PageShift)
	a.MovRR(4, as.RDX, as.RSI)
	a.ShiftRI(as.SHR, 4, as.RDX, PageShift-4)
	a.ALURI(as.AND, 4, as.RDX, (MarkTableSize-1)<<4)
	a.ALURM(as.ADD, 8, as.RDX, as.M(hCPU, offAccMarks))
	a.ALURM(as.CMP, 8, as.RAX, as.M(as.RDX, 0))
	a.Jcc(5, logIt) // jne: not in the table
	// RDX: the line's pair of words in the page (16 bytes a line).
	a.MovRM(8, as.RDX, as.M(as.RDX, 8))
	a.MovRR(4, as.RAX, as.RSI)
	a.ALURI(as.AND, 4, as.RAX, pageMask&^63)
	a.ShiftRI(as.SHR, 4, as.RAX, 2)
	a.ALURR(as.ADD, 8, as.RDX, as.RAX)
	// RAX: the access's mask in its line (0: it runs past the line).
	a.MovRR(4, as.RAX, as.RSI)
	a.ALURI(as.AND, 4, as.RAX, 63)
	a.MovRM(8, as.RAX, as.Mem{Base: hCPU, Index: as.RAX, Scale: 3, Disp: offAccMasks + 512*s})
	a.TestRR(8, as.RAX, as.RAX)
	a.Jcc(4, logIt) // je
	var w int32
	if write {
		w = 8
	}
	a.ALUMR(as.OR, 8, as.M(as.RDX, w), as.RAX)
}

// markable reports whether an access of size bytes may be marked in
// place (accMasks).
func markable(size int) bool {
	switch size {
	case 1, 2, 4, 8, 16, 32:
		return true
	}
	return false
}
