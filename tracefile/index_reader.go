package tracefile

// minorCheckpointIndex is the first minor version whose index lists the
// checkpoints (index_writer.go).
const minorCheckpointIndex = 6

// IndexedCheckpoint is a Checkpoint record as the index lists it (minor
// version 6): its position and the chunk that holds it.
type IndexedCheckpoint struct {
	Chunk    int
	Position uint64
}

// IndexedCheckpoints returns the checkpoints the index lists, in the
// order they were written (false: the trace has no such list, because it
// is older than minor version 6, was not closed, is a ring buffer's, or
// the list does not agree with the chunk headers). A reader without the
// list finds the checkpoints by decoding the chunks that hold some.
func (r *Reader) IndexedCheckpoints() ([]IndexedCheckpoint, bool) {
	return r.cpIndex, r.cpIndex != nil
}

// readCheckpointIndex parses the index's checkpoint list from rest, the
// index bytes after the exit field. The list is taken only if it agrees
// with every chunk header: each chunk holds as many as its header
// counts, at positions within the chunk's, in order. Anything else
// leaves no list (the chunks are surveyed instead), never an error: the
// chunks themselves are what a re-simulation trusts.
func (r *Reader) readCheckpointIndex(rest []byte) {
	if !r.hasMinor(minorCheckpointIndex) || len(rest) == 0 {
		return
	}
	b := body{b: rest}
	n := b.count(2)
	if b.bad {
		return
	}
	list := make([]IndexedCheckpoint, 0, n)
	count := make([]int, len(r.chunks))
	var last uint64
	for range n {
		c, pos := b.uvarint(), b.uvarint()
		if b.bad || c >= uint64(len(r.chunks)) || pos < last {
			return
		}
		ci := &r.chunks[c]
		// (Chunks hold increasing positions: in order and within
		// their chunks, the checkpoints' chunks are in order too.)
		if pos < ci.FirstPosition || pos > ci.LastPosition {
			return
		}
		count[c]++
		last = pos
		list = append(list, IndexedCheckpoint{Chunk: int(c), Position: pos})
	}
	for i := range r.chunks {
		if count[i] != r.chunks[i].Checkpoints {
			return
		}
	}
	r.cpIndex = list
}
