package tracefile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Process records (tag 0x20, minor version 1): the life of each process
// of a recorded process tree. Readers of an older minor version skip them
// (KindUnknown); Writer.Process writes one and Reader.Processes reads them
// all, finding them through chunk flag bit 3.

const (
	// tagProcess is the record tag of a Process record, one of the
	// length-prefixed tags older readers skip.
	tagProcess = 0x20
	// flagProcesses marks a chunk that holds Process records.
	flagProcesses = 1 << 3
)

// ProcessEvent says what happened to a process.
type ProcessEvent uint8

// Process events.
const (
	// ProcessStarted: the process was created (the first one by the
	// recorder, the others by fork, vfork or clone of Tid).
	ProcessStarted ProcessEvent = 1
	// ProcessExeced: the process, by its thread Tid, started a new
	// program (Path, Argv) in a new address space.
	ProcessExeced ProcessEvent = 2
	// ProcessExited: the process ended (Exit: how, at which position).
	ProcessExited ProcessEvent = 3
)

func (e ProcessEvent) String() string {
	switch e {
	case ProcessStarted:
		return "started"
	case ProcessExeced:
		return "execed"
	case ProcessExited:
		return "exited"
	}
	return fmt.Sprintf("ProcessEvent(%d)", int(e))
}

// Process is one event in the life of a process of the recorded tree.
type Process struct {
	Event ProcessEvent
	// Pid is the process; Ppid its parent (for the first process, the
	// host process that started the recorder).
	Pid, Ppid int
	// Tid is the thread that caused the event: the forking thread for
	// ProcessStarted (0 for the first process), the execing thread,
	// the last thread for ProcessExited.
	Tid int
	// Position is where the event happened.
	Position uint64
	// Flags are the clone flags of a ProcessStarted (CLONE_VM: the
	// child shares its parent's address space until it execs).
	Flags uint64
	// Path and Argv: the program (ProcessStarted of the first process
	// and ProcessExeced).
	Path string
	Argv []string
	// Envc is the number of environment variables an exec passed, plus
	// one (ProcessExeced, minor version 4); 0: unknown (older traces).
	Envc int
	// Exit says how the process ended (ProcessExited).
	Exit Exit
}

// appendProcessBody encodes p: byte Event, int Pid, int Ppid, int Tid,
// uvarint Position, uvarint Flags, bytes Path, uvarint n, n x bytes Argv,
// then for ProcessExited the Exit body, for ProcessExeced uvarint Envc.
func appendProcessBody(b []byte, p *Process) []byte {
	b = append(b, byte(p.Event))
	b = binary.AppendUvarint(b, uint64(p.Pid))
	b = binary.AppendUvarint(b, uint64(p.Ppid))
	b = binary.AppendUvarint(b, uint64(p.Tid))
	b = binary.AppendUvarint(b, p.Position)
	b = binary.AppendUvarint(b, p.Flags)
	b = binary.AppendUvarint(b, uint64(len(p.Path)))
	b = append(b, p.Path...)
	b = binary.AppendUvarint(b, uint64(len(p.Argv)))
	for _, a := range p.Argv {
		b = binary.AppendUvarint(b, uint64(len(a)))
		b = append(b, a...)
	}
	switch p.Event {
	case ProcessExited:
		b = appendExitBody(b, &p.Exit)
	case ProcessExeced:
		b = binary.AppendUvarint(b, uint64(p.Envc))
	}
	return b
}

// Process appends an event of the process tree.
func (w *Writer) Process(p *Process) {
	if p.Event < ProcessStarted || p.Event > ProcessExited {
		w.fail(fmt.Errorf("tracefile: process event %d: %w", p.Event, ErrInvalid))
		return
	}
	body := appendProcessBody(nil, p)
	m, ok := w.begin(tagProcess, len(body)+16)
	if !ok {
		return
	}
	w.buf = append(w.buf, body...)
	w.cur.flags |= flagProcesses
	w.flagRecord(tagProcess)
	w.cur.lastPos = max(w.cur.lastPos, p.Position)
	w.end(m)
}

// errProcess is the cause DecodeProcess reports.
var errProcess = errors.New("bad process record")

// DecodeProcess decodes the body of a Process record (Record.Opaque.Bytes
// of a KindUnknown record with tag 0x20). On error, off is the offset in
// b of the field that is wrong.
func DecodeProcess(b []byte) (p Process, off int, err error) {
	d := &body{b: b}
	fail := func(msg string) (Process, int, error) {
		return Process{}, d.p, fmt.Errorf("%s: %w", msg, errProcess)
	}
	p.Event = ProcessEvent(d.byte())
	if d.bad || p.Event < ProcessStarted || p.Event > ProcessExited {
		return fail("unknown event")
	}
	p.Pid, p.Ppid, p.Tid = d.int(), d.int(), d.int()
	p.Position = d.uvarint()
	p.Flags = d.uvarint()
	p.Path = string(d.bytes())
	n := d.count(1)
	for i := 0; i < n && !d.bad; i++ {
		p.Argv = append(p.Argv, string(d.bytes()))
	}
	switch {
	case p.Event == ProcessExited:
		decodeExitBody(d, &p.Exit)
	case p.Event == ProcessExeced && d.p < len(d.b):
		// Minor version 4 on; older records end at Argv.
		p.Envc = d.int()
	}
	if d.bad {
		return fail("field past the end of the record")
	}
	return p, 0, nil
}

// HoldsProcesses reports whether the chunk holds Process or ProcessState
// records.
func (c *ChunkInfo) HoldsProcesses() bool { return c.hdr.flags&flagProcesses != 0 }

// Processes returns the trace's Process records in the order they were
// written (nil for a trace without them: recorded before they existed).
// Only the chunks flagged as holding some are decoded (ProcessChunks). A
// damaged record is a *FormatError giving the chunk and the record's
// payload offset.
func (r *Reader) Processes() ([]Process, error) {
	var out []Process
	var it *RecordIter
	for _, i := range r.ProcessChunks() {
		ci := &r.chunks[i]
		if it == nil {
			it = r.Records(i)
		} else {
			it.Reset(i)
		}
		for {
			rec, err := it.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			if rec.Kind != KindUnknown || rec.Opaque.Tag != tagProcess {
				continue
			}
			p, k, err := DecodeProcess(rec.Opaque.Bytes)
			if err != nil {
				return nil, RecordError(ci, rec, k, err)
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// ProcessInfo is one process of the tree, from its Process records.
type ProcessInfo struct {
	Pid, Ppid int
	// Argv is the last program the process ran; Execs counts its execs.
	Argv  []string
	Execs int
	// Start and End are the positions of its creation and its end (End
	// is zero and Exited false when the trace ends first).
	Start, End uint64
	Exited     bool
	Exit       Exit
}

// ProcessTree folds Process records into one entry per process, in
// creation order.
func ProcessTree(recs []Process) []ProcessInfo {
	var out []ProcessInfo
	index := map[int]int{}
	for _, p := range recs {
		i, ok := index[p.Pid]
		if p.Event == ProcessStarted || !ok {
			index[p.Pid] = len(out)
			i = len(out)
			out = append(out, ProcessInfo{Pid: p.Pid, Ppid: p.Ppid, Start: p.Position})
		}
		pi := &out[i]
		switch p.Event {
		case ProcessStarted:
			pi.Argv = p.Argv
		case ProcessExeced:
			pi.Argv = p.Argv
			pi.Execs++
		case ProcessExited:
			pi.Exited, pi.Exit, pi.End = true, p.Exit, p.Position
		}
	}
	return out
}

// ProcessState records (tag 0x21, minor version 2): in a trace that
// re-simulates every process of the tree (header parameter processes =
// tree), each Checkpoint record is followed by one ProcessState per live
// process, each followed by the Mmap records of that process's address
// space, so that re-simulation can start at the checkpoint.

// tagProcessState is the record tag of a ProcessState record.
const tagProcessState = 0x21

// ProcessState says, at a checkpoint, which threads a process has and
// whose address space it uses.
type ProcessState struct {
	Pid, Ppid int
	// SharesWith is the pid of the process whose address space this one
	// uses (a vfork or CLONE_VM child that has not execed), 0 when it has
	// its own.
	SharesWith int
	// Tids are the process's live threads (their registers are in the
	// Checkpoint record).
	Tids []int
}

// appendProcessStateBody encodes s: int Pid, int Ppid, int SharesWith,
// uvarint n, n x int Tid.
func appendProcessStateBody(b []byte, s *ProcessState) []byte {
	b = binary.AppendUvarint(b, uint64(s.Pid))
	b = binary.AppendUvarint(b, uint64(s.Ppid))
	b = binary.AppendUvarint(b, uint64(s.SharesWith))
	b = binary.AppendUvarint(b, uint64(len(s.Tids)))
	for _, t := range s.Tids {
		b = binary.AppendUvarint(b, uint64(t))
	}
	return b
}

// ProcessState appends the state of one process at a checkpoint (after
// the Checkpoint record).
func (w *Writer) ProcessState(s *ProcessState) {
	body := appendProcessStateBody(nil, s)
	m, ok := w.begin(tagProcessState, len(body)+16)
	if !ok {
		return
	}
	w.buf = append(w.buf, body...)
	w.cur.flags |= flagProcesses
	w.end(m)
}

// IsProcess reports whether r is a Process record (tag 0x20) and
// IsProcessState whether it is a ProcessState record (tag 0x21): both
// come out of a RecordIter as KindUnknown with the body in Opaque.Bytes.
func (r *Record) IsProcess() bool { return r.Kind == KindUnknown && r.Opaque.Tag == tagProcess }

// IsProcessState: see IsProcess.
func (r *Record) IsProcessState() bool {
	return r.Kind == KindUnknown && r.Opaque.Tag == tagProcessState
}

// DecodeProcessState decodes the body of a ProcessState record. On
// error, off is the offset in b of the field that is wrong.
func DecodeProcessState(b []byte) (s ProcessState, off int, err error) {
	d := &body{b: b}
	s.Pid, s.Ppid, s.SharesWith = d.int(), d.int(), d.int()
	n := d.count(1)
	for i := 0; i < n && !d.bad; i++ {
		s.Tids = append(s.Tids, d.int())
	}
	if d.bad {
		return ProcessState{}, d.p, fmt.Errorf("field past the end of the record: %w", errProcess)
	}
	if d.p != len(b) {
		return ProcessState{}, d.p, fmt.Errorf("%d bytes after the last field: %w", len(b)-d.p, errProcess)
	}
	return s, 0, nil
}

// RecordError is the *FormatError for a field of record rec of chunk ci
// that is wrong: off is the offset of the field within the record's
// body, as DecodeProcess and DecodeProcessState report it.
func RecordError(ci *ChunkInfo, rec *Record, off int, err error) error {
	body := rec.Off + 1 + int64(uvarintLen(uint64(len(rec.Opaque.Bytes))))
	return &FormatError{Off: ci.Offset, Chunk: ci.Index, InChunk: body + int64(off),
		Msg: "process record: " + err.Error(), Err: ErrCorrupt}
}
