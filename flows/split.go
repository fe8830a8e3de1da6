package flows

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"

	"ttd/calls"
	"ttd/internal/linux"
	"ttd/reader"
	"ttd/tracefile"
)

// interval: from position From on, a thread works for flow Flow.
type interval struct {
	From uint64
	Flow int
}

// end is one end of a channel the recording used: a socket or a pipe.
type end struct {
	peer *end // the other end (nil: outside the recording)
	// in are the bytes written to this end's peer not yet read here, in
	// order, with the flow that wrote them.
	in []chunk
	// socket: an accepted or created socket (reads on it bring work in).
	socket bool
	// family is a socket's address family (socket's first argument).
	family uint64
	// pending are the server ends of the connections made to a
	// listening socket not yet accepted, in the order they were made
	// (the kernel's accept queue is first in, first out).
	pending []*end
	// client is the thread that connected (on a connection's server
	// end), and at the position of its connect.
	client    int
	connectAt uint64
	// flow is the flow an accept started on this connection's server
	// end; its first receive joins it rather than starting another.
	flow int
	// accepted is that flow for as long as the thread that accepted
	// the connection works for it (Split.holding), and before the flow
	// that thread worked for before the accept.
	accepted, before int
}

type chunk struct {
	n    uint64
	flow int
	tid  int
	pos  uint64 // the send
}

// Split is a recording cut into flows: which flow each thread works for
// at each position, the flows' triggers and the communication graph.
type Split struct {
	threads map[int][]interval
	Flows   []*Flow // Flows[0] is the background: work no input started
	Edges   []*Edge
	// sends are the bytes each send-like syscall sent, by position.
	sends map[uint64]uint64
	// origin is the thread each flow began in.
	origin map[int]int
	end    uint64
	// Pid is the recording's first process.
	Pid int
	// Tree is the recording's processes (threads to processes).
	Tree *calls.Tree
	// startFlow is the flow each thread started in.
	startFlow map[int]int
	// holding is, for a thread working for the flow of a connection it
	// accepted, that connection: the thread leaves the flow when it
	// hands the connection on (release).
	holding map[int]*end
	// reaped is the flow a thread joined by reaping a child.
	reaped map[int]int
	// listeners are the listening sockets of the recording, by address
	// family, in the order listen was called.
	listeners map[uint64][]*end
}

// Edge is an arc of the communication graph.
type Edge struct {
	From, To int // thread ids (0: outside the recording)
	// Kind is "message" (bytes through a socket or a pipe), "clone" (a
	// thread started another in its process), "fork" (a thread started
	// a process: To is the new process's first thread) or "wait" (a
	// thread reaped a child process: From is the child's first thread)
	// or "connect" (a thread connected to a listening socket and To
	// accepted the connection).
	Kind  string
	Count int
	Bytes uint64
}

// Flow is one activity of the recording.
type Flow struct {
	ID int `json:"id"`
	// Trigger says where the work came in: "recvfrom(fd 5, 16 bytes)",
	// "accept(fd 3)", or "" for the background.
	Trigger  string `json:"trigger"`
	StartTid int    `json:"start_tid"`
	// At is the position of the trigger; Start and End bound the
	// positions the flow's threads worked for it (from the send of the
	// work, when a thread of the recording sent it).
	At      uint64 `json:"at"`
	Start   uint64 `json:"start"`
	End     uint64 `json:"end"`
	Threads []int  `json:"threads"`
	// Processes are the pids of the flow's threads.
	Processes []int `json:"processes"`
	// Filled by Analyze:
	Instructions uint64     `json:"instructions"`
	Share        float64    `json:"share"`
	BytesSent    uint64     `json:"bytes_sent"`
	Paths        []PathStat `json:"paths"`
}

// PathStat is what a flow spent in one call path.
type PathStat struct {
	Path  []string `json:"path"`
	Self  uint64   `json:"self"`
	Count uint64   `json:"count"`
	Sent  uint64   `json:"sent"`
}

// FlowOf is the flow thread tid works for from position pos on (0: the
// background). It is safe for concurrent use.
func (s *Split) FlowOf(tid int, pos uint64) int {
	iv := s.threads[tid]
	i := sort.Search(len(iv), func(i int) bool { return iv[i].From > pos })
	if i == 0 {
		return 0
	}
	return iv[i-1].Flow
}

// Sent is the number of bytes a syscall event sent to a socket or a
// pipe (0 for other events).
func (s *Split) Sent(ev *reader.Event) uint64 {
	if ev.Kind != reader.EventSyscall {
		return 0
	}
	return s.sends[ev.Position]
}

// NewSplit cuts a recording into flows by the paper's two rules, from
// its syscalls alone (no re-simulation):
//   - a flow starts where work comes in: an accept, or a read or receive
//     of bytes on a socket or a pipe, unless the bytes are work handed
//     on (below); the thread works for that flow until its next receive
//     (the message-switch rule);
//   - a receive of bytes that another thread sent while working for a
//     flow that began in some other thread joins that flow (the
//     communication-pair rule): a dispatcher handing a request to a
//     worker, or a server's reply reaching its client. Bytes sent by a
//     flow that began in the receiving thread itself are new work (the
//     client's next request);
//   - a new thread starts in its creator's flow.
//
// Only threads of the recorded process are followed; channels to the
// outside (sockets, a pipe's other end) have no peer, and a receive on
// them always starts a flow.
func NewSplit(t *reader.Trace) (*Split, error) {
	tr, err := calls.NewTree(t)
	if err != nil {
		return nil, err
	}
	s := &Split{threads: map[int][]interval{}, sends: map[uint64]uint64{}, origin: map[int]int{}, end: t.End(), Tree: tr, startFlow: map[int]int{}, holding: map[int]*end{}, reaped: map[int]int{}, listeners: map[uint64][]*end{}}
	if len(tr.Procs) > 0 {
		s.Pid = tr.Procs[0].Pid
	}
	s.Flows = append(s.Flows, &Flow{ID: 0, Trigger: ""})
	// Each process has its table of file descriptors; a fork copies its
	// parent's, whose ends (pipes, sockets) the two then share.
	tables := map[int]map[int]*end{}
	table := func(tid int) map[int]*end {
		pid := tr.PidOf(tid)
		fds := tables[pid]
		if fds == nil {
			fds = map[int]*end{}
			tables[pid] = fds
		}
		return fds
	}
	edges := map[[3]int]*Edge{}
	edge := func(from, to int, kind string) *Edge {
		k := [3]int{from, to, edgeKinds[kind]}
		e := edges[k]
		if e == nil {
			e = &Edge{From: from, To: to, Kind: kind}
			edges[k] = e
			s.Edges = append(s.Edges, e)
		}
		return e
	}
	cur := func(tid int) int {
		iv := s.threads[tid]
		if len(iv) == 0 {
			return 0
		}
		return iv[len(iv)-1].Flow
	}
	set := func(tid int, pos uint64, flow int) {
		iv := s.threads[tid]
		if n := len(iv); n > 0 && iv[n-1].From == pos {
			iv[n-1].Flow = flow
		} else if n == 0 || iv[n-1].Flow != flow {
			iv = append(iv, interval{pos, flow})
		}
		s.threads[tid] = iv
	}
	err = t.ScanEvents(reader.Checkpoint{}, func(ev *reader.Event) bool {
		switch ev.Kind {
		case reader.EventProcess:
			if p := ev.Process; p.Event == tracefile.ProcessStarted && p.Tid != 0 {
				parent, child := table(p.Tid), map[int]*end{}
				for fd, e := range parent {
					child[fd] = e
				}
				tables[p.Pid] = child
			}
		case reader.EventThreadStart:
			ts := ev.Record.ThreadStart
			if ts.ParentTid != 0 {
				f := cur(ts.ParentTid)
				set(ts.Tid, ev.Position, f)
				s.startFlow[ts.Tid] = f
				kind := "clone"
				if tr.PidOf(ts.Tid) != tr.PidOf(ts.ParentTid) {
					kind = "fork"
				}
				edge(ts.ParentTid, ts.Tid, kind).Count++
				// A thread or process started for the connection
				// takes it over from the thread that accepted it.
				s.release(ts.ParentTid, ev.Position, cur, set)
			}
		case reader.EventSyscall:
			s.syscall(ev, table(ev.Record.Syscall.Tid), cur, set, edge)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	s.finish()
	return s, nil
}

func (s *Split) syscall(ev *reader.Event, fds map[int]*end, cur func(int) int, set func(int, uint64, int), edge func(int, int, string) *Edge) {
	sc := &ev.Record.Syscall
	tid, res := sc.Tid, sc.Result
	fd := int(int32(sc.Args[0]))
	name := linux.SyscallName(sc.Nr)
	switch name {
	case "socketpair", "pipe", "pipe2":
		if res != 0 {
			return
		}
		addr := sc.Args[0]
		if name == "socketpair" {
			addr = sc.Args[3]
		}
		a, b, ok := twoFds(sc, addr)
		if !ok {
			return
		}
		ea, eb := &end{socket: name == "socketpair"}, &end{socket: name == "socketpair"}
		ea.peer, eb.peer = eb, ea
		fds[a], fds[b] = ea, eb
		if name != "socketpair" {
			// A pipe's read end reads what its write end was given.
			ea.socket = true // reads on it bring work
		}
	case "socket":
		if res >= 0 {
			fds[int(res)] = &end{socket: true, family: sc.Args[0]}
		}
	case "listen":
		if e := fds[fd]; e != nil && res == 0 && !slices.Contains(s.listeners[e.family], e) {
			s.listeners[e.family] = append(s.listeners[e.family], e)
		}
	case "connect":
		// A connection to a listening socket of the recording: its
		// server end exists from now on (the bytes the client sends
		// before the accept wait in it), queued for the accept.
		e := fds[fd]
		if e == nil || res != 0 && res != -int64(linux.EINPROGRESS) {
			return
		}
		if l := s.listenerFor(e.family); l != nil {
			srv := &end{socket: true, family: e.family, peer: e, client: tid, connectAt: ev.Position}
			e.peer = srv
			l.pending = append(l.pending, srv)
		}
	case "accept", "accept4":
		if res < 0 {
			return
		}
		c := &end{socket: true}
		if l := fds[fd]; l != nil && len(l.pending) > 0 {
			c, l.pending = l.pending[0], l.pending[1:]
		}
		fds[int(res)] = c
		// The connection is a flow of its own from the accept on; the
		// client works for it from its connect on.
		before := cur(tid)
		c.flow = s.start(tid, ev.Position, fmt.Sprintf("%s(fd %d) = fd %d", name, fd, res), set)
		c.accepted, c.before = c.flow, before
		s.holding[tid] = c
		if c.client != 0 {
			s.insert(c.client, c.connectAt, c.flow)
			edge(c.client, tid, "connect").Count++
		}
	case "close":
		// Closing the connection it accepted (after handing it to a
		// forked child, or after answering it) ends the accepting
		// thread's work for it.
		if e := fds[fd]; e != nil && e == s.holding[tid] && res == 0 {
			s.release(tid, ev.Position, cur, set)
		}
		delete(fds, fd)
	case "wait4", "waitid":
		// A reaped child: its flow goes on in the parent that waited
		// for it, unless the parent works for a flow of its own.
		child := int(res)
		if name == "waitid" {
			child = waitidPid(sc)
		}
		if res < 0 || child <= 0 {
			return
		}
		ctid := child // a process's first thread has its pid
		edge(ctid, tid, "wait").Count++
		// A parent reaping one child after another works for each
		// one's flow in turn.
		if f := cur(ctid); f > 0 && (cur(tid) == 0 || cur(tid) == s.reaped[tid]) {
			set(tid, ev.Position, f)
			s.reaped[tid] = f
		}
	case "dup", "dup2", "dup3":
		if e := fds[fd]; e != nil && res >= 0 {
			fds[int(res)] = e
		}
	case "fcntl":
		cmd, _ := linux.Fcntl.Name(sc.Args[1])
		if e := fds[fd]; e != nil && res >= 0 && (cmd == "F_DUPFD" || cmd == "F_DUPFD_CLOEXEC") {
			fds[int(res)] = e
		}
	case "write", "writev", "sendto", "sendmsg":
		e := fds[fd]
		if e == nil || res <= 0 {
			return
		}
		n := uint64(res)
		s.sends[ev.Position] += n
		if e.peer != nil {
			e.peer.in = append(e.peer.in, chunk{n, cur(tid), tid, ev.Position})
		} else {
			ed := edge(tid, 0, "message")
			ed.Count++
			ed.Bytes += n
		}
	case "read", "readv", "recvfrom", "recvmsg":
		e := fds[fd]
		if e == nil || res <= 0 || !e.socket {
			return
		}
		from := e.consume(uint64(res))
		ed := edge(from.tid, tid, "message")
		ed.Count++
		ed.Bytes += uint64(res)
		if e.flow > 0 {
			// The first bytes read on an accepted connection are the
			// work its accept started; read by another thread, they
			// were handed on by the thread that accepted them.
			for at, h := range s.holding {
				if h == e && at != tid {
					s.release(at, ev.Position, cur, set)
				}
			}
			set(tid, ev.Position, e.flow)
			e.flow = 0
			return
		}
		// Work handed on joins its flow: bytes of a flow that began in
		// another thread, or that a thread started for the flow sends
		// back to where it began (a worker process's reply).
		if from.flow > 0 && (s.origin[from.flow] != tid || from.tid != tid && s.startFlow[from.tid] == from.flow) {
			set(tid, ev.Position, from.flow)
			return
		}
		id := s.start(tid, ev.Position, fmt.Sprintf("%s(fd %d, %d bytes)", name, fd, res), set)
		if from.tid != 0 && from.tid != tid {
			// The thread that sent the new work (a client in the
			// recording) works for it from its send on.
			s.insert(from.tid, from.pos, id)
		}
	}
}

var edgeKinds = map[string]int{"message": 0, "clone": 1, "fork": 2, "wait": 3, "connect": 4}

// consume takes n bytes read from e's queue; the result is the chunk of
// the first writer, whose flow the work belongs to (tid 0 and flow 0 for
// bytes from outside the recording).
func (e *end) consume(n uint64) chunk {
	from := chunk{flow: -1}
	for n > 0 && len(e.in) > 0 {
		c := &e.in[0]
		if from.flow < 0 {
			from = *c
		}
		k := min(n, c.n)
		c.n -= k
		n -= k
		if c.n == 0 {
			e.in = e.in[1:]
		}
	}
	if from.flow < 0 {
		return chunk{}
	}
	return from
}

// listenerFor is the listening socket a connect of the given address
// family reached: the recording's last listener of that family, nil if
// it has none (the connection leaves the recording). The syscall records
// do not hold the addresses bind and connect were given (they are the
// calls' input memory), so two listeners of one family open at once are
// told apart by recency only.
func (s *Split) listenerFor(family uint64) *end {
	ls := s.listeners[family]
	if len(ls) == 0 {
		return nil
	}
	return ls[len(ls)-1]
}

// waitidPid is the pid a waitid reaped: si_pid of the siginfo it wrote
// (offset 16), 0 when it reaped none.
func waitidPid(sc *tracefile.Syscall) int {
	addr := sc.Args[2]
	for _, w := range sc.Writes {
		if w.Addr <= addr+16 && addr+20 <= w.Addr+uint64(len(w.Bytes)) {
			return int(int32(binary.LittleEndian.Uint32(w.Bytes[addr+16-w.Addr:])))
		}
	}
	return 0
}

// release ends, at pos, the work of thread tid for the flow of the
// connection it accepted, if it still works for it: tid goes back to
// the flow it worked for before the accept. A server's accepting thread
// thus works for a connection from its accept until it hands the
// connection on (to a thread or process it starts, or to another thread
// that reads the request) or closes it, not until its next accept: what
// it does after its last accept (joining its threads, reaping its
// children) is not charged to the last connection.
func (s *Split) release(tid int, pos uint64, cur func(int) int, set func(int, uint64, int)) {
	h := s.holding[tid]
	if h == nil {
		return
	}
	delete(s.holding, tid)
	if cur(tid) == h.accepted {
		set(tid, pos, h.before)
	}
}

// start begins a flow in thread tid at pos.
func (s *Split) start(tid int, pos uint64, trigger string, set func(int, uint64, int)) int {
	f := &Flow{ID: len(s.Flows), Trigger: trigger, StartTid: tid, At: pos, Start: pos}
	s.Flows = append(s.Flows, f)
	s.origin[f.ID] = tid
	set(tid, pos, f.ID)
	return f.ID
}

// insert makes thread tid work for flow from pos on, up to its next
// switch, which may already be known.
func (s *Split) insert(tid int, pos uint64, flow int) {
	iv := s.threads[tid]
	i := sort.Search(len(iv), func(i int) bool { return iv[i].From >= pos })
	if i < len(iv) && iv[i].From == pos {
		iv[i].Flow = flow
		return
	}
	iv = append(iv, interval{})
	copy(iv[i+1:], iv[i:])
	iv[i] = interval{pos, flow}
	s.threads[tid] = iv
}

// twoFds reads the two int32 file descriptors a socketpair or a pipe
// wrote at addr, from the syscall's record.
func twoFds(sc *tracefile.Syscall, addr uint64) (int, int, bool) {
	for _, w := range sc.Writes {
		if w.Addr <= addr && addr+8 <= w.Addr+uint64(len(w.Bytes)) {
			b := w.Bytes[addr-w.Addr:]
			return int(int32(binary.LittleEndian.Uint32(b))), int(int32(binary.LittleEndian.Uint32(b[4:]))), true
		}
	}
	return 0, 0, false
}

// finish computes each flow's threads and position range.
func (s *Split) finish() {
	threads := map[int]map[int]bool{}
	for tid, iv := range s.threads {
		for i, in := range iv {
			f := s.Flows[in.Flow]
			end := s.end
			if i+1 < len(iv) {
				end = iv[i+1].From
			}
			if f.ID == 0 && f.Start == 0 || in.From < f.Start {
				f.Start = in.From
			}
			f.End = max(f.End, end)
			if threads[f.ID] == nil {
				threads[f.ID] = map[int]bool{}
			}
			threads[f.ID][tid] = true
		}
	}
	for _, f := range s.Flows {
		for tid := range threads[f.ID] {
			f.Threads = append(f.Threads, tid)
		}
		sort.Ints(f.Threads)
		f.Processes = s.pids(f.Threads)
	}
	s.Flows[0].Start, s.Flows[0].End = 0, s.end
	sort.Slice(s.Edges, func(i, j int) bool {
		a, b := s.Edges[i], s.Edges[j]
		if a.From != b.From {
			return a.From < b.From
		}
		if a.To != b.To {
			return a.To < b.To
		}
		return edgeKinds[a.Kind] < edgeKinds[b.Kind]
	})
}

// pids are the processes of threads, sorted.
func (s *Split) pids(tids []int) []int {
	seen := map[int]bool{}
	out := []int{}
	for _, tid := range tids {
		if pid := s.Tree.PidOf(tid); !seen[pid] {
			seen[pid] = true
			out = append(out, pid)
		}
	}
	sort.Ints(out)
	return out
}
