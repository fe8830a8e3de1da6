package ttd

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestTargetProcessTree: a recording of a parent and its forked child,
// which starts a thread. At mark(30) in the child's thread, the threads
// list shows both processes' threads with their pids and program name,
// and a global reads the value of the thread's own process (the child
// wrote 20 into its copy; the parent's copy still holds 10), through
// variables, expressions and the stack alike.
func TestTargetProcessTree(t *testing.T) {
	prog := buildC(t, "forktree")
	tg := NewTarget(openSession(t, recordProg(t, prog, 0), 0))
	defer tg.closeProcesses()
	a, err := tg.FunctionAddr("mark")
	if err != nil {
		t.Fatal(err)
	}
	var tid int
	for i := 0; ; i++ {
		st, err := tg.Search(context.Background(), Forward, Query{Exec: map[uint64]bool{a: true}})
		if err != nil || st.Reason != SearchExec {
			t.Fatalf("search %d: %+v %v", i, st, err)
		}
		v, err := tg.Eval(st.Tid, 0, "v")
		if err != nil {
			t.Fatal(err)
		}
		if v.Value == "30" {
			tid = st.Tid
			break
		}
		if i == 3 {
			t.Fatalf("mark(30) never ran (last v=%s)", v.Value)
		}
	}
	parent := tg.s.Pid()
	child := tg.Pid(tid)
	if child == parent || child == 0 {
		t.Fatalf("thread %d is in process %d, the parent is %d", tid, child, parent)
	}
	ths, err := tg.Threads()
	if err != nil {
		t.Fatal(err)
	}
	perPid := map[int][]int{}
	for _, th := range ths {
		pid := tg.Pid(th.ID)
		perPid[pid] = append(perPid[pid], th.ID)
		if want := fmt.Sprintf("forktree[%d] tid %d", pid, th.ID); th.Name != want {
			t.Errorf("thread %d is named %q, want %q", th.ID, th.Name, want)
		}
	}
	if len(perPid[parent]) != 1 || len(perPid[child]) != 2 {
		t.Fatalf("threads by process: %v, want 1 in %d and 2 in %d", perPid, parent, child)
	}
	eval := func(id int, expr string) string {
		t.Helper()
		v, err := tg.Eval(id, 0, expr)
		if err != nil {
			t.Fatalf("%s in thread %d: %v", expr, id, err)
		}
		return v.Value
	}
	if got := eval(tid, "who"); got != "20" {
		t.Errorf("who in the child's thread = %s, want 20 (its own copy)", got)
	}
	if got := eval(perPid[parent][0], "who"); got != "10" {
		t.Errorf("who in the parent = %s, want 10", got)
	}
	fr, err := tg.Stack(tid, 10)
	if err != nil || len(fr) < 2 || fr[0].Func != "mark" || fr[1].Func != "child_thread" {
		t.Fatalf("child thread's stack: %+v %v", fr, err)
	}
	if l := tg.ThreadLabel(tid); !strings.Contains(l, fmt.Sprintf("[%d] tid %d", child, tid)) {
		t.Errorf("ThreadLabel = %q", l)
	}
	// Back in the parent's own past, before the fork, one process.
	if err := tg.Seek(0); err != nil {
		t.Fatal(err)
	}
	if ths, _ := tg.Threads(); len(ths) != 1 || tg.Pid(ths[0].ID) != parent {
		t.Errorf("at the start: %+v", ths)
	}
}
