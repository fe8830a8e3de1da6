package reader

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"ttd/predict"
	"ttd/tracefile"
	"ttd/x86"
)

// ErrEnd is returned when re-simulation reaches the end of the trace.
var ErrEnd = errors.New("end of trace")

// DivergenceError says that re-simulation stopped matching the recording.
type DivergenceError struct {
	Position uint64
	Tid      int
	Msg      string
}

func (e *DivergenceError) Error() string {
	return fmt.Sprintf("re-simulation diverged at position %d (thread %d): %s", e.Position, e.Tid, e.Msg)
}

// thread is a guest thread during re-simulation.
type thread struct {
	tid   int
	cpu   *x86.CPU
	cache *predict.Cache
	// cache.Reads counts the thread's reads since the last checkpoint;
	// lastLogged is the count at the last logged read it consumed.
	lastLogged uint64
	seen       uint64 // cpu.Retired() already counted in pos
	exited     bool
	// frozen is the cache's last copy (taken by a snapshot or restored
	// from one): the next snapshot shares its unchanged pages.
	frozen *predict.Frozen
	// proc is the thread's process.
	proc *process
}

// AccessSource says what made a memory access.
type AccessSource uint8

// Access sources.
const (
	AccessCPU     AccessSource = iota // an instruction
	AccessSyscall                     // the kernel side of a syscall
	AccessSignal                      // a signal delivery (the signal frame)
	// AccessExec marks the execve that replaced the focus's address
	// space: the bytes of the old image are gone, so a search backwards
	// from after it stops there (process.go).
	AccessExec
)

func (s AccessSource) String() string {
	switch s {
	case AccessSyscall:
		return "syscall"
	case AccessSignal:
		return "signal delivery"
	case AccessExec:
		return "exec (the address space was replaced)"
	}
	return "instruction"
}

// Access is one memory access seen by re-simulation. It happens between
// the state at Position and the state at Position+1: for an instruction
// Position is the instruction's; for the memory a syscall wrote it is the
// syscall instruction's; for a signal frame it is the position just
// before the delivery.
type Access struct {
	Position uint64
	Tid      int
	PC       uint64 // the accessing instruction (0 for a signal frame)
	Addr     uint64
	Size     int    // 1..8
	Value    uint64 // the bytes read or written, little-endian
	Write    bool
	Source   AccessSource
}

// Replay re-simulates a trace forward from a checkpoint.
type Replay struct {
	t *Trace
	// shm are the pages of the shared memory its address spaces map
	// (shared.go), nil until one is made.
	shm *sharedMem
	// as and code are the address space records apply to now (the
	// running thread's); fas is the focus's, which Memory, tracking and
	// Access report (process.go). With one process they are the same.
	as    *addrSpace
	code  *x86.CodeCache
	fas   *addrSpace
	procs []*process
	// store is where its processes' code caches share decoded blocks
	// (newCode).
	store *x86.CodeStore
	// spare are the pages a replay left, to materialise pages with
	// (leftovers.go), or nil.
	spare *Leftovers
	// lineage is the focus and its ancestors (Trace.SetFocus, Refocus).
	lineage []int
	// mapTo is the process the Mmap records after a ProcessState
	// describe; empty stands in for a focus that does not exist yet;
	// forked and forkedFrom are the address spaces a fork being applied
	// made and copied.
	mapTo              *process
	empty              *addrSpace
	forked, forkedFrom *addrSpace

	threads []*thread
	cur     *thread
	pos     uint64

	ch *chunk
	ci int // index of ch.ctrls' next control record
	// start is the chunk the replay started in; streaming: chunks it
	// leaves after that one go out of the chunk cache (Stream).
	start     int
	streaming bool
	// lastChunk, if not 0, is the last chunk the replay decodes ahead
	// (StopsIn).
	lastChunk int
	codeDone  int    // ch.ctrls[:codeDone] had their code written
	kbuf      []byte // kernelWrites' bytes of predicted spans
	// kw are the watched ranges a record wrote (their bytes in kwBytes),
	// reported once it is applied by thread kwT (kwSrc, kwPC: written).
	kw      []KernelWrite
	kwBytes []byte
	kwT     *thread
	kwSrc   AccessSource
	kwPC    uint64
	rd      int // next logged read (readAt)
	// carry are logged reads of the chunks before this one that it
	// consumes first (readAt): chunks cut between two control records,
	// in order, carryN of them in all. They are the earlier chunks' own
	// arrays, not copies: over a run of chunks with no control record
	// (perl's hash filling: 4 MB chunks of reads only), copying them
	// took 0.08 s of `ttd probe --jobs 2`'s 1.8 s CPU in memmove, and
	// the fresh memory its page faults.
	carry  [][]logRead
	carryN int
	// carryCh are the chunks carry's arrays are in; held, those a
	// streaming replay holds (chunkreuse.go).
	carryCh, held []*chunk
	// segs are carry's arrays and then ch.reads' blocks (setSegs); win
	// is the one readAt found read winLo in last, and winLo the number
	// of its first read.
	segs  [][]logRead
	win   []logRead
	winLo int
	nd    int // next non-det record in ch.nondets
	// rdEnd and ndEnd bound what the CPU may consume before the next
	// control record takes effect.
	rdEnd, ndEnd int
	// nextAt is the running thread's read count at which readAt(rd)
	// is consumed (0: no logged read before the next control record).
	nextAt uint64
	exit   *tracefile.Exit
	err    error
	regs   []byte
	atEnd  bool

	// observing is set when reads and writes need more than the
	// prediction cache (tracking or an Access callback); observe when,
	// in addition, the running thread works in the focus's memory.
	observing, observe bool
	track              *tracker
	marker             *tracker   // whose pages translated code marks (AccessMarks)
	pk                 *procKnown // TrackProcesses (known.go)
	// vw holds the windows of TrackPids (views.go); more are the
	// trackers besides track that see the running thread's memory.
	vw    *views
	more  []*tracker
	one   [1]*tracker
	watch []Range
	acc   Access
	// accessAll: Access reports every process's accesses, not only
	// the focus's (AccessAllProcesses).
	accessAll bool
	// shWatch: Access reports accesses to the watched ranges' shared
	// memory through other mappings (WatchShared); alias caches them.
	shWatch bool
	alias   aliasCache
	buf     [8]byte

	// Verify compares the re-simulated registers with every checkpoint's.
	Verify bool
	// Output receives what the program wrote to stdout (fd 1) and
	// stderr (fd 2), as recorded.
	Output func(fd int, data []byte)
	// Hook, when set, is called before every instruction (breakpoints,
	// stepping); InstPosition gives the instruction's position.
	Hook func(r *Replay, c *x86.CPU, in *x86.Inst)
	// HookBlocks, when set, limits Hook to the instructions of the
	// straight-line blocks of code [pc, end) it accepts; the others run
	// at full speed. An execution breakpoint accepts the blocks that
	// contain its address.
	HookBlocks func(pc, end uint64) bool
	// HookBlock is HookBlocks with the block's decoded instructions
	// (a call tracer accepts the blocks that hold a call or a ret); a
	// block is hooked when either accepts it.
	HookBlock func(b *x86.Block) bool
	// HookInsts narrows Hook further, to the instructions of a block
	// whose bits it sets (bit i: b.Insts[i]; a function's entry, a call
	// or a ret): the block runs translated, leaving for each Hook call
	// (x86.InstFilter). An instruction is hooked when its block is
	// accepted by HookBlocks or HookBlock, or HookInsts sets its bit.
	HookInsts func(b *x86.Block) uint64
	// HookGate, when set with HookBlocks, HookBlock or HookInsts, is
	// asked before the blocks execution reaches outside translated code,
	// and after each Hook call: true hooks every instruction while it
	// holds. Its answer may change only in
	// a Hook call, an OnEvent call or between RunTo calls (x86.HookGate):
	// state that a hooked instruction sets, such as watching the
	// instructions after a call.
	HookGate func(r *Replay, c *x86.CPU) bool
	// HookLogged and HookLog, when set with HookInsts, let translated
	// code log the hooked instructions HookLogged picks instead of
	// leaving for their Hook calls (hooklog.go); HookSteps instead of
	// HookLog has the records narrow.
	HookLogged func(b *x86.Block) uint64
	HookLog    func(r *Replay, c *x86.CPU, recs []x86.HookRecord)
	HookSteps  func(r *Replay, c *x86.CPU, steps []x86.HookStep)
	// HookWindows, with HookSteps, picks soft records and their windows
	// (x86.HookStepLogger.StepWindows).
	HookWindows func(b *x86.Block) (soft, open, shut, window uint64)
	// HookMerge, with HookSteps, picks the calls and rets whose leaf
	// calls' records may be merged (x86.LeafMerger).
	HookMerge func(b *x86.Block) uint64
	// HookFold, with HookSteps and HookWindows, lets a soft record made
	// at most HookFold instructions after a call's fold into it
	// (x86.EntryFolder; 0: none).
	HookFold uint64
	hookLog  bool // logged hooks are on (TTD_HOOKLOG)
	// HookFixed says that the verdicts of HookBlocks, HookBlock,
	// HookInsts, HookLogged, HookWindows and HookMerge on a block never
	// change: the code caches keep them, and the translations linked
	// under them, from one RunTo to the next (ttd calls over a tree ran
	// its 13 intervals with 939,000 verdicts asked for 295,000 blocks).
	HookFixed bool
	// hookVersion numbers the RunTo calls: the filters may change
	// between them (x86.FilterVersion), unless HookFixed.
	hookVersion uint64
	// feed sizes FeedReads's feeds.
	feed feedSize
	// Access, when set, is called for every memory access overlapping
	// the ranges set with Watch (every access without them). The Access
	// is valid only during the call.
	Access func(a *Access)
	// OnEvent, when set, is called after each event takes effect.
	OnEvent func(ev *Event)
	// OnSyscallEntry, when set, is called when thread tid (running on
	// c, its registers the syscall's number and arguments) stops at a
	// syscall instruction, at position pos (the instruction retired).
	// The syscall's record (EventSyscall) comes at its completion:
	// later, when the thread blocked and others ran meanwhile; in a
	// later segment when a checkpoint came in between (a replay that
	// starts at that checkpoint sees only the completion).
	OnSyscallEntry func(pos uint64, tid int, c *x86.CPU)
	// Checkpoints counts the checkpoints passed.
	Checkpoints int
	// lastSys is the last Syscall record applied, outBuf the bytes of
	// its output (a trace that logs no reads: outputRef).
	lastSys lastSyscall
	outBuf  []byte
	// restore are the pages of each address space at the checkpoint
	// the replay starts at, for a trace that logs no reads (cpmem.go),
	// until that checkpoint's records gave them out; cpHook, when set,
	// is called after each Checkpoint record (the index pass).
	restore map[uint32]pageRefs
	cpHook  func(r *Replay)
	// along is the index pass riding along this replay (indexalong.go).
	along *alongPass
}

// lastSyscall is what outputRef needs of a Syscall record.
type lastSyscall struct {
	tid, nr int
	args    [6]uint64
	result  int64
}

// NewReplay prepares a re-simulation of t starting at chunk i (0 is the
// start of the recording; re-simulation can start at a chunk that begins
// with a checkpoint).
func (t *Trace) NewReplay(i int) (*Replay, error) {
	if i < 0 || i >= len(t.chunks) {
		return nil, fmt.Errorf("trace: no chunk %d", i)
	}
	if i > 0 && !t.chunks[i].BeginsWithCheckpoint {
		return nil, fmt.Errorf("trace: chunk %d does not begin with a checkpoint", i)
	}
	r := t.newReplay()
	if i > 0 && t.noReads {
		rs, err := t.restoreAt(t.chunks[i].FirstPosition)
		if err != nil {
			return nil, err
		}
		r.restore = rs
	}
	if err := r.load(i); err != nil {
		return nil, err
	}
	r.pos, r.start = t.chunks[i].FirstPosition, i
	return r, nil
}

// NewReplayAt prepares a re-simulation starting at checkpoint cp (from
// Checkpoints), with every event at its position applied.
func (t *Trace) NewReplayAt(cp Checkpoint) (*Replay, error) { return t.newReplayAt(cp, nil) }

// newReplayAt is NewReplayAt with what a replay left (lo may be nil).
func (t *Trace) newReplayAt(cp Checkpoint, lo *Leftovers) (made *Replay, err error) {
	if cp.Chunk < 0 || cp.Chunk >= len(t.chunks) {
		return nil, fmt.Errorf("trace: no chunk %d", cp.Chunk)
	}
	r := t.newReplayFrom(lo)
	if t.noReads && (cp.Chunk > 0 || cp.Ctrl != 0) {
		// Its memory comes from the checkpoint memory file.
		rs, err := t.restoreAt(cp.Position)
		if err != nil {
			return nil, err
		}
		r.restore = rs
	} else if t.noReads {
		t.takeAlong(r)
		defer func() {
			if made == nil {
				r.finishAlong() // (failed: the file goes away)
			}
		}()
	}
	ch, err := t.chunk(cp.Chunk)
	if err != nil {
		return nil, err
	}
	if cp.Ctrl, err = ctrlOf(cp, ch); err != nil {
		return nil, err
	}
	if cp.Ctrl < 0 || cp.Ctrl > len(ch.ctrls) || (cp.Ctrl > 0 && ch.ctrls[cp.Ctrl].kind != tracefile.KindCheckpoint) {
		return nil, fmt.Errorf("trace: no checkpoint at record %d of chunk %d", cp.Ctrl, cp.Chunk)
	}
	r.ch, r.ci, r.codeDone, r.start = ch, cp.Ctrl, cp.Ctrl, cp.Chunk
	r.setSegs()
	// Ctrl 0 is the start of the chunk, unless the chunk does not begin
	// with a checkpoint and its first control record is this one (a
	// chunk cut by its size limit just before a checkpoint's key frame).
	mid := cp.Ctrl > 0 || !t.chunks[cp.Chunk].BeginsWithCheckpoint && len(ch.ctrls) > 0 &&
		ch.ctrls[0].kind == tracefile.KindCheckpoint && ch.ctrls[0].rec.Checkpoint.Position == cp.Position
	if mid {
		// The code logged before the checkpoint is not needed after it
		// (the recorder decodes everything again), nor mapped yet.
		r.codeDone = cp.Ctrl + 1
		r.rd, r.nd = ch.ctrls[cp.Ctrl].reads, ch.ctrls[cp.Ctrl].nondets
	}
	r.pos = cp.Position
	if !mid {
		r.pos = t.chunks[cp.Chunk].FirstPosition
	}
	if err := r.RunTo(cp.Position); err != nil && err != ErrEnd {
		return nil, err
	}
	return r, nil
}

func (t *Trace) newReplay() *Replay { return t.newReplayFrom(nil) }

// newReplayFrom is newReplay materialising pages with lo's and sharing
// its code store (lo may be nil).
func (t *Trace) newReplayFrom(lo *Leftovers) *Replay {
	r := &Replay{t: t, lineage: t.lineage, hookLog: hookLogOn, spare: lo}
	if lo != nil {
		r.store = lo.store
	}
	if !t.tree {
		r.newProcess(0, 0) // the only one
	}
	r.refocus()
	r.retarget()
	return r
}

func (r *Replay) load(i int) error {
	ahead := len(r.t.chunks)
	if r.lastChunk > 0 {
		ahead = r.lastChunk + 1
	}
	ch, err := r.t.chunkFor(i, r.streaming, ahead)
	if err != nil {
		return err
	}
	if r.streaming && r.ch != nil && r.ch.index == i-1 && r.ch.index != r.start {
		r.t.cache.drop(r.ch.index)
	}
	var carry [][]logRead
	var carryCh []*chunk
	carryN := 0
	if old := r.ch; old != nil && old.index == i-1 {
		// A chunk cut between checkpoints: the reads and results logged
		// at the end of the previous chunk, not consumed yet (from rd
		// on), are consumed in this one.
		lo := 0
		for k, s := range r.carry {
			carry, carryCh, carryN = appendUnread(carry, carryCh, carryN, s, r.carryCh[k], lo, r.rd)
			lo += len(s)
		}
		for _, b := range old.reads {
			carry, carryCh, carryN = appendUnread(carry, carryCh, carryN, b, old, lo, r.rd)
			lo += len(b)
		}
		carryNd := old.nondets[r.nd:]
		if carryN+len(carryNd) > 0 {
			c := *ch
			c.nondets = append(append([][]uint64(nil), carryNd...), ch.nondets...)
			c.ctrls = append([]ctrl(nil), ch.ctrls...)
			for k := range c.ctrls {
				c.ctrls[k].reads += carryN
				c.ctrls[k].nondets += len(carryNd)
			}
			ch = &c
		}
	}
	r.carry, r.carryCh, r.carryN = carry, carryCh, carryN
	r.ch, r.ci, r.codeDone, r.rd, r.nd = ch, 0, 0, 0, 0
	r.setSegs()
	if r.streaming {
		// chunkFor took the chunk held, and rehold holds it again.
		r.rehold()
		r.t.cache.release([]*chunk{ch})
	}
	return nil
}

// appendUnread appends to carry (n reads) what is left of reads, whose
// first read is number lo, from read number rd on, and reads' chunk ch
// to chs.
func appendUnread(carry [][]logRead, chs []*chunk, n int, reads []logRead, ch *chunk, lo, rd int) ([][]logRead, []*chunk, int) {
	if from := max(rd-lo, 0); from < len(reads) {
		carry, chs, n = append(carry, reads[from:]), append(chs, ch), n+len(reads)-from
	}
	return carry, chs, n
}

// readAt returns the current chunk's k-th logged read, counting the reads
// carried over from the chunks before it first.
func (r *Replay) readAt(k int) logRead {
	if i := k - r.winLo; uint(i) < uint(len(r.win)) {
		return r.win[i]
	}
	return r.readIn(k)
}

// readIn is readAt outside the array it found the last read in.
func (r *Replay) readIn(k int) logRead {
	lo := 0
	for _, s := range r.segs {
		if k < lo+len(s) {
			r.win, r.winLo = s, lo
			return s[k-lo]
		}
		lo += len(s)
	}
	panic(errNoRead)
}

// errNoRead is readIn's panic: a read past the chunk's (the CPU consumes
// no more than the next control record allows).
var errNoRead = errors.New("reader: a logged read past the chunk's")

// setSegs lists the arrays readAt reads in: carry's, then the chunk's
// blocks (one list keeps readIn, and readAt with it, small enough to
// inline: as calls they took 0.09 s more of a 3.5 s replay of bzip2
// -9's trace).
func (r *Replay) setSegs() {
	r.segs = append(append(r.segs[:0], r.carry...), r.ch.reads...)
	r.win, r.winLo = nil, 0
}

// Position is the number of instructions retired by all threads so far.
func (r *Replay) Position() uint64 { return r.pos }

// Exit is how the program ended, once re-simulation reached its end.
func (r *Replay) Exit() *tracefile.Exit { return r.exit }

// AtEnd reports whether re-simulation reached the end of the program.
func (r *Replay) AtEnd() bool { return r.atEnd }

// Err is the error that stopped re-simulation for good, if any.
func (r *Replay) Err() error { return r.err }

// Current is the thread that runs next.
func (r *Replay) Current() (tid int, c *x86.CPU) {
	if r.cur == nil {
		return 0, nil
	}
	return r.cur.tid, r.cur.cpu
}

// Threads returns the live threads' ids and CPUs, in creation order.
func (r *Replay) Threads() (tids []int, cpus []*x86.CPU) {
	for _, t := range r.threads {
		if !t.exited {
			tids = append(tids, t.tid)
			cpus = append(cpus, t.cpu)
		}
	}
	return
}

// Memory is the re-simulated address space. Its layout, protections and
// code are the recording's; its data is meaningful only for the bytes
// that tracking reports known (see Track and Known).
//
// For a process tree, it is the focus's memory (Trace.SetFocus), also
// when another process runs.
func (r *Replay) Memory() *x86.Memory { return r.fas.mem }

// InstPosition is the global position of the instruction c is executing
// (for Hook and Access callbacks).
func (r *Replay) InstPosition(c *x86.CPU) uint64 {
	return r.pos + c.Retired() - r.cur.seen
}

// Watch limits the Access callback to accesses overlapping one of ranges
// (nil: every access), and ends WatchShared.
func (r *Replay) Watch(ranges []Range) {
	r.watch = append(r.watch[:0], ranges...)
	r.shWatch = false
}

// AccessAllProcesses makes the Access callback report the accesses of
// every process of a tree, each at the addresses of its own address
// space (Access.Tid tells whose), instead of the focus's only: the
// instructions' accesses, what syscalls and signal deliveries wrote,
// and an exec's replacement of the memory of a process that did not
// share it (AccessExec). Memory, Known and tracking still follow the
// focus. Call it before the first RunTo.
func (r *Replay) AccessAllProcesses() { r.accessAll = true }

// Track starts recording which bytes of memory re-simulation learns, in
// a window starting at the current position (see Cut and Known).
func (r *Replay) Track() {
	if r.track == nil {
		r.track = newTracker(r.pos)
	}
}

// Untrack stops tracking (a replay resumed from a tracking snapshot
// tracks): without an Access callback, reads are predicted in the CPU
// again, several times faster. Cut, Known, WasReset and WindowStart
// must not be called until Track starts a new window.
func (r *Replay) Untrack() { r.track = nil }

// Cut closes the tracking window at the current position and returns
// what it learned; a new window starts. Track must be on.
func (r *Replay) Cut() *Delta { return r.focusTrack().cut(r.fas.mem, r.pos) }

// WindowStart is the position the current tracking window began at.
func (r *Replay) WindowStart() uint64 { return r.focusTrack().start }

// Known fills buf with the bytes at addr the current tracking window
// knows, setting have[i] for each; bytes already marked in have are left
// alone. Track must be on, unless the trace logs no reads: its replay
// holds the whole memory, and every mapped byte is known (a byte not
// mapped may still be known to what earlier windows learned: the
// memory of a process that has exited, at the trace's end).
func (r *Replay) Known(addr uint64, buf []byte, have []bool) {
	if r.t.noReads {
		mappedBytes(r.fas.mem, addr, buf, have)
		return
	}
	r.focusTrack().known(r.fas.mem, addr, buf, have)
}

// WasReset reports whether page pn was unmapped in the current tracking
// window, so that what older windows knew of it no longer holds.
func (r *Replay) WasReset(pn uint64) bool { return r.focusTrack().wasReset(pn) }

// Stream declares that r only runs forward and takes no snapshots, as
// a job of ttd probe does: each chunk it leaves, except the one it
// started in (where the segment before its own ends, for another job),
// then goes out of the trace's chunk cache, so that the next chunks'
// decoding reuses its memory. Kept until the cache's 256 MiB limit, the
// chunks a job had passed grew the heap of `ttd probe --jobs 2` over
// perl's hash sort (37 chunks, 136 MiB of records) to 500-580 MB of RSS,
// 57-95k page faults for 2 s of CPU. A chunk dropped while another
// replay still reads it stays valid for that replay (chunks are never
// modified); one asked for again is decoded again.
func (r *Replay) Stream() {
	if !r.streaming {
		r.streaming = true
		r.rehold()
	}
}

// StopsIn says that r will not run past chunk i (a job of ttd probe,
// whose run ends at the next job's checkpoint there), so that it does
// not decode the chunk after i ahead, as it does otherwise: another job
// decoded that chunk earlier and dropped it as it passed (Stream), and
// decoding it again for nothing took 2-3 of perl's 37 chunks at `--jobs
// 2`. i < 0 lifts the bound. A replay that does run past i decodes the
// chunks it needs, one at a time as it reaches them.
func (r *Replay) StopsIn(i int) { r.lastChunk = max(i, 0) }

// Close gives the replay's prediction caches back for the next replay to
// reuse (predict.Cache.Release). A reader that re-simulates checkpoint
// intervals one after another (ttd replay --segments, the index build,
// searches) would otherwise allocate and zero 2 MiB per thread per
// interval. Snapshots taken from r stay valid; r must not be used
// afterwards.
func (r *Replay) Close() {
	r.finishAlong()
	r.t.cache.release(r.held)
	r.held = nil
	for _, t := range r.threads {
		if t.cache != nil {
			t.cpu.DropPred()
			t.cache.Release()
			t.cache = nil
		}
	}
	r.threads, r.cur = nil, nil
}

// thread returns the thread with the given id, made in the running
// thread's process the first time (a checkpoint's ProcessState records
// then move it to its own).
func (r *Replay) thread(tid int) *thread {
	if t := r.find(tid); t != nil {
		return t
	}
	return r.newThread(tid, r.home(tid, 0))
}

// home is the process of a new thread tid started by thread parent: the
// process whose pid is tid and that has no thread yet (the first thread
// of a process just started), else the parent's, else the running
// thread's.
func (r *Replay) home(tid, parent int) *process {
	if r.t.tree {
		if p := r.proc(tid); p != nil && !p.exited {
			empty := true
			for _, t := range r.threads {
				empty = empty && t.proc != p
			}
			if empty {
				return p
			}
		}
		if pt := r.find(parent); pt != nil && pt.proc != nil {
			return pt.proc
		}
	}
	if r.cur != nil && r.cur.proc != nil {
		return r.cur.proc
	}
	if len(r.procs) == 0 {
		r.newProcess(0, 0)
	}
	return r.procs[0]
}

func (r *Replay) newThread(tid int, p *process) *thread {
	c := x86.NewCPU(p.as.mem, p.code)
	c.Obs = r
	t := &thread{tid: tid, cpu: c, cache: predict.New(r.t.cacheBits), proc: p}
	r.threads = append(r.threads, t)
	return t
}

func (r *Replay) diverged(format string, args ...any) error {
	tid := 0
	if r.cur != nil {
		tid = r.cur.tid
	}
	return &DivergenceError{Position: r.pos, Tid: tid, Msg: fmt.Sprintf(format, args...)}
}

// account adds the running thread's progress to the position.
func (r *Replay) account() {
	if t := r.cur; t != nil {
		n := t.cpu.Retired()
		r.pos += n - t.seen
		t.seen = n
	}
}

// nextCtrl returns the next control record, loading chunks as needed.
func (r *Replay) nextCtrl() (*ctrl, error) {
	for r.ci >= len(r.ch.ctrls) {
		next := r.ch.index + 1
		if next >= len(r.t.chunks) {
			return nil, io.EOF
		}
		if err := r.load(next); err != nil {
			return nil, err
		}
	}
	return &r.ch.ctrls[r.ci], nil
}

func ctrlPosition(c *ctrl) (uint64, bool) {
	if c.proc != nil {
		return c.proc.Position, true
	}
	if c.rec == nil {
		return c.kf.Position, true // a key frame
	}
	return recordPosition(c.rec)
}

// recordPosition is the position a KeyFrame, Checkpoint or Exit record
// carries (ok false for other records).
func recordPosition(rec *tracefile.Record) (uint64, bool) {
	switch rec.Kind {
	case tracefile.KindKeyFrame:
		return rec.KeyFrame.Position, true
	case tracefile.KindCheckpoint:
		return rec.Checkpoint.Position, true
	case tracefile.KindExit:
		return rec.Exit.Position, true
	}
	return 0, false
}

// RunTo re-simulates until the position is target, with every event at
// target applied, or until the program ends (ErrEnd) or the trace ends
// early (io.ErrUnexpectedEOF for a trace cut short by a crash of the
// recorder).
func (r *Replay) RunTo(target uint64) error {
	if r.err != nil {
		return r.err
	}
	r.observing = r.track != nil || r.Access != nil || r.vw != nil
	r.retarget()
	if !r.HookFixed {
		r.hookVersion++
	}
	err := r.runTo(target)
	if r.restore != nil || r.t.cpm.pages != nil && r.t.noReads {
		if perr := r.pendErr(); perr != nil {
			err = perr
		}
	}
	if err != nil && err != ErrEnd {
		r.err = err
	}
	return err
}

func (r *Replay) runTo(target uint64) error {
	for {
		if r.atEnd {
			return ErrEnd
		}
		c, err := r.nextCtrl()
		if err == io.EOF {
			// A trace without an exit record: the recording was cut.
			// Nothing says what happened after its last record.
			if upto := min(target, r.t.End()); r.pos < upto {
				r.arm(r.carryN+r.ch.nreads, len(r.ch.nondets))
				if err := r.runCPU(upto, false); err != nil {
					return err
				}
			}
			return io.ErrUnexpectedEOF
		}
		if err != nil {
			return err
		}
		if r.mapTo != nil && c.pstate == nil && !mapRecord(c.kind) {
			// The Mmap records of a ProcessState ended.
			r.mapTo = nil
			r.retarget()
		}
		if r.codeDone <= r.ci {
			for _, cb := range c.code {
				if err := r.as.pokeCode(cb.Addr, cb.Bytes); err != nil {
					return r.diverged("code bytes at %#x fall outside the mapped memory", cb.Addr)
				}
			}
			r.codeDone = r.ci + 1
		}
		if p, ok := ctrlPosition(c); ok {
			if p < r.pos {
				return r.diverged("event %v is at position %d, behind re-simulation", c.kind, p)
			}
			r.arm(c.reads, c.nondets)
			if p > target {
				return r.runCPU(target, false)
			}
			// A syscall may end the run at a syscall key frame, or at the
			// exit (exit_group takes effect without a syscall record).
			sys := c.kind == tracefile.KindExit || c.kind == tracefile.KindKeyFrame &&
				(c.kf.Kind == tracefile.KeyFrameSyscall || c.kf.Kind == tracefile.KeyFrameThreadExit)
			if err := r.runCPU(p, sys); err != nil {
				return err
			}
			if r.rd != c.reads {
				return r.diverged("%d logged reads were not consumed before %v", c.reads-r.rd, c.kind)
			}
		}
		r.ci++
		switch {
		case c.proc != nil:
			err = r.applyProcess(c.proc)
		case c.pstate != nil:
			err = r.applyProcessState(c.pstate)
		case c.rec != nil:
			err = r.apply(c.rec)
		}
		r.retarget()
		if err != nil {
			if err == ErrEnd {
				r.events(c)
			}
			return err
		}
		r.events(c)
		if r.pos >= target && !r.pendingAt(target) {
			return nil
		}
	}
}

// events reports the event of an applied control record and the modules
// loaded with it.
func (r *Replay) events(c *ctrl) {
	if r.OnEvent == nil {
		return
	}
	cur := 0
	if r.cur != nil {
		cur = r.cur.tid
	}
	if c.proc != nil {
		ev := Event{Kind: EventProcess, Position: r.pos, Tid: c.proc.Tid, Record: c.rec, Process: c.proc, chunk: r.ch.index}
		r.OnEvent(&ev)
	}
	if ev, ok := c.event(r.pos, cur); ok {
		ev.chunk = r.ch.index
		r.OnEvent(&ev)
	}
	for m := range c.mods {
		ev := Event{Kind: EventModule, Position: r.pos, Tid: cur, Module: &c.mods[m], chunk: r.ch.index}
		r.OnEvent(&ev)
	}
}

// arm bounds what the CPU may consume before the next control record and
// computes when the next logged read comes.
func (r *Replay) arm(reads, nondets int) {
	r.rdEnd, r.ndEnd = reads, nondets
	r.next()
}

// next computes when the running thread reaches the next logged read, and
// tells its prediction cache, which the CPU checks inline (x86.CPU.Pred).
func (r *Replay) next() {
	r.nextAt = 0
	if r.cur == nil || r.cur.exited {
		return
	}
	if r.rd < r.rdEnd {
		r.nextAt = r.cur.lastLogged + r.readAt(r.rd).Delta
	}
	r.cur.cache.Stop = r.nextAt
}

// pendingAt reports whether the next control record still takes effect
// at position p (so RunTo(p) must go on applying it).
func (r *Replay) pendingAt(p uint64) bool {
	if r.ci >= len(r.ch.ctrls) {
		// The next control record is in a later chunk: its header may
		// tell where without decoding it (lookahead.go).
		if pos, ok := r.t.nextPositionAfter(r.ch); ok {
			return pos == p
		}
	}
	c, err := r.nextCtrl()
	if err != nil {
		return false
	}
	pos, ok := ctrlPosition(c)
	return !ok || pos == p
}

// runSlice bounds the instructions one CPU.Run takes, so that translated
// code comes back to Go at least every few milliseconds: the Go runtime
// cannot stop a goroutine in translated code, and a collection stops
// the world until every goroutine has stopped. A job of `ttd probe
// --jobs 2` whose budget ran to its next logged event (sort -n's
// comparisons: tens of millions of instructions) kept the collection
// waiting 98 ms, and the other job stopped all that time
// (GODEBUG=gctrace=1: sweep termination of 98 ms; perl's --jobs 1 481
// ms, its chunk decoding stopped).
const runSlice = 1 << 22

// runCPU runs the current thread until the position is upto. A syscall
// may end the run only at upto and only when one is expected there.
func (r *Replay) runCPU(upto uint64, syscallAtEnd bool) error {
	for r.pos < upto {
		t := r.cur
		if t == nil {
			return r.diverged("no thread is running")
		}
		if t.exited {
			return r.diverged("thread %d runs after it ended", t.tid)
		}
		// The CPU checks the prediction cache itself unless every read
		// and write must be seen (tracking, an Access callback).
		t.cpu.Pred = nil
		if !r.observe && !r.t.noReads {
			t.cpu.Pred = t.cache
		}
		ex := t.cpu.Run(min(upto-r.pos, runSlice))
		r.account()
		switch ex.Reason {
		case x86.ExitBudget:
		case x86.ExitSyscall:
			// A syscall instruction ends the run exactly where the next
			// event is: its key frame, or events it caused first (the
			// thread a clone starts, an exit).
			if r.pos != upto {
				return r.diverged("syscall %d at %#x not in the trace", t.cpu.R[x86.RAX], t.cpu.RIP-2)
			}
			if r.OnSyscallEntry != nil {
				r.OnSyscallEntry(r.pos, t.tid, t.cpu)
			}
		case x86.ExitUnimplemented:
			return ex.Err
		default:
			// A fault: the trace must deliver a signal right here.
			c, err := r.nextCtrl()
			if err != nil || c.kind != tracefile.KindKeyFrame || c.kf.Kind != tracefile.KeyFrameSignal || c.kf.Position != r.pos {
				return r.diverged("%v at %#x not in the trace", ex.Reason, t.cpu.RIP)
			}
			return nil
		}
	}
	return nil
}

// apply acts on a control record at the current position.
func (r *Replay) apply(rec *tracefile.Record) error {
	switch rec.Kind {
	case tracefile.KindKeyFrame:
		k := &rec.KeyFrame
		if k.Kind == tracefile.KeyFrameThreadSwitch {
			r.account()
			t := r.thread(k.Tid)
			t.seen = t.cpu.Retired()
			r.cur = t
		}
	case tracefile.KindThreadStart:
		t := r.find(rec.ThreadStart.Tid)
		if t == nil {
			t = r.newThread(rec.ThreadStart.Tid, r.home(rec.ThreadStart.Tid, rec.ThreadStart.ParentTid))
		}
		t.seen = t.cpu.Retired()
		if r.cur == nil {
			r.cur = t
		}
	case tracefile.KindThreadExit:
		// Its cache goes now (as the recorder's did); the thread stays
		// until the next checkpoint, which may still list it.
		r.endThread(r.thread(rec.ThreadExit.Tid))
	case tracefile.KindSyscall:
		s := &rec.Syscall
		t := r.thread(s.Tid)
		t.cpu.R[x86.RAX] = uint64(s.Result)
		if r.t.noReads {
			r.lastSys = lastSyscall{tid: s.Tid, nr: s.Nr, args: s.Args, result: s.Result}
		}
		if err := r.kernelWrites(t, s.Writes, s.Predicted, AccessSyscall, t.cpu.RIP-2); err != nil {
			return r.diverged("syscall %d %v", s.Nr, err)
		}
	case tracefile.KindSignal:
		s := &rec.Signal
		t := r.thread(s.Tid)
		r.faultTouch(t, s)
		if err := r.kernelWrites(t, s.Writes, s.Predicted, AccessSignal, 0); err != nil {
			return r.diverged("signal frame: %v", err)
		}
		if len(s.Regs) > 0 {
			if err := r.setRegs(t, s.Regs); err != nil {
				return err
			}
		}
	case tracefile.KindMmap:
		r.as.mmap(rec.Mmap.Addr, rec.Mmap.Len, rec.Mmap.Prot, rec.Mmap.Object, rec.Mmap.Offset, rec.Mmap.Flags&mapAnonymous == 0)
	case tracefile.KindMunmap:
		r.as.munmap(rec.Munmap.Addr, rec.Munmap.Len)
		if r.track != nil && (r.as == r.fas || r.pk != nil || r.vw != nil) {
			lo := rec.Munmap.Addr >> x86.PageShift
			hi := (rec.Munmap.Addr + rec.Munmap.Len + x86.PageSize - 1) >> x86.PageShift
			r.track.reset(lo, hi)
			for _, t := range r.more {
				t.reset(lo, hi)
			}
		}
	case tracefile.KindMprotect:
		r.as.protect(rec.Mprotect.Addr, rec.Mprotect.Len, rec.Mprotect.Prot)
	case tracefile.KindOpaque:
		tid, b, ok := splitTagged(rec.Opaque.Bytes)
		if !ok {
			return nil
		}
		switch rec.Opaque.Tag {
		case tagRegs:
			return r.setRegs(r.thread(tid), b)
		case tagFinalRegs:
			if r.t.tree {
				return r.finalRegs(tid, b)
			}
		case tagOutput:
			if r.Output != nil {
				r.Output(tid, b)
			}
		case tagMemImage:
			return r.memImage(tid, b)
		case tagMemHash:
			return r.memHash(tid, b)
		case tagOutputRef:
			return r.outputRef(tid)
		}
	case tracefile.KindCheckpoint:
		r.sweepShared()
		return r.checkpoint(&rec.Checkpoint)
	case tracefile.KindExit:
		e := rec.Exit
		r.exit = &e
		r.atEnd = true
		return ErrEnd
	}
	return nil
}

func (r *Replay) setRegs(t *thread, blob []byte) error {
	wasCur := t == r.cur
	if wasCur {
		r.account()
	}
	if err := t.cpu.UnmarshalState(blob); err != nil {
		return r.diverged("bad register state for thread %d", t.tid)
	}
	t.seen = t.cpu.Retired()
	return nil
}

// checkpoint verifies (with Verify) and adopts a checkpoint's state.
func (r *Replay) checkpoint(cp *tracefile.Checkpoint) error {
	r.account()
	if r.pos != cp.Position {
		return r.diverged("checkpoint at position %d reached at %d", cp.Position, r.pos)
	}
	r.Checkpoints++
	for _, ts := range cp.Threads {
		t := r.thread(ts.Tid)
		// The first checkpoint a replay meets is where it starts: adopt it.
		if r.Verify && r.Checkpoints > 1 {
			r.regs = t.cpu.MarshalState(r.regs[:0])
			if !bytes.Equal(r.regs, ts.Regs) {
				return r.diverged("registers of thread %d differ from the checkpoint: %s", ts.Tid, stateDiff(r.regs, ts.Regs))
			}
			if t.proc != nil {
				t.proc.verified++
			}
		}
		if err := r.setRegs(t, ts.Regs); err != nil {
			return err
		}
	}
	live := r.threads[:0]
	for _, t := range r.threads {
		if t.exited {
			continue
		}
		t.cache.Flush()
		t.cache.Reads, t.lastLogged = 0, 0
		live = append(live, t)
	}
	clear(r.threads[len(live):])
	r.threads = live
	r.cur = r.thread(cp.CurrentTid)
	r.cur.seen = r.cur.cpu.Retired()
	r.retarget()
	if r.restore != nil {
		if r.Checkpoints == 1 && !r.t.tree && len(r.procs) > 0 {
			r.restoreSpace(r.procs[0].as, 0)
		} else if r.Checkpoints > 1 {
			r.restore = nil
		}
	}
	if r.cpHook != nil {
		r.cpHook(r)
	}
	return nil
}

// kernelWrites applies what a syscall or a signal delivery wrote: the
// bytes the record holds, and the spans it left out because the
// prediction cache held them (they overlap none of the others).
func (r *Replay) kernelWrites(t *thread, ws []tracefile.MemRange, predicted []tracefile.Span, kind AccessSource, pc uint64) error {
	if t.exited {
		return fmt.Errorf("thread %d had ended", t.tid)
	}
	as := t.proc.as
	focus := as == r.fas
	trs := r.tracksFor(as)
	for _, p := range predicted {
		if p.Len > 1<<30 || p.Addr+p.Len < p.Addr {
			return fmt.Errorf("predicted a write of %d bytes at %#x", p.Len, p.Addr)
		}
		b := slices.Grow(r.kbuf[:0], int(p.Len))[:p.Len]
		r.kbuf = b
		t.cache.Peek(p.Addr, b)
		if err := as.mem.Poke(p.Addr, b); err != nil {
			return fmt.Errorf("wrote outside the mapped memory at %#x", p.Addr)
		}
		for _, tr := range trs {
			tr.markRange(p.Addr, len(b), true)
		}
		if focus || r.accessAll {
			r.written(p.Addr, b)
		}
		if r.shWatch {
			r.writtenAlias(as, p.Addr, b)
		}
	}
	for _, w := range ws {
		if err := as.mem.Poke(w.Addr, w.Bytes); err != nil {
			return fmt.Errorf("wrote outside the mapped memory at %#x", w.Addr)
		}
		t.cache.Fill(w.Addr, w.Bytes)
		for _, tr := range trs {
			tr.markRange(w.Addr, len(w.Bytes), true)
		}
		if focus || r.accessAll {
			r.written(w.Addr, w.Bytes)
		}
		if r.shWatch {
			r.writtenAlias(as, w.Addr, w.Bytes)
		}
	}
	if len(r.kw) > 0 {
		r.kwT, r.kwSrc, r.kwPC = t, kind, pc
		KernelPieces(r.kw, r.kwPiece)
		r.kw, r.kwBytes = r.kw[:0], r.kwBytes[:0]
	}
	return nil
}

// stateDiff names the first register that differs between two state blobs.
func stateDiff(got, want []byte) string {
	var g, w x86.CPU
	if g.UnmarshalState(got) != nil || w.UnmarshalState(want) != nil {
		return "bad state blob"
	}
	for i := range g.R {
		if g.R[i] != w.R[i] {
			return fmt.Sprintf("%s = %#x, recorded %#x", x86.RegNames[i], g.R[i], w.R[i])
		}
	}
	switch {
	case g.RIP != w.RIP:
		return fmt.Sprintf("rip = %#x, recorded %#x", g.RIP, w.RIP)
	case g.Rflags() != w.Rflags():
		return fmt.Sprintf("rflags = %#x, recorded %#x", g.Rflags(), w.Rflags())
	case g.Icount != w.Icount:
		return fmt.Sprintf("instruction count = %d, recorded %d", g.Icount, w.Icount)
	case g.X != w.X:
		for i := range g.X {
			if g.X[i] != w.X[i] {
				return fmt.Sprintf("xmm%d = %x, recorded %x", i, g.X[i], w.X[i])
			}
		}
	}
	return "x87 or control state"
}

// watched reports whether [addr, addr+n) overlaps a watched range.
func (r *Replay) watched(addr uint64, n int) bool {
	if len(r.watch) == 0 {
		return true
	}
	end := addr + uint64(n)
	for _, w := range r.watch {
		if addr < w.Hi && end > w.Lo {
			return true
		}
	}
	return false
}

// x86.Observer: the replay side of the prediction cache.

// WantInstructions reports whether a Hook is installed.
func (r *Replay) WantInstructions() bool { return r.Hook != nil }

// WantBlock applies HookBlocks and HookBlock (x86.BlockFilter).
func (r *Replay) WantBlock(b *x86.Block) bool {
	if r.HookBlock == nil {
		return r.HookBlocks == nil || r.HookBlocks(b.PC, b.End)
	}
	return r.HookBlock(b) || r.HookBlocks != nil && r.HookBlocks(b.PC, b.End)
}

// WantInsts applies HookBlocks, HookBlock and HookInsts
// (x86.InstFilter).
func (r *Replay) WantInsts(b *x86.Block) uint64 {
	all := ^uint64(0)
	if r.HookBlock == nil && r.HookBlocks == nil && r.HookInsts == nil ||
		r.HookBlock != nil && r.HookBlock(b) || r.HookBlocks != nil && r.HookBlocks(b.PC, b.End) {
		return all
	}
	if r.HookInsts != nil {
		return r.HookInsts(b)
	}
	return 0
}

// FilterVersion changes with each RunTo, between which HookBlocks may
// change (x86.FilterVersion).
func (r *Replay) FilterVersion() uint64 { return r.hookVersion }

// HookAll applies HookGate (x86.HookGate).
func (r *Replay) HookAll(c *x86.CPU) bool { return r.HookGate != nil && r.HookGate(r, c) }

// Instruction calls the Hook.
func (r *Replay) Instruction(c *x86.CPU, in *x86.Inst) {
	if r.Hook != nil {
		r.Hook(r, c, in)
	}
}

// MemRead returns the value the recorded read saw: the prediction, or
// the logged value when the recorder logged this read. img is what the
// re-simulated memory holds. It is the reader's hot path: one call, no
// allocation, the rare cases out of line.
func (r *Replay) MemRead(c *x86.CPU, addr uint64, size int, img uint64) uint64 {
	if addr&7+uint64(size) > 8 || r.observe || r.t.noReads {
		return r.memReadSlow(c, addr, size, img)
	}
	t := r.cur
	t.cache.Reads++
	var v uint64
	if t.cache.Reads == r.nextAt {
		v = r.logged(t, addr, size)
	} else {
		v = t.cache.Predict(addr, size)
	}
	if v != img && c.Pred != nil {
		r.fixImage(addr, size, v)
	}
	return v
}

// fixImage makes the re-simulated memory hold what the program read at
// addr, where it held something else (the bytes of a mapped file, which
// the trace does not carry), so that the CPU's inline check predicts the
// next read there.
func (r *Replay) fixImage(addr uint64, size int, v uint64) {
	binary.LittleEndian.PutUint64(r.buf[:], v)
	r.as.mem.Poke(addr, r.buf[:size])
}

// memReadSlow is MemRead for accesses that cross an 8-byte boundary (the
// recorder counted them as two reads) and for observed replays.
func (r *Replay) memReadSlow(c *x86.CPU, addr uint64, size int, img uint64) uint64 {
	var v uint64
	if r.t.noReads {
		v = img // the replay's own memory is the recording's
	} else if n1 := predict.Split(addr, size); n1 != size {
		lo := r.read(addr, n1)
		hi := r.read(addr+uint64(n1), size-n1)
		v = lo | hi<<(8*uint(n1))
	} else {
		v = r.read(addr, size)
	}
	if r.observe {
		r.observeRead(c, addr, size, v, img)
	}
	return v
}

func (r *Replay) read(addr uint64, size int) uint64 {
	t := r.cur
	t.cache.Reads++
	if t.cache.Reads == r.nextAt {
		return r.logged(t, addr, size)
	}
	return t.cache.Predict(addr, size)
}

// logged consumes the next logged read. The word a byte read logs also
// goes into memory, so that the CPU's inline check predicts the reads of
// its other bytes.
func (r *Replay) logged(t *thread, addr uint64, size int) uint64 {
	v := r.readAt(r.rd).Value
	r.rd++
	t.lastLogged = t.cache.Reads
	if size == 1 && r.t.byteWords {
		r.fixWord(addr&^7, v)
		v = t.cache.LoggedWord(addr, size, v)
	} else {
		t.cache.Update(addr, size, v)
	}
	r.next()
	return v
}

// fixWord makes the re-simulated memory hold the aligned word w at addr,
// where it differs (fixImage).
func (r *Replay) fixWord(addr, w uint64) {
	var b [8]byte
	if r.as.mem.Peek(addr, b[:]) == nil && binary.LittleEndian.Uint64(b[:]) == w {
		return
	}
	r.fixImage(addr, 8, w)
}

// FeedReads hands translated code the logged reads of the running thread
// to come, up to the next control record (x86.ReadFeeder): their numbers
// and values, and the number of the first one after them.
func (r *Replay) FeedReads(c *x86.CPU, buf []x86.FedRead) (n int, after uint64) {
	t := r.cur
	if t == nil || r.observe && !r.logsAccesses() || !r.t.byteWords {
		// Translated code takes byte reads' words (Replay.logged).
		return 0, r.nextAt
	}
	lim := r.feed.limit(len(buf))
	at := t.lastLogged
	for k := r.rd; k < r.rdEnd; k++ {
		lr := r.readAt(k)
		at += lr.Delta
		if n == lim {
			r.feed.fed()
			return n, at
		}
		buf[n] = x86.FedRead{Reads: at, Val: lr.Value}
		n++
	}
	r.feed.fed()
	return n, 0
}

// feedSize sizes FeedReads's feeds by what translated code takes of
// them. It returns to Go (a hook, a syscall, a block it cannot chain
// to) often after a few reads, and the next entry is fed again: over
// perl's hash sort it took 5.4 reads a feed of 64 (14M of 167M fed), and
// feeding took 5-10% of the replay's CPU. A feed is twice the reads
// taken of the last one (and so twice the last one when it ran out), or
// 3/4 of the last one if more, between minFeed and the buffer.
type feedSize struct {
	lim  int  // of the next feed (0: the buffer's size)
	used int  // reads taken of the last feed
	open bool // the last feed has not sized the next yet
}

// minFeed is the least feedSize gives.
const minFeed = 8

// limit returns the size of the next feed into a buffer of n.
func (f *feedSize) limit(n int) int {
	if f.open {
		f.lim = max(2*f.used+minFeed/2, f.lim-f.lim/4)
		f.open = false
	}
	if f.lim <= 0 || f.lim > n {
		f.lim = n
	}
	f.lim = max(f.lim, min(minFeed, n))
	return f.lim
}

// fed records that a feed was handed out.
func (f *feedSize) fed() { f.used, f.open = 0, true }

// ConsumedReads takes note that translated code made the first n reads
// FeedReads handed it, as logged does for each.
func (r *Replay) ConsumedReads(c *x86.CPU, n int) {
	t := r.cur
	r.feed.used += n
	for ; n > 0; n-- {
		t.lastLogged += r.readAt(r.rd).Delta
		r.rd++
	}
	r.next()
}

func (r *Replay) observeRead(c *x86.CPU, addr uint64, size int, v, img uint64) {
	if r.track != nil && r.tracksHere() {
		if v != img {
			// Make the image hold what the program saw.
			binary.LittleEndian.PutUint64(r.buf[:], v)
			r.as.mem.Poke(addr, r.buf[:size])
		}
		r.track.mark(addr, size, false)
		for _, t := range r.more {
			t.mark(addr, size, false)
		}
	}
	if r.Access != nil && (r.as == r.fas || r.accessAll) && r.watched(addr, size) {
		r.acc = Access{Position: r.InstPosition(c), Tid: r.cur.tid, Addr: addr, Size: size, Value: v}
		if in := c.CurrentInst(); in != nil {
			r.acc.PC = in.PC
		}
		r.Access(&r.acc)
	} else if r.shWatch && r.Access != nil {
		r.observeAlias(c, addr, size, v, false)
	}
}

// MemWrite keeps the prediction cache in step with the recorder's.
func (r *Replay) MemWrite(c *x86.CPU, addr uint64, size int, val uint64) {
	t := r.cur
	if r.t.noReads {
		// No cache to keep in step.
	} else if addr&7+uint64(size) <= 8 {
		t.cache.Update(addr, size, val)
	} else {
		n1 := predict.Split(addr, size)
		t.cache.Update(addr, n1, val&(1<<(8*uint(n1))-1))
		t.cache.Update(addr+uint64(n1), size-n1, val>>(8*uint(n1)))
	}
	if r.observe {
		r.observeWrite(c, addr, size, val)
	}
}

func (r *Replay) observeWrite(c *x86.CPU, addr uint64, size int, val uint64) {
	if r.track != nil && r.tracksHere() {
		r.track.mark(addr, size, true)
		for _, t := range r.more {
			t.mark(addr, size, true)
		}
	}
	if r.Access != nil && (r.as == r.fas || r.accessAll) && r.watched(addr, size) {
		r.acc = Access{Position: r.InstPosition(c), Tid: r.cur.tid, Addr: addr, Size: size, Value: val, Write: true}
		if in := c.CurrentInst(); in != nil {
			r.acc.PC = in.PC
		}
		r.Access(&r.acc)
	} else if r.shWatch && r.Access != nil {
		r.observeAlias(c, addr, size, val, true)
	}
}

// NonDet returns the recorded results.
func (r *Replay) NonDet(c *x86.CPU, in *x86.Inst, vals []uint64) []uint64 {
	if r.nd < r.ndEnd {
		v := r.ch.nondets[r.nd]
		r.nd++
		return v
	}
	return vals
}

// Decoded marks a block's code bytes known (they were fetched).
func (r *Replay) Decoded(c *x86.CPU, b *x86.Block) {
	if r.track != nil && b.End > b.PC && (r.as == r.fas || r.pk != nil || r.vw != nil) {
		r.track.markRange(b.PC, int(b.End-b.PC), false)
		for _, t := range r.more {
			t.markRange(b.PC, int(b.End-b.PC), false)
		}
	}
}

// Sync needs nothing during re-simulation.
func (r *Replay) Sync(c *x86.CPU, in *x86.Inst) {}

// mapRecord reports the records that change an address space's layout.
func mapRecord(k tracefile.Kind) bool {
	return k == tracefile.KindMmap || k == tracefile.KindMunmap || k == tracefile.KindMprotect
}
