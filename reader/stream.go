package reader

import "ttd/tracefile"

// Forward-only reading. A replay that runs from the start to the end
// once (a syscall export) needs the chunk it re-simulates and the next
// one, which the cache decodes ahead: SetChunkCache bounds the cache to
// that, so the memory such a run holds does not depend on the trace's
// length.

// ctrlsOf is the number of control records chunk c holds, as its header
// counts them, plus room for the few it does not count (mappings,
// signals, opaque records).
func ctrlsOf(c *tracefile.ChunkInfo) int {
	return c.KeyFrames + c.Checkpoints + c.Syscalls + c.ThreadStarts + 16
}

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
