// Package tracefile is ttd's on-disk trace format: the file header, the
// records the recorder appends (key frames, unpredicted memory reads, code
// bytes, syscall results, checkpoints, …), their grouping into
// independently zstd-compressed chunks, the chunk index and the footer,
// and the recovery of a trace whose recording process died.
//
// A Writer (Create, NewWriter) is fed by the recorder from the goroutine
// that runs the guest: every record method only appends a few bytes to an
// in-memory buffer and allocates nothing; compression and file writes run
// on a second goroutine with a small, fixed set of reused buffers, so
// memory does not grow with the length of a recording. A Reader (Open,
// NewReader) lists the chunks, finds the chunk to start re-simulation from
// for a position (ChunkAt) and iterates a chunk's records without
// allocating per record. Decoding never panics: every problem in a file is
// a *FormatError carrying its offset.
//
// The package knows the format, not the machine: a record's meaning for
// x86 re-simulation (which thread a MemRead belongs to, that a Checkpoint
// resets the prediction caches, what a register blob contains) is
// documented in FORMAT.md and enforced by the reader package. tracefile
// must never depend on x86, emu, the recorder or the reader.
package tracefile
