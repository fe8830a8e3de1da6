package tracefile

import "encoding/binary"

// The checkpoint list of the index (minor version 6): a closed trace
// says where its checkpoints are, so that a reader lists them without
// decoding a chunk. Before, `ttd probe --jobs 2` decoded every chunk
// that holds one (nearly all of them) before its jobs could start:
// 0.1 s of CPU on a 1e9-instruction trace whose jobs take 0.45 s each.
// A trace without an index (a recording killed before Close) or a ring
// buffer's (whose chunks are renumbered as the window moves) has no
// list, and a reader surveys its chunks as before.

// cpIndexEntry is one Checkpoint record: its position and the chunk it
// was written in.
type cpIndexEntry struct {
	chunk uint32
	pos   uint64
}

// noteCheckpoint remembers a Checkpoint record just begun in the
// current chunk, which is chunk number w.cuts.
func (w *Writer) noteCheckpoint(pos uint64) {
	if w.ring == nil {
		w.cps = append(w.cps, cpIndexEntry{chunk: w.cuts, pos: pos})
	}
}

// appendCheckpointIndex appends the index's checkpoint list (FORMAT.md,
// "Index and footer"): a count, then for each checkpoint in order the
// chunk number and the position, as uvarints.
func (w *Writer) appendCheckpointIndex(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(w.cps)))
	for _, c := range w.cps {
		b = binary.AppendUvarint(b, uint64(c.chunk))
		b = binary.AppendUvarint(b, c.pos)
	}
	return b
}
