package x86

import as "ttd/internal/amd64asm"

// Reads across words that a recording's prediction cache misses.
//
// A read that crosses an 8-byte word is, for the prediction cache, two
// reads per 8 bytes (predict.Split: CPU.load128 and loadY read 8 bytes at
// a time, the recorder's MemRead splits each at the word boundary). The
// cross code (jitT.crossCode) checks them all at once; when one of them
// is not predicted, translated code used to leave before the instruction
// and the interpreter logged it. Recording sort or xz -6, which read
// unaligned strings, left translated code 200,000-500,000 times more
// than `ttd run` did, each time through Go and the recorder's MemRead.
// recCrossCode logs those pieces itself instead, exactly as the
// interpreter's MemRead does (Recorder.read): in order, each piece the
// cache misses as one LoggedRead of its own bytes, or, for a piece of
// one byte, of the whole aligned word around it (predict.Cache.ReadWord),
// and each enters the cache. A synchronising instruction's read still
// leaves (its key frame comes first), and so does a read for which the
// log has no room for every piece.

// jitLogCrossMisses turns recCrossCode on (tests turn it off to compare).
var jitLogCrossMisses = true

// logsCrossMisses reports whether the cross code of the read being
// translated logs its misses itself (recCrossCode) rather than leave.
func (t *jitT) logsCrossMisses() bool {
	return jitLogCrossMisses && t.log && !t.syncPending
}

// recCrossCode emits the code, at in, that logs the pieces of c's read
// (at RSI, its host address in RDI; its cache bytes, at RDX, do not run
// past the cache's last word) that the cache does not predict, enters
// them into the cache, counts c's extra reads as the cross code does and
// goes back. It needs RBX, RCX and RDX besides RAX, and keeps them on the
// stack (3 words below translated code's return address; the signal
// handlers run on their own stack).
func (t *jitT) recCrossCode(c jitCross, in as.Label) {
	a := &t.a
	a.Bind(in)
	halves := max(c.size/8, 1)
	hsize := min(c.size, 8)
	a.MovRM(8, as.RAX, as.M(hCPU, offJitLogN))
	a.ALURI(as.CMP, 8, as.RAX, int64(jitLogSize-2*halves))
	a.Jcc(7, c.exit) // ja: no room for every piece
	a.Push(as.RBX)
	a.Push(as.RCX)
	a.Push(as.RDX)
	// RAX: the cache word of RSI's word (the next ones follow it).
	a.MovRR(8, as.RAX, as.RSI)
	a.ALURM(as.AND, 8, as.RAX, as.M(hCPU, offJitMask))
	a.ALURI(as.AND, 8, as.RAX, -8)
	a.ALURR(as.ADD, 8, as.RAX, hSlots)
	for h := 0; h < halves; h++ {
		// The piece in the word of the half's first byte: its last
		// 8-off bytes (off = RSI&7, not 0). CL = 8*off.
		t.recPiece(c, int32(8*h), int32(2*h), func() {
			a.MovRR(4, as.RCX, as.RSI)
			a.ALURI(as.AND, 4, as.RCX, 7)
			a.ShiftRI(as.SHL, 4, as.RCX, 3)
		}, true)
		// The piece in the next word: its first hsize-8+off bytes.
		// CL = 64 - 8*(hsize-8+off), 8 to 56.
		t.recPiece(c, int32(8*h+8), int32(2*h+1), func() {
			a.MovRR(4, as.RCX, as.RSI)
			a.ALURI(as.AND, 4, as.RCX, 7)
			a.ShiftRI(as.SHL, 4, as.RCX, 3)
			a.NegR(4, as.RCX)
			a.ALURI(as.ADD, 4, as.RCX, int64(128-8*hsize))
		}, false)
	}
	a.Pop(as.RDX)
	a.Pop(as.RCX)
	a.Pop(as.RBX)
	a.Lea(8, hReads, as.M(hReads, int32(c.extra)))
	a.MovRI(hMark, uint64(c.mark))
	a.Jmp(c.back)
}

// recPiece emits one piece of recCrossCode: the piece lies in the
// aligned word d bytes after RSI's (in memory and, from RAX, in the
// cache) and is the read's k-th; shift sets CL, the shift that keeps
// only the piece's bytes of a word: right for the word's last bytes
// (high), left for its first. A piece of one byte is the one whose CL is
// 56.
func (t *jitT) recPiece(c jitCross, d, k int32, shift func(), high bool) {
	a := &t.a
	keep := as.SHR // the piece's bytes, at the bottom of a word
	if !high {
		keep = as.SHL
	}
	done, word := a.NewLabel(), a.NewLabel()
	// RBX: memory's word (RDI - off + d).
	a.MovRR(4, as.RDX, as.RSI)
	a.ALURI(as.AND, 4, as.RDX, 7)
	a.NegR(8, as.RDX)
	a.MovRM(8, as.RBX, as.Mem{Base: as.RDI, Index: as.RDX, Disp: d})
	shift()
	// Predicted when the piece's bytes of the cache's word are memory's.
	a.MovRR(8, as.RDX, as.RBX)
	a.ALURM(as.XOR, 8, as.RDX, as.M(as.RAX, d))
	a.ShiftRCL(keep, 8, as.RDX)
	a.Jcc(4, done) // je
	// A miss: the entry (logEntry's, which has room), its number.
	a.MovRM(8, as.RDX, as.M(hCPU, offJitLogN))
	a.ALURI(as.ADD, 8, as.RDX, 1)
	a.MovMR(8, as.M(hCPU, offJitLogN), as.RDX)
	a.Lea(8, as.RDX, as.Mem{Base: as.RDX, Index: as.RDX, Scale: 1})
	a.Lea(8, as.RDX, as.Mem{Base: hCPU, Index: as.RDX, Scale: 3, Disp: offJitLog - 24})
	a.MovMR(8, as.M(as.RDX, 0), hReads)
	if n := c.reads + k; n != 0 {
		a.ALUMI(as.ADD, 8, as.M(as.RDX, 0), int64(n))
	}
	a.MovMR(8, as.M(as.RDX, 8), as.RBX)
	a.ALURI(as.CMP, 4, as.RCX, 56)
	a.Jcc(4, word) // je: one byte, logged with its word
	// The piece's bytes, and their number: (64-CL)/8.
	if high {
		a.ShiftMCL(as.SHR, 8, as.M(as.RDX, 8))
	} else {
		a.ShiftMCL(as.SHL, 8, as.M(as.RDX, 8))
		a.ShiftMCL(as.SHR, 8, as.M(as.RDX, 8))
	}
	a.MovMI(8, as.M(as.RDX, 16), 64)
	a.ALUMR(as.SUB, 8, as.M(as.RDX, 16), as.RCX)
	a.ShiftMI(as.SHR, 8, as.M(as.RDX, 16), 3)
	// The cache's word takes them: word ^= (word^mem) masked to them.
	a.MovRM(8, as.RDX, as.M(as.RAX, d))
	a.ALURR(as.XOR, 8, as.RDX, as.RBX)
	a.ShiftRCL(keep, 8, as.RDX)
	if high {
		a.ShiftRCL(as.SHL, 8, as.RDX)
	} else {
		a.ShiftRCL(as.SHR, 8, as.RDX)
	}
	a.ALUMR(as.XOR, 8, as.M(as.RAX, d), as.RDX)
	a.Jmp(done)
	a.Bind(word)
	a.MovMI(8, as.M(as.RDX, 16), 8)
	a.MovMR(8, as.M(as.RAX, d), as.RBX)
	a.Bind(done)
}
