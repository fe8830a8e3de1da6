package reader

import "ttd/tracefile"

// Forward-only reading. A replay that runs from the start to the end
// once (a syscall export) needs the chunk it re-simulates and the next
// one, which the cache decodes ahead: SetChunkCache bounds the cache to
// that, so the memory such a run holds does not depend on the trace's
// length.

// ctrlsOf is the number of control records chunk c holds, as its header
// counts them, plus room for those it does not count: an Mmap record
// after an mmap syscall, the Mmap records that restate a process tree's
// mappings at each checkpoint (restatedMaps), a thread's exit, signals,
// opaque records. A decoded control record is about 800 bytes: when a
// chunk of 97k key frames and two checkpoints overflowed the header's
// count by the 446 mappings restated, growing the array copied 78 MB,
// 0.29 s of the 0.68 s its scan decoded chunks before any job of ttd
// probe started (a bash pipeline of seq, awk, sort, uniq, 2.4e9
// instructions).
func ctrlsOf(c *tracefile.ChunkInfo) int {
	return c.KeyFrames + c.Checkpoints*(1+restatedMaps) + 2*c.Syscalls + 2*c.ThreadStarts + 16
}

// restatedMaps is room for the Mmap records a checkpoint restates: 223
// for that pipeline's processes (a process tree restates every
// process's mappings).
const restatedMaps = 512

// slabOf is the room of the first array of decoded records (recordSlab)
// of chunk c: its control records but key frames, as ctrlsOf counts
// them, with room for slabMaps Mmap records per checkpoint rather than
// restatedMaps. A slab that fills up takes another array (nothing is
// copied), while every record of room is a 728-byte tracefile.Record
// allocated and zeroed: sort -n's 25 checkpoints took 9 of the 11 MB
// its chunks' slabs held, for 844 Mmap records in all.
func slabOf(c *tracefile.ChunkInfo) int {
	return ctrlsOf(c) - c.KeyFrames - c.Checkpoints*(restatedMaps-slabMaps)
}

// slabMaps: a single process restates its mappings at a checkpoint, a
// few dozen (sort -n: 34); a process tree's take a second array.
const slabMaps = 64

// SetChunkCache bounds the decoded chunks t keeps to limit bytes (it
// always keeps the two last used, whatever their size) and returns the
// previous bound. A forward-only run sets 0 for the least memory.
func (t *Trace) SetChunkCache(limit int64) (old int64) {
	c := &t.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	old, c.limit = c.limit, limit
	return old
}
