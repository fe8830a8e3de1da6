package probe

import (
	"path/filepath"
	"sort"

	"ttd/tracefile"
)

// Processes of a recorded tree. The recorder re-simulates the first
// process only (its children run unobserved); the trace's Process
// records give the life of every process: who forked whom at which
// position, which program each ran, how each ended. From them:
//
//   - pid, ppid and execname of every event: the recorded process's pid
//     and parent, and its program at that position (an exec changes it);
//   - proc:::fork at each process creation (in the forking process;
//     arg0 is the child's pid), proc:::exec at a child's exec and
//     proc:::exit at a child's end, where pid and execname are the
//     child's (arg0: the exit code, or 128+signal); proc:::exec also at
//     an exec of the recorded process itself.

// procName is the program a process ran from a position on.
type procName struct {
	pos  uint64
	name string
}

type procInfo struct {
	ppid  int
	names []procName // by position
}

// procEvent is a Process record that fires a proc probe.
type procEvent struct {
	pos   uint64
	kind  string // fork, exec, exit
	pid   int    // the process the probe fires in
	tid   int
	arg0  int64
	child int
}

// loadProcesses reads the trace's Process records.
func (b *Bound) loadProcesses() error {
	recs := b.T.Trace.ProcessRecords()
	if len(recs) == 0 {
		return nil
	}
	b.procs = map[int]*procInfo{}
	for _, p := range recs {
		pi := b.procs[p.Pid]
		switch p.Event {
		case tracefile.ProcessStarted:
			pi = &procInfo{ppid: p.Ppid}
			b.procs[p.Pid] = pi
			name := filepath.Base(p.Path)
			if p.Path == "" {
				// A fork child runs its parent's program until it execs.
				name = b.execnameOf(p.Ppid, p.Position)
			}
			pi.names = append(pi.names, procName{p.Position, name})
			if p.Tid != 0 {
				b.procEvents = append(b.procEvents, procEvent{pos: p.Position, kind: "fork", pid: p.Ppid, tid: p.Tid, arg0: int64(p.Pid), child: p.Pid})
			}
		case tracefile.ProcessExeced:
			if pi == nil {
				continue
			}
			pi.names = append(pi.names, procName{p.Position, filepath.Base(p.Path)})
			b.procEvents = append(b.procEvents, procEvent{pos: p.Position, kind: "exec", pid: p.Pid, tid: p.Tid})
		case tracefile.ProcessExited:
			if p.Pid != b.pid {
				code := int64(p.Exit.Code)
				if p.Exit.Kind != tracefile.ExitExited {
					code = int64(128 + p.Exit.Signo)
				}
				b.procEvents = append(b.procEvents, procEvent{pos: p.Position, kind: "exit", pid: p.Pid, tid: p.Pid, arg0: code})
			}
		}
	}
	for _, pi := range b.procs {
		sort.SliceStable(pi.names, func(i, j int) bool { return pi.names[i].pos < pi.names[j].pos })
	}
	sort.SliceStable(b.procEvents, func(i, j int) bool { return b.procEvents[i].pos < b.procEvents[j].pos })
	return nil
}

// execnameOf is the program pid ran at position pos.
func (b *Bound) execnameOf(pid int, pos uint64) string {
	pi := b.procs[pid]
	if pi == nil || len(pi.names) == 0 {
		return b.execname
	}
	i := sort.Search(len(pi.names), func(i int) bool { return pi.names[i].pos > pos })
	if i == 0 {
		return pi.names[0].name
	}
	return pi.names[i-1].name
}

func (b *Bound) ppidOf(pid int) int {
	if pi := b.procs[pid]; pi != nil {
		return pi.ppid
	}
	return 0
}

// procUpTo fires the proc probes of the Process records of this segment
// at positions below (or, with inclusive, at most) pos, in order.
func (s *segEval) procUpTo(pos uint64, inclusive bool) {
	evs := s.b.procEvents
	for s.procNext < len(evs) {
		pe := &evs[s.procNext]
		// A segment re-simulates the instructions at positions
		// (From, To], the first one from From itself: a checkpoint is
		// taken after the events of the instruction that reached it, so
		// a Process record at a checkpoint's position (an exec that
		// brought the checkpoint forward) belongs to the segment that
		// ends there, with the syscall it came from.
		if pe.pos < s.part.From || pe.pos == s.part.From && s.k > 0 {
			s.procNext++
			continue
		}
		if pe.pos > pos || pe.pos == pos && !inclusive || pe.pos > s.part.To {
			return
		}
		s.procNext++
		if bps := s.b.proc[pe.kind]; bps != nil && !s.stopped {
			ev := &event{pos: pe.pos, tid: pe.tid, pid: pe.pid}
			ev.args[0] = pe.arg0
			s.fire(bps, ev)
		}
	}
}

// eventPid is the process an event fires in. Every process of a tree
// is recorded: a thread whose id is a pid of the tree is that process's
// main thread; another thread is the process's the re-simulation puts
// it in, else (live) the first process's.
func (s *segEval) eventPid(ev *event) int {
	if ev.pid != 0 {
		return ev.pid
	}
	if _, ok := s.b.procs[ev.tid]; ok {
		return ev.tid
	}
	if s.r != nil {
		if pid := s.r.Pid(ev.tid); pid != 0 {
			return pid
		}
	}
	return s.b.pid
}
