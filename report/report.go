package report

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"

	"ttd/calls"
	"ttd/internal/linux"
	"ttd/reader"
	"ttd/tracefile"
)

// Options configure a report.
type Options struct {
	// Trace is the recording's path, for the commands the page shows.
	Trace string
	// Diff, when set, adds the differences with DiffTrace.
	Diff      *calls.DiffResult
	DiffTrace string
	// MaxMarks bounds the syscall marks (0: DefaultMaxMarks); signals
	// are always kept.
	MaxMarks int
}

// Defaults.
const (
	DefaultMaxMarks = 20000
	maxRuns         = 20000
	// flameMin is the smallest share of the instructions a flame graph
	// box gets drawn for.
	flameMin = 0.0005
	hotCount = 30
)

// Data is what the page shows, as the page's script reads it (JSON).
type Data struct {
	Program      string      `json:"program"`
	Trace        string      `json:"trace"`
	End          uint64      `json:"end"`
	Instructions uint64      `json:"instructions"`
	Lanes        []Lane      `json:"lanes"`
	Processes    []Process   `json:"processes"`
	Marks        []Mark      `json:"marks"`
	MarksShown   int         `json:"marksShown"`
	MarksTotal   int         `json:"marksTotal"`
	Checkpoints  []uint64    `json:"checkpoints"`
	Flame        *Frame      `json:"flame"`
	Hot          []Hot       `json:"hot"`
	DiffTrace    string      `json:"diffTrace,omitempty"`
	Diff         []DiffRow   `json:"diff,omitempty"`
	Divergence   *Divergence `json:"divergence,omitempty"`
	Exit         string      `json:"exit"`
}

// Lane is a thread: when it lived and when it ran.
type Lane struct {
	Tid   int         `json:"tid"`
	Pid   int         `json:"pid"`
	Start uint64      `json:"start"`
	End   uint64      `json:"end"`
	Runs  [][2]uint64 `json:"runs"`
}

// Process groups the lanes of one process's threads.
type Process struct {
	Pid   int    `json:"pid"`
	Ppid  int    `json:"ppid"`
	Name  string `json:"name"` // calls.Process.Name
	Argv  string `json:"argv"`
	Start uint64 `json:"start"`
	End   uint64 `json:"end"`
}

// Mark is an event on a lane.
type Mark struct {
	Pos   uint64 `json:"pos"`
	Tid   int    `json:"tid"`
	Kind  string `json:"kind"` // syscall, signal, start, exit, process
	Label string `json:"label"`
}

// Frame is a flame graph box: a call path, its instructions (total and
// self), calls and first position.
type Frame struct {
	Name     string   `json:"n"`
	Site     string   `json:"site,omitempty"`
	Total    uint64   `json:"v"`
	Self     uint64   `json:"s"`
	Count    uint64   `json:"c"`
	First    uint64   `json:"f"`
	Children []*Frame `json:"k,omitempty"`
}

// Hot is a function and the instructions run in it.
type Hot struct {
	Func  string `json:"func"`
	Self  uint64 `json:"self"`
	Calls uint64 `json:"calls"`
	First uint64 `json:"first"`
}

// DiffRow is a row of the differences with another recording.
type DiffRow struct {
	Only string `json:"only"`
	Path string `json:"path"`
	PosA uint64 `json:"posA"`
	PosB uint64 `json:"posB"`
}

// Divergence is the first point where the recordings differ.
type Divergence struct {
	PathA string `json:"pathA"`
	PathB string `json:"pathB"`
	PosA  uint64 `json:"posA"`
	PosB  uint64 `json:"posB"`
}

// Build gathers a report's data: the events from t (without
// re-simulation) and the call tree p.
func Build(t *reader.Trace, p *calls.Profile, opts Options) (*Data, error) {
	d := &Data{Program: t.Header.ProgramPath, Trace: opts.Trace, End: t.End(), Instructions: p.Instructions, Exit: "unknown"}
	if opts.MaxMarks <= 0 {
		opts.MaxMarks = DefaultMaxMarks
	}
	lanes := map[int]*Lane{}
	lane := func(tid int, pos uint64) *Lane {
		l := lanes[tid]
		if l == nil {
			l = &Lane{Tid: tid, Start: pos, End: d.End}
			lanes[tid] = l
		}
		return l
	}
	var syscalls []Mark
	var others []Mark
	cur, since := 0, uint64(0)
	run := func(pos uint64) {
		if cur != 0 && pos > since {
			l := lane(cur, since)
			if n := len(l.Runs); n > 0 && l.Runs[n-1][1] == since {
				l.Runs[n-1][1] = pos
			} else {
				l.Runs = append(l.Runs, [2]uint64{since, pos})
			}
		}
		since = pos
	}
	err := t.ScanEvents(reader.Checkpoint{}, func(ev *reader.Event) bool {
		switch ev.Kind {
		case reader.EventThreadStart:
			lane(ev.Tid, ev.Position)
			others = append(others, Mark{ev.Position, ev.Tid, "start", fmt.Sprintf("thread %d starts", ev.Tid)})
			if cur == 0 {
				cur, since = ev.Tid, ev.Position
			}
		case reader.EventProcess:
			pr := ev.Process
			switch pr.Event {
			case tracefile.ProcessStarted:
				if pr.Tid != 0 {
					others = append(others, Mark{ev.Position, pr.Tid, "process", fmt.Sprintf("thread %d forks process %d", pr.Tid, pr.Pid)})
				}
			case tracefile.ProcessExeced:
				others = append(others, Mark{ev.Position, pr.Tid, "process", fmt.Sprintf("process %d execs %s", pr.Pid, strings.Join(pr.Argv, " "))})
			case tracefile.ProcessExited:
				others = append(others, Mark{ev.Position, pr.Tid, "process", fmt.Sprintf("process %d ends: %s", pr.Pid, pr.Exit.Kind)})
			}
		case reader.EventThreadExit:
			lane(ev.Tid, ev.Position).End = ev.Position
			others = append(others, Mark{ev.Position, ev.Tid, "exit", fmt.Sprintf("thread %d exits (status %d)", ev.Tid, ev.Record.ThreadExit.Status)})
		case reader.EventThreadSwitch:
			run(ev.Position)
			cur = ev.Tid
		case reader.EventCheckpoint:
			d.Checkpoints = append(d.Checkpoints, ev.Position)
		case reader.EventSyscall:
			sc := ev.Record.Syscall
			syscalls = append(syscalls, Mark{ev.Position, sc.Tid, "syscall", fmt.Sprintf("%s → %d", linux.SyscallName(sc.Nr), sc.Result)})
		case reader.EventSignal:
			sg := ev.Record.Signal
			others = append(others, Mark{ev.Position, sg.Tid, "signal", fmt.Sprintf("signal %d delivered (code %d, address %#x)", sg.Signo, sg.Code, sg.Addr)})
		case reader.EventExit:
			e := ev.Record.Exit
			d.Exit = fmt.Sprintf("%s (code %d, signal %d) at position %d", e.Kind, e.Code, e.Signo, e.Position)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	run(d.End)
	for _, l := range lanes {
		if len(l.Runs) > maxRuns {
			l.Runs = coarsen(l.Runs, maxRuns)
		}
		if p.Tree != nil {
			l.Pid = p.Tree.PidOf(l.Tid)
		}
		d.Lanes = append(d.Lanes, *l)
	}
	sort.Slice(d.Lanes, func(i, j int) bool { return d.Lanes[i].Start < d.Lanes[j].Start })
	if p.Tree != nil {
		for _, pr := range p.Tree.Procs {
			d.Processes = append(d.Processes, Process{pr.Pid, pr.Ppid, pr.Name, strings.Join(pr.Argv, " "), pr.Start, pr.End})
		}
	}
	d.MarksTotal = len(syscalls) + len(others)
	if len(syscalls) > opts.MaxMarks {
		// Evenly spaced, so that the page shows where syscalls are
		// dense.
		kept := make([]Mark, 0, opts.MaxMarks)
		for i := 0; i < opts.MaxMarks; i++ {
			kept = append(kept, syscalls[i*len(syscalls)/opts.MaxMarks])
		}
		syscalls = kept
	}
	d.Marks = append(others, syscalls...)
	sort.SliceStable(d.Marks, func(i, j int) bool { return d.Marks[i].Pos < d.Marks[j].Pos })
	d.MarksShown = len(d.Marks)
	root := p.Merged()
	if len(d.Processes) > 1 {
		root = p.ByProcess()
	}
	d.Flame = flame(root, root.Total)
	d.Flame.Name = "all threads"
	d.Hot = hottest(root)
	if opts.Diff != nil {
		d.DiffTrace = opts.DiffTrace
		for _, r := range opts.Diff.Rows {
			only := opts.Trace
			if r.Side == "n" {
				only = opts.DiffTrace
			}
			d.Diff = append(d.Diff, DiffRow{only, r.String(), r.PosA, r.PosB})
		}
		if dv := opts.Diff.Divergence; dv.Found {
			d.Divergence = &Divergence{stepsString(dv.PathA), stepsString(dv.PathB), dv.PosA, dv.PosB}
		}
	}
	return d, nil
}

func stepsString(p []calls.Step) string {
	s := ""
	for i, st := range p {
		if i > 0 {
			s += " → "
		}
		s += st.Func
	}
	return s
}

// coarsen merges runs separated by the smallest gaps until n remain.
func coarsen(runs [][2]uint64, n int) [][2]uint64 {
	span := runs[len(runs)-1][1] - runs[0][0]
	gap := span / uint64(n)
	out := runs[:1]
	for _, r := range runs[1:] {
		if last := &out[len(out)-1]; r[0]-last[1] <= gap {
			last[1] = r[1]
		} else {
			out = append(out, r)
		}
	}
	return out
}

// flame converts a call tree, leaving out the boxes too narrow to see.
func flame(n *calls.Node, all uint64) *Frame {
	f := &Frame{Name: n.Func, Site: n.SiteName, Total: n.Total, Self: n.Self, Count: n.Count, First: n.First}
	for _, c := range n.Children {
		if all > 0 && float64(c.Total)/float64(all) >= flameMin {
			f.Children = append(f.Children, flame(c, all))
		}
	}
	return f
}

// hottest adds up the instructions each function ran itself, over all
// its call paths.
func hottest(root *calls.Node) []Hot {
	by := map[string]*Hot{}
	root.Walk(func(n *calls.Node) bool {
		h := by[n.Func]
		if h == nil {
			h = &Hot{Func: n.Func, First: n.First}
			by[n.Func] = h
		}
		h.Self += n.Self
		h.Calls += n.Count
		h.First = min(h.First, n.First)
		return true
	})
	var out []Hot
	for _, h := range by {
		out = append(out, *h)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Self != out[j].Self {
			return out[i].Self > out[j].Self
		}
		return out[i].Func < out[j].Func
	})
	if len(out) > hotCount {
		out = out[:hotCount]
	}
	return out
}

// Write writes the page.
func Write(w io.Writer, d *Data) error {
	js, err := json.Marshal(d) // escapes <, > and &: safe inside <script>
	if err != nil {
		return err
	}
	return page().Execute(w, struct {
		Title string
		Data  template.JS
	}{"ttd report: " + d.Program, template.JS(js)})
}
