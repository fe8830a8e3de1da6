package reader

import (
	"fmt"

	"ttd/tracefile"
)

// EventKind says what an Event is.
type EventKind uint8

// Event kinds: the control records a re-simulation acts on.
const (
	EventSyscall      EventKind = iota + 1 // a completed syscall (Record.Syscall)
	EventSignal                            // a signal delivery (Record.Signal)
	EventThreadStart                       // Record.ThreadStart
	EventThreadExit                        // Record.ThreadExit
	EventThreadSwitch                      // the scheduler switched to Tid
	EventModule                            // an executable or library was mapped (Module)
	EventMmap                              // Record.Mmap
	EventMunmap                            // Record.Munmap
	EventMprotect                          // Record.Mprotect
	EventCheckpoint                        // Record.Checkpoint
	EventExit                              // the program ended (Record.Exit)
	EventProcess                           // a process started, execed or ended (Process)
)

var eventNames = [...]string{"", "syscall", "signal", "thread start", "thread exit", "thread switch",
	"module load", "mmap", "munmap", "mprotect", "checkpoint", "exit", "process"}

func (k EventKind) String() string {
	if int(k) < len(eventNames) && k != 0 {
		return eventNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", k)
}

// Event is an execution event at a position: it takes effect there, so
// the state at Position includes it (a syscall's result and the memory
// the kernel wrote, a signal frame, a new thread).
type Event struct {
	Kind     EventKind
	Position uint64
	Tid      int
	// Record is the control record (nil for EventModule). It belongs to
	// the trace's decoded chunk and must not be modified.
	Record *tracefile.Record
	// Module is set for EventModule (without the embedded file).
	Module *tracefile.Module
	// Process is set for EventProcess.
	Process *tracefile.Process
	chunk   int
}

// event is eventOf c's record (a key frame that is only one is none).
func (c *ctrl) event(pos uint64, cur int) (Event, bool) {
	if c.rec == nil {
		return Event{}, false
	}
	return eventOf(c.rec, pos, cur)
}

// eventOf classifies a control record; ok is false for records that are
// not events (key frames other than thread switches, opaque records).
func eventOf(rec *tracefile.Record, pos uint64, cur int) (Event, bool) {
	ev := Event{Position: pos, Record: rec, Tid: cur}
	switch rec.Kind {
	case tracefile.KindSyscall:
		ev.Kind, ev.Tid = EventSyscall, rec.Syscall.Tid
	case tracefile.KindSignal:
		if rec.Signal.Signo == 0 {
			return ev, false // a ptrace-stop or a tracer's registers: no delivery
		}
		ev.Kind, ev.Tid = EventSignal, rec.Signal.Tid
	case tracefile.KindThreadStart:
		ev.Kind, ev.Tid = EventThreadStart, rec.ThreadStart.Tid
	case tracefile.KindThreadExit:
		ev.Kind, ev.Tid = EventThreadExit, rec.ThreadExit.Tid
	case tracefile.KindKeyFrame:
		if rec.KeyFrame.Kind != tracefile.KeyFrameThreadSwitch {
			return ev, false
		}
		ev.Kind, ev.Tid = EventThreadSwitch, rec.KeyFrame.Tid
	case tracefile.KindMmap:
		ev.Kind = EventMmap
	case tracefile.KindMunmap:
		ev.Kind = EventMunmap
	case tracefile.KindMprotect:
		ev.Kind = EventMprotect
	case tracefile.KindCheckpoint:
		ev.Kind, ev.Tid = EventCheckpoint, rec.Checkpoint.CurrentTid
	case tracefile.KindExit:
		ev.Kind = EventExit
	default:
		return ev, false
	}
	return ev, true
}

// ScanEvents calls fn for every event from checkpoint from to the end of
// the trace, in order, with the positions a re-simulation would report,
// without re-simulating: it only decodes the control records. It stops
// when fn returns false.
func (t *Trace) ScanEvents(from Checkpoint, fn func(ev *Event) bool) error {
	pos := from.Position
	cur := 0
	for i := from.Chunk; i < len(t.chunks); i++ {
		ch, err := t.chunk(i)
		if err != nil {
			return err
		}
		if i > from.Chunk {
			// A scan past its first chunk goes on (ttd probe's
			// programs of a tree, ttd calls' processes): it waits
			// on decoding, so decode further ahead on every core.
			t.prefetchAhead(i)
		}
		if from.Chunk == 0 {
			t.cache.scannedFromStart(i)
		}
		start := 0
		if i == from.Chunk {
			if start, err = ctrlOf(from, ch); err != nil {
				return err
			}
		}
		for k := start; k < len(ch.ctrls); k++ {
			c := &ch.ctrls[k]
			if p, ok := ctrlPosition(c); ok {
				pos = p
			}
			switch c.kind {
			case tracefile.KindKeyFrame:
				cur = c.kf.Tid
			case tracefile.KindCheckpoint:
				cur = c.rec.Checkpoint.CurrentTid
			}
			if c.proc != nil {
				ev := Event{Kind: EventProcess, Position: pos, Tid: c.proc.Tid, Record: c.rec, Process: c.proc, chunk: i}
				if !fn(&ev) {
					return nil
				}
			}
			if ev, ok := c.event(pos, cur); ok {
				ev.chunk = i
				if !fn(&ev) {
					return nil
				}
			}
			for m := range c.mods {
				ev := Event{Kind: EventModule, Position: pos, Tid: cur, Module: &c.mods[m], chunk: i}
				if !fn(&ev) {
					return nil
				}
			}
		}
	}
	return nil
}
