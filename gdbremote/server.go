package gdbremote

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"ttd/ttd"
)

// Config configures a Server.
type Config struct {
	// Log, when set, receives every packet in and out.
	Log io.Writer
}

// Server gives the requests of one gdb connection their meaning
// against a ttd.Session.
type Server struct {
	t   *ttd.Target
	s   *ttd.Session
	c   *Conn
	cfg Config
	pid int64
	// gThread and cThread are the threads Hg and Hc selected (0: any);
	// gPid is the process of Hg (0: the selected thread's, or the
	// stopped one's).
	gThread, cThread int64
	gPid             int64
	// lastTid is the thread of the last stop reply.
	lastTid int
	// bps maps a Z packet to the session's breakpoint; kinds the session
	// breakpoint back to its Z type.
	bps   map[zKey]int
	kinds map[int]zKey
	// intr is set by a Ctrl-C while the target runs.
	intr atomic.Bool
	// xfer caches a qXfer object from its first read (offset 0) to its
	// last, so that a document read in pieces is one version.
	xfer     map[string][]byte
	auxv     []byte
	auxvErr  error
	auxvDone bool
	// auxvs are the auxiliary vectors of a tree's programs (auxvOf).
	auxvs map[auxvKey][]byte
	// fol: fork and exec events (follow.go).
	fol follow
}

type zKey struct {
	typ  int
	addr uint64
	n    uint64
}

// errInterrupted stops a travel operation on Ctrl-C.
var errInterrupted = errors.New("interrupted")

// errDone ends Serve after a kill or detach.
var errDone = errors.New("done")

// NewServer prepares a server for target t on one connection.
func NewServer(t *ttd.Target, r io.Reader, w io.Writer, cfg Config) *Server {
	s := t.Session()
	srv := &Server{t: t, s: s, c: NewConn(r, w), cfg: cfg, bps: map[zKey]int{}, kinds: map[int]zKey{}, xfer: map[string][]byte{}}
	srv.pid = 1
	if tid, err := s.CurrentThread(); err == nil && tid > 0 {
		srv.lastTid = tid
	}
	if pid := s.Pid(); pid > 0 {
		// The process as the trace's process tree names it.
		srv.pid = int64(pid)
	} else if ths, err := s.Threads(); err == nil && len(ths) > 0 {
		// Thread ids are the process id, then pid+1... (emu): the
		// smallest live one at the first stop is the process.
		srv.pid = int64(ths[0].Tid)
		for _, th := range ths {
			srv.pid = min(srv.pid, int64(th.Tid))
		}
	} else if srv.lastTid > 0 {
		srv.pid = int64(srv.lastTid)
	}
	return srv
}

type packet struct {
	p    []byte
	intr bool
	err  error
}

// Serve answers requests until the client kills, detaches or hangs up
// (io.EOF is a clean end: nil).
func (srv *Server) Serve() error {
	ch := make(chan packet, 16)
	go func() {
		for {
			p, intr, err := srv.c.Read()
			if intr {
				srv.intr.Store(true)
			}
			ch <- packet{p, intr, err}
			if err != nil && !errors.Is(err, ErrPacket) {
				close(ch)
				return
			}
		}
	}()
	srv.s.SetInterrupt(func() error {
		if srv.intr.Load() {
			return errInterrupted
		}
		return nil
	})
	defer srv.s.SetInterrupt(nil)
	for pk := range ch {
		switch {
		case pk.err != nil && errors.Is(pk.err, ErrPacket):
			srv.logf("<- bad packet: %v", pk.err)
			if err := srv.reply("E." + pk.err.Error()); err != nil {
				return err
			}
			continue
		case pk.err == io.EOF:
			return nil
		case pk.err != nil:
			return pk.err
		case pk.intr:
			// A Ctrl-C that came while nothing ran: nothing to stop.
			srv.intr.Store(false)
			continue
		}
		srv.logf("<- %s", pk.p)
		out, err := srv.handle(pk.p)
		if err == errSkip {
			continue
		}
		if err == errDone {
			if out != "" {
				srv.reply(out)
			}
			return nil
		}
		if err != nil {
			out = "E." + err.Error()
		}
		if err := srv.reply(out); err != nil {
			return err
		}
	}
	return nil
}

func (srv *Server) logf(format string, args ...any) {
	if srv.cfg.Log != nil {
		fmt.Fprintf(srv.cfg.Log, format+"\n", args...)
	}
}

func (srv *Server) reply(s string) error {
	if len(s) > 200 {
		srv.logf("-> %s... (%d bytes)", s[:200], len(s))
	} else {
		srv.logf("-> %s", s)
	}
	return srv.c.WriteString(s)
}

// Errors the protocol replies with (errno values, as gdbserver does).
const (
	replyEFAULT = "E0e"
	replyEINVAL = "E16"
)

// handle answers one packet. An error becomes an "E.message" reply.
func (srv *Server) handle(p []byte) (string, error) {
	req, err := Parse(p)
	if err != nil {
		return "", err
	}
	s := srv.s
	switch req.Kind {
	case QuerySupported:
		events, err := srv.negotiate(req.Features)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("PacketSize=%x;QStartNoAckMode+;multiprocess+;swbreak+;hwbreak+;vContSupported+;"+
			"ReverseStep+;ReverseContinue+;qXfer:features:read+;qXfer:auxv:read+;qXfer:libraries-svr4:read+;"+
			"qXfer:exec-file:read+;qXfer:threads:read+%s", MaxPacket, events), nil
	case MustReplyEmpty, Unknown, Offsets:
		return "", nil
	case StartNoAck:
		// Off before the OK: the reading goroutine must not acknowledge
		// the packets that follow it.
		srv.c.SetNoAck(true)
		if err := srv.reply("OK"); err != nil {
			return "", err
		}
		// Already answered; an empty string here would be a second reply.
		return "", errSkip
	case SetThread:
		switch req.Op {
		case 'g':
			srv.gThread, srv.gPid = req.Thread.Tid, max(req.Thread.Pid, 0)
		case 'c':
			srv.cThread = req.Thread.Tid
		default:
			return replyEINVAL, nil
		}
		if req.Thread.Tid > 0 && !srv.alive(int(req.Thread.Tid)) {
			return replyEINVAL, nil
		}
		return "OK", nil
	case ThreadAlive:
		if srv.alive(int(req.Thread.Tid)) {
			return "OK", nil
		}
		return replyEINVAL, nil
	case CurrentThread:
		return "QC" + srv.tid(srv.stopThread()), nil
	case ThreadInfoFirst:
		ths := srv.threads()
		var b strings.Builder
		b.WriteByte('m')
		for i, t := range ths {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(srv.tid(t))
		}
		return b.String(), nil
	case ThreadInfoNext:
		return "l", nil
	case ThreadExtraInfo:
		return string(HexBytes(nil, []byte(srv.threadName(int(req.Thread.Tid))))), nil
	case Attached:
		return "1", nil
	case Symbol:
		return "OK", nil
	case HaltReason:
		return srv.stopReply(ttd.Stop{Reason: ttd.StopSeek, Position: s.Position(), Tid: srv.stopThread()}, 0), nil
	case ReadRegisters:
		r, err := s.Registers(srv.regThread())
		if err != nil {
			return replyEINVAL, nil
		}
		var out []byte
		for n := 0; n < NumRegs; n++ {
			out = appendReg(out, &r, n)
		}
		return string(out), nil
	case ReadRegister:
		if req.Reg >= NumRegs {
			return replyEINVAL, nil
		}
		r, err := s.Registers(srv.regThread())
		if err != nil {
			return replyEINVAL, nil
		}
		return string(appendReg(nil, &r, req.Reg)), nil
	case WriteRegisters, WriteRegister:
		return "", errors.New("ttd replays a recording: registers cannot be changed")
	case WriteMemory:
		return "", errors.New("ttd replays a recording: memory cannot be changed")
	case ReadMemory:
		return srv.readMemory(req.Addr, req.Len), nil
	case InsertBreak:
		return srv.insertBreak(req)
	case RemoveBreak:
		srv.dropBreak(zKey{req.Type, req.Addr, req.Len}, srv.selectedPid())
		return "OK", nil
	case VContQuery:
		return "vCont;c;C;s;S;r", nil
	case VCont:
		return srv.vcont(req.Actions)
	case Continue:
		if req.Addr != 0 {
			return "", errors.New("resuming at another address would change the past")
		}
		return srv.travel(ttd.Forward, func() (ttd.Stop, error) { return s.Continue(ttd.Forward) })
	case Step:
		if req.Addr != 0 {
			return "", errors.New("resuming at another address would change the past")
		}
		tid := srv.resumeThread()
		return srv.travel(ttd.Forward, func() (ttd.Stop, error) { return s.StepThread(tid, ttd.Forward) })
	case ReverseContinue:
		return srv.travel(ttd.Backward, func() (ttd.Stop, error) { return s.Continue(ttd.Backward) })
	case ReverseStep:
		tid := srv.resumeThread()
		return srv.travel(ttd.Backward, func() (ttd.Stop, error) { return s.StepThread(tid, ttd.Backward) })
	case Xfer:
		return srv.xferRead(req)
	case Monitor:
		return srv.monitor(req.Text)
	case TLSAddress:
		// lm is 0 for the executable (gdb has no link map address for
		// it: libraries-svr4 names none), else a library's load address.
		ps, err := srv.t.ThreadSession(int(req.Thread.Tid))
		if err != nil {
			return "", err
		}
		var a uint64
		if req.LM != 0 {
			a, err = ps.ModuleTLSAddress(int(req.Thread.Tid), req.LM, req.Addr)
		} else {
			a, err = ps.TLSAddress(int(req.Thread.Tid), req.Addr)
		}
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%016x", a), nil
	case Detach:
		if pid := req.Thread.Pid; pid > 0 && srv.fol.on {
			// One process of a tree (follow-fork-mode, detach-on-fork):
			// the others stay gdb's.
			srv.detach(pid)
			if len(srv.fol.attached) > 0 {
				return "OK", nil
			}
		}
		return "OK", errDone
	case Kill:
		return "OK", errDone
	}
	return "", nil
}

// errSkip: the handler has replied itself.
var errSkip = errors.New("skip")

// tid formats a thread id for the wire: pPID.TID with the process the
// thread belongs to.
func (srv *Server) tid(t int) string {
	return ThreadID{Pid: srv.threadPid(t), Tid: int64(t)}.String()
}

// threadPid is the process of thread t: in a recording of a process
// tree, the one re-simulation puts it in; else the recorded process.
func (srv *Server) threadPid(t int) int64 {
	if srv.s.Trace().Tree() {
		if pid := srv.s.ThreadPid(t); pid > 0 {
			return int64(pid)
		}
	}
	return srv.pid
}

// memSession is the session that shows the memory of the process gdb
// selected (Hg, gdb's current inferior), at the current position.
func (srv *Server) memSession() (*ttd.Session, error) {
	switch {
	case srv.gThread > 0:
		return srv.t.ThreadSession(int(srv.gThread))
	case srv.gPid > 0 && srv.gPid != srv.pid:
		return srv.t.ProcessSession(int(srv.gPid))
	}
	return srv.t.ThreadSession(srv.stopThread())
}

// threads lists the live threads at the current position: at the end,
// the thread whose state the recording ends with even if it exited.
func (srv *Server) threads() []int {
	var out []int
	if ths, err := srv.s.Threads(); err == nil {
		for _, th := range ths {
			if srv.known(th.Tid) {
				out = append(out, th.Tid)
			}
		}
	}
	if len(out) == 0 {
		if tid, err := srv.s.CurrentThread(); err == nil && tid != 0 {
			out = append(out, tid)
		} else if srv.lastTid != 0 {
			out = append(out, srv.lastTid)
		}
	}
	sort.Ints(out)
	return out
}

func (srv *Server) alive(tid int) bool {
	for _, t := range srv.threads() {
		if t == tid {
			return true
		}
	}
	return false
}

// stopThread is the thread a stop reply names: the last one reported,
// while it is alive, else the one about to run.
func (srv *Server) stopThread() int {
	if srv.lastTid != 0 && srv.alive(srv.lastTid) {
		return srv.lastTid
	}
	if tid, err := srv.s.CurrentThread(); err == nil && tid != 0 {
		return tid
	}
	if ths := srv.threads(); len(ths) > 0 {
		return ths[0]
	}
	return srv.lastTid
}

// regThread is the thread whose registers g and p read (Hg).
func (srv *Server) regThread() int {
	if srv.gThread > 0 {
		return int(srv.gThread)
	}
	return srv.stopThread()
}

// resumeThread is the thread a step applies to: the one Hc selected,
// else the one Hg selected (gdb reads the stepping thread's registers
// before it resumes), else the thread of the last stop.
func (srv *Server) resumeThread() int {
	switch {
	case srv.cThread > 0:
		return int(srv.cThread)
	case srv.gThread > 0:
		return int(srv.gThread)
	}
	return srv.stopThread()
}

// threadName is a thread's name: Linux names a thread after its
// process's program file (TASK_COMM_LEN bytes) unless it renames
// itself, which the recording does not show.
func (srv *Server) threadName(tid int) string {
	if name := srv.s.ProcessName(int(srv.threadPid(tid))); name != "" {
		return name
	}
	name := filepath.Base(srv.exePath())
	if len(name) > 15 {
		name = name[:15]
	}
	return name
}

func (srv *Server) readMemory(addr, n uint64) string {
	n = min(n, MaxPacket/2-16)
	if n == 0 {
		return ""
	}
	ms, err := srv.memSession()
	if err != nil {
		return replyEFAULT
	}
	m, err := ms.ReadMemory(addr, int(n))
	if err != nil {
		return replyEFAULT
	}
	k := 0
	for k < len(m.Known) && m.Known[k] {
		k++
	}
	if k == 0 {
		// The recording never saw this byte: an error, never a
		// made-up value.
		return replyEFAULT
	}
	return string(HexBytes(nil, m.Data[:k]))
}

func (srv *Server) insertBreak(req Request) (string, error) {
	k := zKey{req.Type, req.Addr, req.Len}
	if _, ok := srv.bps[k]; ok {
		srv.addBreak(k)
		return "OK", nil
	}
	b := ttd.Breakpoint{Kind: ttd.BreakExec, Addr: req.Addr}
	switch req.Type {
	case 2:
		b = ttd.Breakpoint{Kind: ttd.BreakMemory, Addr: req.Addr, Size: req.Len, Access: ttd.AccessWrite}
	case 3:
		b = ttd.Breakpoint{Kind: ttd.BreakMemory, Addr: req.Addr, Size: req.Len, Access: ttd.AccessRead}
	case 4:
		b = ttd.Breakpoint{Kind: ttd.BreakMemory, Addr: req.Addr, Size: req.Len, Access: ttd.AccessReadWrite}
	}
	id, err := srv.s.SetBreakpoint(b)
	if err != nil {
		return "", err
	}
	srv.bps[k] = id
	srv.kinds[id] = k
	srv.addBreak(k)
	return "OK", nil
}

// vcont runs a vCont request: a step or range step of the one thread
// that has one, else a continue. The other threads run as they did in
// the recording whatever their action says.
func (srv *Server) vcont(acts []Action) (string, error) {
	s := srv.s
	for _, a := range acts {
		if a.Op != 's' && a.Op != 'S' && a.Op != 'r' {
			continue
		}
		tid := srv.resumeThread()
		if a.HasThread && a.Thread.Tid > 0 {
			tid = int(a.Thread.Tid)
		}
		if a.Op == 'r' {
			return srv.travel(ttd.Forward, func() (ttd.Stop, error) { return s.StepRange(tid, a.Start, a.End) })
		}
		return srv.travel(ttd.Forward, func() (ttd.Stop, error) { return s.StepThread(tid, ttd.Forward) })
	}
	for _, a := range acts {
		if a.Op == 'c' || a.Op == 'C' {
			return srv.travel(ttd.Forward, func() (ttd.Stop, error) { return s.Continue(ttd.Forward) })
		}
	}
	return "", errors.New("vCont without a step or continue action")
}

// travel runs one of the session's travel operations, in direction
// dir, and answers with the stop reply; a Ctrl-C during it stops with
// SIGINT where the session is. A stop gdb must not see (in a process it
// does not debug: follow.go) runs the operation again from there.
func (srv *Server) travel(dir ttd.Direction, op func() (ttd.Stop, error)) (string, error) {
	// The flag is cleared when Serve takes the Ctrl-C from the
	// connection, after this travel (packets are handled in order).
	if dir == ttd.Backward {
		srv.fol.done = nil
	} else if r, ok := srv.doneReply(); ok {
		return r, nil // due after the last stop's exec event (follow.go)
	}
	st, err := op()
	for err == nil && srv.hidden(st, dir) {
		st, err = op()
	}
	if errors.Is(err, errInterrupted) {
		return srv.stopReply(ttd.Stop{Reason: ttd.StopSeek, Position: srv.s.Position(), Tid: srv.stopThread()}, sigINT), nil
	}
	if err != nil {
		return "", err
	}
	return srv.stopReply(st, 0), nil
}

// Signal numbers of stop replies (gdb's, equal to Linux's for these).
const (
	sigINT  = 2
	sigTRAP = 5
)

// stopReply formats a T packet for st; sig overrides the signal.
func (srv *Server) stopReply(st ttd.Stop, sig int) string {
	if pe := srv.fol.event; pe != nil {
		srv.fol.event = nil
		if sig == 0 {
			return srv.eventReply(pe)
		}
	} else if r, ok := srv.doneReply(); ok && sig == 0 {
		return r
	}
	if sig == 0 {
		sig = sigTRAP
	}
	tid := st.Tid
	var extra string
	switch st.Reason {
	case ttd.StopBreakpoint:
		if k, ok := srv.kinds[st.Breakpoint]; ok && k.typ == 1 {
			extra = "hwbreak:;"
		} else {
			extra = "swbreak:;"
		}
	case ttd.StopWatchpoint:
		if a := st.Access; a != nil {
			tid = a.Tid
			k := srv.kinds[st.Breakpoint]
			name := "awatch"
			switch k.typ {
			case 2:
				name = "watch"
			case 3:
				name = "rwatch"
			}
			// The address gdb matches against its watchpoint: the
			// first byte of the access inside the watched range.
			addr := max(a.Addr, k.addr)
			extra = fmt.Sprintf("%s:%x;", name, addr)
		}
	case ttd.StopSignal:
		if ev := st.Event; ev != nil {
			if ev.Tid != 0 {
				tid = ev.Tid
			}
			if ev.Record != nil && ev.Record.Signal.Signo != 0 {
				sig = gdbSignal(ev.Record.Signal.Signo)
			}
		}
	case ttd.StopStartOfTrace:
		extra = "replaylog:begin;"
	case ttd.StopEndOfTrace:
		extra = "replaylog:end;"
	}
	if tid == 0 {
		tid = srv.stopThread()
	}
	srv.lastTid = tid
	srv.gThread, srv.cThread, srv.gPid = 0, 0, 0
	return fmt.Sprintf("T%02xthread:%s;core:0;%s", sig&0xff, srv.tid(tid), extra)
}

// monitor runs a qRcmd command: its output goes to gdb's console as O
// packets, then OK.
func (srv *Server) monitor(text string) (string, error) {
	out, err := srv.command(strings.TrimSpace(text))
	if err != nil {
		out = "error: " + err.Error() + "\n"
	}
	for len(out) > 0 {
		n := min(len(out), MaxPacket/2-8)
		if err := srv.reply("O" + string(HexBytes(nil, []byte(out[:n])))); err != nil {
			return "", err
		}
		out = out[n:]
	}
	return "OK", nil
}

const monitorHelp = `ttd monitor commands:
  monitor when                    the current position (instructions retired by all threads)
  monitor goto POS                travel to POS: a position, start, end or a percentage (50%)
  monitor find-prev-write EXPR [N]  travel back to the last write to N bytes at EXPR
                                  (a global, &global, 0xADDR or global+off; N defaults to its size, else 8)
After goto and find-prev-write, gdb still shows the old registers and frame until told:
run "flushregs" (the ttd replay --gdb session defines "ttd-goto" and "ttd-find-prev-write" that do both).
`

func (srv *Server) command(text string) (string, error) {
	s := srv.s
	f := strings.Fields(text)
	if len(f) == 0 {
		return monitorHelp, nil
	}
	switch f[0] {
	case "help":
		return monitorHelp, nil
	case "when":
		tid := srv.stopThread()
		return fmt.Sprintf("position %d of %d (thread %d)\n", s.Position(), s.End(), tid), nil
	case "goto":
		if len(f) != 2 {
			return "", errors.New("usage: monitor goto POS")
		}
		pos, err := ParsePosition(f[1], s.End())
		if err != nil {
			return "", err
		}
		st, err := s.Seek(pos)
		if err != nil {
			return "", err
		}
		srv.lastTid, srv.gThread, srv.cThread, srv.gPid = st.Tid, 0, 0, 0
		return fmt.Sprintf("at position %d (thread %d)\n", st.Position, st.Tid), nil
	case "find-prev-write":
		if len(f) < 2 || len(f) > 3 {
			return "", errors.New("usage: monitor find-prev-write EXPR [N]")
		}
		addr, size, err := srv.lvalue(f[1])
		if err != nil {
			return "", err
		}
		if len(f) == 3 {
			n, err := strconv.ParseUint(f[2], 0, 32)
			if err != nil || n == 0 {
				return "", fmt.Errorf("bad size %q", f[2])
			}
			size = n
		}
		sy, _ := s.Symbols()
		fd, err := s.FindPrevWrite(addr, size, s.Position())
		if errors.Is(err, ttd.ErrNotFound) {
			return fmt.Sprintf("no write to %d bytes at %#x before position %d\n", size, addr, s.Position()), nil
		}
		if err != nil {
			return "", err
		}
		st, err := s.Seek(fd.Position)
		if err != nil {
			return "", err
		}
		srv.lastTid, srv.gThread, srv.cThread, srv.gPid = fd.Tid, 0, 0, 0
		_ = st
		return fmt.Sprintf("last write to %d bytes at %#x: position %d, thread %d, %s: %s\n  %s -> %s\nnow at position %d, before that write\n",
			size, addr, fd.Position, fd.Tid, ttd.Describe(sy, fd.PC), fd.Disasm, hexKnown(fd.Before), hexKnown(fd.After), fd.Position), nil
	}
	return "", fmt.Errorf("unknown monitor command %q (monitor help lists them)", f[0])
}

// lvalue resolves a monitor command's EXPR to the memory it names: a
// source expression in the current thread's innermost frame (counter,
// &counter, p->next, cell[3]), whose DWARF type gives the size, or an
// address (0x601040, global+8), 8 bytes.
func (srv *Server) lvalue(expr string) (addr, size uint64, err error) {
	e := strings.TrimPrefix(expr, "&")
	if v, verr := srv.t.Eval(srv.stopThread(), 0, e); verr == nil {
		if v.Addr == 0 || v.Size <= 0 {
			return 0, 0, fmt.Errorf("%s is not in memory (a register or a constant)", expr)
		}
		return v.Addr, uint64(v.Size), nil
	} else if a, aerr := ttd.ResolveAddr(srv.t.Symbols(), e); aerr == nil {
		return a, 8, nil
	} else {
		return 0, 0, verr
	}
}

func hexKnown(m ttd.Memory) string {
	var b strings.Builder
	for i, x := range m.Data {
		if i > 0 {
			b.WriteByte(' ')
		}
		if m.Known[i] {
			fmt.Fprintf(&b, "%02x", x)
		} else {
			b.WriteString("??")
		}
	}
	return b.String()
}

// ParsePosition parses a position: a number, "start", "end" or a
// percentage of the trace ("50%").
func ParsePosition(text string, end uint64) (uint64, error) {
	switch text {
	case "start":
		return 0, nil
	case "end":
		return end, nil
	}
	if p, ok := strings.CutSuffix(text, "%"); ok {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil || f < 0 || f > 100 {
			return 0, fmt.Errorf("bad percentage %q", text)
		}
		return uint64(f / 100 * float64(end)), nil
	}
	v, err := strconv.ParseUint(text, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("bad position %q: a number, start, end or N%%", text)
	}
	return min(v, end), nil
}

// linuxToGDB maps Linux signal numbers 1-31 to the protocol's, which are
// gdb's own (enum gdb_signal): SIGBUS is 10 there, SIGUSR1 30...
var linuxToGDB = [32]int{0, 1, 2, 3, 4, 5, 6, 10, 8, 9, 30, 11, 31, 13, 14, 15,
	143, 20, 19, 17, 18, 21, 22, 16, 24, 25, 26, 27, 28, 23, 32, 12}

// gdbSignal is the protocol's number of Linux signal sig: real-time
// signals 32 and 33-63 are gdb's REALTIME_32 (77) and REALTIME_33.. (45..),
// anything else GDB_SIGNAL_UNKNOWN (143).
func gdbSignal(sig int) int {
	switch {
	case sig > 0 && sig < 32:
		return linuxToGDB[sig]
	case sig == 32:
		return 77
	case sig >= 33 && sig <= 63:
		return 45 + sig - 33
	}
	return 143
}
