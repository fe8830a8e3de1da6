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
	if unsafe.Sizeof(MarkEntry{}) != 16 || unsafe.Offsetof(MarkTable{}.Entries) != 0 || unsafe.Offsetof(MarkPage{}.RW) != 0 || unsafe.Sizeof(MarkPage{}.RW[0]) != PageSize/8 || unsafe.Offsetof(MarkPage{}.Ex) != PageSize/4 {
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
// passed its TLB check (RDX: its entry's offset, tlb), to CPU.acc
// (jitModeTrack), or leaves before the instruction when the log is full:
// Go drains it and the interpreter runs the instruction. While recording
// (jitModeRecordTrack) it marks the access in place where it can
// (markAccess) and logs it, out of line, only where it cannot
// (accLogCode). Clobbers RAX, RDX and the flags, as tlb does.
func (t *jitT) logAccess(write bool, size int) {
	if !t.acclog {
		return
	}
	if t.marks && markable(size) {
		if t.rmw && !write {
			return // the store marks it (loadRMW)
		}
		a := &t.a
		l := jitAccLog{in: a.NewLabel(), back: a.NewLabel(), exit: t.exit(), write: write, both: t.rmw, size: size, ar: t.ar}
		t.markAccess(l)
		a.Bind(l.back)
		t.accLogs = append(t.accLogs, l)
		return
	}
	t.appendAccesses(t.exit(), t.ar, accInfo(write, size))
}

// jitAccLog is the out-of-line code that logs an access markAccess could
// not mark: it starts at in, leaves at exit when the log is full and
// goes back to back. both: the access is the write of a read-modify-write
// (loadRMW), whose read is marked or logged with it.
type jitAccLog struct {
	in, back, exit as.Label
	write, both    bool
	size           int
	ar             as.Reg // the address's register (tlb's t.ar)
}

// accLogCode emits the block's out-of-line code of logged accesses.
func (t *jitT) accLogCode() {
	for _, l := range t.accLogs {
		t.a.Bind(l.in)
		if l.both {
			t.appendAccesses(l.exit, l.ar, accInfo(false, l.size), accInfo(true, l.size))
		} else {
			t.appendAccesses(l.exit, l.ar, accInfo(l.write, l.size))
		}
		t.a.Jmp(l.back)
	}
	t.accLogs = t.accLogs[:0]
}

// accInfo is LoggedAccess.Info of an access of size bytes.
func accInfo(write bool, size int) int64 {
	if write {
		return int64(size) | accWrite
	}
	return int64(size)
}

// appendAccesses appends accesses at the address in register ar (RSI,
// or in `ttd run`'s translations the host register of a guest register,
// eaAccess) with their LoggedAccess.Info to CPU.acc, or jumps to exit
// when the log has no room for them all. Clobbers RAX, RDX and the
// flags.
func (t *jitT) appendAccesses(exit as.Label, ar as.Reg, infos ...int64) {
	a := &t.a
	n := int32(len(infos))
	a.MovRM(8, as.RAX, as.M(hCPU, offAccN))
	a.ALURI(as.CMP, 8, as.RAX, int64(accLogSize-n+1))
	a.Jcc(3, exit) // jae: no room
	a.Lea(8, as.RDX, as.M(as.RAX, n))
	a.MovMR(8, as.M(hCPU, offAccN), as.RDX)
	a.ShiftRI(as.SHL, 8, as.RAX, 4) // 16 bytes an entry
	for i, info := range infos {
		d := offAccLog + 16*int32(i)
		a.MovMR(8, as.Mem{Base: hCPU, Index: as.RAX, Disp: d}, ar)
		a.MovMI(8, as.Mem{Base: hCPU, Index: as.RAX, Disp: d + 8}, info)
	}
}

// loadRMW is load and storeCheck of the same size bytes at RSI: the read
// and the write of a read-modify-write instruction. While recording, its
// read is marked with its write, by one more OR of the write's bits
// (markAccess): the read's own marking would find the same bitmap word
// and mask. That is exact: every check between them that can leave does
// so before the instruction, which the interpreter then runs whole,
// marking both.
func (t *jitT) loadRMW(size int) {
	t.rmw = true
	t.load(size)
	t.storeCheck(size, true)
	t.rmw = false
}

// offTLBMark is the offset of tlbEntry.mark, the MarkPage of the
// entry's page (MarkTable.EnterMarks).
const offTLBMark = int32(unsafe.Offsetof(tlbEntry{}.mark))

// tlbDisp is the displacement, from hRTLB, of the TLB (read or write)
// that tlb checks for an access.
func tlbDisp(write bool) int32 {
	if write {
		return wtlbOffset // Memory's wtlb follows its rtlb
	}
	return 0
}

// markAccess marks l's access (l.ar: RSI or the host register eaAccess
// left the address in; its TLB entry at RDX, as tlb leaves them) in the MarkPage the TLB entry points at, or jumps to l.in, to
// log it, when the entry points at none (the AccessMarker's
// LoggedAccesses then makes it point at its page's, MarkTable.EnterMarks).
// l.size is markable. The access's bits are one run in the page's
// bitmap (MarkPage), from bit o&7 of the bitmap's byte o>>3 (o: RSI's
// offset in its page), and at most 32 long: one OR of the unaligned
// 64-bit word at that byte marks it, whatever 64-byte line it is in.
// With BMI2 that is 10 host instructions (9 for a byte), of which three
// loads, the TLB entry's line and accMasks' being in the cache already,
// and one branch; marking within a line's aligned word, as before, took
// 14 and two branches, and logged an access across a line. Clobbers
// RAX, RDX and the flags.
func (t *jitT) markAccess(l jitAccLog) {
	a := &t.a
	a.MovRM(8, as.RAX, as.Mem{Base: hRTLB, Index: as.RDX, Disp: tlbDisp(l.write) + offTLBMark})
	a.TestRR(8, as.RAX, as.RAX)
	a.Jcc(4, l.in) // je: the entry points at no MarkPage
	var w int32    // RW[1]: the written bytes
	if l.write {
		w = PageSize / 8
	}
	// RAX: the bitmap's 4-byte aligned word that holds the bit of RSI's
	// page offset o: 4*(o>>5), at bit o&31.
	if jitRorx {
		a.Rorx(4, as.RDX, l.ar, 3)
		a.ALURI(as.AND, 4, as.RDX, PageSize/8-4)
	} else {
		a.MovRR(4, as.RDX, l.ar)
		a.ALURI(as.AND, 4, as.RDX, PageSize-32)
		a.ShiftRI(as.SHR, 4, as.RDX, 3)
	}
	a.ALURR(as.ADD, 8, as.RAX, as.RDX)
	// RDX: the access's bits in the 64-bit word there.
	if l.size == 1 && jitRorx {
		a.MovRI(as.RDX, 1)
		a.VEXRR(as.VEX{Map: 2, PP: 1, Op: 0xF7}, as.RDX, l.ar, as.RDX) // shlx edx, edx, esi: bit o&31
	} else {
		s := int32(bits.TrailingZeros(uint(l.size)))
		a.MovRR(4, as.RDX, l.ar)
		a.ALURI(as.AND, 4, as.RDX, 31)
		a.MovRM(8, as.RDX, as.Mem{Base: hCPU, Index: as.RDX, Scale: 3, Disp: offAccMasks + 512*s})
	}
	a.ALUMR(as.OR, 8, as.M(as.RAX, w), as.RDX)
	if l.both {
		a.ALUMR(as.OR, 8, as.M(as.RAX, 0), as.RDX) // the read's bits (RW[0])
	}
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
