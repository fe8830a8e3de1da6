package gdbremote

import (
	"bufio"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"ttd/ttd"
)

// client speaks the protocol to a server over a pipe, with acks.
type client struct {
	t    testing.TB
	conn net.Conn
	r    *bufio.Reader
}

func newClient(t testing.TB, trace string) (*client, *ttd.Session) {
	s, err := ttd.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	a, b := net.Pipe()
	done := make(chan error, 1)
	go func() { done <- NewServer(ttd.NewTarget(s), b, b, Config{}).Serve() }()
	t.Cleanup(func() {
		a.Close()
		b.Close()
		<-done
		s.Close()
	})
	return &client{t: t, conn: a, r: bufio.NewReader(a)}, s
}

// send writes a packet (and extra raw bytes after it) and returns the
// reply's payload, skipping acks and console output (O packets).
func (c *client) send(payload string, extra ...byte) string {
	c.t.Helper()
	c.conn.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := c.conn.Write(append(Encode([]byte(payload)), extra...)); err != nil {
		c.t.Fatal(err)
	}
	for {
		b, err := c.r.ReadByte()
		if err != nil {
			c.t.Fatal(err)
		}
		if b != '$' {
			continue
		}
		body, err := c.r.ReadString('#')
		if err != nil {
			c.t.Fatal(err)
		}
		c.r.Discard(2)
		c.conn.Write([]byte("+"))
		p, err := Decode([]byte(body[:len(body)-1]))
		if err != nil {
			c.t.Fatal(err)
		}
		if len(p) > 1 && p[0] == 'O' && string(p) != "OK" {
			continue
		}
		return string(p)
	}
}

func (c *client) monitor(cmd string) string {
	c.t.Helper()
	c.conn.SetDeadline(time.Now().Add(60 * time.Second))
	c.conn.Write(Encode([]byte("qRcmd," + hex.EncodeToString([]byte(cmd)))))
	var out strings.Builder
	for {
		b, _ := c.r.ReadByte()
		if b != '$' {
			continue
		}
		body, _ := c.r.ReadString('#')
		c.r.Discard(2)
		c.conn.Write([]byte("+"))
		p := body[:len(body)-1]
		if p == "OK" {
			return out.String()
		}
		if strings.HasPrefix(p, "O") {
			b, _ := hex.DecodeString(p[1:])
			out.Write(b)
			continue
		}
		c.t.Fatalf("monitor %s: %q", cmd, p)
	}
}

func TestProtocolBasics(t *testing.T) {
	_, trace := recorded(t, "rev")
	c, s := newClient(t, trace)
	sup := c.send("qSupported:multiprocess+;swbreak+;hwbreak+")
	for _, f := range []string{"ReverseStep+", "ReverseContinue+", "multiprocess+", "qXfer:features:read+", "qXfer:auxv:read+",
		"qXfer:libraries-svr4:read+", "qXfer:exec-file:read+", "qXfer:threads:read+", "vContSupported+", "swbreak+", "hwbreak+"} {
		if !strings.Contains(sup, f) {
			t.Errorf("qSupported lacks %s: %s", f, sup)
		}
	}
	if r := c.send("vCont?"); r != "vCont;c;C;s;S;r" {
		t.Errorf("vCont? = %q", r)
	}
	tid, _ := s.CurrentThread()
	if r := c.send("?"); !strings.HasPrefix(r, fmt.Sprintf("T05thread:p%x.%x;", tid, tid)) {
		t.Errorf("? = %q", r)
	}
	// Registers: 60 of them; rsp (gdb's 7th) is the session's.
	g := c.send("g")
	regs, _ := s.Registers(0)
	if want := string(HexUint(nil, regs.GPR[4], 8)); g[7*16:8*16] != want {
		t.Errorf("g: rsp = %s, want %s", g[7*16:8*16], want)
	}
	if r := c.send("p3a"); r != string(HexUint(nil, regs.FSBase, 8)) {
		t.Errorf("p3a (fs_base) = %q", r)
	}
	if r := c.send("p39"); r != "xxxxxxxxxxxxxxxx" {
		t.Errorf("orig_rax = %q, want unavailable", r)
	}
	// The past cannot be changed.
	for _, p := range []string{"G00", "P0=00", "M1000,1:00", "X1000,1:a"} {
		if r := c.send(p); !strings.HasPrefix(r, "E.ttd replays a recording") {
			t.Errorf("%s = %q", p, r)
		}
	}
	// Nothing is known at position 0: memory is an error reply.
	if r := c.send(fmt.Sprintf("m%x,8", regs.GPR[4])); r != "E0e" {
		t.Errorf("m of the stack at position 0 = %q", r)
	}
	// Malformed packets get error replies, unknown ones empty replies.
	for p, want := range map[string]string{"mzz,1": "E.", "Z9,0,0": "E.", "vCont;x": "E.", "Hgpq": "E.", "qFoo": "", "vFoo": ""} {
		if r := c.send(p); !strings.HasPrefix(r, want) || (want == "" && r != "") {
			t.Errorf("%s = %q, want %q...", p, r, want)
		}
	}
	// The ends of the recording.
	if r := c.send("bs"); !strings.Contains(r, "replaylog:begin;") {
		t.Errorf("bs at 0 = %q", r)
	}
	if r := c.send("vCont;c"); !strings.Contains(r, "replaylog:end;") {
		t.Errorf("continue = %q", r)
	}
	if got := c.monitor("when"); !strings.HasPrefix(got, fmt.Sprintf("position %d of %d", s.End(), s.End())) {
		t.Errorf("monitor when = %q", got)
	}
	if r := c.send("bc"); !strings.Contains(r, "replaylog:begin;") {
		t.Errorf("reverse continue = %q", r)
	}
	// Read and access watchpoints of counter name their kind and address
	// (add(counter, i) reads it, the assignment writes it).
	sy, _ := s.Symbols()
	counter, _, ok := sy.LookupSymbol("counter")
	if !ok {
		t.Fatal("no counter")
	}
	c.send("vCont;c")
	for _, z := range []struct{ typ, kind string }{{"3", "rwatch"}, {"4", "awatch"}, {"2", "watch"}} {
		if r := c.send(fmt.Sprintf("Z%s,%x,4", z.typ, counter)); r != "OK" {
			t.Fatal(r)
		}
		if r := c.send("bc"); !strings.Contains(r, fmt.Sprintf("%s:%x;", z.kind, counter)) {
			t.Errorf("bc with Z%s on counter: %q, want %s:%x", z.typ, r, z.kind, counter)
		}
		c.send(fmt.Sprintf("z%s,%x,4", z.typ, counter))
	}
	// A hardware breakpoint (Z1) stops as one (hwbreak), a software
	// one (Z0) as the other.
	add, _, ok := sy.LookupSymbol("add")
	if !ok {
		t.Fatal("no add")
	}
	for _, z := range []struct{ typ, kind string }{{"1", "hwbreak:;"}, {"0", "swbreak:;"}} {
		c.send("bc")
		if r := c.send(fmt.Sprintf("Z%s,%x,1", z.typ, add)); r != "OK" {
			t.Fatal(r)
		}
		if r := c.send("vCont;c"); !strings.Contains(r, z.kind) {
			t.Errorf("continue to Z%s at add: %q, want %s", z.typ, r, z.kind)
		}
		c.send(fmt.Sprintf("z%s,%x,1", z.typ, add))
	}
	// A qXfer document read in small pieces is the whole document.
	var doc strings.Builder
	for off := 0; ; off += 100 {
		r := c.send(fmt.Sprintf("qXfer:features:read:target.xml:%x,64", off))
		doc.WriteString(r[1:])
		if r[0] == 'l' {
			break
		}
	}
	if doc.String() != targetXML() {
		t.Errorf("target.xml read in pieces differs")
	}
}

// loopLayout returns the addresses of g.first and main's code range in
// the loop program (built without PIE).
func loopLayout(t testing.TB, prog string) (first, mainLo, mainHi uint64) {
	f, err := elf.Open(prog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	for _, s := range syms {
		switch s.Name {
		case "g":
			first = s.Value
		case "main":
			mainLo, mainHi = s.Value, s.Value+s.Size
		}
	}
	if first == 0 || mainLo == 0 {
		t.Fatal("no g or main in the loop program")
	}
	return
}

// TestInterrupt: a Ctrl-C during a long range step forward, and during
// a long reverse continue, stops it with SIGINT where it started.
func TestInterrupt(t *testing.T) {
	prog, trace := recorded(t, "loop", "-no-pie")
	first, lo, hi := loopLayout(t, prog)
	c, s := newClient(t, trace)
	c.send("qSupported")
	if _, err := s.Seek(0); err != nil {
		t.Fatal(err)
	}
	tid, _ := s.CurrentThread()
	// Forward: to main, then range-step through it.
	if r := c.send(fmt.Sprintf("Z0,%x,1", lo)); r != "OK" {
		t.Fatal(r)
	}
	if r := c.send("vCont;c"); !strings.Contains(r, "swbreak") {
		t.Fatalf("continue to main: %q", r)
	}
	c.send(fmt.Sprintf("z0,%x,1", lo))
	at := s.Position()
	r := c.send(fmt.Sprintf("vCont;r%x,%x:p%x.%x", lo, hi, tid, tid), Interrupt)
	if !strings.HasPrefix(r, "T02") {
		t.Errorf("range step interrupted: %q, want T02", r)
	}
	if s.Position() != at {
		t.Errorf("interrupted range step moved from %d to %d", at, s.Position())
	}
	// Backward from the end, watching g.first.
	c.send("vCont;c")
	end := s.Position()
	if r := c.send(fmt.Sprintf("Z2,%x,8", first)); r != "OK" {
		t.Fatal(r)
	}
	r = c.send("bc", Interrupt)
	if !strings.HasPrefix(r, "T02") {
		t.Errorf("reverse continue interrupted: %q, want T02", r)
	}
	if s.Position() != end {
		t.Errorf("interrupted reverse continue moved from %d to %d", end, s.Position())
	}
	// Without Ctrl-C it finds the write.
	if r := c.send("bc"); !strings.Contains(r, fmt.Sprintf("watch:%x;", first)) {
		t.Errorf("reverse continue to the write of g.first: %q", r)
	}
}

// TestStepStaysOnThread: where the scheduler switched from one thread
// to another, reverse-stepi and stepi of the new thread stay on it,
// (un)running the other thread's slice in between.
func TestStepStaysOnThread(t *testing.T) {
	_, trace := recorded(t, "interleave", "-pthread")
	c, s := newClient(t, trace)
	c.send("qSupported")
	// Find a switch between two spinning threads after the middle.
	s.Seek(s.End() / 2)
	t0, _ := s.CurrentThread()
	var t1 int
	for i := 0; i < 1_000_000; i++ {
		st, err := s.Step(ttd.Forward)
		if err != nil || st.Reason == ttd.StopEndOfTrace {
			t.Fatalf("no thread switch after position %d: %v", s.End()/2, err)
		}
		if st.Tid != t0 {
			t1 = st.Tid
			break
		}
	}
	at := s.Position()
	before, _ := s.Registers(t1)
	pid := c.send("qC")[len("QCp"):]
	pid = pid[:strings.IndexByte(pid, '.')]
	// The process id is the trace's, its threads' ids (multiprocess
	// extension) p<pid>.<tid>, in every thread list.
	if want := fmt.Sprintf("%x", s.Pid()); s.Pid() == 0 || pid != want {
		t.Fatalf("qC names process %s, the trace %s", pid, want)
	}
	if l := c.send("qfThreadInfo"); !strings.HasPrefix(l, "mp"+pid+".") || strings.Count(l, "p"+pid+".") != strings.Count(l, ",")+1 {
		t.Fatalf("thread list %q: not all of process %s", l, pid)
	}
	thread := fmt.Sprintf("p%s.%x", pid, t1)
	if r := c.send("Hc" + thread); r != "OK" {
		t.Fatal(r)
	}
	r := c.send("bs")
	if !strings.Contains(r, "thread:"+thread+";") {
		t.Fatalf("reverse-stepi of thread %d stopped with %q", t1, r)
	}
	if s.Position() >= at-1 {
		t.Errorf("reverse-stepi of thread %d at %d went to %d: the other thread's instruction at %d is not %d's", t1, at, s.Position(), at-1, t1)
	}
	back, _ := s.Registers(t1)
	if back.RIP == before.RIP && back.Instructions == before.Instructions {
		t.Errorf("thread %d did not go back an instruction", t1)
	}
	if back.Instructions+1 != before.Instructions {
		t.Errorf("thread %d: %d instructions after reverse-stepi, want %d", t1, back.Instructions, before.Instructions-1)
	}
	// And forward again, to where it was.
	r = c.send(fmt.Sprintf("vCont;s:%s", thread))
	if !strings.Contains(r, "thread:"+thread+";") || s.Position() != at {
		t.Errorf("stepi of thread %d: %q at %d, want back at %d", t1, r, s.Position(), at)
	}
}
