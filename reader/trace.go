package reader

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"ttd/predict"
	"ttd/tracefile"
	"ttd/x86"
)

// Opaque record tags shared with the recorder (see recorder.TagRegs).
const (
	tagRegs   = 1
	tagOutput = 2
)

// Trace is an opened trace file. Its methods may be called from several
// goroutines (the index is built by one Replay per checkpoint interval in
// parallel); each Replay is used by one goroutine at a time.
type Trace struct {
	f         *tracefile.Reader
	chunks    []tracefile.ChunkInfo
	cacheBits uint
	// legacyReads: see x86.CodeCache.LegacyReads.
	legacyReads bool
	// features are the guest CPU's extensions (x86.CodeCache.Features).
	features x86.Features
	// byteWords: a logged byte read carries the whole aligned word
	// around it (predict.Cache.ReadWord); traces without "bytereads":
	// "word" log the byte only.
	byteWords bool
	// noReads: the trace logs no reads (header parameter reads=none;
	// replayable.go).
	noReads bool
	// tree: every process of the recorded tree is re-simulated
	// (process.go); procs is the tree, lineage the focus and its
	// ancestors, first process first (SetFocus).
	tree  bool
	procs []tracefile.ProcessInfo
	// procRecs are the Process records procs folds (ProcessRecords).
	procRecs []tracefile.Process
	lineage  []int
	// Summary holds totals and how the program ended.
	Summary tracefile.Summary
	Header  tracefile.Header

	cache chunkCache
	// progs: the Module and Process records found so far (programs.go).
	progs programScan
	// iters recycles record iterators (and their decompression buffers).
	iters iterPool

	cpOnce sync.Once
	cps    []Checkpoint
	cpErr  error
	// cpm is the checkpoint memory of a trace that logs no reads
	// (cpmem.go).
	cpm cpMemory
	// alongWant: IndexAlong asked for the index pass along the next
	// replay from the start (indexalong.go).
	alongWant atomic.Bool
}

// Open opens a trace for re-simulation.
func Open(path string) (*Trace, error) {
	f, err := tracefile.Open(path)
	if err != nil {
		return nil, err
	}
	t, err := newTrace(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	t.openPages(path)
	return t, nil
}

func newTrace(f *tracefile.Reader) (*Trace, error) {
	t := &Trace{f: f, chunks: f.Chunks(), Header: f.Header()}
	t.Summary = f.Summary()
	t.cacheBits = predict.DefaultBits
	if v, ok := t.Header.Params["cachebits"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < predict.MinBits || n > predict.MaxBits {
			return nil, fmt.Errorf("trace: bad prediction cache size %q", v)
		}
		t.cacheBits = uint(n)
	}
	// Traces recorded before the SSE fast paths read their memory operand
	// once when they give up (x86.CodeCache.LegacyReads).
	t.legacyReads = t.Header.Params["fpreads"] != "once"
	// The guest CPU's level (x86.CodeCache.Features).
	t.features = x86.FeaturesLegacy
	if lv, ok := t.Header.Params["cpu"]; ok {
		f, err := x86.ParseLevel(lv)
		if err != nil {
			return nil, fmt.Errorf("trace: bad header parameter cpu: %w", err)
		}
		t.features = f
	}
	t.byteWords = t.Header.Params["bytereads"] == "word"
	t.tree = t.Header.Params["processes"] == "tree"
	t.noReads = t.Header.Params["reads"] == "none"
	recs, err := t.processRecords()
	if err != nil && t.tree {
		return nil, fmt.Errorf("trace: %w", err)
	}
	t.procs, t.procRecs = tracefile.ProcessTree(recs), recs
	t.SetFocus(0)
	if len(t.chunks) == 0 {
		if f.Truncated() {
			if err := f.TailError(); err != nil {
				return nil, fmt.Errorf("trace: cut short before its first complete chunk: %w", err)
			}
			return nil, errors.New("trace: cut short before its first complete chunk")
		}
		return nil, errors.New("trace: no chunks (the recording wrote nothing)")
	}
	t.cache.init(defaultChunkCacheBytes)
	return t, nil
}

// Close releases the trace file.
func (t *Trace) Close() error {
	if t.cpm.pages != nil {
		t.cpm.pages.Close()
	}
	return t.f.Close()
}

// Chunks describes the trace's chunks.
func (t *Trace) Chunks() []tracefile.ChunkInfo { return t.chunks }

// File is the underlying trace file reader.
func (t *Trace) File() *tracefile.Reader { return t.f }

// End is the position after the last instruction the trace holds: the
// Exit's position, or where a cut recording stops.
func (t *Trace) End() uint64 { return t.Summary.Instructions }

// ctrl is a control record: one that the re-simulation acts on at a
// point of the execution (everything but memory reads and non-det
// results, which the CPU hooks consume in order).
type ctrl struct {
	// kind is the record's kind. A key frame other than a thread
	// switch (the most frequent control record: 812k of a pipeline's
	// trace) is kf alone, rec nil, as it takes no effect but its
	// position; any other record is rec, in its chunk's slab (a
	// tracefile.Record is 728 bytes, which each key frame took when the
	// ctrl held the record: 78 MB of one chunk of 97k key frames).
	kind tracefile.Kind
	kf   tracefile.KeyFrame
	rec  *tracefile.Record
	// code are the code bytes logged since the previous control record.
	code []tracefile.CodeBytes
	// mods are the Module records logged since the previous control
	// record (during the syscall this record ends), without their
	// embedded files.
	mods []tracefile.Module
	// reads and nondets are how many logged reads and non-det results
	// of the chunk come before this record: the CPU consumes no more
	// than that before the record takes effect.
	reads, nondets int
	// proc and pstate are set for the Process and ProcessState records
	// of a process tree (rec is then KindUnknown).
	proc   *tracefile.Process
	pstate *tracefile.ProcessState
}

// chunk is one decoded chunk in compact form. Once built it is never
// modified: replays and snapshots share it.
type chunk struct {
	index int
	ctrls []ctrl
	// reads are the chunk's logged reads, nreads of them, in blocks
	// (chunkreuse.go).
	reads   [][]logRead
	nreads  int
	nondets [][]uint64
	bytes   int64 // approximate memory held
	// use says who reads reads, which the cache recycles (chunkreuse.go).
	use *chunkUse
	// endsAtCtrl: the chunk's last record is a control record (not a
	// read, a non-det result, code or a module), so the next chunk may
	// begin with the records that follow it at its position (a chunk
	// cut at its size limit after a Syscall record, before its Mmap
	// records): see Trace.nextPositionAfter.
	endsAtCtrl bool
}

// logRead is a logged read: how many reads of its thread since the
// previous logged one, and the value.
type logRead = tracefile.ReadLog

// loadChunk decodes chunk i, with an iterator from the pool.
func (t *Trace) loadChunk(i int) (*chunk, error) {
	it := t.iter()
	defer t.iters.Put(it)
	return t.decodeChunk(it, i)
}

// decodeChunk decodes chunk i with it.
func (t *Trace) decodeChunk(it *tracefile.RecordIter, i int) (*chunk, error) {
	// The iterator decompresses into its own buffer, which the next
	// chunk it decodes reuses: the chunk keeps only the bytes its
	// records hold (syscall and signal buffers, code, paths, register
	// blobs), copied into a byteSlab. Keeping the whole payload (sort
	// -n: 81 MiB of it, most of it reads, which are decoded into their
	// own array) meant a fresh zeroed allocation per chunk: makeslice's
	// memclr took 0.17 s of a 1.0 s `ttd probe --jobs 1`, and the
	// heap's growth the page faults after it.
	it.Reset(i)
	ch := &chunk{index: i}
	rf := t.cache.newReadFill(t.chunks[i].Records)
	var keep byteSlab
	// The control records are mostly key frames, checkpoints, syscalls
	// and thread starts, which the chunk's header counts: sized up
	// front, a chunk of 50k syscalls does not grow its 40 MB of
	// records by a quarter at a time (5x that in garbage and copies).
	ch.ctrls = make([]ctrl, 0, ctrlsOf(&t.chunks[i]))
	slab := recordSlab{room: slabOf(&t.chunks[i])}
	var code []tracefile.CodeBytes
	var mods []tracefile.Module
	ci := &t.chunks[i]
	for {
		r, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		ch.endsAtCtrl = false
		switch r.Kind {
		case tracefile.KindMemRead:
			rf.add(logRead{Delta: r.MemRead.ReadDelta, Value: r.MemRead.Value}, it)
		case tracefile.KindNonDet:
			ch.nondets = append(ch.nondets, append([]uint64(nil), r.NonDet.Values...))
			ch.bytes += int64(24 + 8*len(r.NonDet.Values))
		case tracefile.KindCodeBytes:
			code = append(code, tracefile.CodeBytes{Addr: r.CodeBytes.Addr, Bytes: keep.add(r.CodeBytes.Bytes)})
			ch.bytes += 40
		case tracefile.KindModule:
			m := r.Module
			// Not the file: whether there is one (ModuleRef.embeds).
			m.Embedded = embedMark(m.Embedded)
			m.Path, m.BuildID = keep.add(m.Path), keep.add(m.BuildID)
			mods = append(mods, m)
		case tracefile.KindUnknown:
			// A record of a newer minor version: not needed to
			// re-simulate, except the events of a process tree.
			if !t.tree || !(r.IsProcess() || r.IsProcessState()) {
				break
			}
			c := ctrl{kind: r.Kind, rec: slab.add(tracefile.Record{Kind: r.Kind, Off: r.Off}), code: code, mods: mods, reads: rf.n(), nondets: len(ch.nondets)}
			if r.IsProcess() {
				p, off, err := tracefile.DecodeProcess(r.Opaque.Bytes)
				if err != nil {
					return nil, tracefile.RecordError(ci, r, off, err)
				}
				c.proc = &p
			} else {
				s, off, err := tracefile.DecodeProcessState(r.Opaque.Bytes)
				if err != nil {
					return nil, tracefile.RecordError(ci, r, off, err)
				}
				c.pstate = &s
			}
			ch.ctrls = append(ch.ctrls, c)
			ch.bytes += ctrlSize + 64
			code, mods = nil, nil
			ch.endsAtCtrl = true
		case tracefile.KindKeyFrame:
			if r.KeyFrame.Kind == tracefile.KeyFrameThreadSwitch {
				// An event (eventOf), whose Record stays valid.
				ch.ctrls = append(ch.ctrls, ctrl{kind: r.Kind, kf: r.KeyFrame, rec: slab.add(cloneRecord(r, &keep)), code: code, mods: mods, reads: rf.n(), nondets: len(ch.nondets)})
				ch.bytes += ctrlSize + recordSize
			} else {
				ch.ctrls = append(ch.ctrls, ctrl{kind: r.Kind, kf: r.KeyFrame, code: code, mods: mods, reads: rf.n(), nondets: len(ch.nondets)})
				ch.bytes += ctrlSize
			}
			code, mods = nil, nil
			ch.endsAtCtrl = true
		default:
			c := ctrl{kind: r.Kind, rec: slab.add(cloneRecord(r, &keep)), code: code, mods: mods, reads: rf.n(), nondets: len(ch.nondets)}
			ch.ctrls = append(ch.ctrls, c)
			// The record and its lists (the bytes are the payload's,
			// counted once): counting a flat 256 bytes let a chunk of a
			// million syscalls weigh 2 GiB in a cache bounded at 256 MiB.
			ch.bytes += ctrlSize + recordSize + recordPayload(c.rec)
			code, mods = nil, nil
			ch.endsAtCtrl = true
		}
	}
	if len(code)+len(mods) > 0 {
		ch.ctrls = append(ch.ctrls, ctrl{rec: slab.add(tracefile.Record{}), code: code, mods: mods, reads: rf.n(), nondets: len(ch.nondets)})
	}
	ch.nreads = rf.n()
	ch.reads = rf.finish()
	for _, b := range ch.reads {
		ch.bytes += int64(cap(b)) * 16
	}
	ch.bytes += keep.size
	return ch, nil
}

// iter is a record iterator from the pool (t.iters), to reset to a
// chunk and put back.
func (t *Trace) iter() *tracefile.RecordIter {
	if it := t.iters.get(); it != nil {
		return it
	}
	return t.f.Records(0)
}

// iterPool keeps up to maxIters record iterators for the next decodes.
// (A sync.Pool lets go of them at every collection: `ttd probe --jobs
// 2` over bzip2 -9's trace then allocated 94 MB of decompression
// buffers of up to 16 MB, for 4 decodes at a time at most.)
type iterPool struct {
	mu  sync.Mutex
	its []*tracefile.RecordIter
}

// maxIters is more than decode at once: two jobs and the chunk each
// decodes ahead.
const maxIters = 6

func (p *iterPool) get() *tracefile.RecordIter {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.its); n > 0 {
		it := p.its[n-1]
		p.its = p.its[:n-1]
		return it
	}
	return nil
}

// Put gives it back (let go if there are maxIters kept).
func (p *iterPool) Put(it *tracefile.RecordIter) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.its) < maxIters {
		p.its = append(p.its, it)
	}
}

// cloneRecord copies a control record out of the iterator, which
// reuses its lists and its payload buffer: the lists are copied, and
// the bytes they hold go to keep.
func cloneRecord(r *tracefile.Record, keep *byteSlab) tracefile.Record {
	c := tracefile.Record{Kind: r.Kind, Off: r.Off}
	switch r.Kind {
	case tracefile.KindKeyFrame:
		c.KeyFrame = r.KeyFrame
	case tracefile.KindThreadStart:
		c.ThreadStart = r.ThreadStart
	case tracefile.KindThreadExit:
		c.ThreadExit = r.ThreadExit
	case tracefile.KindSyscall:
		c.Syscall = r.Syscall
		c.Syscall.Writes = keep.ranges(r.Syscall.Writes)
		c.Syscall.Predicted = cloneSpans(r.Syscall.Predicted)
	case tracefile.KindSignal:
		c.Signal = r.Signal
		c.Signal.Writes = keep.ranges(r.Signal.Writes)
		c.Signal.Regs = keep.add(r.Signal.Regs)
		c.Signal.Predicted = cloneSpans(r.Signal.Predicted)
	case tracefile.KindMmap:
		c.Mmap = r.Mmap
		c.Mmap.Path = keep.add(r.Mmap.Path)
	case tracefile.KindMunmap:
		c.Munmap = r.Munmap
	case tracefile.KindMprotect:
		c.Mprotect = r.Mprotect
	case tracefile.KindCheckpoint:
		c.Checkpoint = r.Checkpoint
		c.Checkpoint.Threads = slices.Clone(r.Checkpoint.Threads)
		for i := range c.Checkpoint.Threads {
			c.Checkpoint.Threads[i].Regs = keep.add(c.Checkpoint.Threads[i].Regs)
		}
	case tracefile.KindExit:
		c.Exit = r.Exit
	case tracefile.KindOpaque:
		c.Opaque = r.Opaque
		c.Opaque.Bytes = keep.add(r.Opaque.Bytes)
	}
	return c
}

// cloneSpans copies a list of spans (nil when empty, as ranges).
func cloneSpans(sp []tracefile.Span) []tracefile.Span {
	if len(sp) == 0 {
		return nil
	}
	return slices.Clone(sp)
}

// byteSlab holds the bytes a decoded chunk keeps of its records, copied
// out of the iterator's payload buffer into arrays of its own, a block
// at a time (blocks grow from 4 KiB to 256 KiB; a piece of more than 64
// KiB, a large syscall buffer, is an array of its own).
type byteSlab struct {
	block []byte
	size  int64 // bytes allocated
}

// add returns a copy of b in the slab (nil for nil), with no room to
// append into its neighbours.
func (s *byteSlab) add(b []byte) []byte {
	switch {
	case b == nil:
		return nil
	case len(b) == 0:
		return []byte{}
	case len(b) > 64<<10:
		s.size += int64(len(b))
		return append([]byte(nil), b...)
	}
	if len(s.block)+len(b) > cap(s.block) {
		n := min(max(2*cap(s.block), 4<<10, len(b)), 256<<10)
		s.block = make([]byte, 0, n)
		s.size += int64(n)
	}
	s.block = append(s.block, b...)
	return s.block[len(s.block)-len(b) : len(s.block) : len(s.block)]
}

// ranges copies a list of memory ranges and their bytes (nil when
// empty: the iterator's list is empty, not nil, after a record that had
// some).
func (s *byteSlab) ranges(rs []tracefile.MemRange) []tracefile.MemRange {
	if len(rs) == 0 {
		return nil
	}
	out := make([]tracefile.MemRange, len(rs))
	for i, m := range rs {
		out[i] = tracefile.MemRange{Addr: m.Addr, Bytes: s.add(m.Bytes)}
	}
	return out
}

// splitTagged splits a TagRegs/TagOutput payload.
func splitTagged(b []byte) (int, []byte, bool) {
	if len(b) < 4 {
		return 0, nil, false
	}
	return int(binary.LittleEndian.Uint32(b)), b[4:], true
}

// Checkpoint is a point re-simulation can start from (see
// Trace.NewReplayAt): a Checkpoint record, or the start of the trace.
type Checkpoint struct {
	Position uint64
	Chunk    int
	// Ctrl is the index of the checkpoint among its chunk's control
	// records (0 for the start of a chunk).
	Ctrl int
}

// Checkpoints lists the points re-simulation can start from, in order;
// the first is position 0. The first call decodes every chunk (in
// parallel); later calls return the same slice, which must not be
// modified. SetCheckpoints installs a list kept from an earlier call.
func (t *Trace) Checkpoints() ([]Checkpoint, error) {
	t.cpOnce.Do(func() { t.cps, t.cpErr = t.scanCheckpoints() })
	return t.cps, t.cpErr
}

// SetCheckpoints installs the result of an earlier Checkpoints call on
// the same trace (an index cached on disk), sparing the scan. It has no
// effect once Checkpoints has run.
func (t *Trace) SetCheckpoints(cps []Checkpoint) {
	t.cpOnce.Do(func() { t.cps = cps })
}

// CheckpointAt returns the index in cps of the last checkpoint at or
// before pos.
func CheckpointAt(cps []Checkpoint, pos uint64) int {
	i := sort.Search(len(cps), func(i int) bool { return cps[i].Position > pos })
	return max(i-1, 0)
}

// ctrlSize is the size of a decoded control record, and recordSize of
// the record it points to (but for most key frames).
var (
	ctrlSize   = int64(reflect.TypeOf(ctrl{}).Size())
	recordSize = int64(reflect.TypeOf(tracefile.Record{}).Size())
)

// recordSlab allocates a chunk's decoded records (ctrl.rec) room at a
// time: a record's address stays valid (a full array is left as it is
// and a new one started).
type recordSlab struct {
	recs []tracefile.Record
	room int // the size of the first array
}

// add copies rec into the slab and returns its address there.
func (s *recordSlab) add(rec tracefile.Record) *tracefile.Record {
	if len(s.recs) == cap(s.recs) {
		s.recs = make([]tracefile.Record, 0, max(s.room, 16, 2*cap(s.recs)))
	}
	s.recs = append(s.recs, rec)
	return &s.recs[len(s.recs)-1]
}

// recordPayload counts the lists of a decoded record (their bytes are
// the chunk payload's).
func recordPayload(r *tracefile.Record) int64 {
	return 32*int64(len(r.Syscall.Writes)+len(r.Signal.Writes)) +
		16*int64(len(r.Syscall.Predicted)+len(r.Signal.Predicted)) +
		48*int64(len(r.Checkpoint.Threads))
}

// defaultChunkCacheBytes bounds the decoded chunks a Trace keeps.
const defaultChunkCacheBytes = 256 << 20

// chunkCache keeps recently decoded chunks, least recently used first out,
// and decodes each chunk once even when several goroutines ask for it.
type chunkCache struct {
	mu      sync.Mutex
	entries map[int]*chunkEntry
	bytes   int64
	limit   int64
	clock   uint64
	// free are recycled blocks of reads, of block reads each
	// (chunkreuse.go).
	free  [][]logRead
	block int
}

type chunkEntry struct {
	ready chan struct{}
	ch    *chunk
	err   error
	used  uint64
	// counted: the chunk is decoded and its bytes are in the cache's
	// (set under the cache's lock, unlike ch).
	counted bool
	// use is the chunk's (chunkreuse.go), made with the entry so that
	// the gets waiting for the chunk count in it before it is decoded.
	use *chunkUse
}

func (c *chunkCache) init(limit int64) {
	c.entries = make(map[int]*chunkEntry)
	c.limit = limit
	c.block = readBlock
	c.clock = scanned // every use counts as more recent than a scan's
}

// chunk returns decoded chunk i, from the cache when possible, and starts
// decoding chunk i+1 in the background (re-simulation goes forward).
func (t *Trace) chunk(i int) (*chunk, error) { return t.chunkFor(i, false, len(t.chunks)) }

// chunkFor is chunk for a streaming replay when hold is set: the replay
// holds the chunk (chunkreuse.go), which is pinned otherwise. It starts
// decoding chunk i+1 only if i+1 < ahead.
func (t *Trace) chunkFor(i int, hold bool, ahead int) (*chunk, error) {
	ch, err := t.cache.get(t, i, hold)
	if err == nil && i+1 < min(ahead, len(t.chunks)) {
		t.cache.prefetch(t, i+1)
	}
	return ch, err
}

// Prefetch starts decoding chunk i into the cache in the background, for
// a re-simulation about to start there (a job of ttd probe, while the
// symbols load).
func (t *Trace) Prefetch(i int) {
	if i >= 0 && i < len(t.chunks) {
		t.cache.prefetch(t, i)
	}
}

// chunkUncached decodes chunk i through the cache without prefetching.
func (t *Trace) chunkUncached(i int) (*chunk, error) { return t.cache.get(t, i, false) }

func (c *chunkCache) get(t *Trace, i int, hold bool) (*chunk, error) {
	c.mu.Lock()
	c.clock++
	e := c.entries[i]
	if e != nil {
		e.used = c.clock
		e.use.waiting++
		c.mu.Unlock()
		<-e.ready
	} else {
		e = &chunkEntry{ready: make(chan struct{}), used: c.clock, use: &chunkUse{waiting: 1}}
		c.entries[i] = e
		c.mu.Unlock()
		c.fill(t, i, e)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e.use.waiting--
	if e.err != nil {
		return nil, e.err
	}
	c.take(e.ch, hold)
	return e.ch, nil
}

// drop removes decoded chunk i from the cache (Replay.Stream), unless
// it is still being decoded (its decoder counts it when done).
func (c *chunkCache) drop(i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[i]; e != nil && e.counted {
		c.bytes -= e.ch.bytes
		delete(c.entries, i)
		e.ch.use.dropped = true
		c.recycle(e.ch)
	}
}

func (c *chunkCache) prefetch(t *Trace, i int) {
	c.mu.Lock()
	if c.entries[i] != nil {
		c.mu.Unlock()
		return
	}
	c.clock++
	e := &chunkEntry{ready: make(chan struct{}), used: c.clock, use: &chunkUse{}}
	c.entries[i] = e
	c.mu.Unlock()
	go c.fill(t, i, e)
}

func (c *chunkCache) fill(t *Trace, i int, e *chunkEntry) {
	e.ch, e.err = t.loadChunk(i)
	if e.err == nil {
		e.ch.use = e.use
	}
	// Waiters go on only once the chunk is counted (deferred: after the
	// unlock): a streaming replay that waited for a prefetched chunk may
	// pass it and drop it at once, and drop skips an entry not counted
	// yet, which then stayed in the cache (TestStreamDropsPassedChunks
	// under CI's load).
	defer close(e.ready)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.err != nil {
		delete(c.entries, i)
		return
	}
	c.bytes += e.ch.bytes
	e.counted = true
	for c.bytes > c.limit && len(c.entries) > 2 {
		// Evict the least recently used finished entry.
		victim, vi := (*chunkEntry)(nil), -1
		for k, x := range c.entries {
			if x == e || !x.counted {
				continue
			}
			if victim == nil || x.used < victim.used {
				victim, vi = x, k
			}
		}
		if victim == nil {
			break
		}
		c.bytes -= victim.ch.bytes
		delete(c.entries, vi)
	}
}

// ModuleRef is a Module record and the position at which it took effect.
type ModuleRef struct {
	tracefile.Module
	Position uint64
	Chunk    int
	// embeds: the record embeds the file (ModuleFile reads it).
	embeds bool
}

// embedMark is what a chunk keeps of a Module record's embedded file:
// an empty, non-nil slice when there is one, else nil.
func embedMark(file []byte) []byte {
	if len(file) > 0 {
		return []byte{}
	}
	return nil
}

// ModuleFile returns the file a Module record embeds (ttd record
// --embed-binaries), or nil.
func (t *Trace) ModuleFile(m ModuleRef) ([]byte, error) {
	if !m.embeds {
		return nil, nil // without decoding its chunk again
	}
	it := t.f.Records(m.Chunk)
	for {
		r, err := it.Next()
		if err == io.EOF {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if r.Kind == tracefile.KindModule && string(r.Module.Path) == string(m.Path) && r.Module.LoadAddr == m.LoadAddr {
			if len(r.Module.Embedded) == 0 {
				return nil, nil
			}
			return append([]byte(nil), r.Module.Embedded...), nil
		}
	}
}

var _ = x86.StateSize
