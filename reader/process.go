package reader

import (
	"fmt"
	"maps"
	"slices"

	"ttd/tracefile"
	"ttd/x86"
)

// Process trees. A trace recorded with the header parameter processes =
// tree re-simulates every process of the recorded tree on the one
// timeline (one position order for all of them). Each process has its
// address space and code; each thread belongs to one process. The
// Process records are events of the timeline:
//
//   - started: the child gets a copy-on-write copy of its parent's
//     address space as re-simulation holds it at that position (layout,
//     protections, code), or shares it (CLONE_VM: vfork, posix_spawn);
//     the ThreadStart that follows, whose tid is the new pid, is its
//     first thread;
//   - execed: the process gets an empty address space, which the Mmap
//     records of its execve fill;
//   - exited: its threads end (a process killed while blocked never
//     reported their ends); the TagFinalRegs records before it carry
//     their registers, which Verify compares.
//
// Mmap, Munmap and Mprotect records apply to the running thread's
// address space, except right after a ProcessState record (which follows
// each Checkpoint): up to the next other record they describe that
// process's.
//
// The focus is the process whose memory the replay reports (Memory,
// Known, Track, Access, Mapping): the first process unless
// Trace.SetFocus chose another. Before the focus process exists, its
// ancestor that will fork it stands in for it (its memory becomes the
// child's copy), so that a search backwards from the child finds the
// writes its parent made before the fork.

// tagFinalRegs is recorder.TagFinalRegs.
const tagFinalRegs = 3

// cloneVM is Linux's CLONE_VM.
const cloneVM = 0x100

// process is one process during re-simulation.
type process struct {
	pid, ppid int
	as        *addrSpace
	code      *x86.CodeCache
	// shares is the process whose address space this one uses (a vfork
	// child before it execs), or nil.
	shares *process
	exited bool
	// Verify's results for this process.
	verified int
	exit     *tracefile.Exit
}

// newCode returns a code cache over mem set up as the trace decodes. The
// code caches of the replay's processes share their decoded blocks
// (x86.CodeStore): a tree's processes run the same code. (One store for
// all replays of a trace made --segments, whose replays run two at a
// time, 1.4x slower in CPU time on go_gc.)
func (r *Replay) newCode(mem *x86.Memory) *x86.CodeCache {
	t := r.t
	cc := x86.NewCodeCache(mem)
	cc.LegacyReads = t.legacyReads
	cc.Features = t.features
	if r.store == nil {
		r.store = x86.NewCodeStore()
	}
	cc.ShareWith(r.store)
	return cc
}

// newProcess adds a process with an empty address space.
func (r *Replay) newProcess(pid, ppid int) *process {
	p := &process{pid: pid, ppid: ppid, as: r.newAddrSpace()}
	p.code = r.newCode(p.as.mem)
	r.procs = append(r.procs, p)
	return p
}

// newAddrSpace is an empty address space that materialises its pages
// with the pages another replay left, if any.
func (r *Replay) newAddrSpace() *addrSpace {
	as := newAddrSpace()
	as.spare, as.zeroSpare = r.spare, r.t.noReads
	as.shared = r.sharedMem()
	return as
}

// proc returns the process with the given pid, or nil.
func (r *Replay) proc(pid int) *process {
	for _, p := range r.procs {
		if p.pid == pid {
			return p
		}
	}
	return nil
}

// fork returns a copy-on-write copy of as: the same layout, code and
// page contents, diverging from here, but for shared memory, whose
// pages both hold (shared.go).
func (as *addrSpace) fork() *addrSpace {
	n := &addrSpace{mem: as.mem.Fork(as.keepShared()), regions: slices.Clone(as.regions), code: maps.Clone(as.code),
		frozen: maps.Clone(as.frozen), init: maps.Clone(as.init), data: maps.Clone(as.data), spare: as.spare, zeroSpare: as.zeroSpare,
		pend: maps.Clone(as.pend), pages: as.pages, shared: as.shared}
	if n.data == nil {
		n.data = map[uint64]*[x86.PageSize]byte{}
	}
	n.mem.Source = n.source
	return n
}

// rebind moves thread t into process p's address space.
func (r *Replay) rebind(t *thread, p *process) {
	if t.proc == p && t.cpu.Mem == p.as.mem {
		return
	}
	t.proc = p
	c := t.cpu.CloneWith(p.as.mem, p.code)
	c.Obs = r
	if t.cpu.Pred != nil {
		t.cpu.DropPred()
	}
	t.cpu = c
}

// retarget points the machinery at the address space records now apply
// to (the mapping target, else the running thread's), and decides
// whether accesses are observed (only in the focus's address space).
func (r *Replay) retarget() {
	p := r.mapTo
	if p == nil && r.cur != nil {
		p = r.cur.proc
	}
	if p == nil && len(r.procs) > 0 {
		p = r.procs[0]
	}
	if p == nil {
		// Nothing yet (a tree's first record makes the first process,
		// and adopts this one).
		p = r.newProcess(0, 0)
	}
	r.as, r.code = p.as, p.code
	r.observeNow()
	r.retrack()
}

// refocus finds the focus's address space: the focus process's, or,
// before it exists, that of its nearest ancestor that does; after it
// ended, an empty one. When it
// changes to a different memory (an exec), tracking forgets it all.
func (r *Replay) refocus() {
	old := r.fas
	r.fas = r.spaceOf(r.lineage)
	if old != nil && old != r.fas && r.track != nil && r.pk == nil && r.vw == nil && !r.forkOf(old, r.fas) {
		r.track.reset(0, 1<<52)
	}
	r.refocusViews()
}

// spaceOf is the address space of the process whose lineage (the root
// first, the process last) is given: its own, or, before it exists,
// that of its nearest ancestor that does; an empty one when it has no
// ancestor yet or its memory is gone.
func (r *Replay) spaceOf(lineage []int) *addrSpace {
	var as *addrSpace
	if !r.t.tree {
		if len(r.procs) > 0 {
			as = r.procs[0].as
		}
	} else {
		for i := len(lineage) - 1; i >= 0 && as == nil; i-- {
			if p := r.proc(lineage[i]); p != nil {
				as = p.as
			} else if r.t.endedBy(lineage[i], r.pos) {
				// Its memory is gone (a replay from a checkpoint
				// after its end): nothing accesses it any more, as
				// for a replay that saw it end.
				break
			}
		}
		if as == nil && len(r.procs) > 0 && len(lineage) == 0 {
			as = r.procs[0].as
		}
	}
	if as == nil {
		// No ancestor yet: nothing of it is known.
		if r.empty == nil {
			r.empty = r.newAddrSpace()
		}
		as = r.empty
	}
	return as
}

// dropCode lets the decoded and translated code of process p, which
// ended, go when no live process shares its memory: a tree of a
// thousand short processes (xargs, make) would otherwise keep all of
// theirs for the rest of the replay. Its threads keep a CPU, with an
// empty cache; a snapshot resumed from before the end decodes again.
func (r *Replay) dropCode(p *process) {
	for _, q := range r.procs {
		if q != p && !q.exited && q.as == p.as {
			return
		}
	}
	p.code = r.newCode(p.as.mem)
	for _, t := range r.threads {
		if t.proc == p {
			t.cpu = t.cpu.CloneWith(p.as.mem, p.code)
		}
	}
}

// endedBy reports whether process pid ended at or before position pos.
func (t *Trace) endedBy(pid int, pos uint64) bool {
	for _, p := range t.procs {
		if p.Pid == pid {
			return p.Exited && p.End <= pos
		}
	}
	return false
}

// forkOf reports whether address space n was forked from o at this
// position (the focus passing from parent to child keeps what tracking
// knows: the child's memory is a copy).
func (r *Replay) forkOf(o, n *addrSpace) bool { return r.forked == n && r.forkedFrom == o }

// applyProcess acts on a Process record.
func (r *Replay) applyProcess(p *tracefile.Process) error {
	before := r.fas
	switch p.Event {
	case tracefile.ProcessStarted:
		if r.proc(p.Pid) != nil {
			return r.diverged("process %d started twice", p.Pid)
		}
		if p.Tid == 0 {
			// The first process: it may have been made before its
			// record (a replay starting at a checkpoint).
			if len(r.procs) == 1 && r.procs[0].pid == 0 {
				r.procs[0].pid, r.procs[0].ppid = p.Pid, p.Ppid
			} else {
				r.newProcess(p.Pid, p.Ppid)
			}
			break
		}
		pt := r.find(p.Tid)
		if pt == nil || pt.proc == nil {
			return r.diverged("process %d started by thread %d, which does not exist", p.Pid, p.Tid)
		}
		parent := pt.proc
		c := &process{pid: p.Pid, ppid: p.Ppid}
		if p.Flags&cloneVM != 0 {
			c.shares = parent
			for c.shares.shares != nil {
				c.shares = c.shares.shares
			}
			c.as, c.code = parent.as, parent.code
		} else {
			parent.as.materializeFiles()
			c.as = parent.as.fork()
			c.code = r.newCode(c.as.mem)
			r.forked, r.forkedFrom = c.as, parent.as
		}
		r.procs = append(r.procs, c)
	case tracefile.ProcessExeced:
		pr := r.proc(p.Pid)
		if pr == nil {
			return r.diverged("process %d execs but does not exist", p.Pid)
		}
		if p.Tid != p.Pid && p.Tid != 0 {
			if err := r.takeLeaderTid(p.Tid, p.Pid); err != nil {
				return err
			}
		}
		old, shared := pr.as, pr.shares != nil
		pr.as, pr.shares = r.newAddrSpace(), nil
		pr.code = r.newCode(pr.as.mem)
		if r.accessAll && !shared && old != before {
			// Another process's exec (the focus's is replacedFocus's).
			r.execAccesses(old, p.Tid)
		}
		for _, t := range r.threads {
			if t.proc == pr {
				r.rebind(t, pr)
			}
		}
	case tracefile.ProcessExited:
		pr := r.proc(p.Pid)
		if pr == nil {
			return r.diverged("process %d exits but does not exist", p.Pid)
		}
		pr.exited = true
		e := p.Exit
		pr.exit = &e
		for _, t := range r.threads {
			if t.proc == pr {
				r.endThread(t)
			}
		}
		r.dropCode(pr)
	}
	r.knownProcess()
	r.refocus()
	r.forked, r.forkedFrom = nil, nil
	if p.Event == tracefile.ProcessExeced && before != nil && before != r.fas && r.vw == nil {
		r.replacedFocus(before, p.Tid)
	}
	r.execViews(p)
	return nil
}

// replacedFocus marks the end of the focus's old address space old,
// which thread tid's exec replaced: a pid's spaces before and after an
// exec are different spaces, so a search backwards from after the exec
// must not find what the old image did. Every page old had mapped
// (PROT_NONE reservations aside: nothing accessed them there) counts as
// read and written by the exec in the tracking window, so that the
// access summaries send a search for any byte of them to this window;
// there the watched bytes get one read and one write of source
// AccessExec (PC 0: the instruction is in the old image), which
// ends the search at the exec. The new image's own
// accesses come after it.
func (r *Replay) replacedFocus(old *addrSpace, tid int) {
	for _, g := range old.regions {
		if g.prot == 0 {
			continue
		}
		if r.track != nil {
			r.track.replaced(g.start>>x86.PageShift, (g.end+x86.PageSize-1)>>x86.PageShift)
		}
	}
	r.execAccesses(old, tid)
}

// execAccesses reports to the Access callback the watched bytes of
// address space old, which thread tid's exec replaced: one read and one
// write each, of source AccessExec, at the position before the exec.
func (r *Replay) execAccesses(old *addrSpace, tid int) {
	if r.Access == nil || len(r.watch) == 0 {
		return
	}
	pos := r.pos
	if pos > 0 {
		pos--
	}
	for _, g := range old.regions {
		if g.prot == 0 {
			continue
		}
		ExecPieces(g.start, g.end, r.watch, func(a uint64, n int) {
			for _, write := range []bool{false, true} {
				r.acc = Access{Position: pos, Tid: tid, Addr: a, Size: n, Write: write, Source: AccessExec}
				r.Access(&r.acc)
			}
		})
	}
}

// applyProcessState acts on a ProcessState record (after a checkpoint).
func (r *Replay) applyProcessState(s *tracefile.ProcessState) error {
	p := r.proc(s.Pid)
	if p == nil {
		if len(r.procs) == 1 && r.procs[0].pid == 0 {
			p = r.procs[0] // the placeholder a checkpoint's threads went to
			p.pid, p.ppid = s.Pid, s.Ppid
		} else {
			p = r.newProcess(s.Pid, s.Ppid)
		}
	}
	if s.SharesWith != 0 {
		q := r.proc(s.SharesWith)
		if q == nil {
			return r.diverged("process %d shares the address space of process %d, which does not exist", s.Pid, s.SharesWith)
		}
		p.shares, p.as, p.code = q, q.as, q.code
	} else {
		r.restoreSpace(p.as, r.spaceKey(s.Pid))
	}
	for _, tid := range s.Tids {
		t := r.find(tid)
		if t == nil {
			return r.diverged("process %d has thread %d, which the checkpoint does not list", s.Pid, tid)
		}
		r.rebind(t, p)
	}
	r.mapTo = p
	r.refocus()
	return nil
}

// takeLeaderTid gives thread tid, which execed, its process's pid as
// its tid, as Linux does: the leader (and every other thread) ended
// before the exec, and its record goes.
func (r *Replay) takeLeaderTid(tid, pid int) error {
	t := r.find(tid)
	if t == nil || t.exited {
		return r.diverged("thread %d execs but does not run", tid)
	}
	live := r.threads[:0]
	for _, o := range r.threads {
		if o.tid == pid {
			if !o.exited {
				return r.diverged("thread %d execs while the leader %d still runs", tid, pid)
			}
			continue
		}
		live = append(live, o)
	}
	clear(r.threads[len(live):])
	r.threads = live
	t.tid = pid
	return nil
}

// finalRegs compares a thread's registers with those the recording had
// when its process ended (Verify).
func (r *Replay) finalRegs(tid int, blob []byte) error {
	t := r.find(tid)
	if t == nil {
		return r.diverged("final registers of thread %d, which does not exist", tid)
	}
	if !r.Verify {
		return nil
	}
	r.regs = t.cpu.MarshalState(r.regs[:0])
	if !slices.Equal(r.regs, blob) {
		return &DivergenceError{Position: r.pos, Tid: tid, Msg: fmt.Sprintf("registers of thread %d when its process ended differ from the recording: %s", tid, stateDiff(r.regs, blob))}
	}
	if t.proc != nil {
		t.proc.verified++
	}
	return nil
}

// endThread ends t: its cache goes (as the recorder's did); it stays
// until the next checkpoint, which may still list it.
func (r *Replay) endThread(t *thread) {
	if t.exited {
		return
	}
	t.cpu.DropPred()
	t.cache.Release()
	t.exited, t.cache, t.frozen = true, nil, nil
}

// find returns the thread with the given id, or nil.
func (r *Replay) find(tid int) *thread {
	for _, t := range r.threads {
		if t.tid == tid {
			return t
		}
	}
	return nil
}

// ProcessState describes a process of the tree during re-simulation.
type ProcessState struct {
	Pid, Ppid int
	// Tids are its live threads.
	Tids []int
	// Exited is set once it ended (Exit says how), and Verified counts
	// the thread states Verify compared when it ended.
	Exited   bool
	Exit     *tracefile.Exit
	Verified int
}

// Processes lists the processes re-simulation knows at the current
// position, in creation order (one for a trace of a single process).
func (r *Replay) Processes() []ProcessState {
	var out []ProcessState
	for _, p := range r.procs {
		ps := ProcessState{Pid: p.pid, Ppid: p.ppid, Exited: p.exited, Exit: p.exit, Verified: p.verified}
		for _, t := range r.threads {
			if t.proc == p && !t.exited {
				ps.Tids = append(ps.Tids, t.tid)
			}
		}
		out = append(out, ps)
	}
	return out
}

// Pid returns the process thread tid belongs to (0 when no thread has
// that id).
func (r *Replay) Pid(tid int) int {
	if t := r.find(tid); t != nil && t.proc != nil {
		return t.proc.pid
	}
	return 0
}

// MemoryOf is the re-simulated address space of process pid (see
// Memory), or nil.
func (r *Replay) MemoryOf(pid int) *x86.Memory {
	if p := r.proc(pid); p != nil {
		return p.as.mem
	}
	return nil
}

// Tree reports whether the trace re-simulates a whole process tree
// (header parameter processes = tree).
func (t *Trace) Tree() bool { return t.tree }

// Processes returns the trace's process tree, from its Process records
// (one entry per process, in creation order).
func (t *Trace) Processes() []tracefile.ProcessInfo { return t.procs }

// ProcessRecords returns the trace's Process records in the order they
// were written, as Open read them (tracefile.Reader.Processes, without
// decoding the chunks again). The caller must not change them.
func (t *Trace) ProcessRecords() []tracefile.Process { return t.procRecs }

// Focus is the process whose memory replays report (see SetFocus).
func (t *Trace) Focus() int {
	if len(t.lineage) > 0 {
		return t.lineage[len(t.lineage)-1]
	}
	return 0
}

// ErrNoProcess is returned by SetFocus for a pid the trace does not
// have.
var ErrNoProcess = fmt.Errorf("no such process in the trace")

// SetFocus makes replays created afterwards report the memory of
// process pid (Memory, Known, Track, Access, Mapping): positions stay
// global, and a search for the accesses to an address sees those of pid
// (and, before pid was forked, those of the ancestors whose memory it
// copied). 0 is the first process, the default. A trace of one process
// has only that one.
func (t *Trace) SetFocus(pid int) error {
	l, err := t.lineageOf(pid)
	if err != nil {
		return err
	}
	t.lineage = l
	return nil
}

// lineageOf is the focus lineage of process pid: pid and its ancestors,
// first process first (nil for a trace that is not a tree).
func (t *Trace) lineageOf(pid int) ([]int, error) {
	if pid == 0 || len(t.procs) == 0 {
		if pid != 0 && (len(t.procs) == 0 || t.procs[0].Pid != pid) {
			return nil, fmt.Errorf("process %d: %w (the trace holds one process)", pid, ErrNoProcess)
		}
		if len(t.procs) > 0 && t.tree {
			return []int{t.procs[0].Pid}, nil
		}
		return nil, nil
	}
	parent := map[int]int{}
	found := false
	for _, p := range t.procs {
		parent[p.Pid] = p.Ppid
		found = found || p.Pid == pid
	}
	if !found {
		return nil, fmt.Errorf("process %d: %w", pid, ErrNoProcess)
	}
	if !t.tree && pid != t.procs[0].Pid {
		return nil, fmt.Errorf("process %d: the trace re-simulates its first process only (recorded before ttd recorded whole trees)", pid)
	}
	var chain []int
	for p, n := pid, 0; n <= len(t.procs); n++ {
		chain = append(chain, p)
		if p == t.procs[0].Pid {
			break
		}
		q, ok := parent[p]
		if !ok {
			break
		}
		p = q
	}
	slices.Reverse(chain)
	return chain, nil
}

// Lineage is the focus and its ancestors, first process first (empty
// for a trace that is not a tree).
func (t *Trace) Lineage() []int { return slices.Clone(t.lineage) }

// Refocus makes this replay, just created, report the memory of process
// pid rather than the trace's focus (see SetFocus): the access
// summaries of every process are built from one Trace in parallel.
func (r *Replay) Refocus(pid int) error {
	l, err := r.t.lineageOf(pid)
	if err != nil {
		return err
	}
	r.lineage = l
	r.refocus()
	r.retarget()
	return nil
}
