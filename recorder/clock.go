package recorder

import "ttd/x86"

// ThreadCount is one thread's share of the global position (the
// instructions all threads retired): Seen is its CPU's retired count
// already in the position. Only one thread runs at a time, so the
// running thread's progress since Seen is all that is not yet counted.
// The recorder's threads count with it, and so does a Clock that
// records nothing (probe/live's run without a trace), so both give the
// same positions.
type ThreadCount struct {
	CPU  *x86.CPU
	Seen uint64
}

// Count adds what the thread retired since it was last counted to pos
// and returns the sum.
func (t *ThreadCount) Count(pos uint64) uint64 {
	n := t.CPU.Retired()
	pos += n - t.Seen
	t.Seen = n
	return pos
}

// At is the position of the instruction the thread is about to run,
// pos counting it up to Seen.
func (t *ThreadCount) At(pos uint64) uint64 { return pos + t.CPU.Retired() - t.Seen }

// InstAt is a Clock's InstPosition for the thread: At when it is the
// running thread; a thread that is not running waits at pos.
func (t *ThreadCount) InstAt(running bool, pos uint64) uint64 {
	if !running {
		return pos
	}
	return t.At(pos)
}

// Restart counts the thread from c's current count: when it is switched
// in, or when execve gave it a new CPU (after its old one was counted).
func (t *ThreadCount) Restart(c *x86.CPU) { t.CPU, t.Seen = c, c.Retired() }
