package ttd

import (
	"context"
	"path/filepath"
	"testing"
)

// TestTargetThreads: on a multi-threaded recording, a breakpoint in the
// threads' function, thread-local and _Atomic variables, and steps in
// both directions that stay on their thread.
func TestTargetThreads(t *testing.T) {
	prog := buildC(t, "threads")
	tg := NewTarget(openSession(t, recordProg(t, prog, 0), 0))
	src, _ := filepath.Abs("testdata/threads.c")
	ctx := context.Background()
	var tid int
	eval := func(expr string) string {
		t.Helper()
		v, err := tg.Eval(tid, 0, expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return v.Value
	}
	// The third thread (its id is 2), at worker, then at line 15 of its
	// first round: mine, thread-local, is 2; total, _Atomic, counts the
	// other threads' 2000 rounds.
	search := func(file string, line int) {
		t.Helper()
		q := Query{Exec: map[uint64]bool{}}
		if file == "" {
			a, err := tg.FunctionAddr("worker")
			if err != nil {
				t.Fatal(err)
			}
			q.Exec[a] = true
		} else {
			addrs, _, err := tg.LineAddrs(file, line)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range addrs {
				q.Exec[a] = true
			}
		}
		st, err := tg.Search(ctx, Forward, q)
		if err != nil || st.Reason != SearchExec {
			t.Fatalf("search: %v %v", st, err)
		}
		tid = st.Tid
	}
	for range 3 {
		if search("", 0); eval("arg") == "0x2" {
			break
		}
	}
	if eval("arg") != "0x2" {
		t.Fatalf("worker(2) never ran")
	}
	search(src, 15)
	for expr, want := range map[string]string{"mine": "2", "total": "2000", "slots[2]": "1", "i": "0"} {
		if got := eval(expr); got != want {
			t.Errorf("%s = %q, want %q", expr, got, want)
		}
	}
	v, _ := tg.Eval(tid, 0, "total")
	if v.Size != 8 || v.Type != "_Atomic long int" {
		t.Errorf("total: type %q size %d, want _Atomic long of 8 bytes", v.Type, v.Size)
	}
	vars, err := tg.Variables(tid, 0)
	if err != nil || len(vars) == 0 {
		t.Fatalf("variables: %v %v", vars, err)
	}
	// Steps stay on the thread, in both directions, while other threads
	// ran in between (the main thread created this one).
	s := tg.Session()
	for i := 0; i < 20; i++ {
		st, err := s.StepThread(tid, Backward)
		if err != nil {
			t.Fatal(err)
		}
		if st.Reason == StopStartOfTrace {
			t.Fatalf("thread %d: no instruction before position %d", tid, st.Position)
		}
		if st.Tid != tid {
			t.Fatalf("backward step %d stopped on thread %d, want %d", i, st.Tid, tid)
		}
	}
	for i := 0; i < 60; i++ {
		st, err := s.StepThread(tid, Forward)
		if err != nil {
			t.Fatal(err)
		}
		if st.Tid != tid {
			t.Fatalf("forward step %d stopped on thread %d, want %d", i, st.Tid, tid)
		}
	}
}
