package ttd

import (
	"bytes"
	"errors"
	"math/rand"
	"slices"
	"testing"

	"ttd/internal/linux"
	"ttd/reader"
	"ttd/x86"
)

func checkRegs(t *testing.T, s *Session, ref *reference, what string) {
	t.Helper()
	pos := s.Position()
	if pos >= uint64(len(ref.states)) {
		return // the end: no instruction follows
	}
	want := ref.states[pos]
	got, err := s.Registers(0)
	if err != nil {
		t.Fatalf("%s: registers at %d: %v", what, pos, err)
	}
	if got.Tid != want.tid || got.RIP != want.rip || got.GPR != want.r || got.RFLAGS != want.rflags {
		t.Fatalf("%s: at position %d got thread %d rip %#x %v flags %#x; straight re-simulation has thread %d rip %#x %v flags %#x",
			what, pos, got.Tid, got.RIP, got.GPR, got.RFLAGS, want.tid, want.rip, want.r, want.rflags)
	}
}

// TestSeekStepMatchStraightReplay seeks to random positions of a trace
// with many checkpoints and steps back and forth, comparing every state
// with a straight re-simulation.
func TestSeekStepMatchStraightReplay(t *testing.T) {
	prog := buildC(t, "loop")
	path := recordProg(t, prog, 100_000, "60")
	ref := straight(t, path)
	s := openSessionWith(t, path, Options{FineEvery: 7919, MicroEvery: 1009})
	if s.End() != ref.end {
		t.Fatalf("end %d, straight re-simulation ends at %d", s.End(), ref.end)
	}
	if len(s.Index().Segments) < 3 {
		t.Fatalf("want several segments, got %d", len(s.Index().Segments))
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 40; i++ {
		p := uint64(rng.Int63n(int64(ref.end)))
		st, err := s.Seek(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Position != p || st.Reason != StopSeek {
			t.Fatalf("Seek(%d) = %v", p, st)
		}
		checkRegs(t, s, ref, "seek")
		n := 1 + rng.Intn(40)
		for k := 0; k < n; k++ {
			back := rng.Intn(3) > 0
			dir := Forward
			if back {
				dir = Backward
			}
			before := s.Position()
			st, err := s.Step(dir)
			if err != nil {
				t.Fatal(err)
			}
			want := before + 1
			if back {
				want = before - 1
			}
			if st.Position != want || st.Reason != StopStep {
				t.Fatalf("step %v from %d = %v", dir, before, st)
			}
			checkRegs(t, s, ref, "step "+dir.String())
		}
	}
	// Stepping one thread is stepping the program when it has one thread.
	s.Seek(ref.end / 3)
	tid, _ := s.CurrentThread()
	for k := 0; k < 5; k++ {
		if st, err := s.StepThread(tid, Backward); err != nil || st.Position != ref.end/3-uint64(k)-1 {
			t.Fatalf("StepThread backward: %v %v", st, err)
		}
		checkRegs(t, s, ref, "thread step")
	}
}

// TestStartAndEndOfTrace checks the stops at both ends.
func TestStartAndEndOfTrace(t *testing.T) {
	prog := buildC(t, "loop")
	path := recordProg(t, prog, 100_000, "20")
	s := openSession(t, path, 0)
	s.StopOnSignal = false
	if st, err := s.Step(Backward); err != nil || st.Reason != StopStartOfTrace || st.Position != 0 {
		t.Fatalf("step back at 0: %v %v", st, err)
	}
	s.Seek(s.End() / 2)
	if st, err := s.Continue(Backward); err != nil || st.Reason != StopStartOfTrace || st.Position != 0 {
		t.Fatalf("reverse-continue without breakpoints: %v %v", st, err)
	}
	st, err := s.Continue(Forward)
	if err != nil || st.Reason != StopEndOfTrace || st.Position != s.End() || st.Exit == nil || st.Exit.Code != 0 {
		t.Fatalf("continue without breakpoints: %v %v", st, err)
	}
	if st, err := s.Step(Forward); err != nil || st.Reason != StopEndOfTrace || st.Position != s.End() {
		t.Fatalf("step at the end: %v %v", st, err)
	}
	if st, _ := s.Seek(s.End() + 100); st.Position != s.End() {
		t.Fatalf("Seek past the end: %v", st)
	}
}

// TestMemoryKnowledge compares ReadMemory at random positions with the
// straight re-simulation's accesses: the same bytes known, the same
// values, and untouched bytes unknown.
func TestMemoryKnowledge(t *testing.T) {
	prog := buildC(t, "loop")
	path := recordProg(t, prog, 100_000, "60")
	ref := straight(t, path)
	s := openSessionWith(t, path, Options{FineEvery: 5003, MicroEvery: 997})
	ranges := []struct {
		name string
		n    int
	}{{"first", 8}, {"last", 8}, {"acc", 8}, {"buf", 64}}
	rng := rand.New(rand.NewSource(2))
	check := func(p uint64) {
		if _, err := s.Seek(p); err != nil {
			t.Fatal(err)
		}
		for _, r := range ranges {
			addr := symbol(t, s, r.name)
			m, err := s.ReadMemory(addr, r.n)
			if err != nil {
				t.Fatal(err)
			}
			data, known := ref.memAt(addr, r.n, p)
			for i := range data {
				if m.Known[i] != known[i] || (known[i] && m.Data[i] != data[i]) {
					t.Fatalf("%s+%d at position %d: got %#x known %v, want %#x known %v", r.name, i, p, m.Data[i], m.Known[i], data[i], known[i])
				}
			}
		}
		// The stack slot under rsp, if the program touched it.
		regs, _ := s.Registers(0)
		rsp := regs.GPR[x86.RSP]
		m, _ := s.ReadMemory(rsp, 32)
		data, known := ref.memAt(rsp, 32, p)
		for i := range data {
			if m.Known[i] != known[i] || (known[i] && m.Data[i] != data[i]) {
				t.Fatalf("stack %#x+%d at position %d: got %#x/%v want %#x/%v", rsp, i, p, m.Data[i], m.Known[i], data[i], known[i])
			}
		}
	}
	for i := 0; i < 25; i++ {
		check(uint64(rng.Int63n(int64(ref.end))))
	}
	check(ref.end)
	// Stepping back keeps memory exact too.
	s.Seek(ref.end / 2)
	for i := 0; i < 20; i++ {
		s.Step(Backward)
		check(s.Position())
	}
}

// TestFindWrites chains FindPrevWrite from the end back to the first
// write of a global, and FindNextWrite from the start, checking every
// answer against the straight re-simulation.
func TestFindWrites(t *testing.T) {
	prog := buildC(t, "globals")
	path := recordProg(t, prog, 20_000)
	ref := straight(t, path)
	s := openSession(t, path, 3001)
	counter := symbol(t, s, "counter")
	want := ref.writes(counter, 4, true)
	if len(want) != 5 {
		t.Fatalf("the program writes counter %d times, want 5", len(want))
	}
	helper := symbol(t, s, "helper")
	check := func(f *Found, pos uint64) {
		t.Helper()
		if f.Position != pos || !f.Write || f.Source != reader.AccessCPU || f.PC != ref.states[pos].rip {
			t.Fatalf("found %+v, want the write at %d (pc %#x)", f, pos, ref.states[pos].rip)
		}
		data, known := ref.memAt(counter, 4, pos)
		if !bytes.Equal(f.Before.Data, data) || !slices.Equal(f.Before.Known, known) {
			t.Fatalf("before the write at %d: %x/%v, want %x/%v", pos, f.Before.Data, f.Before.Known, data, known)
		}
		data, known = ref.memAt(counter, 4, pos+1)
		if !bytes.Equal(f.After.Data, data) || !slices.Equal(f.After.Known, known) {
			t.Fatalf("after the write at %d: %x/%v, want %x/%v", pos, f.After.Data, f.After.Known, data, known)
		}
		if f.Disasm == "" || len(f.Code) == 0 {
			t.Fatalf("no instruction for the write at %d", pos)
		}
	}
	from := s.End()
	for i := len(want) - 1; i >= 0; i-- {
		f, err := s.FindPrevWrite(counter, 4, from)
		if err != nil {
			t.Fatalf("FindPrevWrite from %d: %v", from, err)
		}
		check(f, want[i])
		from = f.Position // asking again from there finds the one before
	}
	if _, err := s.FindPrevWrite(counter, 4, from); !errors.Is(err, ErrNotFound) {
		t.Fatalf("FindPrevWrite before the first write: %v", err)
	}
	// The first write's old value was never seen: unknown, not zero.
	f, _ := s.FindNextWrite(counter, 4, 0)
	check(f, want[0])
	if f.Before.Known[0] {
		t.Fatalf("the value before the first write should be unknown: %+v", f.Before)
	}
	from = 0
	for i := range want {
		f, err := s.FindNextWrite(counter, 4, from)
		if err != nil {
			t.Fatalf("FindNextWrite from %d: %v", from, err)
		}
		check(f, want[i])
		if i == 2 || i == 3 {
			// helper's writes
			if name, _, _ := mustSyms(t, s).PCToFunc(f.PC); name != "helper" || f.PC < helper {
				t.Fatalf("write %d is in %q", i, name)
			}
		}
		from = f.Position + 1
	}
	if _, err := s.FindNextWrite(counter, 4, from); !errors.Is(err, ErrNotFound) {
		t.Fatalf("FindNextWrite after the last write: %v", err)
	}
	// A range never touched.
	if _, err := s.FindPrevWrite(symbol(t, s, "never_touched"), 64, s.End()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("never_touched: %v", err)
	}
	s.Seek(s.End())
	m, _ := s.ReadMemory(symbol(t, s, "never_touched"), 64)
	for i, k := range m.Known {
		if k {
			t.Fatalf("never_touched+%d is known at the end", i)
		}
	}
}

func mustSyms(t *testing.T, s *Session) Symbolizer {
	sy, err := s.Symbols()
	if sy == nil {
		t.Fatal(err)
	}
	return sy
}

// TestFindReads checks FindPrevRead and FindNextRead of an array element
// and of a syscall's output buffer.
func TestFindReads(t *testing.T) {
	prog := buildC(t, "globals")
	path := recordProg(t, prog, 20_000)
	ref := straight(t, path)
	s := openSession(t, path, 0)
	elem := symbol(t, s, "table") + 3*8
	want := ref.writes(elem, 8, false)
	if len(want) != 2 {
		t.Fatalf("table[3] is read %d times, want 2", len(want))
	}
	from := uint64(0)
	for _, w := range want {
		f, err := s.FindNextRead(elem, 8, from)
		if err != nil || f.Position != w || f.Write {
			t.Fatalf("FindNextRead from %d: %+v %v, want %d", from, f, err, w)
		}
		if v, ok := f.After.Uint(8); !ok || v != 9 {
			t.Fatalf("read %d of table[3] saw %d %v", w, v, ok)
		}
		from = f.Position + 1
	}
	f, err := s.FindPrevRead(elem, 8, s.End())
	if err != nil || f.Position != want[1] {
		t.Fatalf("FindPrevRead: %+v %v", f, err)
	}
	f, err = s.FindPrevRead(elem, 8, f.Position)
	if err != nil || f.Position != want[0] {
		t.Fatalf("FindPrevRead chained: %+v %v", f, err)
	}
}

// TestBreakpoints runs to execution, memory and event breakpoints in
// both directions.
func TestBreakpoints(t *testing.T) {
	prog := buildC(t, "globals")
	path := recordProg(t, prog, 20_000)
	ref := straight(t, path)
	s := openSession(t, path, 2003)
	s.StopOnSignal = false
	helper := symbol(t, s, "helper")
	var calls []uint64
	for p, st := range ref.states {
		if st.rip == helper {
			calls = append(calls, uint64(p))
		}
	}
	if len(calls) != 2 {
		t.Fatalf("helper is entered %d times", len(calls))
	}
	id, err := s.SetBreakpoint(Breakpoint{Kind: BreakExec, Addr: helper})
	if err != nil {
		t.Fatal(err)
	}
	// >> continue, continue, continue: both calls, then the end.
	for _, c := range calls {
		st, err := s.Continue(Forward)
		if err != nil || st.Reason != StopBreakpoint || st.Position != c || st.Breakpoint != id || st.PC != helper {
			t.Fatalf("continue to helper: %v %v, want position %d", st, err, c)
		}
		checkRegs(t, s, ref, "at breakpoint")
	}
	if st, _ := s.Continue(Forward); st.Reason != StopEndOfTrace {
		t.Fatalf("continue after the last call: %v", st)
	}
	// << reverse-continue: the last call, then the first, then the start.
	for i := len(calls) - 1; i >= 0; i-- {
		st, err := s.Continue(Backward)
		if err != nil || st.Reason != StopBreakpoint || st.Position != calls[i] {
			t.Fatalf("reverse-continue to helper: %v %v, want %d", st, err, calls[i])
		}
	}
	if st, _ := s.Continue(Backward); st.Reason != StopStartOfTrace || st.Position != 0 {
		t.Fatalf("reverse-continue before the first call: %v", st)
	}
	s.ClearBreakpoint(id)

	// A write watchpoint on counter: forward stops after each write,
	// backward before it.
	counter := symbol(t, s, "counter")
	writes := ref.writes(counter, 4, true)
	wid, _ := s.SetBreakpoint(Breakpoint{Kind: BreakMemory, Addr: counter, Size: 4, Access: AccessWrite})
	s.Seek(0)
	for _, w := range writes {
		st, err := s.Continue(Forward)
		if err != nil || st.Reason != StopWatchpoint || st.Position != w+1 || st.Access == nil || st.Access.Position != w || st.Breakpoint != wid {
			t.Fatalf("continue to the write at %d: %v %v", w, st, err)
		}
	}
	for i := len(writes) - 1; i >= 0; i-- {
		st, err := s.Continue(Backward)
		if err != nil || st.Reason != StopWatchpoint || st.Position != writes[i] {
			t.Fatalf("reverse-continue to the write at %d: %v %v", writes[i], st, err)
		}
		m, _ := s.ReadMemory(counter, 4)
		data, known := ref.memAt(counter, 4, writes[i])
		if !bytes.Equal(m.Data, data) || !slices.Equal(m.Known, known) {
			t.Fatalf("counter before the write at %d: %x %v", writes[i], m.Data, m.Known)
		}
	}
	s.ClearBreakpoints()

	// Events: the write(2) syscall, and a position breakpoint.
	s.Seek(0)
	eid, err := s.SetBreakpoint(Breakpoint{Kind: BreakEvent, Event: reader.EventSyscall, Syscall: "write"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Continue(Forward)
	if err != nil || st.Reason != StopEvent || st.Breakpoint != eid || st.Event == nil || linux.SyscallName(st.Event.Record.Syscall.Nr) != "write" {
		t.Fatalf("continue to write(2): %v %v", st, err)
	}
	firstWrite := st.Position
	regs, _ := s.Registers(0)
	if regs.GPR[x86.RAX] != 3 {
		t.Fatalf("write(2) returned %d", regs.GPR[x86.RAX])
	}
	s.Seek(s.End())
	st, _ = s.Continue(Backward)
	if st.Reason != StopEvent || st.Position <= firstWrite {
		t.Fatalf("reverse-continue to the last write(2): %v", st)
	}
	s.ClearBreakpoints()
	pid, _ := s.SetBreakpoint(Breakpoint{Kind: BreakPosition, Position: 777})
	s.Seek(0)
	if st, _ := s.Continue(Forward); st.Reason != StopPosition || st.Position != 777 || st.Breakpoint != pid {
		t.Fatalf("position breakpoint: %v", st)
	}
	s.ClearBreakpoints()

	// Signals stop continue by default.
	s.StopOnSignal = true
	s.Seek(0)
	st, err = s.Continue(Forward)
	if err != nil || st.Reason != StopSignal || st.Event == nil || st.Event.Record.Signal.Signo != 10 {
		t.Fatalf("continue to SIGUSR1: %v %v", st, err)
	}
}

// TestSummariesInTrace checks that a trace recorded with summaries
// opens without re-simulating anything and answers as one whose
// summaries are built on open.
func TestSummariesInTrace(t *testing.T) {
	prog := buildC(t, "globals")
	plain := recordProg(t, prog, 20_000)
	s := openSession(t, plain, 0)
	if !s.Index().Built || s.SummaryBytes() != 0 {
		t.Fatal("a trace without summaries should have them built on open")
	}
	f1, err := s.FindPrevWrite(symbol(t, s, "counter"), 4, s.End())
	if err != nil {
		t.Fatal(err)
	}
	path := recordSummarized(t, prog, 20_000)
	s2 := openSession(t, path, 0)
	if s2.Index().Built || s2.SummaryBytes() == 0 {
		t.Fatalf("a trace with summaries should load them (built %v, %d bytes)", s2.Index().Built, s2.SummaryBytes())
	}
	if len(s2.Index().Segments) != len(s.Index().Segments) {
		t.Fatalf("%d segments from the trace, %d built", len(s2.Index().Segments), len(s.Index().Segments))
	}
	for k := range s.Index().Segments {
		a, b := s.Index().Segments[k], s2.Index().Segments[k]
		if a.Start != b.Start || a.End != b.End || len(a.Pages) != len(b.Pages) {
			t.Fatalf("segment %d: built [%d,%d) %d pages, stored [%d,%d) %d pages", k, a.Start, a.End, len(a.Pages), b.Start, b.End, len(b.Pages))
		}
	}
	f2, err := s2.FindPrevWrite(symbol(t, s2, "counter"), 4, s2.End())
	if err != nil || f2.Position != f1.Position || !bytes.Equal(f2.Before.Data, f1.Before.Data) {
		t.Fatalf("with stored summaries: %+v %v, want position %d before %x", f2, err, f1.Position, f1.Before.Data)
	}
}

// TestEventsAndSearch stops at a module load and at instructions a
// predicate picks, in both directions.
func TestEventsAndSearch(t *testing.T) {
	prog := buildC(t, "globals")
	path := recordProg(t, prog, 20_000)
	ref := straight(t, path)
	s := openSession(t, path, 0)
	s.StopOnSignal = false
	s.SetBreakpoint(Breakpoint{Kind: BreakEvent, Event: reader.EventModule})
	st, err := s.Continue(Forward)
	if err != nil || st.Reason != StopEvent || st.Event == nil || st.Event.Module == nil {
		t.Fatalf("continue to a module load: %v %v", st, err)
	}
	// The program and the dynamic loader are mapped at position 0,
	// before any instruction: the first load after it is libc's.
	if !bytes.Contains(st.Event.Module.Path, []byte("libc")) || st.Position == 0 {
		t.Fatalf("the first module load: %v %s", st, st.Event.Module.Path)
	}
	libc := st.Position
	if st, _ := s.Continue(Forward); st.Reason != StopEndOfTrace {
		t.Fatalf("after libc: %v", st)
	}
	if st, _ := s.Continue(Backward); st.Reason != StopEvent || st.Position != libc {
		t.Fatalf("back to libc's load: %v", st)
	}
	s.ClearBreakpoints()

	helper := symbol(t, s, "helper")
	var calls []uint64
	for p, st := range ref.states {
		if st.rip == helper && st.r[x86.RDI] == 6 {
			calls = append(calls, uint64(p))
		}
	}
	match := func(tid int, c *x86.CPU, in *x86.Inst) bool { return in.PC == helper && c.R[x86.RDI] == 6 }
	s.Seek(0)
	if st, err := s.Search(Forward, match); err != nil || st.Reason != StopMatch || st.Position != calls[0] {
		t.Fatalf("search forward: %v %v, want %d", st, err, calls[0])
	}
	if st, _ := s.Search(Forward, match); st.Reason != StopEndOfTrace {
		t.Fatalf("search forward again: %v", st)
	}
	if st, _ := s.Search(Backward, match); st.Reason != StopMatch || st.Position != calls[0] {
		t.Fatalf("search backward: %v", st)
	}
	if st, _ := s.Search(Backward, match); st.Reason != StopStartOfTrace {
		t.Fatalf("search backward again: %v", st)
	}
}

// TestUnmappedMemoryIsForgotten checks that bytes known before a munmap
// are unknown after it, and known again once written.
func TestUnmappedMemoryIsForgotten(t *testing.T) {
	prog := buildC(t, "remap")
	path := recordProg(t, prog, 50_000)
	s := openSession(t, path, 3000)
	where := symbol(t, s, "where")
	s.Seek(s.End())
	m, _ := s.ReadMemory(where, 8)
	p, ok := m.Uint(8)
	if !ok {
		t.Fatal("where is unknown at the end")
	}
	f, err := s.FindPrevWrite(p+1, 1, s.End())
	if err != nil || f.After.Data[0] != 43 {
		t.Fatalf("the write of p[1]: %+v %v", f, err)
	}
	s.Seek(f.Position + 1)
	m, _ = s.ReadMemory(p, 2)
	if !m.AllKnown() || m.Data[0] != 42 || m.Data[1] != 43 {
		t.Fatalf("p[0..1] after the writes: %x %v", m.Data, m.Known)
	}
	s.Seek(s.End())
	m, _ = s.ReadMemory(p, 9)
	if m.Known[0] || m.Known[1] || !m.Known[8] || m.Data[8] != 7 {
		t.Fatalf("the page after munmap and mmap: %x %v", m.Data, m.Known)
	}
}
