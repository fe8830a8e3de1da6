package gdbremote

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"ttd/emu"
	"ttd/recorder"
	"ttd/ttd"
)

// The tests run Debian's gdb in batch mode against the server, on small C
// programs from testdata recorded once per test process, and check what
// gdb prints, as a user would see it.

var fixtures struct {
	mu    sync.Mutex
	dir   string
	built map[string]string // name → trace
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtures.dir != "" {
		os.RemoveAll(fixtures.dir)
	}
	os.Exit(code)
}

// needTool skips a test without tool outside CI and fails it in CI.
func needTool(t testing.TB, tool string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not installed (make deps installs it)", tool)
		}
		t.Skipf("SKIPPED LOUDLY: %s not installed; make deps installs it, and CI runs this test", tool)
	}
}

// recorded compiles testdata/name.c with gcc -O0 -g and records it (once
// per process); it returns the program and the trace.
func recorded(t testing.TB, name string, cflags ...string) (prog, trace string) {
	t.Helper()
	needTool(t, "gcc")
	fixtures.mu.Lock()
	defer fixtures.mu.Unlock()
	if fixtures.dir == "" {
		d, err := os.MkdirTemp("", "ttd-gdbremote-")
		if err != nil {
			t.Fatal(err)
		}
		fixtures.dir, fixtures.built = d, map[string]string{}
	}
	prog = filepath.Join(fixtures.dir, name)
	if tr, ok := fixtures.built[name]; ok {
		return prog, tr
	}
	cc, src := "gcc", filepath.Join("testdata", name+".c")
	// The threads and C++ programs are ttd's own fixtures (one copy for
	// ttd, dap and gdbremote).
	if shared := filepath.Join("..", "ttd", "testdata", name+".c"); !fileExists(src) && fileExists(shared) {
		src = shared
	}
	if cpp := filepath.Join("..", "ttd", "testdata", name+".cpp"); fileExists(cpp) {
		cc, src = "g++", cpp
	}
	src, _ = filepath.Abs(src)
	args := append([]string{"-O0", "-g", "-o", prog, src}, cflags...)
	if b, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", name, err, b)
	}
	trace = prog + ".ttd"
	null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer null.Close()
	st, _, err := recorder.Record(emu.Config{Path: prog, Args: []string{prog}, Env: []string{"PATH=/usr/bin:/bin"},
		Stdout: null, Stderr: null}, recorder.Options{Path: trace})
	if err != nil {
		t.Fatalf("recording %s: %v", name, err)
	}
	if st.Signal != 0 || st.Code != 0 {
		t.Fatalf("%s ended with %v", name, st)
	}
	fixtures.built[name] = trace
	return prog, trace
}

// gdb serves trace on loopback, runs gdb -batch with cmds on it and
// returns what gdb printed.
func gdb(t *testing.T, prog, trace string, cmds ...string) string {
	t.Helper()
	return gdbWith(t, prog, trace, ttd.Options{}, cmds...)
}

// gdbWith is gdb on a session opened with opts.
func gdbWith(t *testing.T, prog, trace string, opts ttd.Options, cmds ...string) string {
	t.Helper()
	needTool(t, "gdb")
	s, err := ttd.OpenWith(trace, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	served := make(chan error, 1)
	cfg := Config{}
	if os.Getenv("TTD_GDB_LOG") != "" {
		cfg.Log = os.Stderr
	}
	go func() { served <- ServeListener(l, ttd.NewTarget(s), cfg) }()
	script := filepath.Join(t.TempDir(), "connect.gdb")
	if err := os.WriteFile(script, []byte(GDBScript(l.Addr().String())), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-batch", "-nx", "-x", script}
	for _, c := range cmds {
		args = append(args, "-ex", c)
	}
	args = append(args, prog)
	out, err := exec.Command("gdb", args...).CombinedOutput()
	if err != nil {
		t.Logf("gdb: %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("server: %v", err)
	}
	return string(out)
}

// inOrder checks that out contains each of want, in order.
// Runs of blanks count as one space (gdb indents source lines with tabs).
func inOrder(t *testing.T, out string, want ...string) {
	t.Helper()
	blanks := regexp.MustCompile(`[ \t]+`)
	rest := blanks.ReplaceAllString(out, " ")
	for _, w := range want {
		w = blanks.ReplaceAllString(w, " ")
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("gdb output lacks %q (in order); output:\n%s", w, out)
		}
		rest = rest[i+len(w):]
	}
}

func TestGDBBreakContinue(t *testing.T) {
	prog, trace := recorded(t, "rev")
	out := gdb(t, prog, trace, "break add", "continue", "continue", "bt", "p counter")
	inOrder(t, out, "Breakpoint 1, add (a=0, b=0) at", "rev.c:6",
		"Breakpoint 1, add (a=0, b=1) at",
		"#0  add (a=0, b=1)", "#1  ", "in main () at", "rev.c:13",
		"$1 = 0")
}

func TestGDBReverseStepNextFinish(t *testing.T) {
	prog, trace := recorded(t, "rev")
	out := gdb(t, prog, trace, "break add", "continue", "continue", "continue", "delete",
		"reverse-step", // out of add, back to its call
		"reverse-step", // the loop's increment
		"reverse-next", // the previous iteration's last line
		"reverse-next", // over the call of add
		"p counter",
		"break add",
		"continue",
		"reverse-finish")
	inOrder(t, out, "Breakpoint 1, add (a=1, b=2)",
		"main () at", "rev.c:13", "13\t\tcounter = add(counter, i);",
		"12\tfor (int i = 0; i < 5; i++) {",
		"14\t\tcell[3] = counter * 2;",
		"13\t\tcounter = add(counter, i);",
		"$1 = 0",
		"Breakpoint 2, add (a=0, b=1)",
		// reverse-finish: back to the call, in the caller.
		"in main () at", "13\t\tcounter = add(counter, i);")
}

func TestGDBReverseContinue(t *testing.T) {
	prog, trace := recorded(t, "rev")
	out := gdb(t, prog, trace, "continue", "break add", "reverse-continue", "p b", "reverse-continue", "p b",
		"delete", "reverse-continue", "reverse-continue")
	inOrder(t, out, "No more reverse-execution history.",
		"Breakpoint 1, add (a=6, b=4)", "$1 = 4",
		"Breakpoint 1, add (a=3, b=3)", "$2 = 3",
		// Off the start.
		"No more reverse-execution history.", "_start",
		"No more reverse-execution history.", "_start")
}

func TestGDBReverseWatch(t *testing.T) {
	prog, trace := recorded(t, "rev")
	out := gdb(t, prog, trace, "continue", "watch counter", "reverse-continue", "reverse-continue", "continue")
	inOrder(t, out, "No more reverse-execution history.",
		"Hardware watchpoint 1: counter",
		// Backwards, gdb's old value is the later one, as with rr.
		"Old value = 10", "New value = 6", "rev.c:13",
		"Old value = 6", "New value = 3",
		// And forward again: the write that made it 6.
		"Old value = 3", "New value = 6", "main () at", "rev.c:14")
}

func TestGDBWatchLocationHeap(t *testing.T) {
	prog, trace := recorded(t, "rev")
	out := gdb(t, prog, trace, "break 14", "continue", "next", "p cell[3]", "delete",
		"watch -l cell[3]", "continue", "reverse-continue", "reverse-continue")
	inOrder(t, out, "$1 = 0", "Hardware watchpoint 2: -location cell[3]",
		"Old value = 0", "New value = 2", "rev.c:12",
		"Old value = 2", "New value = 0", "rev.c:14",
		// Before the first write of 0 (the zeroing loop).
		"Old value = 0", "rev.c:11")
}

func TestGDBUnknownMemoryAndWrites(t *testing.T) {
	prog, trace := recorded(t, "rev")
	out := gdb(t, prog, trace, "break add", "continue", "x/4x $rsp-65536", "set $rax = 1", "set var counter = 5", "p counter")
	inOrder(t, out, "Breakpoint 1, add",
		"Cannot access memory at address 0x",
		`Could not write register "rax"; remote failure reply 'E.ttd replays a recording: registers cannot be changed'`,
		"Cannot access memory at address", "$1 = 0")
}

func TestGDBMonitor(t *testing.T) {
	prog, trace := recorded(t, "rev")
	out := gdb(t, prog, trace, "monitor when", "monitor goto end", "ttd-find-prev-write counter", "bt 1", "p counter",
		"monitor find-prev-write cell[3]", "maint flush register-cache", "p cell[3]", "next", "p cell[3]",
		"ttd-goto 0", "monitor when", "monitor bogus")
	inOrder(t, out, "position 0 of ",
		"at position ",
		"last write to 4 bytes at 0x", "main", "rev.c:13", "now at position",
		"#0  ", "main () at", "rev.c:13", "$1 = 6",
		// An expression: the heap cell, its size from DWARF.
		"last write to 4 bytes at 0x", "rev.c:14", "$2 = 6", "$3 = 12",
		"at position 0 ", "position 0 of ",
		`error: unknown monitor command "bogus"`)
}

func TestGDBThreads(t *testing.T) {
	prog, trace := recorded(t, "threads", "-pthread")
	out := gdb(t, prog, trace, "break worker if arg == (void *)2", "continue", "delete", "break 15", "continue", "info threads", "bt", "p mine", "p i", "p total",
		"next", "next", "p mine", "reverse-step", "reverse-step", "reverse-step", "p mine", "p $_thread",
		"stepi", "reverse-stepi", "p $_thread")
	inOrder(t, out, `hit Breakpoint 1, worker (arg=0x2)`, `hit Breakpoint 2, work (id=2) at`, "threads.c:15",
		// The main thread waits for the others.
		`1    Thread `, ` "threads" `,
		`* 4    Thread `, `"threads" work (id=2)`,
		"#0  work (id=2)", "#1  ", "in worker (arg=0x2)",
		"$1 = 2", "$2 = 0", "$3 = 2000",
		// Thread-local: this thread's own mine (id added per round).
		"12\t\tfor (int i = 0; i < 1000; i++) {", "13\t\tmine += id;", "$4 = 2",
		// Back: the loop, then line 15 where breakpoint 2 is, then 14.
		"12\t\tfor (int i = 0; i < 1000; i++) {", "hit Breakpoint 2, work (id=2)",
		"14\t\tslots[id] += 1;",
		"$5 = 2", "$6 = 4",
		"$7 = 4")
	if regexp.MustCompile(`Thread \d+\.\d+ "threads" work \(id=[01]\)`).MatchString(out) {
		t.Errorf("threads 1 and 2 should have finished their work when thread 3 reaches it:\n%s", out)
	}
}

func TestGDBCxx(t *testing.T) {
	prog, trace := recorded(t, "cxxstl", "-std=c++17")
	// (Not p m: gdb's printer reads whole map nodes, padding and unused
	// string buffer bytes included, which the program never touched and
	// the recording does not know.)
	out := gdb(t, prog, trace, "break 40", "continue", "p v", "p s", "p w.size()", "p *up",
		"watch sum", "reverse-continue", "p a")
	inOrder(t, out, "Breakpoint 1, main () at", "cxxstl.cpp:40",
		"std::vector of length 3, capacity 3 = {1, 2, 3}",
		`"hello, recording"`,
		"100000", "{x = 3, y = 4}",
		"Hardware watchpoint 2: sum", "Old value = ", "New value = 6", "cxxstl.cpp:39",
		"{10, 20, 30, 40}")
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestGDBProcessTree: a recording of a parent and its forked child (which
// starts a thread). gdb lists the threads of both processes as
// pPID.TID with their real pids (one inferior each), stops at a
// breakpoint in the child's thread, and reads a variable from the memory
// of the selected thread's process: 20 in the child, 10 in the parent.
// gdb learns of the child from the fork event and keeps it (detach-on-fork
// off); with gdb's default it would detach it, and a stop there would not
// be reported (TestGDBFollowExecPIE follows a PIE child).
func TestGDBProcessTree(t *testing.T) {
	prog, trace := recorded(t, "forktree", "-pthread", "-no-pie")
	out := gdb(t, prog, trace, "set detach-on-fork off", "set schedule-multiple on", "break mark if v == 30", "continue", "info threads", "p who", "p v", "thread 1.1", "p who",
		"info inferiors")
	parent := regexp.MustCompile(`\* 1 +process (\d+) `).FindStringSubmatch(out)
	child := regexp.MustCompile(`\n +2 +process (\d+) `).FindStringSubmatch(out)
	if parent == nil || child == nil || parent[1] == child[1] {
		t.Fatalf("want two inferiors with their own pids:\n%s", out)
	}
	p, c := parent[1], child[1]
	inOrder(t, out, "[New inferior 2 (process "+c+")]", "hit Breakpoint 1.2, mark (v=30)",
		"1.1  Thread "+p+"."+p+` "forktree"`, "in __GI___wait4",
		"2.1  Thread "+c+"."+c+` "forktree"`,
		"* 2.2  Thread "+c+".", ` "forktree" mark (v=30)`,
		"$1 = 20", "$2 = 30", "[Switching to thread 1.1 (Thread "+p+"."+p+")]", "$3 = 10")
}
