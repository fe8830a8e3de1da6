package recorder

import (
	"encoding/binary"
	"fmt"
	"os"
	"slices"

	"ttd/emu"
	"ttd/x86"
)

// Replayable mode (Options.Replayable, `ttd record --mode replayable`):
// rr's design on ttd's own scheduler. The program runs with `ttd run`'s
// translations — no prediction cache, no marks, no read logged — and
// the trace holds what a replay cannot recompute: syscall results and
// every byte the kernel wrote (no Predicted spans: there is no cache),
// signal frames, non-deterministic results, thread switches at their
// positions, and the bytes of every page that comes into being with
// contents (a page of a mapped file, or what the loader wrote at an
// exec) as a TagMemImage record. A replay (reader) then takes each read
// from its own memory image, which re-execution keeps equal to the
// recording's: threads run one at a time, switches are at known
// positions, so every read reads what the recording read.
//
// Memory that two mappings show (a file or System V segment mapped
// twice, anonymous shared memory a fork shares, as python's
// multiprocessing does) is one page in the replay too: its Mmap records
// name the shared memory object (emu.Region.Obj, a SharedMmap record,
// tracefile/shared.go), and the replay takes every mapping of it from
// one table of pages (reader/shared.go), so a write through one mapping
// shows at the others, at the same position as in the recording. Writes
// from outside the recorded tree are not a case: emu copies a file's
// page at its first touch and never shows another host process's later
// writes to the file (emu/mm_shared.go), and its System V segments are
// its own, so what the recording read is what its own processes wrote,
// which the replay re-executes. Checkpoints carry registers, not memory: the reader
// builds the memory at each checkpoint after recording, with one replay
// (reader/cpmem.go), as rr and Pernosco build what a debugger needs.

const (
	// TagMemImage is memory that came into being with contents outside
	// the program's instructions: 4-byte pid of the address space, 8-byte
	// address, then the bytes (a page of a mapped file at its first
	// touch, the pages an exec loaded, a forked child's
	// CLONE_CHILD_SETTID word).
	TagMemImage = 4
	// TagMemHash is a hash of an address space's memory after a
	// checkpoint (4-byte pid, 8-byte hash; TTD_MEMHASH=1): ttd replay
	// --verify compares it (MemHash).
	TagMemHash = 5
	// TagOutputRef is a write or writev to the recording's stdout or
	// stderr whose bytes are in memory (4-byte fd, 1 or 2), right after
	// its Syscall record: the replay takes them from its own memory,
	// where TagOutput would copy them into the trace.
	TagOutputRef = 6
)

// memHash writes TagMemHash records at checkpoints (a test and
// debugging aid: hashing every page costs a few ms per 10,000 pages).
var memHash = os.Getenv("TTD_MEMHASH") == "1"

// replayable reports whether the recording logs no reads.
func (r *Recorder) replayable() bool { return r.opts.Replayable }

// MemoryBlind puts a replayable recording's CPUs in `ttd run`'s mode
// (x86.MemoryBlind): MemRead and MemWrite then hear only of the accesses
// that miss the TLB, and need nothing.
func (r *Recorder) MemoryBlind() bool { return r.opts.Replayable }

// wrapSource makes sp's address space report the pages it materialises
// with contents (a page of a mapped file at its first touch) as
// TagMemImage records. A page outside the regions the trace announced
// (one an exec loaded, or a mapping the running syscall made) is not:
// regionWriter logs it after the Mmap record that maps it (imageRange).
func (r *Recorder) wrapSource(sp *spaceRec) {
	mem := sp.mm.Mem
	src := mem.Source
	mem.Source = func(pn uint64) (*x86.Page, x86.Perm) {
		p, perm := src(pn)
		if p != nil && *p.Data != ([x86.PageSize]byte{}) && announced(sp.regions, pn<<x86.PageShift) {
			r.memImage(r.pidOf(sp), pn<<x86.PageShift, p.Data[:])
		}
		return p, perm
	}
}

// announced reports whether addr is in one of regions (sorted).
func announced(regions []emu.Region, addr uint64) bool {
	i, _ := slices.BinarySearchFunc(regions, addr, func(g emu.Region, a uint64) int {
		if g.End <= a {
			return -1
		}
		if g.Start > a {
			return 1
		}
		return 0
	})
	return i < len(regions) && regions[i].Start <= addr && addr < regions[i].End
}

// imageRange logs the pages of [lo, hi) that sp's address space has
// materialised with contents, after the Mmap record of that range: the
// pages an exec loaded, a region mremap moved.
func (r *Recorder) imageRange(sp *spaceRec, lo, hi uint64) {
	if !r.replayable() {
		return
	}
	r.pns = r.pns[:0]
	mem := sp.mm.Mem
	mem.Pages(lo>>x86.PageShift, (hi+x86.PageSize-1)>>x86.PageShift, func(pn uint64, p *x86.Page) {
		if *p.Data != ([x86.PageSize]byte{}) {
			r.pns = append(r.pns, pn)
		}
	})
	slices.Sort(r.pns)
	for _, pn := range r.pns {
		r.memImage(r.pidOf(sp), pn<<x86.PageShift, mem.Lookup(pn).Data[:])
	}
}

// pidOf returns a live process whose address space sp is (the trace
// names address spaces by process).
func (r *Recorder) pidOf(sp *spaceRec) int {
	procs := r.p.Machine().Processes()
	if sp.pid != 0 {
		for _, p := range procs {
			if p.PID == sp.pid && p.MM == sp.mm {
				return sp.pid
			}
		}
	}
	for _, p := range procs {
		if p.MM == sp.mm && len(p.Threads()) > 0 {
			sp.pid = p.PID
			return p.PID
		}
	}
	for _, p := range procs {
		if p.MM == sp.mm {
			sp.pid = p.PID
			return p.PID
		}
	}
	r.fail(fmt.Errorf("recording: memory of an address space no process has"))
	return 0
}

// memImage logs b as the contents of [addr, addr+len(b)) in process
// pid's address space.
func (r *Recorder) memImage(pid int, addr uint64, b []byte) {
	buf := binary.LittleEndian.AppendUint32(r.img[:0], uint32(pid))
	buf = binary.LittleEndian.AppendUint64(buf, addr)
	buf = append(buf, b...)
	r.img = buf
	r.w.Opaque(TagMemImage, buf)
	r.stats.ImageBytes += uint64(len(b))
}

// outputRef logs a write's output by reference (TagOutputRef).
func (r *Recorder) outputRef(fd uint64) {
	b := binary.LittleEndian.AppendUint32(r.img[:0], uint32(fd))
	r.img = b
	r.w.Opaque(TagOutputRef, b)
}

// pendingWrites logs what the kernel wrote in a new thread's memory
// before it ran (a forked child's CLONE_CHILD_SETTID word).
func (r *Recorder) pendingWrites(th *emu.Thread) {
	if !r.replayable() {
		return
	}
	for _, w := range th.PendingWrites() {
		b := make([]byte, w.Len)
		if th.P.MM.Mem.Peek(w.Addr, b) == nil {
			r.memImage(th.P.PID, w.Addr, b)
		}
	}
}

// mapShared and mapAnonymous are Linux's MAP_SHARED and MAP_ANONYMOUS,
// the Flags of the Mmap record of shared memory (anonymous: not a
// file's pages).
const (
	mapShared    = 0x01
	mapAnonymous = 0x20
)

// memHashes writes the hash of every live address space's memory
// (TagMemHash), after a checkpoint.
func (r *Recorder) memHashes(procs []*emu.Process) {
	if !r.replayable() || !memHash {
		return
	}
	seen := map[*x86.Memory]bool{}
	for _, p := range procs {
		if seen[p.MM.Mem] {
			continue
		}
		seen[p.MM.Mem] = true
		b := binary.LittleEndian.AppendUint32(nil, uint32(p.PID))
		b = binary.LittleEndian.AppendUint64(b, x86.HashMemory(p.MM.Mem))
		r.w.Opaque(TagMemHash, b)
	}
}

// ForeignWrite logs, in a replayable recording, the bytes a tracer
// wrote in its tracee's memory (ptrace's pokes, process_vm_writev): a
// replay that takes reads from its own memory must have them. A
// recording that logs reads sees them as the reads the prediction
// cache misses.
func (r *Recorder) ForeignWrite(th *emu.Thread, addr, n uint64) {
	if !r.replayable() {
		return
	}
	b := make([]byte, n)
	if th.P.MM.Mem.Peek(addr, b) == nil {
		r.memImage(th.P.PID, addr, b)
	}
}
