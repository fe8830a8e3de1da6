package syscalls

import (
	"cmp"
	"io"
	"slices"

	"ttd/internal/linux"
	"ttd/reader"
	"ttd/tracefile"
)

// Some calls overwrite their input: pselect6 and select replace the fd
// sets they were given by the ready ones and the timeout by the time
// left, ppoll the timeout. strace prints the input at entry and the
// output in the result, so the export needs the memory of the moment
// before the call too. A scan of the trace's records (no
// re-simulation) finds those calls; the export stops the re-simulation
// one instruction before each and copies the input ranges (entryMem).

// overwritesInput are the calls whose entry memory the export captures.
var overwritesInput = map[int]bool{linux.SysPselect6: true, linux.SysSelect: true, linux.SysPpoll: true,
	linux.SysExecve: true, linux.SysExecveat: true}

// entryCall is a call found by the scan: its position and arguments.
type entryCall struct {
	pos  uint64
	nr   int
	tid  int
	args [6]uint64
}

// blockedCall is a call its thread blocked in while other threads ran:
// entered at entry (where the thread stopped running), completed at pos.
type blockedCall struct {
	entryCall
	entry   uint64
	tid     int
	ret     int64
	printed bool // its "<unfinished ...>" line was written
}

// scan lists the calls of t that overwrite their input and the calls
// threads blocked in, each in position order (blocked: by entry).
func scan(t *reader.Trace) (entries []entryCall, blocked []blockedCall, err error) {
	if len(t.Chunks()) == 0 {
		return nil, nil, nil
	}
	it := t.File().RecordsFrom(0)
	pos := uint64(0)
	running := 0
	stopped, resumed := map[int]uint64{}, map[int]uint64{}
	for {
		rec, err := it.Next()
		if err == io.EOF {
			slices.SortStableFunc(blocked, func(a, b blockedCall) int { return cmp.Compare(a.entry, b.entry) })
			return entries, blocked, nil
		}
		if err != nil {
			return entries, blocked, err
		}
		switch rec.Kind {
		case tracefile.KindKeyFrame:
			pos = rec.KeyFrame.Position
			if rec.KeyFrame.Kind == tracefile.KeyFrameThreadSwitch {
				if running != 0 {
					stopped[running] = pos
				}
				running = rec.KeyFrame.Tid
				resumed[running] = pos
			}
		case tracefile.KindCheckpoint:
			pos = rec.Checkpoint.Position
		case tracefile.KindSyscall:
			s := &rec.Syscall
			e := entryCall{pos: pos, nr: s.Nr, tid: s.Tid, args: s.Args}
			if overwritesInput[s.Nr] {
				entries = append(entries, e)
			}
			// The same rule as Export's Call.Entry.
			if st, ok := stopped[s.Tid]; ok && resumed[s.Tid] == pos && st < pos {
				blocked = append(blocked, blockedCall{entryCall: e, entry: st, tid: s.Tid, ret: s.Result})
			}
		}
	}
}

// entryRange is input memory copied before a call.
type entryRange struct {
	addr uint64
	data []byte
	have []bool
}

// entryMem holds the input ranges of the call at pos.
type entryMem struct {
	pos    uint64
	ranges []entryRange
	exec   execEntry
}

// inputRanges are the addresses and sizes of a call's overwritten input.
func inputRanges(e *entryCall, add func(addr uint64, n int)) {
	a := e.args
	switch e.nr {
	case linux.SysPselect6, linux.SysSelect:
		n := int(min(a[0], 1024)+7) / 8
		n = (n + 7) &^ 7 // the kernel copies whole longs
		for _, p := range a[1:4] {
			if p != 0 {
				add(p, n)
			}
		}
		if a[4] != 0 {
			add(a[4], 16)
		}
	case linux.SysPpoll:
		if a[2] != 0 {
			add(a[2], 16)
		}
	}
}

// capture copies e's input from the re-simulation stopped just before it.
func (m *replayMemory) capture(e *entryCall) {
	em := &m.entries
	em.pos = e.pos
	em.ranges = em.ranges[:0]
	if e.nr == linux.SysExecve || e.nr == linux.SysExecveat {
		m.use(m.pidOf(e.tid))
		em.exec = m.execEntry(e)
		return
	}
	inputRanges(e, func(addr uint64, n int) {
		r := entryRange{addr: addr, data: make([]byte, n), have: make([]bool, n)}
		m.known(addr, r.data, r.have)
		em.ranges = append(em.ranges, r)
	})
}

// fillEntry fills the bytes of b not in have from the input captured
// for the call at pos.
func (m *replayMemory) fillEntry(pos, addr uint64, b []byte, have []bool) {
	if m.entries.pos != pos {
		return
	}
	for _, r := range m.entries.ranges {
		end := r.addr + uint64(len(r.data))
		for i := range b {
			a := addr + uint64(i)
			if !have[i] && a >= r.addr && a < end && r.have[a-r.addr] {
				b[i], have[i] = r.data[a-r.addr], true
			}
		}
	}
}
