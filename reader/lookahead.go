package reader

import "ttd/tracefile"

// Looking past the end of a chunk without decoding what follows.
//
// RunTo(p) applies every event at p, so once the current chunk's control
// records are all applied it must know where the next one takes effect.
// Decoding the chunks up to it to find out cost a job of `ttd probe
// --jobs 2` a second on perl's trace: its checkpoint at 2.5e8 is followed
// by four 4 MB chunks of memory reads with no key frame (a hash being
// sorted), which the job ending there decoded (and whose reads it
// carried from chunk to chunk) only to learn that the next event is the
// checkpoint at 3e8, and the job starting there decoded them all before
// running an instruction. The chunk headers say as much: a chunk with no
// KeyFrame, Checkpoint, Syscall, ThreadStart, Exit, Process,
// ProcessState, Module or AccessSummary record holds no record that
// carries a position, and none of the records that follow one at its
// position (Syscall, Mmap, Signal, output...: the recorder writes those
// right after the record they follow, so they could only open a chunk
// whose predecessor ended with a control record). Its only control
// record is then the code it logged, applied before the CPU runs on.

// decodeToLookAhead turns the headers' answer off, for the tests that
// compare it with decoding.
var decodeToLookAhead = false

// nextPositionAfter returns the position of the first control record
// after chunk ch when the chunk headers give it without decoding: the
// chunks after ch hold nothing but reads, non-det results and code up to
// one that begins with a Checkpoint (whose position is that chunk's
// first). ok is false when only decoding can tell: ch ends with a control
// record, the trace's chunks do not flag their Module and Process
// records (before tracefile minor 5), or a chunk on the way holds a
// record that carries a position or follows one.
func (t *Trace) nextPositionAfter(ch *chunk) (pos uint64, ok bool) {
	if ch.endsAtCtrl || !t.f.RecordFlags() || decodeToLookAhead {
		return 0, false
	}
	for j := ch.index + 1; j < len(t.chunks); j++ {
		c := &t.chunks[j]
		if c.BeginsWithCheckpoint {
			return c.FirstPosition, true
		}
		if !onlyReads(c) {
			return 0, false
		}
	}
	return 0, false
}

// onlyReads reports whether a chunk's header proves that it holds no
// control record but code: no record that carries a position (KeyFrame,
// Checkpoint, Exit, Process), nor any that follows one (Syscall and the
// records after it, ThreadStart, ProcessState and its Mmap records,
// Module, AccessSummary). Only meaningful when the trace flags its
// Module and Process records (tracefile.Reader.RecordFlags).
func onlyReads(c *tracefile.ChunkInfo) bool {
	return c.KeyFrames == 0 && c.Checkpoints == 0 && c.Syscalls == 0 && c.ThreadStarts == 0 &&
		!c.HasExit && !c.HoldsProcesses() && !c.HoldsProcessRecords() && !c.HoldsModules() && !c.HoldsSummaries()
}

// readsAhead bounds the reads a replay carries over from chunk i on
// (Replay.load): the records of chunk i and of the chunks after it that
// hold no control record but code, which no control record consumes
// before the next chunk's.
func (t *Trace) readsAhead(i int) int {
	n := 0
	for j := i; j < len(t.chunks) && !t.chunks[j].BeginsWithCheckpoint && onlyReads(&t.chunks[j]); j++ {
		n += t.chunks[j].Records
	}
	return n
}
