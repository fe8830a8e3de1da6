package reader

import "ttd/tracefile"

// A chunk's logged reads are most of its memory (16 bytes a
// read; perl's hash filling logs 1-2 million reads a 4 MB chunk), and
// allocating one means zeroing it: after Replay.Stream let the heap
// stay small, runtime.memclrNoHeapPointers under loadChunk's makeslice
// took 0.18 s of a 2.2 s `ttd probe --jobs 2` over perl (the page faults
// of fresh memory before). So the cache recycles the arrays of the
// chunks streaming replays dropped, once no replay reads them: a
// streaming replay holds the chunks whose reads it may still consume
// (its chunk and those its carried reads are in), and anything else
// that gets a chunk (a replay that is not streaming, a snapshot, an
// event scan) pins it, never to be recycled.

// chunkUse is who reads a chunk's array of reads, under the cache's lock.
// Copies of a chunk (Replay.load's, with carried reads) share it.
type chunkUse struct {
	holds   int  // streaming replays holding the chunk
	waiting int  // gets about to give it out (they take it next)
	pinned  bool // given to something else: never recycled
	dropped bool // out of the cache (chunkCache.drop)
	// recycled: its array went to another chunk (copies of the chunk
	// may still point at it: none reads them).
	recycled bool
}

// A chunk of more than readBlock/2 reads keeps them in blocks of
// readBlock (1 MiB), all full but the last, which any chunk can take
// again: whole arrays of a chunk's size found one for only 60 of bzip2
// -9's 88 chunks at `--jobs 2` (its chunks hold 58k to 1M reads and
// grow along the trace, so the arrays kept were too small for the
// next), and the 28 others were fresh arrays of up to 16 MB to zero
// and fault in (250 MB). A smaller chunk's reads are one array of its
// size (a tree's chunks of a few thousand reads), never recycled.
// (chunkCache.block is readBlock but in tests, which make blocks of a
// few reads.)
const readBlock = 1 << 16

// maxFreeBlocks bounds the recycled blocks the cache keeps (96 MiB,
// against the 256 MiB of decoded chunks it may keep): a job needs those
// of the chunk it decodes ahead (bzip2's: up to 16) and of the chunks
// its carried reads are in (perl's hash filling: runs of chunks without
// a control record), and two jobs run at a time. With 40, `--jobs 2`
// over bzip2 -9's trace allocated 175 new blocks, with 100 104, and
// with 400 as many (--jobs 1: 72, 55, 55).
const maxFreeBlocks = 96

// take records that a chunk was given out: held by a streaming replay,
// or pinned.
func (c *chunkCache) take(ch *chunk, hold bool) {
	if hold {
		ch.use.holds++
	} else {
		ch.use.pinned = true
	}
}

// hold counts chunks a streaming replay holds from now on.
func (c *chunkCache) hold(chs []*chunk) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range chs {
		ch.use.holds++
	}
}

// release lets go of chunks a streaming replay held.
func (c *chunkCache) release(chs []*chunk) {
	if len(chs) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range chs {
		ch.use.holds--
		c.recycle(ch)
	}
}

// pin pins chunks (a snapshot of a streaming replay shares them).
func (c *chunkCache) pin(chs []*chunk) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range chs {
		ch.use.pinned = true
	}
}

// recycle keeps ch's blocks of reads for other chunks when nothing
// reads them any more, as many as there is room for among the
// maxFreeBlocks kept. Called with the lock held.
func (c *chunkCache) recycle(ch *chunk) {
	u := ch.use
	if u.holds > 0 || u.waiting > 0 || u.pinned || !u.dropped || u.recycled {
		return
	}
	u.recycled = true
	for _, b := range ch.reads {
		if cap(b) == c.block && len(c.free) < maxFreeBlocks {
			c.free = append(c.free, b[:0])
		}
	}
}

// readBlockOf is an empty block of reads: a recycled one, or a new one.
func (c *chunkCache) readBlockOf() ([]logRead, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.free); n > 0 {
		b := c.free[n-1]
		c.free = c.free[:n-1]
		return b, true
	}
	return make([]logRead, 0, c.block), false
}

// readFill collects a chunk's reads as it is decoded: in blocks from
// the cache, or, for a chunk of no more than readBlock/2 records, in
// one array of that size.
type readFill struct {
	c      *chunkCache
	blocks [][]logRead // full (the current one is cur)
	cur    []logRead
	done   int // reads in blocks
}

func (c *chunkCache) newReadFill(records int) readFill {
	f := readFill{c: c}
	if records <= c.block/2 {
		f.cur = make([]logRead, 0, records)
	}
	return f
}

// n is the number of reads so far.
func (f *readFill) n() int { return f.done + len(f.cur) }

// room makes sure cur has room for a read.
func (f *readFill) room() {
	if len(f.cur) < cap(f.cur) {
		return
	}
	if cap(f.cur) > 0 {
		f.blocks = append(f.blocks, f.cur)
		f.done += len(f.cur)
	}
	f.cur, _ = f.c.readBlockOf()
}

// add appends a read, then the run of reads that follows it in it.
func (f *readFill) add(lr logRead, it *tracefile.RecordIter) {
	f.room()
	f.cur = append(f.cur, lr)
	for {
		var more bool
		f.cur, more = it.FillMemReads(f.cur)
		if !more {
			return
		}
		f.room()
	}
}

// finish returns the chunk's blocks of reads.
func (f *readFill) finish() [][]logRead {
	if len(f.cur) > 0 {
		f.blocks = append(f.blocks, f.cur)
	} else if cap(f.cur) == f.c.block { // taken, not used
		f.c.mu.Lock()
		if len(f.c.free) < maxFreeBlocks {
			f.c.free = append(f.c.free, f.cur)
		}
		f.c.mu.Unlock()
	}
	return f.blocks
}

// heldNow lists the chunks whose reads r may still consume: those of
// its carried reads, then its own.
func (r *Replay) heldNow() []*chunk {
	out := append(make([]*chunk, 0, len(r.carryCh)+1), r.carryCh...)
	return append(out, r.ch)
}

// rehold makes r hold the chunks it reads now (heldNow) and lets go of
// those it held before and does not read any more. Only a streaming
// replay holds chunks.
func (r *Replay) rehold() {
	if !r.streaming {
		return
	}
	now := r.heldNow()
	r.t.cache.hold(now)
	r.t.cache.release(r.held)
	r.held = now
}
