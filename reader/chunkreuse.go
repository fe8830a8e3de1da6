package reader

// A chunk's array of logged reads is most of its memory (16 bytes a
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

// maxFreeReads bounds the recycled arrays the cache keeps: a job needs
// one for the chunk it decodes ahead, and two jobs run at a time.
const maxFreeReads = 4

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

// recycle keeps ch's array of reads for another chunk when nothing reads
// it any more, in place of the smallest kept when there are
// maxFreeReads already (the larger fit more chunks). Called with the
// lock held.
func (c *chunkCache) recycle(ch *chunk) {
	u := ch.use
	if u.holds > 0 || u.waiting > 0 || u.pinned || !u.dropped || u.recycled {
		return
	}
	if len(c.free) < maxFreeReads {
		u.recycled = true
		c.free = append(c.free, ch.reads[:0])
		return
	}
	k := 0
	for j, a := range c.free {
		if cap(a) < cap(c.free[k]) {
			k = j
		}
	}
	if cap(ch.reads) > cap(c.free[k]) {
		u.recycled = true
		c.free[k] = ch.reads[:0]
	}
}

// readsArray is an empty array of reads with room for n: the smallest
// recycled one that has room and is no more than four times that size,
// or a new one. (Chunks' reads vary: bzip2's from 58k to 1M a chunk; a
// bound of twice the size and the first four arrays kept found one for 2
// chunks of 67.)
func (c *chunkCache) readsArray(n int) ([]logRead, bool) {
	c.mu.Lock()
	k := -1
	for j, a := range c.free {
		if cap(a) >= n && cap(a) <= 4*n+64 && (k < 0 || cap(a) < cap(c.free[k])) {
			k = j
		}
	}
	if k >= 0 {
		a := c.free[k]
		c.free = append(c.free[:k], c.free[k+1:]...)
		c.mu.Unlock()
		return a, true
	}
	c.mu.Unlock()
	return make([]logRead, 0, n), false
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
