package flows

import (
	"strings"
	"testing"

	"ttd/internal/linux"
	"ttd/reader"
)

var acceptServer built

// TestAcceptFlows: a server accepts four connections from four client
// processes (acceptserver.c), over AF_UNIX and over loopback TCP, and
// hands each to a thread; the four requests are in flight at once. Each
// connection is one flow, from its accept: it holds the client that
// connected (from its connect on), the thread that handled it and
// nothing of the three other requests; the client's request bytes join
// the accepted socket's read (no flow of their own), and request 2's
// slow handling lands in client 2's flow.
func TestAcceptFlows(t *testing.T) {
	exe := buildProgram(t, &acceptServer, "acceptserver")
	for _, family := range []string{"unix", "tcp"} {
		t.Run(family, func(t *testing.T) {
			path, res := analyzeProgramArgs(t, exe, family, "2")
			checkAcceptFlows(t, path, res, 2)
		})
	}
}

func checkAcceptFlows(t *testing.T, path string, res *Result, bad int) {
	t.Helper()
	wantFlows(t, res, 5, "the background and 4 connections")
	procs := res.Split.Tree.Procs
	if len(procs) != 5 {
		t.Fatalf("%d processes, want the server and 4 clients", len(procs))
	}
	srv := procs[0].Pid
	recvs, sends := handlerCalls(t, path, res, srv)
	if len(recvs) != 4 || len(sends) != 4 {
		t.Fatalf("handler threads: receives %v, sends %v", recvs, sends)
	}
	// The barrier: every request was read before any was answered.
	for tid, r := range recvs {
		for _, s := range sends {
			if r >= s {
				t.Fatalf("thread %d read its request at %d, after a reply at %d: the requests were not in flight at once", tid, r, s)
			}
		}
	}
	clients, handlers := map[int]bool{}, map[int]bool{}
	checkAllCharged(t, res)
	for _, f := range res.Flows[1:] {
		if !strings.HasPrefix(f.Trigger, "accept(") || f.StartTid != srv || len(f.Processes) != 2 || f.Processes[0] != srv {
			t.Errorf("flow %d: trigger %q in %d, processes %v", f.ID, f.Trigger, f.StartTid, f.Processes)
			continue
		}
		client := f.Processes[1]
		var handler int
		for tid := range recvs {
			if res.Split.FlowOf(tid, recvs[tid]) == f.ID {
				if handler != 0 {
					t.Errorf("flow %d holds the requests of threads %d and %d", f.ID, handler, tid)
				}
				handler = tid
			}
		}
		if handler == 0 || res.Split.FlowOf(handler, sends[handler]) != f.ID {
			t.Errorf("flow %d: no handler thread works for it from its read to its reply", f.ID)
		}
		if clients[client] || handlers[handler] {
			t.Errorf("flow %d: client %d or handler %d in two flows", f.ID, client, handler)
		}
		clients[client], handlers[handler] = true, true
		// The request (128 bytes) and the reply (16).
		if f.BytesSent != 144 {
			t.Errorf("flow %d sent %d bytes, want 144", f.ID, f.BytesSent)
		}
		slow := hasPath(f, "connection handle slow_recover checksum", 40)
		if want := client == procs[bad].Pid; slow != want || !slow && !hasPath(f, "connection handle checksum", 2) {
			t.Errorf("flow %d (client %d): slow recovery %v, want %v", f.ID, client, slow, want)
		}
	}
	// After handing its last connection to a thread, the accepting
	// thread works for no connection (joining its threads is
	// background) until it reaps the clients, each wait4 in the flow
	// of the client it reaped.
	waits := syscallsOf(t, path, srv, "wait4")
	if len(waits) != 4 {
		t.Fatalf("the server reaped %d clients, want 4", len(waits))
	}
	if f := res.Split.FlowOf(srv, waits[0]-1); f != 0 {
		t.Errorf("the server's main thread works for flow %d before its first wait4, want the background", f)
	}
	for i, pos := range waits {
		f := res.Split.FlowOf(srv, pos)
		if f == 0 || res.Flows[f].Processes[1] != procs[i+1].Pid {
			t.Errorf("the server's wait4 for client %d at %d is charged to flow %d, want the client's", procs[i+1].Pid, pos, f)
		}
	}
	var dot strings.Builder
	res.WriteDOT(&dot)
	g := parseDOT(t, dot.String())
	p := func(pid int) string { return "p" + itoa(pid) }
	for _, pr := range procs[1:] {
		if g.count(p(pr.Pid), p(srv), "connect 1") != 1 || g.count(p(pr.Pid), p(srv), "1 messages, 128 bytes") != 1 ||
			g.count(p(srv), p(pr.Pid), "1 messages, 16 bytes") != 1 {
			t.Errorf("client %d: connect, request or reply edge missing:\n%s", pr.Pid, dot.String())
		}
	}
}

// handlerCalls are the positions of the request read (recvfrom) and the
// reply (sendto) of each thread of process pid but its first.
func handlerCalls(t *testing.T, path string, res *Result, pid int) (recvs, sends map[int]uint64) {
	t.Helper()
	tr, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	recvs, sends = map[int]uint64{}, map[int]uint64{}
	threads := map[int]bool{}
	err = tr.ScanEvents(reader.Checkpoint{}, func(ev *reader.Event) bool {
		switch ev.Kind {
		case reader.EventThreadStart:
			if ts := ev.Record.ThreadStart; ts.Tid != pid && res.Split.Tree.PidOf(ts.Tid) == pid {
				threads[ts.Tid] = true
			}
		case reader.EventSyscall:
			sc := ev.Record.Syscall
			switch linux.SyscallName(sc.Nr) {
			case "recvfrom":
				if threads[sc.Tid] {
					recvs[sc.Tid] = ev.Position
				}
			case "sendto":
				if threads[sc.Tid] {
					sends[sc.Tid] = ev.Position
				}
			}
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return recvs, sends
}

// TestAcceptSerial: a server handling its connections one after the
// other in the accepting thread works for each from its accept to its
// close; its own work between a close and the next accept (getppid
// marks it) is background.
func TestAcceptSerial(t *testing.T) {
	exe := buildProgram(t, &acceptServer, "acceptserver")
	path, res := analyzeProgramArgs(t, exe, "serial")
	wantFlows(t, res, 5, "the background and 4 connections")
	srv := res.Split.Tree.Procs[0].Pid
	recvs, marks := syscallsOf(t, path, srv, "recvfrom"), syscallsOf(t, path, srv, "getppid")
	if len(recvs) != 4 || len(marks) != 4 {
		t.Fatalf("the server read %d requests and marked %d pauses, want 4 and 4", len(recvs), len(marks))
	}
	seen := map[int]bool{}
	for i := range recvs {
		f := res.Split.FlowOf(srv, recvs[i])
		if f == 0 || seen[f] || !strings.HasPrefix(res.Flows[f].Trigger, "accept(") {
			t.Errorf("request %d read in flow %d", i, f)
		}
		seen[f] = true
		if g := res.Split.FlowOf(srv, marks[i]); g != 0 {
			t.Errorf("the server's work after closing connection %d is charged to flow %d, want the background", i, g)
		}
	}
}

// syscallsOf are the positions of thread tid's syscalls called name.
func syscallsOf(t *testing.T, path string, tid int, name string) []uint64 {
	t.Helper()
	tr, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var at []uint64
	err = tr.ScanEvents(reader.Checkpoint{}, func(ev *reader.Event) bool {
		if ev.Kind != reader.EventSyscall {
			return true
		}
		if sc := ev.Record.Syscall; sc.Tid == tid && linux.SyscallName(sc.Nr) == name {
			at = append(at, ev.Position)
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// TestAcceptAnomaly: with four requests in flight at once over loopback
// TCP, the one that goes wrong ranks first, against common behaviour and
// against a run where all go right.
func TestAcceptAnomaly(t *testing.T) {
	exe := buildProgram(t, &acceptServer, "acceptserver")
	badPath, bad := analyzeProgramArgs(t, exe, "tcp", "3")
	goodPath, good := analyzeProgramArgs(t, exe, "tcp")
	cands := candidates
	badClient := bad.Split.Tree.Procs[3].Pid
	for _, normals := range [][]Candidate{cands(goodPath, good), nil} {
		ranked := Rank(cands(badPath, bad), normals)
		for i, s := range ranked {
			t.Logf("normals %d: %d. flow %d %v score %.3f (%s)", len(normals), i+1, s.Flow.ID, s.Flow.Processes, s.Score, s.Top)
		}
		if f := ranked[0].Flow; len(f.Processes) != 2 || f.Processes[1] != badClient || ranked[0].Score <= ranked[1].Score*1.5 {
			t.Errorf("with %d normal flows: flow %d (processes %v) ranks first, want client %d's well ahead", len(normals), f.ID, f.Processes, badClient)
		}
		if !strings.Contains(ranked[0].Top, "slow_recover") {
			t.Errorf("the first flow differs most in %q, want slow_recover", ranked[0].Top)
		}
	}
}
