package ttd

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestSymbolsPerImage: in a recording of sh -c 'forktree; true' (the
// shell forks, the child execs forktree: both PIE, mapped at the same
// address), a stop in the exec'd program names its functions, lines and
// variables, in the Target and in Session.Backtrace, and a stop in the
// shell names the shell's modules. One table of the whole tree gave the
// shell's symbols (or none) for forktree's code.
func TestSymbolsPerImage(t *testing.T) {
	path, tg, st := stopInExecd(t)
	defer tg.closeProcesses()
	pid := tg.Pid(st.Tid)
	if pid == tg.s.Pid() {
		t.Fatalf("mark ran in the shell (%d)", pid)
	}
	fr, err := tg.Stack(st.Tid, 10)
	if err != nil || len(fr) < 2 {
		t.Fatalf("stack: %+v %v", fr, err)
	}
	if fr[0].Func != "mark" || filepath.Base(fr[0].File) != "forktree.c" || fr[1].Func != "main" {
		t.Errorf("stack in the exec'd program: %s:%d %s, then %s; want mark in forktree.c, then main",
			fr[0].File, fr[0].Line, fr[0].Func, fr[1].Func)
	}
	if l := tg.LocateIn(st.Tid, fr[0].PC); l.Func != "mark" || l.Line != fr[0].Line {
		t.Errorf("LocateIn = %+v", l)
	}
	vars, err := tg.Variables(st.Tid, 0)
	if err != nil || len(vars) == 0 || vars[0].Name != "v" || vars[0].Value != "10" {
		t.Errorf("mark's variables: %+v %v, want v = 10", vars, err)
	}
	// ttd query --pid PID --at POS --where: the session focused on the
	// exec'd process.
	ps := openSessionWith(t, path, Options{Pid: pid})
	if _, err := ps.Seek(tg.Position()); err != nil {
		t.Fatal(err)
	}
	bt, _, err := ps.Backtrace(0, 10)
	if err != nil || len(bt) < 2 || !strings.HasPrefix(bt[0].Function, "mark+") || bt[1].Function == "" || !strings.HasPrefix(bt[1].Function, "main+") {
		t.Errorf("Backtrace in the exec'd process: %+v %v", bt, err)
	}
	childTab := tg.ThreadSymbols(st.Tid)
	// The shell, before its child execs: the shell's own modules.
	if err := tg.Seek(1000); err != nil {
		t.Fatal(err)
	}
	id := tg.CurrentThread()
	if tg.Pid(id) != tg.s.Pid() {
		t.Fatalf("position 1000 runs in process %d", tg.Pid(id))
	}
	fr, err = tg.Stack(id, 1)
	if err != nil || len(fr) == 0 {
		t.Fatal(err)
	}
	if m := filepath.Base(fr[0].Module); m == "." || fr[0].Func == "mark" || strings.Contains(m, "forktree") {
		t.Errorf("the shell's frame at 1000: %s in %s", fr[0].Func, fr[0].Module)
	}
	if tg.ThreadSymbols(id) == childTab {
		t.Error("the shell and forktree share one table")
	}
}

// BenchmarkThreadSymbols: the table of a thread of a tree at a stop
// (done for every frame and variable request) is cached per image and
// allocates nothing.
func BenchmarkThreadSymbols(b *testing.B) {
	_, tg, st := stopInExecd(b)
	defer tg.closeProcesses()
	first := tg.ThreadSymbols(st.Tid)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if tg.ThreadSymbols(st.Tid) != first {
			b.Fatal("another table at the same stop")
		}
	}
}

// stopInExecd records sh -c 'forktree; true' and stops at forktree's
// first mark, in the shell's child that exec'd it.
func stopInExecd(tb testing.TB) (string, *Target, SearchStop) {
	tb.Helper()
	prog := buildC(tb, "forktree")
	path := recordProg(tb, "/bin/sh", 0, "-c", prog+"; true")
	tg := NewTarget(openSession(tb, path, 0))
	a, err := tg.FunctionAddr("mark")
	if err != nil {
		tb.Fatal(err)
	}
	st, err := tg.Search(context.Background(), Forward, Query{Exec: map[uint64]bool{a: true}})
	if err != nil || st.Reason != SearchExec {
		tb.Fatalf("no stop in mark: %+v %v", st, err)
	}
	return path, tg, st
}
