package ttd

import "testing"

// TestWindowExecLines: the blocks the session gathers for each
// window it re-simulates hold every instruction a straight
// re-simulation ran in that window (windows are small and odd-sized, and
// the seeks start from checkpoints, snapshots and micro snapshots), and
// a continue to a breakpoint whose code runs once skips the windows
// that never ran it, stopping where the straight run says.
func TestWindowExecLines(t *testing.T) {
	prog := buildC(t, "loop")
	// One checkpoint interval of many windows.
	path := recordProg(t, prog, 10_000_000, "60")
	ref := straight(t, path)
	s := openSessionWith(t, path, Options{FineEvery: 7919, MicroEvery: 1009})
	s.StopOnSignal = false
	for _, p := range []uint64{s.End(), s.End() / 3, s.End()/3 + 5000, s.End() / 2, 12345, s.End() - 1} {
		if _, err := s.Seek(p); err != nil {
			t.Fatal(err)
		}
	}
	checked, narrow := 0, 0
	for k, fl := range s.fine {
		start := s.cps[k].Position
		for j, lines := range fl.exec {
			if lines == nil {
				continue
			}
			lo := start + uint64(j)*s.opts.FineEvery
			hi := min(lo+s.opts.FineEvery, s.segEnd(k))
			all := map[uint64]bool{}
			for pos := lo; pos < hi && pos < uint64(len(ref.states)); pos++ {
				pc := ref.states[pos].rip
				all[pc] = true
				if !ranAt(lines, pc) {
					t.Fatalf("segment %d window %d [%d,%d): position %d ran %#x, not among its %d blocks", k, j, lo, hi, pos, pc, len(lines))
				}
			}
			checked++
			if len(all) < 100 {
				narrow++
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d windows have their code lines", checked)
	}
	// An instruction that runs once, late: main's store to last.
	count := map[uint64]int{}
	for _, st := range ref.states {
		count[st.rip]++
	}
	want := -1
	for p := len(ref.states) - 1; p >= 0; p-- {
		if pc := ref.states[p].rip; count[pc] == 1 && pc < 0x7f0000000000 {
			want = p
			break
		}
	}
	if want < 0 {
		t.Fatal("no instruction of the program runs once")
	}
	bp := ref.states[want].rip
	if _, err := s.Seek(s.cps[s.segOf(uint64(want))].Position); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetBreakpoint(Breakpoint{Kind: BreakExec, Addr: bp}); err != nil {
		t.Fatal(err)
	}
	skipped := s.ex.skipped
	st, err := s.Continue(Forward)
	if err != nil || st.Reason != StopBreakpoint || st.Position != uint64(want) {
		t.Fatalf("continue to %#x: %v %v, want position %d", bp, st, err, want)
	}
	if n := s.ex.skipped - skipped; n < want/int(s.opts.FineEvery)/2 {
		t.Errorf("the continue over %d instructions skipped %d windows of %d", want, n, want/int(s.opts.FineEvery))
	}
	st, err = s.Continue(Backward)
	if err != nil || st.Reason != StopStartOfTrace {
		t.Fatalf("reverse-continue from the only hit: %v %v", st, err)
	}
	t.Logf("%d windows checked, %d ran fewer than 100 addresses; the continue skipped %d", checked, narrow, s.ex.skipped-skipped)
}
