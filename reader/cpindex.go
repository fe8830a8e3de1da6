package reader

import (
	"fmt"

	"ttd/tracefile"
)

// CtrlUnknown is the Ctrl of a checkpoint listed by the trace's index
// (tracefile minor version 6): the index gives its chunk and position,
// not its place among the chunk's control records, which a re-simulation
// finds when it loads the chunk (ctrlOf). Listing the checkpoints then
// decodes no chunk, where the survey decoded nearly every one before
// `ttd probe --jobs N` could start its jobs.
const CtrlUnknown = -1

// indexedCheckpoints builds the checkpoint list from the index's, in the
// survey's shape: the start of chunk 0 first, then each checkpoint after
// the last one kept (a repeat of a position keeps the first).
func (t *Trace) indexedCheckpoints(list []tracefile.IndexedCheckpoint) []Checkpoint {
	cps := make([]Checkpoint, 1, len(list)+1)
	cps[0] = Checkpoint{Position: t.chunks[0].FirstPosition, Chunk: 0, Ctrl: 0}
	for _, c := range list {
		if c.Position <= cps[len(cps)-1].Position {
			continue
		}
		cps = append(cps, Checkpoint{Position: c.Position, Chunk: c.Chunk, Ctrl: CtrlUnknown})
	}
	return cps
}

// ctrlOf returns the index of checkpoint cp among the control records of
// ch, its chunk: cp.Ctrl, or for a checkpoint from the index the first
// Checkpoint record at cp's position.
func ctrlOf(cp Checkpoint, ch *chunk) (int, error) {
	if cp.Ctrl != CtrlUnknown {
		return cp.Ctrl, nil
	}
	for k := range ch.ctrls {
		if c := &ch.ctrls[k]; c.kind == tracefile.KindCheckpoint && c.rec.Checkpoint.Position == cp.Position {
			return k, nil
		}
	}
	return 0, fmt.Errorf("trace: no checkpoint at position %d in chunk %d", cp.Position, cp.Chunk)
}
