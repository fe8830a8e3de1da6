package reader

import (
	"encoding/binary"
	"errors"

	"ttd/x86"
)

// Traces that log no reads (header parameter reads=none: `ttd record
// --mode replayable`, recorder/replayable.go). The replay takes every
// read from its own memory image, which re-execution keeps equal to the
// recording's: the trace holds the bytes of every page that came into
// being with contents (TagMemImage) and every byte the kernel wrote.
// Its CPUs run `ttd run`'s translations (MemoryBlind) unless the replay
// observes accesses. Checkpoints carry registers, not memory, so such a
// replay starts at the beginning of the trace only: a replay that would
// start anywhere else (a checkpoint, a snapshot) is refused with
// ErrSequential, never run with the wrong memory.

const (
	tagMemImage = 4 // 4-byte pid, 8-byte address, the bytes
	tagMemHash  = 5 // 4-byte pid, 8-byte x86.HashMemory
)

// ErrSequential is the error of a replay that would start elsewhere than
// at the beginning of a trace that logs no reads.
var ErrSequential = errors.New("trace recorded with --mode replayable: it replays from its start only (no segments, snapshots or parallel jobs)")

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
	if got, want := x86.HashMemory(p.as.mem), binary.LittleEndian.Uint64(b); got != want {
		return r.diverged("memory of process %d differs from the recording's (hash %#x, recorded %#x)", pid, got, want)
	}
	return nil
}
