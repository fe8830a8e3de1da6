package ttd

import (
	"fmt"
	"path/filepath"

	"ttd/reader"
	"ttd/tracefile"
)

// Process trees in the debugger. A recording of a process tree
// re-simulates every process on one timeline: every thread of every
// process is live in the session at once, with its registers, and
// travel (steps, breakpoints, searches) is global. Memory is per
// process: the session shows and searches its focus process (Options.Pid)
// only, so the Target reads the memory of a thread of another process
// through a second session focused on that process and kept at the same
// position (opened on first use: it builds that process's access
// summaries, as ttd query --pid does).

// Processes lists the recording's processes (one for a trace of a single
// process; none for a trace that names no process).
func (s *Session) Processes() []tracefile.ProcessInfo {
	if ps := s.tr.Processes(); len(ps) > 0 {
		return ps
	}
	recs, _ := s.tr.File().Processes()
	return tracefile.ProcessTree(recs)
}

// Focus is the process whose memory the session shows and searches
// (Options.Pid; the first process when that was 0), or 0 when the trace
// names no process.
func (s *Session) Focus() int {
	if f := s.tr.Focus(); f != 0 {
		return f
	}
	return s.Pid()
}

// ThreadPid is the process thread tid belongs to at the current position:
// the focus when the trace re-simulates one process, or when no live
// thread has that id.
func (s *Session) ThreadPid(tid int) int {
	if tid != 0 && s.sync() == nil {
		if pid := s.cur.Pid(tid); pid != 0 {
			return pid
		}
	}
	return s.Focus()
}

// ProcessName is the name Linux gives process pid's threads: its
// program's file name, at most 15 bytes (TASK_COMM_LEN), of the last
// program the process ran; "" when the recording does not say.
func (s *Session) ProcessName(pid int) string {
	for _, p := range s.Processes() {
		if p.Pid == pid && len(p.Argv) > 0 {
			return commName(p.Argv[0])
		}
	}
	if mods, err := s.Modules(); err == nil && (pid == 0 || pid == s.Pid()) {
		for _, m := range mods {
			if m.Path != "" && m.Path[0] != '[' {
				return commName(m.Path)
			}
		}
	}
	return ""
}

func commName(path string) string {
	name := filepath.Base(path)
	if len(name) > 15 {
		name = name[:15]
	}
	return name
}

// ProcessSession is the session that shows process pid's memory, at the
// current position: the target's own for its focus (and for pid 0),
// else one focused on pid, opened on first use.
func (t *Target) ProcessSession(pid int) (*Session, error) {
	if pid == 0 || pid == t.s.Focus() {
		return t.s, nil
	}
	ps := t.procs[pid]
	if ps == nil {
		opts := t.s.opts
		opts.Pid = pid
		var err error
		if ps, err = OpenWith(t.s.path, opts); err != nil {
			return nil, fmt.Errorf("process %d: %w", pid, err)
		}
		ps.SetBinaries(t.s.binaries)
		if t.procs == nil {
			t.procs = map[int]*Session{}
		}
		t.procs[pid] = ps
	}
	if ps.Position() != t.s.Position() {
		if _, err := ps.Seek(t.s.Position()); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

// ThreadSession is the session that shows the memory of the process
// thread (goroutine) id belongs to, at the current position.
func (t *Target) ThreadSession(id int) (*Session, error) {
	pid, _ := t.threadPid(id)
	return t.ProcessSession(pid)
}

// Pid is the process thread (goroutine) id belongs to.
func (t *Target) Pid(id int) int {
	pid, _ := t.threadPid(id)
	return pid
}

// ReadThreadMemory is ReadMemory in the address space of the process
// thread (goroutine) id belongs to.
func (t *Target) ReadThreadMemory(id int, addr uint64, buf []byte) (known []bool, err error) {
	s, err := t.ThreadSession(id)
	if err != nil {
		return nil, err
	}
	return readInto(s, addr, buf)
}

func readInto(s *Session, addr uint64, buf []byte) ([]bool, error) {
	m, err := s.ReadMemory(addr, len(buf))
	if err != nil {
		return nil, err
	}
	copy(buf, m.Data)
	return m.Known, nil
}

// threadName is how a debugger lists OS thread tid: "Thread TID" in a
// recording of one process, "PROGRAM[PID] tid TID" in a process tree's.
func (t *Target) threadName(tid int) string {
	if !t.s.tr.Tree() {
		return fmt.Sprintf("Thread %d", tid)
	}
	pid := t.s.ThreadPid(tid)
	return fmt.Sprintf("%s[%d] tid %d", t.s.ProcessName(pid), pid, tid)
}

func (t *Target) closeProcesses() {
	for _, ps := range t.procs {
		ps.Close()
	}
	t.procs = nil
}

// ThreadLabel names thread (goroutine) id's process and thread in a
// recording of a process tree ("PROGRAM[PID] tid TID"); "" in a
// recording of one process.
func (t *Target) ThreadLabel(id int) string {
	if !t.s.tr.Tree() {
		return ""
	}
	g, tid := t.goroutine(id)
	if g != nil {
		return fmt.Sprintf("%s[%d] goroutine %d", t.s.ProcessName(g.pid), g.pid, g.ID)
	}
	if tid == 0 {
		return ""
	}
	return t.threadName(tid)
}

// ProcessEvent is a change of a recorded process tree that a debugger
// reports as gdbserver does: a fork (or vfork, or clone of a new
// process), an exec, or a process's end.
type ProcessEvent struct {
	Kind ProcessEventKind
	// Pid is the process that forked (its Tid the forking thread), that
	// exec'd or that ended; Child the new process of a fork.
	Pid, Tid, Child int
	// VFork: the child shares its parent's memory until it execs or
	// ends (vfork, posix_spawn), the parent waiting.
	VFork bool
	// Path is the program an exec started.
	Path string
}

// ProcessEventKind says what a ProcessEvent is.
type ProcessEventKind int

// Process event kinds.
const (
	ProcessForked ProcessEventKind = iota + 1
	ProcessExecd
	ProcessEnded
)

// BreakProcesses is the breakpoint that stops at every process event
// of a tree (Stop.ProcessEvent describes it).
func BreakProcesses() Breakpoint { return Breakpoint{Kind: BreakEvent, Event: reader.EventProcess} }

// cloneVFork is Linux's CLONE_VFORK.
const cloneVFork = 0x4000

// ProcessEvent describes the process event a stop is at (BreakProcesses).
func (st Stop) ProcessEvent() (ProcessEvent, bool) {
	if st.Reason != StopEvent || st.Event == nil || st.Event.Process == nil {
		return ProcessEvent{}, false
	}
	p := st.Event.Process
	switch p.Event {
	case tracefile.ProcessStarted:
		if p.Tid == 0 {
			return ProcessEvent{}, false // the first process
		}
		return ProcessEvent{Kind: ProcessForked, Pid: p.Ppid, Tid: p.Tid, Child: p.Pid, VFork: p.Flags&cloneVFork != 0}, true
	case tracefile.ProcessExeced:
		e := ProcessEvent{Kind: ProcessExecd, Pid: p.Pid, Tid: p.Pid, Path: string(p.Path)}
		if e.Path == "" && len(p.Argv) > 0 {
			e.Path = p.Argv[0]
		}
		return e, true
	case tracefile.ProcessExited:
		return ProcessEvent{Kind: ProcessEnded, Pid: p.Pid, Tid: p.Tid}, true
	}
	return ProcessEvent{}, false
}
