package gdbremote

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"ttd/emu"
	"ttd/recorder"
)

// recordedShell records /bin/sh -c 'PROG; true' with PROG
// ttd's testdata/name.c built with cflags: the shell forks, the
// child execs PROG.
func recordedShell(t *testing.T, name string, cflags ...string) (prog, trace string) {
	t.Helper()
	needTool(t, "gcc")
	dir := t.TempDir()
	prog = filepath.Join(dir, name)
	src, _ := filepath.Abs(filepath.Join("..", "ttd", "testdata", name+".c"))
	if b, err := exec.Command("gcc", append([]string{"-O0", "-g", "-o", prog, src}, cflags...)...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", name, err, b)
	}
	trace = filepath.Join(dir, name+"-sh.ttd")
	null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer null.Close()
	st, _, err := recorder.Record(emu.Config{Path: "/bin/sh", Args: []string{"/bin/sh", "-c", prog + "; true"},
		Env: []string{"PATH=/usr/bin:/bin"}, Stdout: null, Stderr: null}, recorder.Options{Path: trace})
	if err != nil || st.Signal != 0 || st.Code != 0 {
		t.Fatalf("recording sh -c %s: %v %v", name, st, err)
	}
	return prog, trace
}

// TestGDBFollowExecPIE: gdb follows the shell's child through its fork
// (a vfork event: dash vforks) and its exec of a PIE program (exec event), relocates
// that program from the child's own auxiliary vector, and stops at a
// breakpoint in it with the right backtrace, forward and with
// reverse-continue. Without the events gdb never relocated a PIE child
// and the breakpoint did not stop.
func TestGDBFollowExecPIE(t *testing.T) {
	prog, trace := recordedShell(t, "forktree", "-pthread", "-pie", "-fPIE")
	out := gdb(t, "/bin/sh", trace, "set breakpoint pending on", "set follow-fork-mode child",
		"break mark", "continue", "bt", "continue", "p v", "continue", "p v", "reverse-continue", "bt", "p who")
	inOrder(t, out, "vfork to child Thread", "is executing new program: "+prog,
		"Breakpoint 1, mark (v=10) at", "forktree.c:13",
		"#0  mark (v=10) at", "#1  0x", " in main () at", "forktree.c:22",
		"Attaching after Thread", " fork to child Thread", "Detaching after fork from parent process",
		"Breakpoint 1, mark (v=20)", "$1 = 20",
		"Breakpoint 1, mark (v=30)", "$2 = 30",
		"Breakpoint 1, mark (v=20)", "#0  mark (v=20)", "in main () at", "$3 = 10")
	// detach-on-fork off: gdb keeps the shell and its child, which
	// execs forktree in inferior 2.
	out = gdb(t, "/bin/sh", trace, "set breakpoint pending on", "set detach-on-fork off", "set schedule-multiple on",
		"break mark", "continue", "bt", "info inferiors")
	inOrder(t, out, "[New inferior 2 (process", "is executing new program: "+prog,
		"2.1 \"forktree\" hit Breakpoint 1, mark (v=10) at", "#1  0x", " in main () at", "forktree.c:22",
		"1    process", "/sh", "* 2    process", prog)
}

// TestForkEventsProtocol: the packets of fork events. A breakpoint
// inserted in a process is inherited by the child a fork event reports
// (it stops there); removed from the child only (Hg of the child, z0), it stops in the
// parent only. Going backwards no fork event is reported. D;PID
// detaches one process and the connection goes on.
func TestForkEventsProtocol(t *testing.T) {
	prog, trace := recorded(t, "forktree", "-pthread", "-no-pie")
	f, err := elf.Open(prog)
	if err != nil {
		t.Fatal(err)
	}
	var mark uint64
	syms, _ := f.Symbols()
	for _, sy := range syms {
		if sy.Name == "mark" {
			mark = sy.Value
		}
	}
	f.Close()
	c, s := newClient(t, trace)
	if r := c.send("qSupported:multiprocess+;fork-events+;vfork-events+;exec-events+"); !strings.Contains(r, ";fork-events+;vfork-events+;exec-events+") {
		t.Fatalf("qSupported: %q", r)
	}
	parent := fmt.Sprintf("p%x.", s.Pid())
	c.send("Hg" + parent + "0")
	if r := c.send(fmt.Sprintf("Z0,%x,1", mark)); r != "OK" {
		t.Fatal(r)
	}
	if r := c.send("vCont;c"); !strings.Contains(r, "thread:"+parent) || !strings.Contains(r, "swbreak") {
		t.Fatalf("continue to mark(10): %q", r)
	}
	r := c.send("vCont;c")
	i := strings.Index(r, "fork:p")
	if i < 0 || !strings.Contains(r, "thread:"+parent) {
		t.Fatalf("continue to the fork: %q, want a fork event in the parent", r)
	}
	child := r[i+len("fork:") : i+strings.IndexByte(r[i:], '.')+1]
	if l := c.send("qfThreadInfo"); !strings.Contains(l, child) || !strings.Contains(l, parent) {
		t.Errorf("threads after the fork event: %q, want %s and %s", l, parent, child)
	}
	// The child inherited the breakpoint: its mark(20) stops.
	if r := c.send("vCont;c"); !strings.Contains(r, "thread:"+child) || !strings.Contains(r, "swbreak") {
		t.Fatalf("continue after the fork: %q, want mark(20) in the child", r)
	}
	// The child's copy of the breakpoint removed: its thread's mark(30)
	// passes, the parent's mark(40) stops.
	c.send("Hg" + child + "0")
	if r := c.send(fmt.Sprintf("z0,%x,1", mark)); r != "OK" {
		t.Fatal(r)
	}
	if r := c.send("vCont;c"); !strings.Contains(r, "thread:"+parent) || !strings.Contains(r, "swbreak") {
		t.Fatalf("continue after removing the child's breakpoint: %q, want mark(40) in the parent", r)
	}
	// Backwards to mark(10), over the fork: no event.
	if r := c.send("bc"); !strings.Contains(r, "thread:"+parent) || !strings.Contains(r, "swbreak") || strings.Contains(r, "fork") {
		t.Fatalf("reverse continue: %q, want mark(10) in the parent", r)
	}
	if r := c.send("D;" + child[1:len(child)-1]); r != "OK" {
		t.Fatalf("D;pid: %q", r)
	}
	if r := c.send("qC"); !strings.HasPrefix(r, "QC"+parent) {
		t.Errorf("after detaching the child: %q", r)
	}
}

// TestGDBVforkDone: after a vfork event gdb keeps the parent's
// breakpoints out until the server reports vforkdone, when the parent
// resumes (its child exec'd), as gdbserver does.
func TestGDBVforkDone(t *testing.T) {
	prog, trace := recorded(t, "vforkexec", "-no-pie")
	for _, mode := range [][]string{{"set detach-on-fork on"}, {"set detach-on-fork off", "set schedule-multiple on"}} {
		cmds := append(append([]string{}, mode...), "catch vfork", "break after", "continue", "continue", "bt", "p v", "info inferiors")
		out := gdb(t, prog, trace, cmds...)
		inOrder(t, out, "Catchpoint 1 (vforked process", "Breakpoint 2, after (v=5) at", "#0  after (v=5)", "#1  0x", "in main () at", "$1 = 5")
	}
}

// TestVforkDoneProtocol: the vforkdone stop reply names the parent's
// thread and comes once, when the child execs, not when it exits: at
// that stop if gdb
// detached the child, else at the continue after the child's exec
// event, which does not run. Going backwards none is reported.
func TestVforkDoneProtocol(t *testing.T) {
	_, trace := recorded(t, "vforkexec", "-no-pie")
	for _, keep := range []bool{false, true} {
		c, s := newClient(t, trace)
		c.send("qSupported:multiprocess+;fork-events+;vfork-events+;exec-events+")
		parent := fmt.Sprintf("p%x.%x", s.Pid(), s.Pid())
		r := c.send("vCont;c")
		i := strings.Index(r, "vfork:p")
		if i < 0 {
			t.Fatalf("continue: %q, want a vfork event", r)
		}
		child := r[i+len("vfork:p") : i+strings.IndexByte(r[i:], '.')]
		var childPC string
		if !keep {
			c.send("D;" + child)
		} else if r := c.send("vCont;c"); !strings.Contains(r, "exec:") || !strings.Contains(r, "thread:p"+child+".") {
			t.Fatalf("continue after the vfork: %q, want the child's exec", r)
		} else {
			c.send("Hg" + "p" + child + "." + child)
			childPC = c.send("p10") // rip: the exec'd program's entry
		}
		done := "T05thread:" + parent + ";core:0;vforkdone:;"
		if r := c.send("vCont;c"); r != done {
			t.Fatalf("keep=%v: continue: %q, want %q", keep, r, done)
		}
		// Reported at the child's exec, not later: it has not run.
		if keep {
			c.send("Hg" + "p" + child + "." + child)
			if got := c.send("p10"); got != childPC {
				t.Errorf("the child's rip at vforkdone is %s, at its exec %s", got, childPC)
			}
		}
		if r := c.send("vCont;c"); strings.Contains(r, "vforkdone") {
			t.Errorf("keep=%v: a second vforkdone: %q", keep, r)
		}
		if r := c.send("bc"); strings.Contains(r, "vfork") {
			t.Errorf("keep=%v: reverse continue: %q", keep, r)
		}
	}
}
