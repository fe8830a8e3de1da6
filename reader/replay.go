package reader

import (
	"bytes"
	"errors"
	"fmt"
	"io"

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
	// reads counts the thread's reads since the last checkpoint;
	// lastLogged is the count at the last logged read it consumed.
	reads, lastLogged uint64
	seen              uint64 // cpu.Retired() already counted in pos
	exited            bool
}

// Replay re-simulates a trace forward from a checkpoint.
type Replay struct {
	t    *Trace
	as   *addrSpace
	code *x86.CodeCache

	threads []*thread
	cur     *thread
	pos     uint64

	ch *chunk
	ci int // index of ch.ctrls' next control record
	rd int // next logged read in ch.reads
	nd int // next non-det record in ch.nondets
	// rdEnd and ndEnd bound what the CPU may consume before the next
	// control record takes effect.
	rdEnd, ndEnd int
	exit         *tracefile.Exit
	err          error
	regs         []byte
	atEnd        bool

	// Verify compares the re-simulated registers with every checkpoint's.
	Verify bool
	// Output receives what the program wrote to stdout (fd 1) and
	// stderr (fd 2), as recorded.
	Output func(fd int, data []byte)
	// Hook, when set, is installed as the CPU observer's instruction
	// callback (breakpoints, stepping): it is called before every
	// instruction with the global position of that instruction.
	Hook func(r *Replay, c *x86.CPU, in *x86.Inst)
	// Access, when set, is called for every memory read and write with
	// the global position of the accessing instruction.
	Access func(pos uint64, tid int, addr uint64, size int, val uint64, write bool)
	// Checkpoints counts the checkpoints passed.
	Checkpoints int
}

// NewReplay prepares a re-simulation of t starting at chunk i (0 is the
// start of the recording; every chunk starts with a checkpoint).
func (t *Trace) NewReplay(i int) (*Replay, error) {
	if i < 0 || i >= len(t.chunks) {
		return nil, fmt.Errorf("trace: no chunk %d", i)
	}
	r := &Replay{t: t, as: newAddrSpace()}
	r.code = x86.NewCodeCache(r.as.mem)
	if err := r.load(i); err != nil {
		return nil, err
	}
	r.pos = t.chunks[i].FirstPosition
	return r, nil
}

func (r *Replay) load(i int) error {
	ch, err := r.t.loadChunk(i)
	if err != nil {
		return err
	}
	if old := r.ch; old != nil && old.index == i-1 {
		// A chunk cut between checkpoints: the reads and results logged
		// at the end of the previous chunk are consumed in this one.
		carryR, carryN := old.reads[r.rd:], old.nondets[r.nd:]
		if len(carryR)+len(carryN) > 0 {
			ch.reads = append(append([]tracefile.MemRead(nil), carryR...), ch.reads...)
			ch.nondets = append(append([][]uint64(nil), carryN...), ch.nondets...)
			for k := range ch.ctrls {
				ch.ctrls[k].reads += len(carryR)
				ch.ctrls[k].nondets += len(carryN)
			}
		}
	}
	r.ch, r.ci, r.rd, r.nd = ch, 0, 0, 0
	return nil
}

// Position is the number of instructions retired by all threads so far.
func (r *Replay) Position() uint64 { return r.pos }

// Exit is how the program ended, once re-simulation reached its end.
func (r *Replay) Exit() *tracefile.Exit { return r.exit }

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

// Memory is the re-simulated address space (its contents are meaningful
// only for bytes the program wrote since the replay started, and code).
func (r *Replay) Memory() *x86.Memory { return r.as.mem }

func (r *Replay) thread(tid int) *thread {
	for _, t := range r.threads {
		if t.tid == tid {
			return t
		}
	}
	c := x86.NewCPU(r.as.mem, r.code)
	c.Obs = r
	t := &thread{tid: tid, cpu: c, cache: predict.New(r.t.cacheBits)}
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

func ctrlPosition(rec *tracefile.Record) (uint64, bool) {
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

// RunTo re-simulates until the position is target, the program ends
// (ErrEnd) or the trace ends early (io.ErrUnexpectedEOF for a trace cut
// short by a crash of the recorder).
func (r *Replay) RunTo(target uint64) error {
	if r.err != nil {
		return r.err
	}
	err := r.runTo(target)
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
			// Re-simulation stops at the last event the trace has: past
			// it the logged reads may be missing.
			return io.ErrUnexpectedEOF
		}
		if err != nil {
			return err
		}
		r.rdEnd, r.ndEnd = c.reads, c.nondets
		for _, cb := range c.code {
			if err := r.as.mem.Poke(cb.Addr, cb.Bytes); err != nil {
				return r.diverged("code bytes at %#x fall outside the mapped memory", cb.Addr)
			}
		}
		c.code = nil
		if p, ok := ctrlPosition(&c.rec); ok {
			if p < r.pos {
				return r.diverged("event %v is at position %d, behind re-simulation", c.rec.Kind, p)
			}
			if p > target {
				return r.runCPU(target, false)
			}
			// A syscall may end the run at a syscall key frame, or at the
			// exit (exit_group takes effect without a syscall record).
			sys := c.rec.Kind == tracefile.KindExit || c.rec.Kind == tracefile.KindKeyFrame &&
				(c.rec.KeyFrame.Kind == tracefile.KeyFrameSyscall || c.rec.KeyFrame.Kind == tracefile.KeyFrameThreadExit)
			if err := r.runCPU(p, sys); err != nil {
				return err
			}
			if r.rd != r.rdEnd {
				return r.diverged("%d logged reads were not consumed before %v", r.rdEnd-r.rd, c.rec.Kind)
			}
		}
		r.ci++
		if err := r.apply(&c.rec); err != nil {
			return err
		}
		if r.pos >= target && !r.pendingAt(target) {
			return nil
		}
	}
}

// pendingAt reports whether the next control record still takes effect
// at position p (so RunTo(p) must go on applying it).
func (r *Replay) pendingAt(p uint64) bool {
	c, err := r.nextCtrl()
	if err != nil {
		return false
	}
	pos, ok := ctrlPosition(&c.rec)
	return !ok || pos == p
}

// runCPU runs the current thread until the position is upto. A syscall
// may end the run only at upto and only when one is expected there.
func (r *Replay) runCPU(upto uint64, syscallAtEnd bool) error {
	for r.pos < upto {
		t := r.cur
		if t == nil {
			return r.diverged("no thread is running")
		}
		ex := t.cpu.Run(upto - r.pos)
		r.account()
		switch ex.Reason {
		case x86.ExitBudget:
		case x86.ExitSyscall:
			if r.pos != upto || !syscallAtEnd {
				return r.diverged("syscall %d at %#x not in the trace", t.cpu.R[x86.RAX], t.cpu.RIP-2)
			}
		case x86.ExitUnimplemented:
			return ex.Err
		default:
			// A fault: the trace must deliver a signal right here.
			c, err := r.nextCtrl()
			if err != nil || c.rec.Kind != tracefile.KindKeyFrame || c.rec.KeyFrame.Kind != tracefile.KeyFrameSignal || c.rec.KeyFrame.Position != r.pos {
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
		t := r.thread(rec.ThreadStart.Tid)
		t.seen = t.cpu.Retired()
		if r.cur == nil {
			r.cur = t
		}
	case tracefile.KindThreadExit:
		r.thread(rec.ThreadExit.Tid).exited = true
	case tracefile.KindSyscall:
		s := &rec.Syscall
		t := r.thread(s.Tid)
		t.cpu.R[x86.RAX] = uint64(s.Result)
		for _, w := range s.Writes {
			if err := r.as.mem.Poke(w.Addr, w.Bytes); err != nil {
				return r.diverged("syscall %d wrote outside the mapped memory at %#x", s.Nr, w.Addr)
			}
			fill(t.cache, w.Addr, w.Bytes)
			r.access(t, w.Addr, w.Bytes)
		}
	case tracefile.KindSignal:
		s := &rec.Signal
		t := r.thread(s.Tid)
		for _, w := range s.Writes {
			if err := r.as.mem.Poke(w.Addr, w.Bytes); err != nil {
				return r.diverged("signal frame outside the mapped memory at %#x", w.Addr)
			}
			fill(t.cache, w.Addr, w.Bytes)
			r.access(t, w.Addr, w.Bytes)
		}
		if len(s.Regs) > 0 {
			if err := r.setRegs(t, s.Regs); err != nil {
				return err
			}
		}
	case tracefile.KindMmap:
		r.as.mmap(rec.Mmap.Addr, rec.Mmap.Len, rec.Mmap.Prot)
	case tracefile.KindMunmap:
		r.as.munmap(rec.Munmap.Addr, rec.Munmap.Len)
	case tracefile.KindMprotect:
		r.as.mmap(rec.Mprotect.Addr, rec.Mprotect.Len, rec.Mprotect.Prot)
	case tracefile.KindOpaque:
		tid, b, ok := splitTagged(rec.Opaque.Bytes)
		if !ok {
			return nil
		}
		switch rec.Opaque.Tag {
		case tagRegs:
			return r.setRegs(r.thread(tid), b)
		case tagOutput:
			if r.Output != nil {
				r.Output(tid, b)
			}
		}
	case tracefile.KindCheckpoint:
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
		}
		if err := r.setRegs(t, ts.Regs); err != nil {
			return err
		}
	}
	for _, t := range r.threads {
		t.cache.Flush()
		t.reads, t.lastLogged = 0, 0
	}
	r.cur = r.thread(cp.CurrentTid)
	r.cur.seen = r.cur.cpu.Retired()
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

// fill enters bytes written outside the CPU into a prediction cache,
// exactly as the recorder does.
func fill(cache *predict.Cache, addr uint64, b []byte) {
	for len(b) > 0 {
		n := predict.Split(addr, min(len(b), 8))
		var v uint64
		for i := 0; i < n; i++ {
			v |= uint64(b[i]) << (8 * i)
		}
		cache.Update(addr, n, v)
		addr += uint64(n)
		b = b[n:]
	}
}

func (r *Replay) access(t *thread, addr uint64, b []byte) {
	if r.Access == nil {
		return
	}
	for i := 0; i < len(b); i += 8 {
		n := min(8, len(b)-i)
		var v uint64
		for k := 0; k < n; k++ {
			v |= uint64(b[i+k]) << (8 * k)
		}
		r.Access(r.pos, t.tid, addr+uint64(i), n, v, true)
	}
}

// x86.Observer: the replay side of the prediction cache.

// WantInstructions reports whether a Hook is installed.
func (r *Replay) WantInstructions() bool { return r.Hook != nil }

// Instruction calls the Hook.
func (r *Replay) Instruction(c *x86.CPU, in *x86.Inst) {
	if r.Hook != nil {
		r.Hook(r, c, in)
	}
}

// instPos is the global position of the instruction c is executing.
func (r *Replay) instPos(c *x86.CPU) uint64 {
	return r.pos + c.Retired() - r.cur.seen
}

// MemRead returns the value the recorded read saw: the prediction, or
// the logged value when the recorder logged this read.
func (r *Replay) MemRead(c *x86.CPU, addr uint64, size int, val uint64) uint64 {
	if n1 := predict.Split(addr, size); n1 != size {
		lo := r.read(addr, n1)
		hi := r.read(addr+uint64(n1), size-n1)
		val = lo | hi<<(8*uint(n1))
	} else {
		val = r.read(addr, size)
	}
	if r.Access != nil {
		r.Access(r.instPos(c), r.cur.tid, addr, size, val, false)
	}
	return val
}

func (r *Replay) read(addr uint64, size int) uint64 {
	t := r.cur
	t.reads++
	if r.rd < r.rdEnd {
		lr := &r.ch.reads[r.rd]
		if t.lastLogged+lr.ReadDelta == t.reads {
			r.rd++
			t.lastLogged = t.reads
			t.cache.Update(addr, size, lr.Value)
			return lr.Value
		}
	}
	return t.cache.Predict(addr, size)
}

// MemWrite keeps the prediction cache in step with the recorder's.
func (r *Replay) MemWrite(c *x86.CPU, addr uint64, size int, val uint64) {
	t := r.cur
	if n1 := predict.Split(addr, size); n1 != size {
		t.cache.Update(addr, n1, val&(1<<(8*uint(n1))-1))
		t.cache.Update(addr+uint64(n1), size-n1, val>>(8*uint(n1)))
	} else {
		t.cache.Update(addr, size, val)
	}
	if r.Access != nil {
		r.Access(r.instPos(c), t.tid, addr, size, val, true)
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

// Decoded and Sync need nothing during re-simulation.
func (r *Replay) Decoded(c *x86.CPU, b *x86.Block) {}
func (r *Replay) Sync(c *x86.CPU, in *x86.Inst)    {}
