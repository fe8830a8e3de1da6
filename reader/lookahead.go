package reader

import (
	"runtime"

	"ttd/tracefile"
)

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

// prefetchAhead starts decoding the chunks after chunk i that a forward
// scan of the control records will want next, one per core (t.chunk
// prefetches only the next): ScanEvents does little but wait for them.
// The scan of a process tree's programs (40 bash start-ups and a
// python3, 31 chunks) is the serial start of `ttd probe --jobs N` on it,
// 1.6 s of decoding with one chunk ahead.
func (t *Trace) prefetchAhead(i int) {
	for j := i + 2; j <= i+runtime.GOMAXPROCS(0) && j < len(t.chunks); j++ {
		t.cache.prefetch(t, j)
	}
}

// scanned is where the chunk cache's clock starts: the uses of chunks
// by a scan of the whole trace are stamped below it (scannedFromStart).
const scanned = 1 << 32

// scannedFromStart marks chunk i as used by a scan of the whole trace
// from its start (ScanEvents from chunk 0), which will not come back to
// it: older than any other use, and the later the chunk the sooner it
// goes. What follows such a scan re-simulates from the start (ttd
// probe's jobs after the scan of a tree's programs; ttd calls, report,
// flows), so the cache keeps the first chunks, where LRU kept the last
// ones and evicted each first chunk just before a job wanted it: the
// jobs of `ttd probe --jobs 2` over a tree of 40 bash start-ups and a
// python3 (31 chunks, 10 MB decoded each, the cache bounded at 256 MB)
// decoded its first 12 chunks a second time, 2.4 s of CPU.
func (c *chunkCache) scannedFromStart(i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[i]; e != nil && i < scanned {
		e.used = uint64(scanned - 1 - i)
	}
}
