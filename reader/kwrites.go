package reader

import (
	"cmp"
	"slices"
)

// KernelWrite is a range of bytes that a syscall or a signal delivery
// wrote.
type KernelWrite struct {
	Addr  uint64
	Bytes []byte
}

// KernelPieces calls fn for each piece of what one syscall or signal
// delivery wrote (ws, which it sorts), as re-simulation reports them to
// an Access callback: in address order (ranges that start at one address
// in their order in ws), each range cut at the multiples of 8 (so at most
// 8 bytes, little-endian in val).
//
// The form does not depend on how a record split the bytes: a recorder
// logs the runs its prediction cache did not hold and leaves out the
// spans it did (tracefile.Syscall.Predicted), cutting a range only at
// multiples of 8, and a replay applies the spans first. A live run,
// which has no prediction cache, gets the same pieces from the ranges
// the kernel wrote (emu.SyscallEvent.Writes).
func KernelPieces(ws []KernelWrite, fn func(addr uint64, size int, val uint64)) {
	slices.SortStableFunc(ws, func(a, b KernelWrite) int { return cmp.Compare(a.Addr, b.Addr) })
	for _, w := range ws {
		for i := 0; i < len(w.Bytes); {
			a := w.Addr + uint64(i)
			n := min(int(8-a&7), len(w.Bytes)-i)
			var v uint64
			for k := 0; k < n; k++ {
				v |= uint64(w.Bytes[i+k]) << (8 * k)
			}
			fn(a, n, v)
			i += n
		}
	}
}

// ExecPieces calls fn for the pieces of the watched ranges ws that lie
// in [lo, hi), a region of an address space that an exec replaced, as
// re-simulation reports them (one read and one write of source
// AccessExec each): in address order, each byte once however many
// ranges hold it (two probes watching the same bytes, one for reads and
// one for writes, must not see the exec twice), at most 8 bytes from
// the start of each run of the ranges' union in the region.
func ExecPieces(lo, hi uint64, ws []Range, fn func(addr uint64, size int)) {
	done := lo // the bytes below done were reported
	for {
		next := -1 // the range that starts first of those reaching past done
		for i, w := range ws {
			if min(w.Hi, hi) > done && (next < 0 || w.Lo < ws[next].Lo) {
				next = i
			}
		}
		if next < 0 {
			return
		}
		l, h := max(ws[next].Lo, done), min(ws[next].Hi, hi)
		for a := l; a < h; a += 8 {
			fn(a, int(min(8, h-a)))
		}
		done = h
	}
}

// written keeps bytes written outside the CPU (by a syscall or a signal
// delivery) for the Access callback, which kernelWrites calls for their
// pieces (KernelPieces) once the record is applied (kernelWrites tells
// tracking).
func (r *Replay) written(addr uint64, b []byte) {
	if r.Access == nil || len(b) == 0 || !r.watched(addr, len(b)) {
		return
	}
	start := len(r.kwBytes)
	r.kwBytes = append(r.kwBytes, b...)
	r.kw = append(r.kw, KernelWrite{Addr: addr, Bytes: r.kwBytes[start:len(r.kwBytes):len(r.kwBytes)]})
}

// kwPiece reports one piece of a record's kernel writes (KernelPieces)
// to the Access callback, when watched.
func (r *Replay) kwPiece(a uint64, n int, v uint64) {
	if !r.watched(a, n) {
		return
	}
	r.acc = Access{Position: r.pos - 1, Tid: r.kwT.tid, PC: r.kwPC, Addr: a, Size: n, Value: v, Write: true, Source: r.kwSrc}
	if r.pos == 0 {
		r.acc.Position = 0
	}
	r.Access(&r.acc)
}
