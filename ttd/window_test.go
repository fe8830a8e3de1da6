package ttd

import (
	"errors"
	"testing"

	"ttd/recorder"
	"ttd/tracefile"
)

// TestRingWindow records globals.c into a small ring buffer: the session
// starts at the window's first checkpoint, searches and travel work in
// the window (matching a full recording's answers there), and a search
// that reaches the window's start says so.
func TestRingWindow(t *testing.T) {
	prog := buildC(t, "globals")
	full := openSession(t, recordProg(t, prog, 5_000), 0)
	path := recordWith(t, prog, recorder.Options{CheckpointEvery: 5_000, Ring: 40 << 10, ChunkSize: 2 << 10,
		Summaries: func(path string) ([]tracefile.AccessSummary, error) { return SummarizeTrace(path, 0, nil) }})
	s := openSession(t, path, 0)
	start := s.Start()
	if start == 0 || s.End() != full.End() {
		t.Fatalf("window [%d, %d), full trace ends at %d: want a window that ends with the program", start, s.End(), full.End())
	}
	if s.Index().Built {
		t.Fatal("the window's summaries should be in the trace")
	}
	if st, err := s.Seek(0); err != nil || st.Position != start {
		t.Fatalf("seek to 0: %v %v, want the window's start %d", st, err, start)
	}
	// The last write to counter is in the window (counter = 7, at the
	// end): both traces agree on it.
	counter := symbol(t, s, "counter")
	want, err := full.FindPrevWrite(counter, 4, full.End())
	if err != nil {
		t.Fatal(err)
	}
	if want.Position < start {
		t.Skipf("the last write to counter (%d) is before the window (%d)", want.Position, start)
	}
	got, err := s.FindPrevWrite(counter, 4, s.End())
	if err != nil || got.Position != want.Position {
		t.Fatalf("find-prev-write in the window: %v %v, want %d", got, err, want.Position)
	}
	if v, ok := got.After.Uint(4); !ok || v != 7 {
		t.Fatalf("the last write stores %d (known %v), want 7", v, ok)
	}
	// Before the window: nothing, and the error says why.
	_, err = s.FindPrevWrite(counter, 4, start+1)
	var bw *BeforeWindowError
	if !errors.Is(err, ErrNotFound) || !errors.As(err, &bw) || bw.Start != start {
		t.Fatalf("find-prev-write at the window's start: %v, want a BeforeWindowError", err)
	}
	if err := s.CheckInWindow(start - 1); err == nil {
		t.Fatal("a position before the window is accepted")
	}
	// Reverse continue with a watchpoint runs to the window's start.
	s.Seek(s.End())
	s.StopOnSignal = false
	s.SetBreakpoint(Breakpoint{Kind: BreakMemory, Addr: counter, Size: 4, Access: AccessWrite})
	st, err := s.Continue(Backward)
	if err != nil || st.Position != want.Position {
		t.Fatalf("reverse continue: %v %v, want %d", st, err, want.Position)
	}
	for st.Reason == StopWatchpoint {
		if st, err = s.Continue(Backward); err != nil {
			t.Fatal(err)
		}
	}
	if st.Reason != StopStartOfTrace || st.Position != start {
		t.Fatalf("reverse continue past the first write in the window: %v, want the window's start %d", st, start)
	}
}
