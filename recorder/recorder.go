package recorder

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"golang.org/x/arch/x86/x86asm"
	"golang.org/x/sys/unix"

	"ttd/emu"
	"ttd/predict"
	"ttd/tracefile"
	"ttd/x86"
)

// DefaultCheckpointEvery is the default number of instructions between
// checkpoints, chosen by measurement: a checkpoint flushes the prediction
// caches, so the working set is logged again after each one. On gzip -9
// of 8 MiB of text the trace density is 0.162 bits/instruction with a
// checkpoint every 10M instructions, 0.057 every 50M and 0.031 every
// 200M; 50M re-simulates in about 0.3 s, and the reader keeps finer
// snapshots of its own for stepping.
const DefaultCheckpointEvery = 50_000_000

// ExecCheckpointCost is what an exec adds to the replay cost of its
// checkpoint interval, in instructions (emu.CheckpointCoster): the
// start-up after it decodes and translates the new program's code and
// faults in its pages, which a re-simulation pays far more for per
// instruction than for a program's steady state. On bash starting
// bash -c "echo" 40 times (1.2e6 instructions each) and then python3,
// the segment of the 40 start-ups took 0.66 s of one-core replay CPU
// against 0.04 s for a segment of as many instructions of python3's
// loop: about 15 ms per start-up, or 1.6e7 of those instructions. Half
// of that is counted: each checkpoint costs trace size (the prediction
// caches start empty, the code is logged again, and the access
// summaries gain an interval), and on that tree 1.6e7 gave 13 more
// checkpoints and a trace of 3.3 MiB where 8e6 gave 6 more and 3.0 MiB
// (2.3 MiB without them). A tree of short programs so gets a checkpoint
// every few execs, where a job of `ttd probe --jobs N` can start,
// instead of one segment that a single job must re-simulate alone; a
// program that never execs gets its checkpoints where it did.
const ExecCheckpointCost = 8_000_000

// Options configure a recording.
type Options struct {
	// Path is the trace file to create.
	Path string
	// CacheBits is log2 of the prediction cache's size in 8-byte words
	// (0 means predict.DefaultBits).
	CacheBits uint
	// CheckpointEvery is the number of instructions between checkpoints
	// (0 means DefaultCheckpointEvery).
	CheckpointEvery uint64
	// EmbedBinaries stores every mapped ELF file in the trace.
	EmbedBinaries bool
	// ChunkSize is the trace's target chunk size (0: tracefile's default).
	ChunkSize int
	// Summaries, when set, computes the access summaries written at the
	// end of the trace (summary.go).
	Summaries Summarizer
	// SummariesPass makes Summaries build them even where the recorder
	// can while recording (summary.go; also TTD_RECSUM=off).
	SummariesPass bool
	// Ring, when positive, keeps only the last Ring bytes of trace,
	// starting at a checkpoint (ring.go).
	Ring int64
	// Tap, when set, sees the run as it is recorded (tap.go).
	Tap Tap
	// Replayable records no reads: the program runs with `ttd run`'s
	// translations, and a replay takes its reads from its own memory
	// (replayable.go). No summaries, ring or tap.
	Replayable bool
}

// Stats describe a finished recording.
type Stats struct {
	Path         string
	Instructions uint64
	Reads        uint64 // memory reads observed
	LoggedReads  uint64 // reads the prediction cache missed
	Syscalls     uint64
	Checkpoints  uint64
	CodeBytes    uint64
	TraceBytes   int64
	// Summaries is the number of access summaries written, SummaryTime
	// the time computing them took, SummaryError why there are none.
	Summaries    int
	SummaryTime  time.Duration
	SummaryError string
	// SummaryInline: the summaries were built while recording
	// (summary.go), not by the summaries pass.
	SummaryInline bool
	// ImageBytes are the bytes of memory images a replayable recording
	// logged (replayable.go).
	ImageBytes uint64
}

// HitRate is the fraction of reads the prediction cache predicted.
func (s Stats) HitRate() float64 {
	if s.Reads == 0 {
		return 1
	}
	return 1 - float64(s.LoggedReads)/float64(s.Reads)
}

// BitsPerInstruction is the trace's density.
func (s Stats) BitsPerInstruction() float64 {
	if s.Instructions == 0 {
		return 0
	}
	return float64(s.TraceBytes) * 8 / float64(s.Instructions)
}

// threadRec is the recorder's per-thread state.
type threadRec struct {
	tid int
	// ThreadCount is its CPU and the count already in the global
	// position.
	ThreadCount
	cache *predict.Cache
	// cache.Reads counts the thread's reads since the last checkpoint;
	// lastLogged is the count at its last logged read.
	lastLogged uint64
	// exited: the thread ended, and its cache is gone (nil).
	exited bool
	// pid is the thread's process.
	pid int
}

// spaceRec is the recorder's view of one address space (a process's, or
// the one a vfork child shares with its parent): the regions the trace
// has announced and the code it holds since the last checkpoint.
type spaceRec struct {
	mm      *emu.MM
	regions []emu.Region
	// gen is mm.Gen() when regions was last brought up to date
	// (synced).
	gen    uint64
	synced bool
	code   map[uint64]*codePage // by page number
	// pid is a process whose address space this is (pidOf).
	pid int
}

// Recorder is the observer that writes the trace.
type Recorder struct {
	opts    Options
	w       *tracefile.Writer
	p       *emu.Process
	threads []*threadRec
	cur     *threadRec // the running thread
	lastCPU *x86.CPU
	lastRec *threadRec

	pos uint64 // global position, up to cur.Seen
	seq uint64
	// allAccesses: an AccessTap sees every access (no CPU.Pred).
	allAccesses bool

	// spaces are the address spaces of the tree, by their memory;
	// lastSpace the one Decoded found last.
	spaces    map[*x86.Memory]*spaceRec
	lastSpace *spaceRec
	scratch   []emu.Region
	dropped   []emu.Range
	modules   map[string]bool
	regs      []byte
	frame     []byte
	sysBuf    []byte // the bytes syscalls wrote (Syscall)
	outBuf    []byte // the bytes output logs
	ranges    []tracefile.MemRange
	lit       []tracefile.MemRange // kernelWrites' results
	pred      []tracefile.Span
	img       []byte   // memImage's record
	pns       []uint64 // imageRange's pages
	cps       *cpStats // TTD_CPSTATS=1 (cpstats.go)
	// stdID are the recording's stdout and stderr (output).
	stdID [2]fileID
	// ringModules are the Module records a ring-buffer window needs.
	ringModules []*tracefile.Module
	// execCost is the replay cost of the execs since the last
	// checkpoint (CheckpointCost).
	execCost uint64
	// sum builds the access summaries while recording (summary.go).
	sum   *summarizer
	stats Stats
	err   error
}

// Record runs cfg's program under the recorder and writes the trace.
// The program's exit status is returned whatever happened to the trace;
// err reports a failure to record.
func Record(cfg emu.Config, opts Options) (emu.ExitStatus, Stats, error) {
	if opts.CacheBits == 0 {
		opts.CacheBits = predict.DefaultBits
	}
	if opts.CacheBits < predict.MinBits || opts.CacheBits > predict.MaxBits {
		return emu.ExitStatus{}, Stats{}, fmt.Errorf("prediction cache size 2^%d words: must be 2^%d to 2^%d", opts.CacheBits, predict.MinBits, predict.MaxBits)
	}
	if opts.CheckpointEvery == 0 {
		opts.CheckpointEvery = DefaultCheckpointEvery
	}
	if opts.Replayable {
		if opts.Ring > 0 || opts.Tap != nil {
			return emu.ExitStatus{}, Stats{}, fmt.Errorf("a replayable recording (--mode replayable) keeps no ring and has no tap")
		}
		// No summaries (a replay from the start could build them),
		// and no cache to check: the smallest, for the threads'
		// read counts.
		opts.Summaries, opts.CacheBits = nil, predict.MinBits
	}
	cwd, _ := os.Getwd()
	if cfg.Dir != "" {
		cwd = cfg.Dir
	}
	feat, err := emu.ResolveCPU(cfg.CPU)
	if err != nil {
		return emu.ExitStatus{}, Stats{}, err
	}
	cfg.CPU = feat.Name()
	hdr := tracefile.Header{
		ProgramPath: cfg.Path,
		Args:        cfg.Args,
		Cwd:         cwd,
		Created:     time.Now().UTC(),
		Recorder:    "ttd record",
		Params: map[string]string{
			"cachebits":       strconv.Itoa(int(opts.CacheBits)),
			"checkpointevery": strconv.FormatUint(opts.CheckpointEvery, 10),
			// How many environment variables the program started
			// with: the export's first line, its execve, shows the
			// count as strace does (syscalls/firstexec.go).
			"envc": strconv.Itoa(len(cfg.Env)),
			// An SSE instruction's fast path that gives up hands the
			// memory operand it read to the exact handler: one read
			// (x86.CodeCache.LegacyReads).
			"fpreads": "once",
			// A logged byte read carries the whole aligned word
			// around it (predict.Cache.ReadWord).
			"bytereads": "word",
			// The guest CPU's level: what the decoder accepts (the
			// reader decodes the same way; CPUID results are logged).
			"cpu": feat.Name(),
			// Every process of the tree is re-simulated: Process
			// records are events of the timeline, ProcessState
			// records follow each checkpoint.
			"processes": "tree",
			// Address-space records are the diff of the regions:
			// a grown heap is an Mmap of its new pages only
			// (regions.go; FORMAT.md).
			"regions": "diff",
		},
	}
	if opts.Replayable {
		// No read is logged: a replay reads its own memory, which the
		// memory images (TagMemImage) and the kernel's writes keep
		// equal to the recording's; it starts at the beginning only.
		hdr.Params["reads"] = "none"
	}
	topts := tracefile.Options{ChunkSize: opts.ChunkSize, Ring: opts.Ring}
	if opts.Ring > 0 && opts.ChunkSize == 0 {
		topts.ChunkSize = ringChunkSize(opts.Ring)
	}
	w, err := tracefile.Create(opts.Path, hdr, topts)
	if err != nil {
		return emu.ExitStatus{}, Stats{}, err
	}
	r := &Recorder{opts: opts, w: w, modules: map[string]bool{}, spaces: map[*x86.Memory]*spaceRec{}}
	r.stats.Path = opts.Path
	r.stdID = [2]fileID{stdFileID(cfg.Stdout, 1), stdFileID(cfg.Stderr, 2)}
	if opts.Summaries != nil && !(opts.SummariesPass || summariesPass) && opts.Ring == 0 && opts.Tap == nil && DebugAccess == nil {
		r.sum = newSummarizer()
	}
	cfg.KeepMoved = r.keepMoved
	cfg.Observer = r
	cfg.CPUObserver = r
	if opts.Tap != nil {
		t := &tapped{Recorder: r, tap: opts.Tap}
		cfg.Observer, cfg.CPUObserver = t, t
		if at, ok := opts.Tap.(AccessTap); ok && at.WantAccesses() {
			r.allAccesses = true
			a := &accessTapped{tapped: *t, at: at, sysPC: map[*emu.Thread]uint64{}}
			cfg.Observer, cfg.CPUObserver = a, a
		}
		opts.Tap.Attach(r)
	}
	cfg.CheckpointEvery = opts.CheckpointEvery
	// The trace re-simulates every process of the tree, on one
	// timeline: each has its prediction caches, its address space and
	// its code, and the Process records say where each one forks,
	// execs and ends.
	cfg.FollowFirst = false
	p, err := emu.NewProcess(cfg)
	if err != nil {
		w.Close()
		os.Remove(opts.Path)
		return emu.ExitStatus{}, Stats{}, err
	}
	r.p = p
	st, runErr := p.Run()
	if runErr == nil {
		r.writeSummaries()
	}
	r.cpStatsEnd()
	if cerr := w.Close(); cerr != nil && r.err == nil {
		r.err = cerr
	}
	if ws := w.Stats(); ws.FileBytes > 0 {
		r.stats.TraceBytes = ws.FileBytes
	}
	if fi, err := os.Stat(opts.Path); err == nil {
		r.stats.TraceBytes = fi.Size()
	}
	r.stats.Instructions = r.pos
	for _, t := range r.threads {
		if !t.exited {
			r.stats.Reads += t.cache.Reads
		}
	}
	if runErr != nil {
		return st, r.stats, runErr
	}
	return st, r.stats, r.err
}

func (r *Recorder) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// rec returns the per-thread state of the thread running on c.
func (r *Recorder) rec(c *x86.CPU) *threadRec {
	if c == r.lastCPU {
		return r.lastRec
	}
	for _, t := range r.threads {
		if t.CPU == c {
			r.lastCPU, r.lastRec = c, t
			return t
		}
	}
	// A CPU replaced by execve: adopt it for the thread that owns it.
	for _, th := range r.p.Machine().Threads() {
		if th.CPU == c {
			for _, t := range r.threads {
				if t.tid == th.Tid {
					if r.cur == t {
						r.position()
					}
					t.Restart(c)
					r.inline(t)
					r.lastCPU, r.lastRec = c, t
					return t
				}
			}
		}
	}
	t := r.newThread(0, c)
	r.lastCPU, r.lastRec = c, t
	return t
}

func (r *Recorder) newThread(tid int, c *x86.CPU) *threadRec {
	t := &threadRec{tid: tid, cache: predict.New(r.opts.CacheBits)}
	t.Restart(c)
	r.threads = append(r.threads, t)
	r.inline(t)
	return t
}

// inline lets t's CPU check the prediction cache itself (x86.CPU.Pred):
// the recorder then sees only the reads the cache misses, which is what
// makes recording cost little more than running. DebugAccess must see
// every access, so it keeps them all on the observer path.
func (r *Recorder) inline(t *threadRec) {
	if DebugAccess == nil && r.sum == nil && !r.allAccesses && !r.opts.Replayable {
		t.CPU.Pred = t.cache
	}
}

func (r *Recorder) thread(t *emu.Thread) *threadRec {
	tr := r.rec(t.CPU)
	if tr.tid == 0 {
		tr.tid = t.Tid
	}
	tr.pid = t.P.PID
	return tr
}

// position brings the global position up to date with the running
// thread's CPU and returns it. Only one thread runs at a time, so the
// running thread's progress is all that is not yet counted.
func (r *Recorder) position() uint64 {
	if t := r.cur; t != nil {
		r.pos = t.Count(r.pos)
	}
	return r.pos
}

func (r *Recorder) keyFrame(kind tracefile.KeyFrameKind, t *threadRec) uint64 {
	pos := r.position()
	r.seq++
	r.w.KeyFrame(kind, t.tid, r.seq, pos)
	return pos
}

// x86.Observer.

// WantInstructions reports false: the recorder needs no per-instruction
// callback, so the interpreter runs its fast loop.
func (r *Recorder) WantInstructions() bool { return DebugInst != nil }

// DebugInst, when set, sees every instruction with its position.
var DebugInst func(pos uint64, c *x86.CPU, in *x86.Inst)

// Instruction is called only for DebugInst.
func (r *Recorder) Instruction(c *x86.CPU, in *x86.Inst) {
	DebugInst(r.rec(c).At(r.pos), c, in)
}

// DebugAccess, when set, sees every memory access with its position (for
// debugging divergences between recording and replay).
var DebugAccess func(pos uint64, addr uint64, size int, val uint64, write bool)

// MemRead logs the read if the thread's prediction cache misses it.
func (r *Recorder) MemRead(c *x86.CPU, addr uint64, size int, val uint64) uint64 {
	if r.opts.Replayable {
		return val // a TLB miss (MemoryBlind): nothing to log
	}
	t := r.rec(c)
	if DebugAccess != nil {
		DebugAccess(t.At(r.pos), addr, size, val, false)
	}
	if r.summarizing() {
		r.sum.mark(addr, size, sumRead)
	}
	if n1 := predict.Split(addr, size); n1 != size {
		lo := val & (1<<(8*uint(n1)) - 1)
		r.read(t, addr, n1, lo)
		r.read(t, addr+uint64(n1), size-n1, val>>(8*uint(n1)))
		return val
	}
	r.read(t, addr, size, val)
	return val
}

func (r *Recorder) read(t *threadRec, addr uint64, size int, val uint64) {
	t.cache.Reads++
	logged, n := val, size
	if size == 1 {
		// A byte read logs the whole aligned word around it (trace
		// parameter bytereads=word).
		var mem uint64
		if t.cache.Predict(addr, 1) != val {
			mem = t.CPU.Mem.Read64(addr &^ 7)
		}
		w, hit := t.cache.ReadWord(addr, 1, val, mem)
		if hit {
			return
		}
		logged, n = w, 8
	} else if t.cache.Read(addr, size, val) {
		return
	}
	r.w.MemRead(t.cache.Reads-t.lastLogged, logged, uint8(n))
	t.lastLogged = t.cache.Reads
	r.stats.LoggedReads++
}

// LoggedReads logs the reads that translated code did not predict
// (x86.ReadLogger): it has entered them into the cache and counted them
// as read does.
func (r *Recorder) LoggedReads(c *x86.CPU, reads []x86.LoggedRead) {
	t := r.rec(c)
	for _, e := range reads {
		if e.Size == 0 {
			// A synchronising instruction's key frame, at the
			// position it had (as position computes it).
			r.pos += e.Reads - t.Seen
			t.Seen = e.Reads
			r.seq++
			kind := tracefile.KeyFrameLocked
			if e.Val == x86.LogFence {
				kind = tracefile.KeyFrameFence
			}
			r.w.KeyFrame(kind, t.tid, r.seq, r.pos)
			continue
		}
		n := e.Reads + 1
		r.w.MemRead(n-t.lastLogged, e.Val, uint8(e.Size))
		t.lastLogged = n
		r.stats.LoggedReads++
	}
}

// minPredicted is the shortest run of kernel-written bytes the
// prediction cache holds that a record leaves out (a Span and the split
// of the bytes around it cost a few bytes of their own).
const minPredicted = 24

// kernelWrites enters the bytes of r.ranges, which a syscall or a signal
// delivery wrote, into t's prediction cache, and returns them as the
// record logs them: the runs the cache did not hold, and the spans it did
// (tracefile.Syscall.Predicted). A signal frame written where the last one
// was, or a stat buffer filled again, costs little then. Ranges that
// overlap are logged whole: the spans are the cache's before any of them.
func (r *Recorder) kernelWrites(t *threadRec) ([]tracefile.MemRange, []tracefile.Span) {
	r.lit, r.pred = r.lit[:0], r.pred[:0]
	if r.opts.Replayable {
		return r.ranges, nil // no cache: every byte
	}
	if len(r.ranges) > 16 || overlap(r.ranges) {
		for _, w := range r.ranges {
			t.cache.Fill(w.Addr, w.Bytes)
		}
		return r.ranges, nil
	}
	for _, w := range r.ranges {
		// Runs of words the cache predicts (pred) or not, merged where
		// a predicted run is too short to leave out.
		start, inPred := 0, false
		emit := func(end int) {
			if start == end {
				return
			}
			if inPred {
				r.pred = append(r.pred, tracefile.Span{Addr: w.Addr + uint64(start), Len: uint64(end - start)})
			} else {
				r.lit = append(r.lit, tracefile.MemRange{Addr: w.Addr + uint64(start), Bytes: w.Bytes[start:end]})
				t.cache.Fill(w.Addr+uint64(start), w.Bytes[start:end])
			}
			start = end
		}
		for i := 0; i < len(w.Bytes); {
			a := w.Addr + uint64(i)
			n := predict.Split(a, min(8, len(w.Bytes)-i))
			p := t.cache.Holds(a, w.Bytes[i:i+n])
			if p != inPred {
				if !p && i-start < minPredicted {
					inPred = false // too short to leave out
				} else {
					emit(i)
					inPred = p
				}
			}
			i += n
		}
		if inPred && len(w.Bytes)-start < minPredicted {
			inPred = false
		}
		emit(len(w.Bytes))
	}
	return r.lit, r.pred
}

// overlap reports whether two of ws share a byte.
func overlap(ws []tracefile.MemRange) bool {
	for i := range ws {
		for j := i + 1; j < len(ws); j++ {
			a, b := ws[i], ws[j]
			if a.Addr < b.Addr+uint64(len(b.Bytes)) && b.Addr < a.Addr+uint64(len(a.Bytes)) {
				return true
			}
		}
	}
	return false
}

// MemWrite keeps the thread's prediction cache up to date.
func (r *Recorder) MemWrite(c *x86.CPU, addr uint64, size int, val uint64) {
	if r.opts.Replayable {
		return
	}
	t := r.rec(c)
	if DebugAccess != nil {
		DebugAccess(t.At(r.pos), addr, size, val, true)
	}
	if r.summarizing() {
		r.sum.mark(addr, size, sumWrite)
	}
	if n1 := predict.Split(addr, size); n1 != size {
		t.cache.Update(addr, n1, val&(1<<(8*uint(n1))-1))
		t.cache.Update(addr+uint64(n1), size-n1, val>>(8*uint(n1)))
		return
	}
	t.cache.Update(addr, size, val)
}

var nonDetKinds = map[string]tracefile.NonDetKind{
	"CPUID": tracefile.NonDetCPUID, "RDTSC": tracefile.NonDetRDTSC, "RDTSCP": tracefile.NonDetRDTSCP,
	"RDRAND": tracefile.NonDetRDRAND, "RDSEED": tracefile.NonDetRDSEED, "XGETBV": tracefile.NonDetXGETBV,
}

// NonDet logs the results of cpuid, rdtsc and friends.
func (r *Recorder) NonDet(c *x86.CPU, in *x86.Inst, vals []uint64) []uint64 {
	t := r.rec(c)
	kind, ok := nonDetKinds[in.Op.String()]
	if !ok {
		kind = tracefile.NonDetOther
	}
	r.w.NonDet(t.tid, kind, vals)
	return vals
}

// Decoded logs the bytes of every block as it is decoded: the replay
// decodes the same blocks in the same order and takes its code from here.
func (r *Recorder) Decoded(c *x86.CPU, b *x86.Block) {
	if r.opts.Replayable {
		// The replay's memory holds the code: the memory images, and
		// the writes of code that made code re-executed.
		return
	}
	if r.summarizing() && b.End > b.PC {
		r.sum.markRange(b.PC, int(b.End-b.PC), sumExec)
	}
	// Blocks overlap (a block runs on past a conditional jump, and
	// another starts at its target): log only the bytes the trace does
	// not already hold since the last checkpoint, with the value they
	// have now, so that rewritten code is logged again.
	start := -1
	var pg *codePage
	sp := r.lastSpace
	if sp == nil || sp.mm.Mem != c.Mem {
		sp = r.spaces[c.Mem]
		if sp == nil {
			r.fail(fmt.Errorf("recording: code decoded in an address space the recorder does not know (at %#x)", b.PC))
			return
		}
		r.lastSpace = sp
	}
	for k, v := range b.Bytes {
		a := b.PC + uint64(k)
		o := a & (x86.PageSize - 1)
		if pg == nil || o == 0 {
			pg = sp.code[a>>x86.PageShift]
			if pg == nil {
				pg = new(codePage)
				sp.code[a>>x86.PageShift] = pg
			}
		}
		if pg.has[o/64]&(1<<(o%64)) != 0 && pg.data[o] == v {
			if start >= 0 {
				r.codeBytes(b.PC+uint64(start), b.Bytes[start:k])
				start = -1
			}
			continue
		}
		pg.has[o/64] |= 1 << (o % 64)
		pg.data[o] = v
		if start < 0 {
			start = k
		}
	}
	if start >= 0 {
		r.codeBytes(b.PC+uint64(start), b.Bytes[start:])
	}
}

func (r *Recorder) codeBytes(addr uint64, b []byte) {
	r.w.CodeBytes(addr, b)
	r.stats.CodeBytes += uint64(len(b))
}

// codePage is what the trace holds of a page's code since the last
// checkpoint: the bytes logged (has) and their values.
type codePage struct {
	has  [x86.PageSize / 64]uint64
	data [x86.PageSize]byte
}

// forgetCode drops what the trace holds of the code in [lo, hi) of an
// address space: the replay maps those pages afresh.
func (sp *spaceRec) forgetCode(lo, hi uint64) {
	if hi-lo > uint64(len(sp.code))*x86.PageSize {
		for pn := range sp.code {
			if pn >= lo>>x86.PageShift && pn < (hi+x86.PageSize-1)>>x86.PageShift {
				delete(sp.code, pn)
			}
		}
		return
	}
	for pn := lo >> x86.PageShift; pn < (hi+x86.PageSize-1)>>x86.PageShift; pn++ {
		delete(sp.code, pn)
	}
}

// space returns the recorder's state of mm, new (nothing announced)
// the first time.
func (r *Recorder) space(mm *emu.MM) *spaceRec {
	sp := r.spaces[mm.Mem]
	if sp == nil || sp.mm != mm {
		sp = &spaceRec{mm: mm, code: map[uint64]*codePage{}}
		r.spaces[mm.Mem] = sp
		r.lastSpace = nil
		if r.opts.Replayable {
			r.wrapSource(sp)
		}
	}
	return sp
}

// Sync writes a key frame before a locked instruction or a fence.
func (r *Recorder) Sync(c *x86.CPU, in *x86.Inst) {
	if r.opts.Replayable {
		// Threads switch only where the trace says: a locked
		// instruction orders nothing more (its translated code in
		// `ttd run`'s mode writes no key frame either).
		return
	}
	kind := tracefile.KeyFrameLocked
	switch in.Op {
	case x86asm.MFENCE, x86asm.LFENCE, x86asm.SFENCE:
		kind = tracefile.KeyFrameFence
	}
	r.keyFrame(kind, r.rec(c))
}

// emu.Observer.

// Syscall logs a completed syscall with the memory the kernel wrote.
func (r *Recorder) Syscall(th *emu.Thread, ev *emu.SyscallEvent) {
	t := r.thread(th)
	r.keyFrame(tracefile.KeyFrameSyscall, t)
	r.stats.Syscalls++
	r.ranges = r.ranges[:0]
	r.sysBuf = r.sysBuf[:0]
	for _, w := range ev.Writes {
		// The writer copies the bytes, so one buffer serves every
		// syscall. When it grows, the ranges already taken keep the
		// old array.
		start := len(r.sysBuf)
		r.sysBuf = slices.Grow(r.sysBuf, int(w.Len))[:start+int(w.Len)]
		b := r.sysBuf[start:]
		if err := th.P.MM.Mem.Peek(w.Addr, b); err != nil {
			r.fail(fmt.Errorf("recording %s: reading the %d bytes it wrote at %#x: %w", ev.Name, w.Len, w.Addr, err))
			continue
		}
		if DebugAccess != nil {
			for i := 0; i < len(b); i += 8 {
				n := min(8, len(b)-i)
				var v uint64
				for k := 0; k < n; k++ {
					v |= uint64(b[i+k]) << (8 * k)
				}
				DebugAccess(r.pos, w.Addr+uint64(i), n, v, true)
			}
		}
		r.ranges = append(r.ranges, tracefile.MemRange{Addr: w.Addr, Bytes: b})
	}
	r.markKernelWrites()
	lit, pred := r.kernelWrites(t)
	r.w.Syscall(&tracefile.Syscall{Tid: t.tid, Nr: ev.Nr, Args: ev.Args, Result: int64(ev.Ret), Writes: lit, Predicted: pred})

	c := th.CPU
	r.output(th, ev)
	if changesRegisters(ev.Nr) || c.RIP != c.R[x86.RCX] {
		// More than rax changed (sigreturn, arch_prctl, a restart).
		r.threadRegs(t)
	}
	r.syncRegions(r.space(th.P.MM))
}

// Opaque record tags the recorder writes.
const (
	// TagRegs is a thread's full register state (4-byte tid, then the
	// x86 state blob) after a syscall that changed more than rax, or at
	// a thread's start.
	TagRegs = 1
	// TagOutput is data a write to file descriptor 1 or 2 sent out
	// (4-byte fd, then the bytes), so a replay can show it.
	TagOutput = 2
	// TagFinalRegs is a thread's register state when its process ended
	// (4-byte tid, then the x86 state blob), written before the
	// process's exited record: ttd replay --verify compares it.
	TagFinalRegs = 3
)

// changesRegisters reports syscalls whose effect on the registers goes
// beyond the result in rax.
func changesRegisters(nr int) bool {
	switch nr {
	case 15, 158, 59, 322: // rt_sigreturn, arch_prctl, execve, execveat
		return true
	}
	return false
}

// output logs what write and writev sent to stdout and stderr, and what
// sendfile, splice, tee and copy_file_range moved there: the
// recording's own (a process of the tree whose fd 1 is a pipe to
// another writes to that one, not to the output; so does a shell's
// `echo x > f`, which points its own fd 1 at f for a moment).
func (r *Recorder) output(th *emu.Thread, ev *emu.SyscallEvent) {
	fd, ok := outputFD(ev.Nr, &ev.Args)
	if !ok || (fd != 1 && fd != 2) || int64(ev.Ret) <= 0 {
		return
	}
	if fd, ok = r.stdio(th.P, int(fd)); !ok {
		return
	}
	n := ev.Ret
	if r.opts.Replayable && (ev.Nr == 1 || ev.Nr == 20) {
		r.outputRef(fd)
		return
	}
	// One buffer serves every write (the writer copies the bytes): a
	// fresh one per write was fresh memory for the kernel to zero, as
	// much as the program printed (xz -c, sort: all of their output).
	b := append(r.outBuf[:0], 0, 0, 0, 0)
	mem := th.P.MM.Mem
	switch ev.Nr {
	case 1: // write
		b = slices.Grow(b, int(n))[:4+n]
		if mem.Peek(ev.Args[1], b[4:]) != nil {
			return
		}
	case 20: // writev
		b = slices.Grow(b, int(n))
		var iov [16]byte
		for i := uint64(0); i < ev.Args[2] && uint64(len(b)-4) < n; i++ {
			if mem.Peek(ev.Args[1]+16*i, iov[:]) != nil {
				return
			}
			base, l := binary.LittleEndian.Uint64(iov[:]), binary.LittleEndian.Uint64(iov[8:])
			l = min(l, n-uint64(len(b)-4))
			k := len(b)
			b = b[:k+int(l)]
			if mem.Peek(base, b[k:]) != nil {
				return
			}
		}
	default:
		if ev.Moved == nil {
			return
		}
		b = append(b, ev.Moved...)
	}
	if cap(b) <= maxOutBuf {
		r.outBuf = b[:0]
	}
	binary.LittleEndian.PutUint32(b, uint32(fd))
	r.w.Opaque(TagOutput, b)
}

// maxOutBuf is the largest output buffer the recorder keeps for the next
// write (one larger is left to the collector).
const maxOutBuf = 4 << 20

// outputFD returns the descriptor syscall nr writes to, for the calls
// whose bytes output logs.
func outputFD(nr int, args *[6]uint64) (uint64, bool) {
	switch nr {
	case 1, 20, 40: // write, writev, sendfile
		return args[0], true
	case 275, 326: // splice, copy_file_range
		return args[2], true
	case 276: // tee
		return args[1], true
	}
	return 0, false
}

// keepMoved is emu's Config.KeepMoved: the bytes sendfile and its kin
// move to the recording's stdout or stderr are logged as output.
func (r *Recorder) keepMoved(p *emu.Process, fd int) bool {
	if fd != 1 && fd != 2 {
		return false
	}
	_, ok := r.stdio(p, fd)
	return ok
}

// stdio says whether guest descriptor fd of p is the recording's
// stdout (1) or stderr (2), and which.
func (r *Recorder) stdio(p *emu.Process, fd int) (uint64, bool) {
	h, ok := p.HostFD(fd)
	if !ok {
		return 0, false
	}
	var st unix.Stat_t
	if unix.Fstat(h, &st) != nil {
		return 0, false
	}
	id := fileID{st.Dev, st.Ino}
	switch {
	case id == r.stdID[fd-1]:
		return uint64(fd), true
	case id == r.stdID[2-fd]:
		return uint64(3 - fd), true
	}
	return 0, false
}

// fileID identifies an open file (a pipe, a terminal, a regular file).
type fileID struct{ dev, ino uint64 }

// stdFileID identifies f (the host's stdout or stderr when nil).
func stdFileID(f *os.File, fd int) fileID {
	h := fd
	if f != nil {
		h = int(f.Fd())
	}
	var st unix.Stat_t
	if unix.Fstat(h, &st) != nil {
		return fileID{^uint64(0), uint64(fd)}
	}
	return fileID{st.Dev, st.Ino}
}

func (r *Recorder) threadRegs(t *threadRec) {
	b := binary.LittleEndian.AppendUint32(r.regs[:0], uint32(t.tid))
	b = t.CPU.MarshalState(b)
	r.regs = b
	r.w.Opaque(TagRegs, b)
}

// syncRegions logs the changes to address space sp since the last call
// as Munmap, Mmap and Mprotect records (the replay mirrors the layout and
// protections of the running thread's address space; page contents come
// through the prediction cache). Only what the address space discarded
// is unmapped (regions.go): a heap grown by brk is one Mmap of the new
// pages, not the old heap unmapped and mapped again. A new address space
// (execve) starts with no regions in the replay.
func (r *Recorder) syncRegions(sp *spaceRec) {
	mm := sp.mm
	if sp.synced && mm.Gen() == sp.gen {
		return // most syscalls change no region
	}
	sp.synced, sp.gen = true, mm.Gen()
	cur := mm.Regions(r.scratch[:0])
	old := sp.regions
	r.dropped = mm.Dropped(r.dropped[:0])
	if len(r.dropped) > 0 || !slices.Equal(old, cur) {
		w := regionWriter{r: r, sp: sp}
		diffRegions(old, cur, r.dropped, &w)
		w.flush()
	}
	sp.regions, r.scratch = cur, old[:0]
}

func (r *Recorder) mmap(g emu.Region) {
	m := tracefile.Mmap{Addr: g.Start, Len: g.End - g.Start, Prot: g.Prot, Path: []byte(g.Name)}
	if g.Obj != 0 && r.replayable() {
		// Its replay shares the pages (replayable.go).
		m.Flags, m.Object, m.Offset = mapShared, g.Obj, g.Off
		if !g.File {
			m.Flags |= mapAnonymous
		}
	}
	r.w.Mmap(&m)
}

// Signal logs a signal delivery or a fatal signal.
func (r *Recorder) Signal(th *emu.Thread, ev *emu.SignalEvent) {
	t := r.thread(th)
	r.keyFrame(tracefile.KeyFrameSignal, t)
	s := &tracefile.Signal{Tid: t.tid, Signo: int(ev.Info.Signo), Code: int(ev.Info.Code), Addr: ev.Info.Addr, FrameAddr: ev.Frame}
	if ev.Ptrace {
		// A ptrace-stop or a tracer's registers: signal 0 (FORMAT.md).
		*s = tracefile.Signal{Tid: t.tid, Regs: th.CPU.MarshalState(r.regs[:0])}
		r.regs = s.Regs
	}
	if ev.Handler != 0 {
		// Log what delivery wrote, the frame and the fxsave area, and
		// nothing else: the rest of the stack did not change. The
		// writer copies the bytes: the buffer is reused.
		const n = emu.SigFrameBytes + emu.SigFPStateBytes
		if cap(r.frame) < n {
			r.frame = make([]byte, n)
		}
		frame, fp := r.frame[:emu.SigFrameBytes], r.frame[emu.SigFrameBytes:n]
		if th.P.MM.Mem.Peek(ev.Frame, frame) == nil && th.P.MM.Mem.Peek(ev.FPState, fp) == nil {
			r.ranges = append(r.ranges[:0], tracefile.MemRange{Addr: ev.Frame, Bytes: frame}, tracefile.MemRange{Addr: ev.FPState, Bytes: fp})
			r.markKernelWrites()
			s.Writes, s.Predicted = r.kernelWrites(t)
		}
		r.regs = th.CPU.MarshalState(r.regs[:0])
		s.Regs = r.regs
	}
	r.w.Signal(s)
}

// Mmap logs a module record for every ELF file mapped at offset 0.
func (r *Recorder) Mmap(th *emu.Thread, ev emu.MmapEvent) {
	if ev.Path == "" || ev.Offset != 0 || r.modules[ev.Path] {
		return
	}
	r.modules[ev.Path] = true
	m := &tracefile.Module{Path: []byte(ev.Path), LoadAddr: ev.Addr, Size: ev.Len}
	if f, err := elf.Open(ev.Path); err == nil {
		m.BuildID = buildID(f)
		f.Close()
	} else {
		return // not an ELF file
	}
	if r.opts.EmbedBinaries {
		if b, err := os.ReadFile(ev.Path); err == nil {
			m.Embedded = b
		}
	}
	r.w.Module(m)
	r.keepModule(m)
}

func buildID(f *elf.File) []byte {
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		b, err := s.Data()
		if err != nil {
			continue
		}
		for len(b) >= 12 {
			namesz := int(f.ByteOrder.Uint32(b))
			descsz := int(f.ByteOrder.Uint32(b[4:]))
			typ := f.ByteOrder.Uint32(b[8:])
			nameEnd := 12 + (namesz+3)&^3
			descEnd := nameEnd + (descsz+3)&^3
			if descEnd > len(b) || nameEnd > len(b) {
				break
			}
			if typ == 3 && namesz == 4 && string(b[12:15]) == "GNU" {
				return append([]byte(nil), b[nameEnd:nameEnd+descsz]...)
			}
			b = b[descEnd:]
		}
	}
	return nil
}

// ThreadStart logs a new thread; the first one also gets the initial
// checkpoint and address-space snapshot.
func (r *Recorder) ThreadStart(th *emu.Thread) {
	t := r.thread(th)
	t.tid = th.Tid
	parent := 0
	if r.cur != nil {
		parent = r.cur.tid
	}
	if len(r.threads) == 1 && r.seq == 0 {
		p := th.P
		r.w.Process(&tracefile.Process{Event: tracefile.ProcessStarted, Pid: p.PID, Ppid: p.Ppid(),
			Path: p.Exe(), Argv: p.Argv()})
		r.syncRegions(r.space(p.MM))
		r.w.ThreadStart(t.tid, 0)
		r.cur = t
		r.checkpoint()
		return
	}
	r.keyFrame(tracefile.KeyFrameThreadStart, t)
	r.w.ThreadStart(t.tid, parent)
	r.threadRegs(t)
	r.pendingWrites(th)
}

// ThreadExit logs the end of a thread.
func (r *Recorder) ThreadExit(th *emu.Thread, code int) {
	t := r.thread(th)
	if t.exited {
		return
	}
	r.keyFrame(tracefile.KeyFrameThreadExit, t)
	r.w.ThreadExit(t.tid, code)
	// Its 2 MiB cache goes now: a program that starts and joins threads
	// all day must not make the recorder grow. The record itself stays
	// until the next checkpoint, which may still list the thread (after
	// exit_group, every thread is reported ended before the last one).
	r.stats.Reads += t.cache.Reads
	t.CPU.DropPred()
	t.cache.Release()
	t.cache, t.exited = nil, true
}

// Switch logs the scheduler's decision to run another thread.
func (r *Recorder) Switch(th *emu.Thread) {
	r.position()
	t := r.thread(th)
	t.Restart(t.CPU)
	r.cur = t
	r.keyFrame(tracefile.KeyFrameThreadSwitch, t)
}

// Checkpoint writes every thread's registers and resets the prediction
// caches and the code cache, so re-simulation can start here.
func (r *Recorder) Checkpoint(p *emu.Process) { r.checkpoint() }

func (r *Recorder) checkpoint() {
	r.position()
	// (An interval with execs may end early: its checkpoint need not
	// begin a chunk.)
	inChunk := r.execCost > 0
	r.execCost = 0
	if r.sum != nil {
		r.sum.cut(r.pos)
	}
	r.seq++
	cp := &tracefile.Checkpoint{Position: r.pos, Seq: r.seq}
	if r.cur != nil {
		cp.CurrentTid = r.cur.tid
	}
	r.regs = r.regs[:0]
	m := r.p.Machine()
	// ended are the threads listed that already ended (exit_group
	// reports every thread's end before the process's): the replay
	// drops them here, and no ProcessState lists them.
	// tids are the ids the trace knows the threads by.
	ended, tids := map[int]bool{}, map[*emu.Thread]int{}
	for _, th := range m.Threads() {
		t := r.thread(th)
		tids[th] = t.tid
		if t.exited {
			ended[t.tid] = true
		}
		start := len(r.regs)
		r.regs = th.CPU.MarshalState(r.regs)
		cp.Threads = append(cp.Threads, tracefile.ThreadState{Tid: t.tid, ICount: th.CPU.Icount, Regs: r.regs[start:]})
	}
	live := r.threads[:0]
	for _, t := range r.threads {
		if t.exited {
			continue
		}
		t.cache.Flush()
		r.stats.Reads += t.cache.Reads
		t.cache.Reads, t.lastLogged = 0, 0
		live = append(live, t)
	}
	clear(r.threads[len(live):])
	r.threads = live
	if r.lastRec != nil && r.lastRec.exited {
		r.lastCPU, r.lastRec = nil, nil
	}
	// Re-simulation from here has none of the code before: the code
	// cache reports each block again when it next runs (its decoding
	// and translation stay), and Decoded logs its bytes.
	procs := r.liveProcesses()
	spaces := map[*x86.Memory]*spaceRec{}
	for _, p := range procs {
		sp := r.space(p.MM)
		if spaces[p.MM.Mem] == nil {
			// (Its regions are those the trace announced: every
			// syscall that changes them is followed by its Mmap
			// records, which apply to its thread's address space.)
			// A replayable recording logs no code: its translations
			// stay linked.
			if !r.opts.Replayable {
				p.MM.Code.NewEpoch()
			}
			clear(sp.code)
			spaces[p.MM.Mem] = sp
		}
	}
	// The address spaces of processes that ended or execed are gone.
	r.spaces, r.lastSpace = spaces, nil
	if inChunk {
		r.w.CheckpointInChunk(cp)
	} else {
		r.w.Checkpoint(cp)
	}
	// Re-announce the processes and their address spaces so
	// re-simulation can start here.
	owner := map[*emu.MM]int{}
	for _, p := range procs {
		ps := &tracefile.ProcessState{Pid: p.PID, Ppid: p.Ppid(), SharesWith: owner[p.MM]}
		for _, th := range p.Threads() {
			if tid, ok := tids[th]; ok && !ended[tid] {
				ps.Tids = append(ps.Tids, tid)
			}
		}
		r.w.ProcessState(ps)
		if ps.SharesWith != 0 {
			continue
		}
		owner[p.MM] = p.PID
		for _, g := range r.spaces[p.MM.Mem].regions {
			r.mmap(g)
		}
	}
	r.reannounceModules()
	r.memHashes(procs)
	if cpStatsOn {
		var mems []*x86.Memory
		for mem := range r.spaces {
			mems = append(mems, mem)
		}
		r.cpStatsAt(mems)
	}
	r.stats.Checkpoints++
	if err := r.w.Err(); err != nil {
		r.fail(err)
	}
}

// CheckpointCost implements emu.CheckpointCoster: the execs since the
// last checkpoint bring the next one forward.
func (r *Recorder) CheckpointCost() uint64 { return r.execCost }

// liveProcesses returns the processes of the tree that have threads, in
// creation order.
func (r *Recorder) liveProcesses() []*emu.Process {
	var out []*emu.Process
	for _, p := range r.p.Machine().Processes() {
		if len(p.Threads()) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// ProcessStart logs the start of a process of the tree. A child with an
// address space of its own starts with a copy of its parent's: the
// regions the trace announced and the code it holds (the replay forks
// its own copy at this record).
func (r *Recorder) ProcessStart(child *emu.Process, parent *emu.Thread) {
	r.stopSummarizing()
	psp := r.space(parent.P.MM)
	r.syncRegions(psp)
	if child.MM != parent.P.MM {
		csp := r.space(child.MM)
		csp.regions = slices.Clone(psp.regions)
		csp.synced, csp.gen = true, child.MM.Gen()
		for pn, pg := range psp.code {
			c := *pg
			csp.code[pn] = &c
		}
	}
	r.w.Process(&tracefile.Process{Event: tracefile.ProcessStarted, Pid: child.PID, Ppid: child.Ppid(),
		Tid: parent.Tid, Position: r.position(), Flags: child.CloneFlags(), Argv: child.Argv()})
}

// ProcessExec logs an exec of any process of the tree: the replay gives
// the process an empty address space here, which the execve's Mmap
// records fill.
func (r *Recorder) ProcessExec(p *emu.Process) {
	r.stopSummarizing()
	tid := 0
	if ts := p.Threads(); len(ts) > 0 {
		tid = ts[0].Tid
	}
	if r.cur != nil && r.cur.pid == p.PID {
		tid = r.cur.tid // the execing thread
	}
	r.w.Process(&tracefile.Process{Event: tracefile.ProcessExeced, Pid: p.PID, Tid: tid, Position: r.position(),
		Path: p.Exe(), Argv: p.Argv(), Envc: p.Envc() + 1})
	r.execCost += ExecCheckpointCost
	if tid != p.PID && r.cur != nil && r.cur.tid == tid {
		// A thread other than the leader execed: it takes the leader's
		// tid (the record says so; the leader's exit came before).
		live := r.threads[:0]
		for _, t := range r.threads {
			if t.tid != p.PID || t == r.cur {
				live = append(live, t)
			}
		}
		clear(r.threads[len(live):])
		r.threads = live
		r.cur.tid = p.PID
		r.lastCPU, r.lastRec = nil, nil
	}
	if ts := p.Threads(); len(ts) == 1 && r.cur != nil && r.cur.pid == p.PID && r.cur.CPU != ts[0].CPU {
		// The execing thread runs on a new CPU (its count goes on):
		// adopt it now. rec would adopt it at its first use, by tid,
		// but a Tap asks before emu gives the thread the leader's tid,
		// and a record of its own would take the CPU.
		r.position()
		r.cur.Restart(ts[0].CPU)
		r.inline(r.cur)
		r.lastCPU, r.lastRec = nil, nil
	}
	r.pruneSpaces(nil)
}

// pruneSpaces forgets the address spaces no live process uses any more
// (but gone, which is ending): a shell forking all day must not make
// the recorder grow by a copy of its code map per child.
func (r *Recorder) pruneSpaces(gone *emu.Process) {
	used := map[*x86.Memory]bool{}
	for _, p := range r.liveProcesses() {
		if p != gone {
			used[p.MM.Mem] = true
		}
	}
	for mem := range r.spaces {
		if !used[mem] {
			delete(r.spaces, mem)
		}
	}
	r.lastSpace = nil
}

// ProcessEnd logs the end of a process other than the first: the final
// registers of its threads (for ttd replay --verify), then the record.
// Threads still running (a process killed by another) end with it.
func (r *Recorder) ProcessEnd(p *emu.Process, st emu.ExitStatus) {
	e := exitRecord(st, r.position())
	r.endThreads(p.PID)
	r.w.Process(&tracefile.Process{Event: tracefile.ProcessExited, Pid: p.PID, Position: e.Position, Exit: *e})
	r.pruneSpaces(p)
}

// endThreads writes the final registers of process pid's threads the
// trace still knows, and ends those that had not ended.
func (r *Recorder) endThreads(pid int) {
	for _, t := range r.threads {
		if t.pid != pid {
			continue
		}
		b := binary.LittleEndian.AppendUint32(r.regs[:0], uint32(t.tid))
		b = t.CPU.MarshalState(b)
		r.regs = b
		r.w.Opaque(TagFinalRegs, b)
		if !t.exited {
			r.stats.Reads += t.cache.Reads
			t.CPU.DropPred()
			t.cache.Release()
			t.cache, t.exited = nil, true
		}
	}
}

// exitRecord describes st at position pos.
func exitRecord(st emu.ExitStatus, pos uint64) *tracefile.Exit {
	e := &tracefile.Exit{Position: pos}
	switch {
	case st.Signal == 0:
		e.Kind, e.Code = tracefile.ExitExited, st.Code
	case st.Fault:
		e.Kind, e.Signo, e.FaultAddr = tracefile.ExitCrashed, int(st.Signal), st.Addr
	default:
		e.Kind, e.Signo = tracefile.ExitKilled, int(st.Signal)
	}
	return e
}

// ProcessExit logs how the process ended.
func (r *Recorder) ProcessExit(p *emu.Process, st emu.ExitStatus) {
	// A last checkpoint lets ttd replay --verify check the final state.
	r.checkpoint()
	e := exitRecord(st, r.position())
	tid := 0
	if r.cur != nil {
		tid = r.cur.tid
	}
	r.w.Process(&tracefile.Process{Event: tracefile.ProcessExited, Pid: p.PID, Tid: tid, Position: e.Position, Exit: *e})
	r.w.Exit(e)
}

// DefaultPath returns <basename>.ttd in dir, or <basename>-N.ttd when
// that exists: a recording never overwrites a file.
func DefaultPath(dir, prog string) string {
	base := prog
	for i := len(base) - 1; i >= 0; i-- {
		if base[i] == '/' {
			base = base[i+1:]
			break
		}
	}
	if base == "" {
		base = "trace"
	}
	p := dir + "/" + base + ".ttd"
	for n := 2; ; n++ {
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			return p
		}
		p = dir + "/" + base + "-" + strconv.Itoa(n) + ".ttd"
	}
}
