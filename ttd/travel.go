package ttd

import (
	"errors"
	"fmt"

	"ttd/internal/linux"
	"ttd/reader"
	"ttd/x86"
)

// Direction is the way a travel operation goes.
type Direction uint8

// Directions.
const (
	Forward Direction = iota
	Backward
)

func (d Direction) String() string {
	if d == Backward {
		return "backward"
	}
	return "forward"
}

// BreakpointKind says what a breakpoint stops at.
type BreakpointKind uint8

// Breakpoint kinds (iDNA's SetExecutionBreakPoint, SetMemoryBreakPoint,
// SetEventBreakPoint and SetPositionBreakPoint).
const (
	BreakExec     BreakpointKind = iota + 1 // an instruction address is about to execute
	BreakMemory                             // a memory range is read or written
	BreakEvent                              // an event (syscall, signal, thread, module load)
	BreakPosition                           // a position is reached
)

func (k BreakpointKind) String() string {
	switch k {
	case BreakExec:
		return "execution"
	case BreakMemory:
		return "memory"
	case BreakEvent:
		return "event"
	case BreakPosition:
		return "position"
	}
	return fmt.Sprintf("BreakpointKind(%d)", k)
}

// AccessKind selects reads, writes or both.
type AccessKind uint8

// Access kinds.
const (
	AccessRead      AccessKind = 1
	AccessWrite     AccessKind = 2
	AccessReadWrite            = AccessRead | AccessWrite
)

// Breakpoint is a condition travel stops at. Breakpoints belong to the
// session's timeline, not to a CPU: they work in both directions.
type Breakpoint struct {
	ID   int
	Kind BreakpointKind
	// Addr is the instruction address (BreakExec) or the first byte
	// watched (BreakMemory); Size the bytes watched.
	Addr, Size uint64
	// Access says which accesses a BreakMemory stops at (0 means both).
	Access AccessKind
	// Event is the kind of event of a BreakEvent: reader.EventSyscall,
	// EventSignal, EventThreadStart, EventThreadExit, EventModule...
	Event reader.EventKind
	// Syscall restricts an EventSyscall breakpoint to one syscall by
	// name; Signal an EventSignal breakpoint to one signal number.
	Syscall string
	Signal  int
	// Position is the position of a BreakPosition.
	Position uint64
}

// ErrNoBreakpoint is returned for an unknown breakpoint ID.
var ErrNoBreakpoint = errors.New("no such breakpoint")

// SetBreakpoint adds a breakpoint and returns its ID.
func (s *Session) SetBreakpoint(b Breakpoint) (int, error) {
	switch b.Kind {
	case BreakExec, BreakPosition:
	case BreakMemory:
		if b.Size == 0 || b.Addr+b.Size < b.Addr {
			return 0, fmt.Errorf("memory breakpoint of %d bytes at %#x", b.Size, b.Addr)
		}
		if b.Access == 0 {
			b.Access = AccessReadWrite
		}
	case BreakEvent:
		if b.Event == 0 {
			return 0, errors.New("event breakpoint without an event kind")
		}
		if b.Syscall != "" {
			if _, ok := linux.SyscallNumber(b.Syscall); !ok {
				return 0, fmt.Errorf("unknown syscall %q", b.Syscall)
			}
		}
	default:
		return 0, fmt.Errorf("unknown breakpoint kind %d", b.Kind)
	}
	s.nextBP++
	b.ID = s.nextBP
	s.bps = append(s.bps, b)
	return b.ID, nil
}

// ClearBreakpoint removes a breakpoint.
func (s *Session) ClearBreakpoint(id int) error {
	for i, b := range s.bps {
		if b.ID == id {
			s.bps = append(s.bps[:i], s.bps[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("breakpoint %d: %w", id, ErrNoBreakpoint)
}

// ClearBreakpoints removes every breakpoint.
func (s *Session) ClearBreakpoints() { s.bps = nil }

// Breakpoints lists the breakpoints.
func (s *Session) Breakpoints() []Breakpoint { return append([]Breakpoint(nil), s.bps...) }

// Step executes one instruction forward, or goes back one (globally:
// whichever thread ran it).
func (s *Session) Step(dir Direction) (Stop, error) {
	if dir == Backward {
		if s.pos == 0 {
			return s.stopHere(StopStartOfTrace), nil
		}
		return s.moveTo(s.pos-1, StopStep)
	}
	if s.pos >= s.end {
		return s.stopHere(StopEndOfTrace), nil
	}
	return s.moveTo(s.pos+1, StopStep)
}

func (s *Session) moveTo(pos uint64, reason StopReason) (Stop, error) {
	if err := s.seekCur(pos); err != nil {
		return Stop{}, err
	}
	s.pos = s.cur.Position()
	if reason == StopStep && s.pos >= s.end {
		reason = StopEndOfTrace
	}
	return s.stopHere(reason), nil
}

// StepThread steps thread tid by one of its own instructions: forward,
// it lets tid execute its next instruction and stops before the one
// after; backward, it stops before tid's previous instruction. Other
// threads run (or un-run) in between as they did.
func (s *Session) StepThread(tid int, dir Direction) (Stop, error) {
	if err := s.sync(); err != nil {
		return Stop{}, err
	}
	// The common case, one thread running: a global step.
	if dir == Backward {
		if s.pos == 0 {
			return s.stopHere(StopStartOfTrace), nil
		}
		if err := s.seekCur(s.pos - 1); err != nil {
			return Stop{}, err
		}
		if cur, _ := s.cur.Current(); cur == tid {
			s.pos = s.cur.Position()
			return s.stopHere(StopStep), nil
		}
	} else {
		if s.pos >= s.end {
			return s.stopHere(StopEndOfTrace), nil
		}
		if cur, _ := s.cur.Current(); cur == tid {
			if err := s.seekCur(s.pos + 1); err != nil {
				return Stop{}, err
			}
			if next, _ := s.cur.Current(); next == tid || s.cur.Position() >= s.end {
				return s.moveTo(s.cur.Position(), StopStep)
			}
		}
	}
	p := &probe{forward: dir == Forward, from: s.pos, tid: tid}
	var err error
	if dir == Forward {
		err = s.scanForward(p, s.end)
	} else {
		err = s.scanBack(p, 0)
	}
	if err != nil {
		return Stop{}, err
	}
	if !p.found {
		if dir == Forward {
			return s.moveTo(s.end, StopEndOfTrace)
		}
		return s.moveTo(0, StopStartOfTrace)
	}
	return s.moveTo(p.stop, StopStep)
}

// Continue travels in dir until a breakpoint (or, with StopOnSignal, a
// signal delivery) or the end of the trace in that direction. A
// breakpoint at the current position does not count: going forward the
// instruction there executes first.
func (s *Session) Continue(dir Direction) (Stop, error) {
	return s.ContinueMatch(dir, nil)
}

// ContinueMatch is Continue that also stops before an instruction for
// which match (when not nil) reports true (StopMatch), whichever comes
// first: a Search that honours the breakpoints. Like Search, a predicate
// re-simulates every instruction in between.
func (s *Session) ContinueMatch(dir Direction, match InstMatcher) (Stop, error) {
	from := s.pos
	fwd := dir == Forward
	// The limit set by position breakpoints and events, which need no
	// re-simulation to find.
	best := Stop{Reason: StopEndOfTrace, Position: s.end}
	if !fwd {
		best = Stop{Reason: StopStartOfTrace, Position: 0}
	}
	better := func(pos uint64) bool {
		if fwd {
			return pos > from && pos < best.Position
		}
		return pos < from && pos > best.Position
	}
	for _, b := range s.bps {
		if b.Kind == BreakPosition && better(b.Position) {
			best = Stop{Reason: StopPosition, Position: b.Position, Breakpoint: b.ID}
		}
	}
	if ev, id, reason, err := s.findEvent(from, fwd); err != nil {
		return Stop{}, err
	} else if ev != nil && better(ev.Position) {
		best = Stop{Reason: reason, Position: ev.Position, Breakpoint: id, Event: ev}
	}
	p := &probe{forward: fwd, from: from, match: match}
	for _, b := range s.bps {
		switch b.Kind {
		case BreakExec:
			p.pcs = append(p.pcs, b.Addr)
			p.pcIDs = append(p.pcIDs, b.ID)
		case BreakMemory:
			p.mems = append(p.mems, watch{id: b.ID, lo: b.Addr, hi: b.Addr + b.Size,
				read: b.Access&AccessRead != 0, write: b.Access&AccessWrite != 0})
		}
	}
	p.shared = s.sharedAt(p.mems, from)
	if len(p.pcs)+len(p.mems) > 0 || match != nil {
		var err error
		if fwd {
			err = s.scanForward(p, best.Position)
		} else {
			err = s.scanBack(p, best.Position)
		}
		if err != nil {
			return Stop{}, err
		}
		if p.found && (p.stop == best.Position || better(p.stop)) {
			best = Stop{Reason: p.reason, Position: p.stop, Breakpoint: p.bp}
			if p.reason == StopWatchpoint {
				a := p.acc
				best.Access = &a
			}
		}
	}
	st, err := s.moveTo(best.Position, best.Reason)
	if err != nil {
		return Stop{}, err
	}
	st.Breakpoint, st.Access, st.Event = best.Breakpoint, best.Access, best.Event
	if err := s.watchValues(&st); err != nil {
		return Stop{}, err
	}
	return st, nil
}

// findEvent finds the next (fwd) or previous event after or before from
// that an event breakpoint (or StopOnSignal) stops at.
func (s *Session) findEvent(from uint64, fwd bool) (*reader.Event, int, StopReason, error) {
	match := func(ev *reader.Event) (int, StopReason, bool) {
		for _, b := range s.bps {
			if b.Kind != BreakEvent || b.Event != ev.Kind {
				continue
			}
			switch {
			case ev.Kind == reader.EventSyscall && b.Syscall != "" && linux.SyscallName(ev.Record.Syscall.Nr) != b.Syscall:
			case ev.Kind == reader.EventSignal && b.Signal != 0 && ev.Record.Signal.Signo != b.Signal:
			default:
				return b.ID, StopEvent, true
			}
		}
		if s.StopOnSignal && ev.Kind == reader.EventSignal {
			return 0, StopSignal, true
		}
		return 0, 0, false
	}
	any := s.StopOnSignal
	for _, b := range s.bps {
		any = any || b.Kind == BreakEvent
	}
	if !any {
		return nil, 0, 0, nil
	}
	var found *reader.Event
	var fid int
	var freason StopReason
	if fwd {
		err := s.tr.ScanEvents(s.cps[s.segOf(from)], func(ev *reader.Event) bool {
			if ev.Position <= from {
				return true
			}
			if id, reason, ok := match(ev); ok {
				e := *ev
				found, fid, freason = &e, id, reason
				return false
			}
			return true
		})
		return found, fid, freason, err
	}
	for k := s.segOf(from); k >= 0 && found == nil; k-- {
		end := s.segEnd(k)
		err := s.tr.ScanEvents(s.cps[k], func(ev *reader.Event) bool {
			if ev.Position >= from || ev.Position > end {
				return false
			}
			if id, reason, ok := match(ev); ok {
				e := *ev
				found, fid, freason = &e, id, reason
			}
			return true
		})
		if err != nil {
			return nil, 0, 0, err
		}
	}
	return found, fid, freason, nil
}

// InstMatcher is a search predicate: it is called before every
// instruction re-simulated, with the executing thread, its CPU (registers
// as they are before the instruction; c.RIP may lag inside a block, use
// in.PC) and the instruction, and reports a hit. It must not keep c.
type InstMatcher func(tid int, c *x86.CPU, in *x86.Inst) bool

// Search travels in dir to the next (or previous) instruction for which
// match reports true, stopping before it (StopMatch), or to the end (or
// start) of the trace. The instruction at the current position does not
// count going forward. Unlike breakpoints, a predicate cannot use the
// index to skip checkpoint intervals: every instruction in between is
// re-simulated with match.
func (s *Session) Search(dir Direction, match InstMatcher) (Stop, error) {
	p := &probe{forward: dir == Forward, from: s.pos, match: match}
	var err error
	if p.forward {
		err = s.scanForward(p, s.end)
	} else {
		err = s.scanBack(p, 0)
	}
	if err != nil {
		return Stop{}, err
	}
	switch {
	case p.found:
		return s.moveTo(p.stop, StopMatch)
	case p.forward:
		return s.moveTo(s.end, StopEndOfTrace)
	}
	return s.moveTo(0, StopStartOfTrace)
}
