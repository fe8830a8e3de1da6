package reader

import (
	"encoding/binary"
	"errors"
	"slices"

	"ttd/x86"
)

// Traces that log no reads (header parameter reads=none: `ttd record
// --mode replayable`, recorder/replayable.go). The replay takes every
// read from its own memory image, which re-execution keeps equal to the
// recording's: the trace holds the bytes of every page that came into
// being with contents (TagMemImage) and every byte the kernel wrote.
// Its CPUs run `ttd run`'s translations (MemoryBlind) unless the replay
// observes accesses. Checkpoints carry registers, not memory: a replay
// that starts at one takes the memory there from the trace's checkpoint
// memory file, which an index pass builds the first time one is needed
// (cpmem.go), and snapshots carry their memory (snapmem.go). A trace
// read from elsewhere than a file, which has no place for that file,
// replays from its start only (ErrSequential), never with the wrong
// memory.

const (
	tagMemImage = 4 // 4-byte pid, 8-byte address, the bytes
	tagMemHash  = 5 // 4-byte pid, 8-byte x86.HashMemory
	// 4-byte fd: the output of the write or writev of the Syscall
	// record before, in memory
	tagOutputRef = 6
)

// ErrSequential is the error of a replay that would start elsewhere than
// at the beginning of a trace that logs no reads.
var ErrSequential = errors.New("trace recorded with --mode replayable and read from elsewhere than a file: it replays from its start only (no segments, snapshots or parallel jobs without its checkpoint memory, `ttd index`)")

// Sequential reports whether the trace logs no reads, so replays only
// from its start (ErrSequential).
func (t *Trace) Sequential() bool { return t.noReads }

// MemoryBlind runs the CPUs as `ttd run` does (x86.MemoryBlind) when the
// trace logs no reads and nothing observes the accesses.
func (r *Replay) MemoryBlind() bool { return r.t.noReads && !r.observe }

// memImage applies a TagMemImage record.
func (r *Replay) memImage(pid int, b []byte) error {
	if len(b) < 8 {
		return r.diverged("short memory image record")
	}
	p := r.proc(pid)
	if p == nil || p.as == nil {
		return r.diverged("memory image of process %d, which does not exist", pid)
	}
	addr := binary.LittleEndian.Uint64(b)
	if err := p.as.mem.Poke(addr, b[8:]); err != nil {
		return r.diverged("memory image of %d bytes at %#x outside the mapped memory of process %d", len(b)-8, addr, pid)
	}
	return nil
}

// outputRef reports the output of the write or writev just applied
// (lastSys), which the trace left in memory (tagOutputRef).
func (r *Replay) outputRef(fd int) error {
	s := &r.lastSys
	if r.Output == nil {
		return nil
	}
	t := r.find(s.tid)
	if t == nil || t.proc == nil || s.result <= 0 || s.result > 1<<31 {
		return r.diverged("output of a syscall the replay did not apply")
	}
	mem := t.proc.as.mem
	n := uint64(s.result)
	b := slices.Grow(r.outBuf[:0], int(n))
	switch s.nr {
	case 1: // write
		b = b[:n]
		if mem.Peek(s.args[1], b) != nil {
			return r.diverged("output of write at %#x outside the mapped memory", s.args[1])
		}
	case 20: // writev
		var iov [16]byte
		for i := uint64(0); i < s.args[2] && uint64(len(b)) < n; i++ {
			if mem.Peek(s.args[1]+16*i, iov[:]) != nil {
				return r.diverged("writev's iovec at %#x outside the mapped memory", s.args[1]+16*i)
			}
			base, l := binary.LittleEndian.Uint64(iov[:]), binary.LittleEndian.Uint64(iov[8:])
			l = min(l, n-uint64(len(b)))
			k := len(b)
			b = b[:k+int(l)]
			if mem.Peek(base, b[k:]) != nil {
				return r.diverged("output of writev at %#x outside the mapped memory", base)
			}
		}
	default:
		return r.diverged("output by reference of syscall %d", s.nr)
	}
	r.outBuf = b
	r.Output(fd, b)
	return nil
}

// memHash compares a TagMemHash record with the replay's memory
// (Verify).
func (r *Replay) memHash(pid int, b []byte) error {
	if !r.Verify || len(b) < 8 {
		return nil
	}
	p := r.proc(pid)
	if p == nil || p.as == nil {
		return r.diverged("memory hash of process %d, which does not exist", pid)
	}
	p.as.materialize()
	if got, want := x86.HashMemory(p.as.mem), binary.LittleEndian.Uint64(b); got != want {
		return r.diverged("memory of process %d differs from the recording's (hash %#x, recorded %#x)", pid, got, want)
	}
	return nil
}
