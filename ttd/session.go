package ttd

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"ttd/symbols"

	"ttd/reader"
	"ttd/tracefile"
	"ttd/x86"
)

// Options configure a Session.
type Options struct {
	// Pid is the process of a recorded tree whose memory the session
	// shows and searches (reader.Trace.SetFocus); 0 is the first.
	Pid int
	// Workers re-simulate segments in parallel to build the access
	// summaries of a trace that has none (0: one per CPU).
	Workers int
	// FineEvery is the distance in instructions between the snapshots
	// the session keeps in the segments the user visits (0:
	// DefaultFineEvery). Stepping backwards re-simulates at most this.
	FineEvery uint64
	// SnapshotBytes bounds the memory those snapshots take (0:
	// DefaultSnapshotBytes).
	SnapshotBytes int64
	// MicroEvery is the grid of the few extra snapshots the session
	// takes just before the positions it seeks to (0: DefaultMicroEvery),
	// so that the backward steps that usually follow re-simulate less.
	MicroEvery uint64
	// Progress, when set, is told about the summaries' build.
	Progress func(done, total int)
	// LazyIndex loads (or builds) the access summaries when a search
	// first needs them, not at open: a trace that logs no reads and has
	// no TRACE.sums yet opens in the time of a replay to the start, not
	// of the summaries' build (ttd query --at without a search).
	LazyIndex bool
}

// Defaults of Options.
const (
	DefaultFineEvery     = 1_000_000
	DefaultSnapshotBytes = 512 << 20
	DefaultMicroEvery    = 1 << 13
	maxMicro             = 16
	// microLadder is the number of micro snapshots a seek leaves.
	microLadder = 3
)

// Session is a debugging session on a trace: a current position, the
// state of every thread there, and travel in both directions (iDNA's
// Table 2). Breakpoints belong to the session, never to a CPU; a DAP or
// gdb server drives a Session. A Session is used by one goroutine at a
// time.
type Session struct {
	path string
	tr   *reader.Trace
	ix   *Index
	cps  []reader.Checkpoint
	end  uint64
	opts Options

	// pos is the current position; cur is a tracking replay, at pos
	// unless a search moved it (sync brings it back).
	pos    uint64
	cur    *reader.Replay
	curSeg int

	fine      map[int]*fineList
	fineBytes int64
	clock     uint64
	// micro are snapshots between the fine ones, with their tracking
	// window, most recent last.
	micro []microSnap
	// ex gathers the code cur's window executes (execwin.go).
	ex execWindow

	bps    []Breakpoint
	nextBP int
	// StopOnSignal makes Continue and ReverseContinue stop at signal
	// deliveries (on by default).
	StopOnSignal bool
	// interrupt, when set, is polled during searches; an error stops
	// the search (see SetInterrupt).
	interrupt func() error

	syms     Symbolizer
	symsErr  error
	binaries map[string]string // see SetBinaries
	mods     []reader.ModuleRef
	modsOK   bool
	// imgs are a tree's program images and imgSyms their symbol tables
	// (images.go).
	imgs    *imageIndex
	imgsErr error
	imgsOK  bool
	imgSyms map[string]symsResult
	// imgCache shares modules between the tables.
	imgCache *symbols.ImageCache
}

// fineList holds a segment's snapshots, every FineEvery instructions
// from its start, contiguous: snaps[j] is at start+j*FineEvery and
// deltas[j] is what the window [snaps[j], snaps[j+1]) (the last one: to
// the segment's end) learned about memory.
type fineList struct {
	snaps  []*reader.Snapshot
	deltas []*reader.Delta
	// exec[j] lists the blocks window j executed, sorted (nil:
	// unknown; execwin.go).
	exec  [][]codeRange
	used  uint64
	bytes int64
}

type microSnap struct {
	seg  int
	snap *reader.Snapshot
}

// Open opens a trace for debugging with default options.
func Open(path string) (*Session, error) { return OpenWith(path, Options{}) }

// OpenWith opens a trace for debugging. It loads the trace's access
// summaries, or builds them in memory when the trace has none
// (re-simulating the whole trace in parallel).
func OpenWith(path string, opts Options) (*Session, error) {
	if opts.FineEvery == 0 {
		opts.FineEvery = DefaultFineEvery
	}
	if opts.SnapshotBytes == 0 {
		opts.SnapshotBytes = DefaultSnapshotBytes
	}
	if opts.MicroEvery == 0 {
		opts.MicroEvery = DefaultMicroEvery
	}
	tr, err := reader.Open(path)
	if err != nil {
		return nil, err
	}
	if err := tr.SetFocus(opts.Pid); err != nil {
		tr.Close()
		return nil, err
	}
	s := &Session{path: path, tr: tr, end: tr.End(), opts: opts, fine: map[int]*fineList{}, StopOnSignal: true,
		imgCache: &symbols.ImageCache{}}
	if opts.LazyIndex {
		s.cps, err = tr.Checkpoints()
	} else if err = s.loadIndex(); err == nil {
		s.cps = s.ix.Checkpoints
	}
	if err != nil {
		tr.Close()
		return nil, err
	}
	if err := s.seekCur(0); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// index returns the session's index, loading it first (LazyIndex).
func (s *Session) index() (*Index, error) {
	if s.ix == nil {
		if err := s.loadIndex(); err != nil {
			return nil, err
		}
	}
	return s.ix, nil
}

func (s *Session) loadIndex() error {
	ix, err := loadIndex(s.tr, s.opts.Workers, s.opts.Progress)
	if err != nil {
		return err
	}
	s.ix = ix
	return nil
}

// Close releases the trace and the index.
func (s *Session) Close() error {
	if s.ix != nil {
		s.ix.Close()
	}
	return s.tr.Close()
}

// SetInterrupt makes the searches of Continue, Search, StepThread and
// the Find queries poll check between stretches of re-simulation (at
// most FineEvery instructions apart): when it returns an error, the
// search stops and returns it, and the current position is unchanged.
// nil removes the check.
func (s *Session) SetInterrupt(check func() error) { s.interrupt = check }

func (s *Session) interrupted() error {
	if s.interrupt == nil {
		return nil
	}
	return s.interrupt()
}

// Trace is the re-simulation layer under the session.
func (s *Session) Trace() *reader.Trace { return s.tr }

// Index is the trace's index.
//
// With LazyIndex, it loads the index first, and is nil when that fails.
func (s *Session) Index() *Index {
	ix, _ := s.index()
	return ix
}

// Position is the current position.
func (s *Session) Position() uint64 { return s.pos }

// End is the last position of the trace (after the last instruction).
func (s *Session) End() uint64 { return s.end }

// Exit is how the program ended (nil for a trace cut short).
func (s *Session) Exit() *tracefile.Exit {
	if s.tr.Summary.HasExit {
		e := s.tr.Summary.Exit
		return &e
	}
	return nil
}

// Pid is the id of the recorded program's process (the first of the
// trace's process tree), or 0 when the trace names none.
func (s *Session) Pid() int {
	procs, err := s.tr.File().Processes()
	if err != nil || len(procs) == 0 {
		return 0
	}
	return procs[0].Pid
}

func (s *Session) segOf(pos uint64) int { return reader.CheckpointAt(s.cps, pos) }

func (s *Session) segEnd(k int) uint64 { return segmentEnd(s.cps, k, s.end) }

// nextBoundary is the first window boundary after pos in segment k.
func (s *Session) nextBoundary(k int, pos uint64) uint64 {
	start, end := s.cps[k].Position, s.segEnd(k)
	b := start + ((pos-start)/s.opts.FineEvery+1)*s.opts.FineEvery
	return min(b, end)
}

func (s *Session) fineFor(k int) *fineList {
	fl := s.fine[k]
	if fl == nil {
		fl = &fineList{}
		s.fine[k] = fl
	}
	s.clock++
	fl.used = s.clock
	return fl
}

func (s *Session) addFine(fl *fineList, n int) {
	fl.bytes += int64(n)
	s.fineBytes += int64(n)
	for s.fineBytes > s.opts.SnapshotBytes && len(s.fine) > 1 {
		victim, vk := (*fineList)(nil), -1
		for k, f := range s.fine {
			if k == s.curSeg || f == fl {
				continue
			}
			if victim == nil || f.used < victim.used {
				victim, vk = f, k
			}
		}
		if victim == nil {
			return
		}
		s.fineBytes -= victim.bytes
		delete(s.fine, vk)
		// A micro snapshot's window needs its segment's deltas.
		kept := s.micro[:0]
		for _, m := range s.micro {
			if m.seg != vk {
				kept = append(kept, m)
			}
		}
		s.micro = kept
	}
}

// seekCur brings cur to position p (at most the end), from the closest
// start: cur itself, a snapshot of p's segment, or its checkpoint.
func (s *Session) seekCur(p uint64) error {
	p = min(p, s.end)
	k := s.segOf(p)
	var best uint64
	useCur := s.cur != nil && s.cur.Err() == nil && s.cur.Position() <= p
	if useCur {
		best = s.cur.Position()
	}
	var snap *reader.Snapshot
	if fl := s.fine[k]; fl != nil {
		j := sort.Search(len(fl.snaps), func(j int) bool { return fl.snaps[j].Position() > p }) - 1
		if j >= 0 && (!useCur || fl.snaps[j].Position() > best) {
			snap, useCur, best = fl.snaps[j], false, fl.snaps[j].Position()
		}
	}
	mi := -1
	for i, m := range s.micro {
		if m.seg == k && m.snap.Position() <= p && (mi < 0 || m.snap.Position() > s.micro[mi].snap.Position()) {
			mi = i
		}
	}
	if mi >= 0 && (!useCur && snap == nil || s.micro[mi].snap.Position() > best) {
		m := s.micro[mi]
		snap, useCur, best = m.snap, false, m.snap.Position()
		// Most recently used last.
		s.micro = append(append(s.micro[:mi:mi], s.micro[mi+1:]...), m)
	}
	switch {
	case snap != nil:
		r, err := s.tr.ResumeInto(snap, s.cur)
		if err != nil {
			return err
		}
		r.Track() // no-op for a micro snapshot, which carries its window
		s.cur, s.curSeg = r, k
		s.fineFor(k)
	case !useCur || s.cps[k].Position > best:
		r, err := s.tr.NewReplayAt(s.cps[k])
		if err != nil {
			return err
		}
		r.Track()
		s.cur, s.curSeg = r, k
		if fl := s.fineFor(k); len(fl.snaps) == 0 {
			sn := r.Snapshot()
			fl.snaps = append(fl.snaps, sn)
			s.addFine(fl, sn.Bytes())
		}
	}
	// Leave micro snapshots on the last microLadder points of the
	// MicroEvery grid before p: stepping back from p, the usual next
	// move, then re-simulates at most MicroEvery, and so does each of
	// the steps that follow it back over the next few grid points.
	if p > 0 && p-s.cur.Position() > s.opts.MicroEvery {
		start := s.cps[k].Position
		top := start + (p-1-start)/s.opts.MicroEvery*s.opts.MicroEvery
		for i := uint64(microLadder); i > 0; i-- {
			d := (i - 1) * s.opts.MicroEvery
			if d > top-start {
				continue
			}
			m := top - d
			if m <= s.cur.Position() || (m-start)%s.opts.FineEvery == 0 || s.hasMicro(k, m) {
				continue
			}
			if err := s.advance(m); err != nil {
				return err
			}
			if s.cur.Position() == m && s.curSeg == k {
				s.addMicro(k, s.cur.Snapshot())
			}
		}
	}
	return s.advance(p)
}

func (s *Session) hasMicro(k int, pos uint64) bool {
	for _, m := range s.micro {
		if m.seg == k && m.snap.Position() == pos {
			return true
		}
	}
	return false
}

// advance runs cur forward to p, cutting tracking windows and taking
// snapshots at window boundaries.
func (s *Session) advance(p uint64) error {
	for s.cur.Position() < p {
		done, err := s.advanceWindow(p)
		if err != nil || done {
			return err
		}
	}
	return nil
}

// advanceWindow runs cur to p or to the next window boundary, whichever
// comes first; done reports that the trace ended.
func (s *Session) advanceWindow(p uint64) (done bool, err error) {
	k := s.curSeg
	b := s.nextBoundary(k, s.cur.Position())
	err = s.runCurTo(min(p, b))
	switch {
	case err == reader.ErrEnd || err == io.ErrUnexpectedEOF:
		return true, nil
	case err != nil:
		return true, err
	}
	if s.cur.Position() == b {
		s.boundary(k, b)
	}
	return false, nil
}

// boundary closes cur's window at boundary b of segment k.
func (s *Session) boundary(k int, b uint64) {
	start := s.cps[k].Position
	ws := s.cur.WindowStart()
	d := s.cur.Cut()
	fl := s.fineFor(k)
	j := int((ws - start) / s.opts.FineEvery)
	if len(fl.deltas) == j && len(fl.snaps) > j {
		fl.deltas = append(fl.deltas, d)
		s.addFine(fl, d.Bytes())
	}
	cutExec(&s.ex, fl, j, ws, b)
	if b == s.segEnd(k) {
		if k+1 < len(s.cps) {
			s.curSeg = k + 1
			if nf := s.fineFor(k + 1); len(nf.snaps) == 0 {
				sn := s.cur.Snapshot()
				nf.snaps = append(nf.snaps, sn)
				s.addFine(nf, sn.Bytes())
			}
		}
		return
	}
	if len(fl.snaps) == j+1 && len(fl.deltas) == j+1 {
		sn := s.cur.Snapshot()
		fl.snaps = append(fl.snaps, sn)
		s.addFine(fl, sn.Bytes())
	}
}

// sync brings cur back to the current position.
func (s *Session) sync() error {
	if s.cur != nil && s.cur.Position() == s.pos && s.cur.Err() == nil {
		return nil
	}
	return s.seekCur(s.pos)
}

// Seek makes pos the current position (clamped to the trace's end).
func (s *Session) Seek(pos uint64) (Stop, error) {
	pos = min(pos, s.end)
	if err := s.seekCur(pos); err != nil {
		return Stop{}, err
	}
	s.pos = s.cur.Position()
	return s.stopHere(StopSeek), nil
}

// Thread describes a live thread at the current position.
type Thread struct {
	Tid     int
	Current bool // the thread that executes the next instruction
	PC      uint64
	// Instructions is the number of instructions the thread retired.
	Instructions uint64
}

// Threads lists the live threads at the current position.
func (s *Session) Threads() ([]Thread, error) {
	if err := s.sync(); err != nil {
		return nil, err
	}
	cur, _ := s.cur.Current()
	tids, cpus := s.cur.Threads()
	out := make([]Thread, len(tids))
	for i, tid := range tids {
		out[i] = Thread{Tid: tid, Current: tid == cur, PC: cpus[i].RIP, Instructions: cpus[i].Icount}
	}
	return out, nil
}

// CurrentThread is the thread that executes the instruction at the
// current position.
func (s *Session) CurrentThread() (int, error) {
	if err := s.sync(); err != nil {
		return 0, err
	}
	tid, _ := s.cur.Current()
	return tid, nil
}

// ErrNoThread is returned for a thread id that is not live.
var ErrNoThread = errors.New("no such thread")

// Registers returns a thread's registers at the current position (tid 0:
// the current thread).
func (s *Session) Registers(tid int) (Registers, error) {
	if err := s.sync(); err != nil {
		return Registers{}, err
	}
	ctid, c := s.cur.Current()
	if tid == 0 {
		tid = ctid
	}
	if c != nil && tid == ctid {
		// The current thread, even one that has exited (at the end).
		return registersOf(tid, c), nil
	}
	tids, cpus := s.cur.Threads()
	for i, t := range tids {
		if t == tid {
			return registersOf(tid, cpus[i]), nil
		}
	}
	return Registers{}, fmt.Errorf("thread %d at position %d: %w", tid, s.pos, ErrNoThread)
}

// Memory is a range of guest memory at a position: Known[i] says whether
// Data[i] is the byte the program had there. A byte is known when the
// program read or wrote it (or a syscall or signal delivery wrote it, or
// it was fetched as code) before the position; the others are unknown,
// never invented.
type Memory struct {
	Addr  uint64
	Data  []byte
	Known []bool
}

// AllKnown reports whether every byte is known.
func (m *Memory) AllKnown() bool {
	for _, k := range m.Known {
		if !k {
			return false
		}
	}
	return true
}

// Uint returns the little-endian value of the first n bytes (n ≤ 8) and
// whether all of them are known.
func (m *Memory) Uint(n int) (uint64, bool) {
	var v uint64
	ok := len(m.Data) >= n
	for i := 0; i < n && i < len(m.Data); i++ {
		v |= uint64(m.Data[i]) << (8 * i)
		ok = ok && m.Known[i]
	}
	return v, ok
}

// MaxRead bounds one ReadMemory call.
const MaxRead = 16 << 20

// ReadMemory returns n bytes at addr as they were at the current
// position.
func (s *Session) ReadMemory(addr uint64, n int) (Memory, error) {
	if n < 0 || n > MaxRead {
		return Memory{}, fmt.Errorf("read of %d bytes: at most %d at a time", n, MaxRead)
	}
	if addr+uint64(n) < addr {
		return Memory{}, fmt.Errorf("read of %d bytes at %#x wraps around", n, addr)
	}
	if err := s.sync(); err != nil {
		return Memory{}, err
	}
	m := Memory{Addr: addr, Data: make([]byte, n), Known: make([]bool, n)}
	blocked := make([]bool, n)
	s.cur.Known(addr, m.Data, m.Known)
	for i := range blocked {
		if !m.Known[i] && s.cur.WasReset((addr+uint64(i))>>x86.PageShift) {
			blocked[i] = true
		}
	}
	k := s.curSeg
	j := int((s.cur.WindowStart() - s.cps[k].Position) / s.opts.FineEvery)
	if err := s.knownBefore(k, j, &m, blocked); err != nil {
		return m, err
	}
	return m, nil
}

// knownBefore fills the bytes of m not yet known (nor blocked by an
// unmapping) with what was known at the start of window j of segment k:
// the fine deltas of the segment's earlier windows, newest first, then
// the index's segment deltas.
func (s *Session) knownBefore(k, j int, m *Memory, blocked []bool) error {
	missing := func() bool {
		for i := range m.Known {
			if !m.Known[i] && !blocked[i] {
				return true
			}
		}
		return false
	}
	if fl := s.fine[k]; fl != nil && j > 0 {
		if j > len(fl.deltas) {
			return fmt.Errorf("internal: window %d of segment %d without its predecessors", j, k)
		}
		for jj := j - 1; jj >= 0 && missing(); jj-- {
			applyDelta(fl.deltas[jj], m, blocked)
		}
	} else if j > 0 {
		return fmt.Errorf("internal: window %d of segment %d without snapshots", j, k)
	}
	ix, err := s.index()
	if err != nil {
		return err
	}
	for kk := k - 1; kk >= 0 && missing(); kk-- {
		sg := &ix.Segments[kk]
		need := false
		for i := range m.Known {
			if m.Known[i] || blocked[i] {
				continue
			}
			a := m.Addr + uint64(i)
			if sg.Touched(a) {
				need = true
				break
			}
			if sg.WasReset(a >> x86.PageShift) {
				blocked[i] = true
			}
		}
		if !need {
			continue
		}
		d, err := ix.Delta(kk)
		if err != nil {
			return err
		}
		applyDelta(d, m, blocked)
	}
	return nil
}

// applyDelta takes from d the bytes of m it knows; bytes of pages d
// unmapped become blocked.
func applyDelta(d *reader.Delta, m *Memory, blocked []bool) {
	var dp *reader.DeltaPage
	lastPN := ^uint64(0)
	for i := range m.Known {
		if m.Known[i] || blocked[i] {
			continue
		}
		a := m.Addr + uint64(i)
		pn := a >> x86.PageShift
		if pn != lastPN {
			dp, lastPN = d.Page(pn), pn
		}
		off := a & (x86.PageSize - 1)
		if dp != nil && dp.Data != nil && dp.Known[off>>6]&(1<<(off&63)) != 0 {
			m.Data[i] = dp.Data[off]
			m.Known[i] = true
			continue
		}
		if d.WasReset(pn) {
			blocked[i] = true
		}
	}
}

// stopHere describes the current position as a stop for reason.
func (s *Session) stopHere(reason StopReason) Stop {
	st := Stop{Reason: reason, Position: s.pos}
	if s.cur != nil && s.cur.Position() == s.pos {
		if tid, c := s.cur.Current(); c != nil {
			st.Tid, st.PC = tid, c.RIP
		}
	}
	if s.pos >= s.end {
		st.Exit = s.Exit()
	}
	return st
}

// InstructionAt returns the bytes and disassembly of the instruction the
// current thread executes at the current position.
func (s *Session) InstructionAt() (pc uint64, code []byte, text string, err error) {
	if err := s.sync(); err != nil {
		return 0, nil, "", err
	}
	_, c := s.cur.Current()
	if c == nil {
		return 0, nil, "", errors.New("no thread runs at this position")
	}
	code, text = s.disasm(s.cur, c.RIP)
	return c.RIP, code, text, nil
}

// disasm reads the code at pc from r's code pages and disassembles it.
func (s *Session) disasm(r *reader.Replay, pc uint64) ([]byte, string) {
	var buf [15]byte
	n := 0
	for n < len(buf) {
		if r.Memory().Peek(pc+uint64(n), buf[n:n+1]) != nil {
			break
		}
		n++
	}
	if n == 0 {
		return nil, "(code not available)"
	}
	in := x86.Decode(pc, buf[:n])
	if in.Len == 0 {
		return buf[:n], "(bad)"
	}
	code := append([]byte(nil), buf[:in.Len]...)
	return code, x86.Disasm(pc, code)
}
