package gdbremote

import (
	"fmt"

	"ttd/ttd"
)

// Fork and exec events (fork-events+, vfork-events+, exec-events+), as
// gdbserver reports them. gdb knows the processes of a recorded tree
// the way it knows live ones: the first, then each child a fork event
// announces, until it detaches it (D;PID: follow-fork-mode and
// detach-on-fork decide which). The thread list shows the threads of
// those processes only, and stops in other processes are passed over
// (the replay runs every process; a detached one runs free, as it would
// natively). An exec event names the new program, so that gdb loads its
// symbols and relocates it (a PIE) from that process's auxiliary
// vector and library list. Breakpoints belong to the process gdb
// selected when it inserted them (Hg), are inherited by a fork's child
// and dropped by an exec, as gdbserver keeps them. A vfork's parent
// resumes when its child execs or ends: then a vforkdone stop reply
// tells gdb, which until then keeps the parent's breakpoints out of the
// memory the two share (after the child's exec event, if gdb sees that).
//
// Going backwards no process event is reported: gdb has no way to
// un-fork or un-exec an inferior. A reverse-continue stops at the
// breakpoints of the processes gdb knows, as forward.

// follow is the state of fork and exec events on a connection.
type follow struct {
	// on: gdb accepted the events and the recording is a tree.
	on                   bool
	forks, vforks, execs bool
	// attached are the processes gdb knows.
	attached map[int64]bool
	// bp is the session's breakpoint at process events.
	bp int
	// bpPids are the processes each Z breakpoint was inserted in.
	bpPids map[zKey]map[int64]bool
	// event is the process event the next stop reply reports.
	event *ttd.ProcessEvent
	// vforks are the vfork children reported to gdb that have not
	// exec'd or ended yet: the thread of the parent that waits.
	vfork map[int64]ThreadID
	// done is the parent thread of a vforkdone stop reply due: at this
	// stop if it has no event of its own, else at the next forward
	// continue or step, which then does not run.
	done *ThreadID
}

// negotiate answers the event features of gdb's qSupported: the ones it
// offered, which the server then reports.
func (srv *Server) negotiate(features []string) (string, error) {
	f := &srv.fol
	var out string
	for _, x := range features {
		switch x {
		case "fork-events+":
			f.forks, out = true, out+";fork-events+"
		case "vfork-events+":
			f.vforks, out = true, out+";vfork-events+"
		case "exec-events+":
			f.execs, out = true, out+";exec-events+"
		}
	}
	if (f.forks || f.vforks || f.execs) && srv.s.Trace().Tree() && !f.on {
		id, err := srv.s.SetBreakpoint(ttd.BreakProcesses())
		if err != nil {
			return "", err
		}
		f.on, f.bp = true, id
		f.attached = map[int64]bool{srv.pid: true}
		f.bpPids = map[zKey]map[int64]bool{}
	}
	return out, nil
}

// selectedPid is the process gdb selected (Hg), else the stopped
// thread's.
func (srv *Server) selectedPid() int64 {
	switch {
	case srv.gPid > 0:
		return srv.gPid
	case srv.gThread > 0:
		return srv.threadPid(int(srv.gThread))
	}
	return srv.threadPid(srv.stopThread())
}

// known says whether gdb knows thread tid's process.
func (srv *Server) known(tid int) bool {
	return !srv.fol.on || srv.fol.attached[srv.threadPid(tid)]
}

// detach forgets process pid: its stops are no longer reported.
func (srv *Server) detach(pid int64) {
	f := &srv.fol
	delete(f.attached, pid)
	for k, pids := range f.bpPids {
		if pids[pid] {
			srv.dropBreak(k, pid)
		}
	}
}

// addBreak records that breakpoint k is inserted in the selected
// process; it reports whether the session already has it.
func (srv *Server) addBreak(k zKey) {
	if !srv.fol.on {
		return
	}
	pids := srv.fol.bpPids[k]
	if pids == nil {
		pids = map[int64]bool{}
		srv.fol.bpPids[k] = pids
	}
	pids[srv.selectedPid()] = true
}

// dropBreak removes breakpoint k from process pid, and from the session
// when no process has it any more.
func (srv *Server) dropBreak(k zKey, pid int64) {
	if pids := srv.fol.bpPids[k]; pids != nil {
		delete(pids, pid)
		if len(pids) > 0 {
			return
		}
		delete(srv.fol.bpPids, k)
	}
	if id, ok := srv.bps[k]; ok {
		srv.s.ClearBreakpoint(id)
		delete(srv.bps, k)
		delete(srv.kinds, id)
	}
}

// hidden decides whether gdb must not see stop st (dir: the travel's
// direction), and prepares the report of a process event it must see.
func (srv *Server) hidden(st ttd.Stop, dir ttd.Direction) bool {
	f := &srv.fol
	if !f.on {
		return false
	}
	if pe, ok := st.ProcessEvent(); ok {
		if dir == ttd.Backward {
			return true
		}
		done := srv.vforkDone(pe)
		if !f.attached[int64(pe.Pid)] {
			return !done
		}
		switch {
		case pe.Kind == ttd.ProcessForked && (pe.VFork && f.vforks || !pe.VFork && f.forks):
			if pe.VFork {
				if f.vfork == nil {
					f.vfork = map[int64]ThreadID{}
				}
				f.vfork[int64(pe.Child)] = ThreadID{Pid: int64(pe.Pid), Tid: int64(pe.Tid)}
			}
			// The child is gdb's until it detaches it, with its
			// parent's breakpoints (a copy of its memory).
			f.attached[int64(pe.Child)] = true
			for _, pids := range f.bpPids {
				if pids[int64(pe.Pid)] {
					pids[int64(pe.Child)] = true
				}
			}
		case pe.Kind == ttd.ProcessExecd && f.execs:
			// A new address space: gdb inserts its breakpoints again.
			for k, pids := range f.bpPids {
				if pids[int64(pe.Pid)] {
					srv.dropBreak(k, int64(pe.Pid))
				}
			}
		default:
			return !done
		}
		f.event = &pe
		return false
	}
	switch st.Reason {
	case ttd.StopBreakpoint:
		pid := srv.threadPid(st.Tid)
		if !f.attached[pid] {
			return true
		}
		if k, ok := srv.kinds[st.Breakpoint]; ok && f.bpPids[k] != nil && !f.bpPids[k][pid] {
			return true // the address is another program's code here
		}
	case ttd.StopWatchpoint, ttd.StopSignal:
		tid := st.Tid
		if st.Access != nil {
			tid = st.Access.Tid
		} else if st.Event != nil && st.Event.Tid != 0 {
			tid = st.Event.Tid
		}
		return !f.attached[srv.threadPid(tid)]
	}
	return false
}

// vforkDone notes in f.done the vforkdone stop reply that process
// event pe causes, and reports whether there is one: pe is the exec or
// end of a vfork child whose parent gdb knows.
func (srv *Server) vforkDone(pe ttd.ProcessEvent) bool {
	f := &srv.fol
	if pe.Kind != ttd.ProcessExecd && pe.Kind != ttd.ProcessEnded {
		return false
	}
	parent, ok := f.vfork[int64(pe.Pid)]
	if !ok {
		return false
	}
	delete(f.vfork, int64(pe.Pid))
	if !f.attached[parent.Pid] {
		return false
	}
	f.done = &parent
	return true
}

// doneReply returns the vforkdone stop reply due, and forgets it.
func (srv *Server) doneReply() (string, bool) {
	p := srv.fol.done
	if p == nil {
		return "", false
	}
	srv.fol.done = nil
	srv.lastTid = int(p.Tid)
	srv.gThread, srv.cThread, srv.gPid = 0, 0, 0
	return fmt.Sprintf("T%02xthread:%s;core:0;vforkdone:;", sigTRAP, *p), true
}

// eventReply is the stop reply of a process event: the thread that
// caused it and what happened.
func (srv *Server) eventReply(pe *ttd.ProcessEvent) string {
	var what string
	switch pe.Kind {
	case ttd.ProcessForked:
		name := "fork"
		if pe.VFork {
			name = "vfork"
		}
		what = fmt.Sprintf("%s:%s;", name, ThreadID{Pid: int64(pe.Child), Tid: int64(pe.Child)})
	case ttd.ProcessExecd:
		what = "exec:" + string(HexBytes(nil, []byte(pe.Path))) + ";"
	}
	srv.lastTid = pe.Tid
	srv.gThread, srv.cThread, srv.gPid = 0, 0, 0
	return fmt.Sprintf("T%02xthread:%s;core:0;%s", sigTRAP, ThreadID{Pid: int64(pe.Pid), Tid: int64(pe.Tid)}, what)
}
