package syscalls

import (
	"fmt"
	"strconv"

	"ttd/tracefile"
)

// A recording of a process tree (header processes=tree) re-simulates
// every process: their calls are in the trace, and a ProcessSink sees
// their starts, execs and ends at their positions, which strace -f
// prints as "[pid N] +++ exited with S +++". Memory is tracked in the
// focus process only, so the other processes' buffers print as
// addresses. Older traces hold the first process's calls only:
// Stats.Unrecorded counts the other processes.

// treeSink is a Sink told that the trace re-simulates every process of
// the tree (their calls are in it).
type treeSink interface{ tree() }

// ProcessSink is a Sink that wants the process events of the tree, in
// position order among the calls.
type ProcessSink interface {
	Process(p *tracefile.Process) error
}

// processes returns the trace's process events other than the first
// process's start and end (End reports that one), how many processes
// besides the first there were, and the first process's start (nil if
// the trace has none).
func processes(f *tracefile.Reader) ([]tracefile.Process, int, *tracefile.Process, error) {
	all, err := f.Processes()
	if err != nil {
		return nil, 0, nil, err
	}
	if len(all) == 0 {
		return nil, 0, nil, nil
	}
	first := all[0].Pid
	var start *tracefile.Process
	if all[0].Event == tracefile.ProcessStarted {
		start = &all[0]
	}
	var out []tracefile.Process
	n := 0
	for _, p := range all {
		if p.Pid == first && p.Event != tracefile.ProcessExeced {
			continue
		}
		if p.Event == tracefile.ProcessStarted {
			n++
		}
		out = append(out, p)
	}
	return out, n, start, nil
}

// Process prints a child's end as strace -f does; from a child's start
// on, every line gets a "[pid N] " prefix.
func (s *straceSink) Process(p *tracefile.Process) error {
	switch p.Event {
	case tracefile.ProcessStarted:
		s.many = true
		if s.children == nil {
			s.children = map[int]bool{}
		}
		s.children[p.Pid] = true
	case tracefile.ProcessExited:
		b := append(s.line[:0], "[pid "...)
		b = strconv.AppendInt(b, int64(p.Pid), 10)
		b = append(b, "] "...)
		switch p.Exit.Kind {
		case tracefile.ExitExited:
			b = fmt.Appendf(b, "+++ exited with %d +++\n", p.Exit.Code)
		default:
			b = fmt.Appendf(b, "+++ killed by %s +++\n", sigName(p.Exit.Signo))
		}
		s.line = b
		_, err := s.w.Write(b)
		return err
	}
	return nil
}

// Process writes {"pos":…,"process":"started","pid":…,"ppid":…,
// "recorded":false} (and "path", "argv" for an exec, "exit", "code",
// "signal" for an end).
func (s *jsonSink) Process(p *tracefile.Process) error {
	b := append(s.line[:0], `{"pos":`...)
	b = strconv.AppendUint(b, p.Position, 10)
	b = append(b, `,"process":`...)
	b = appendJSONString(b, []byte(p.Event.String()))
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(p.Pid), 10)
	b = append(b, `,"ppid":`...)
	b = strconv.AppendInt(b, int64(p.Ppid), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(p.Tid), 10)
	b = append(b, `,"recorded":`...)
	b = strconv.AppendBool(b, s.recorded)
	switch p.Event {
	case tracefile.ProcessExeced:
		b = append(b, `,"path":`...)
		b = appendJSONString(b, []byte(p.Path))
		b = append(b, `,"argv":[`...)
		for i, a := range p.Argv {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, []byte(a))
		}
		b = append(b, ']')
	case tracefile.ProcessExited:
		b = append(b, `,"exit":`...)
		b = appendJSONString(b, []byte(p.Exit.Kind.String()))
		b = append(b, `,"code":`...)
		b = strconv.AppendInt(b, int64(p.Exit.Code), 10)
		b = append(b, `,"signal":`...)
		b = appendJSONString(b, []byte(sigName(p.Exit.Signo)))
	}
	b = append(b, "}\n"...)
	s.line = b
	_, err := s.w.Write(b)
	return err
}

func (s *jsonSink) tree() { s.recorded = true }
