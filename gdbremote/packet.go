package gdbremote

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// Kind is what a request asks for.
type Kind uint8

// Request kinds. Unknown is a packet the server does not implement: the
// protocol's answer is an empty reply.
const (
	Unknown         Kind = iota
	QuerySupported       // qSupported[:features]
	MustReplyEmpty       // vMustReplyEmpty
	StartNoAck           // QStartNoAckMode
	SetThread            // Hg / Hc: Op, Thread
	HaltReason           // ?
	ReadRegisters        // g
	WriteRegisters       // G
	ReadRegister         // p n: Reg
	WriteRegister        // P n=v: Reg
	ReadMemory           // m addr,len: Addr, Len
	WriteMemory          // M addr,len:data / X: Addr, Len
	InsertBreak          // Z type,addr,kind: Type, Addr, Len
	RemoveBreak          // z type,addr,kind
	VContQuery           // vCont?
	VCont                // vCont;action[:thread]...: Actions
	Continue             // c [addr]
	Step                 // s [addr]
	ReverseContinue      // bc
	ReverseStep          // bs
	ThreadAlive          // T thread
	CurrentThread        // qC
	ThreadInfoFirst      // qfThreadInfo
	ThreadInfoNext       // qsThreadInfo
	ThreadExtraInfo      // qThreadExtraInfo,thread
	Xfer                 // qXfer:object:read:annex:offset,length
	Monitor              // qRcmd,hex: Text
	Attached             // qAttached[:pid]
	Kill                 // k, vKill;pid
	Detach               // D[;pid]
	TLSAddress           // qGetTLSAddr:thread,offset,lm: Thread, Addr (offset), LM
	Symbol               // qSymbol::
	Offsets              // qOffsets
)

// ThreadID is a thread as the protocol names it: with multiprocess
// extensions "pPID.TID", else "TID"; -1 means all, 0 any.
type ThreadID struct {
	Pid, Tid int64
}

// All and Any are the special thread ids.
const (
	All int64 = -1
	Any int64 = 0
)

// Action is one action of a vCont packet.
type Action struct {
	Op     byte // 'c', 's', 'r' (range step), 'C', 'S' (with a signal), 't' (stop)
	Signal int
	// Start and End bound a range step: step while start <= pc < end.
	Start, End uint64
	// Thread is the thread the action applies to; HasThread false means
	// every thread without an action of its own.
	Thread    ThreadID
	HasThread bool
}

// Request is one parsed packet.
type Request struct {
	Kind Kind
	// Name is the packet's name (for Unknown, its first word).
	Name   string
	Op     byte // SetThread: 'g' or 'c'
	Thread ThreadID
	Reg    int
	Addr   uint64
	Len    uint64
	// Type is a Z packet's type: 0 software breakpoint, 1 hardware
	// breakpoint, 2 write, 3 read and 4 access watchpoint.
	Type    int
	Actions []Action
	// Object, Annex, Offset and Len describe a qXfer read.
	Object, Annex string
	Offset        uint64
	// Features are qSupported's features; Text is a monitor command.
	Features []string
	Text     string
	LM       uint64
}

func perr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrPacket, fmt.Sprintf(format, args...))
}

// Parse parses a packet's payload. A malformed packet of a known kind is
// an error wrapping ErrPacket (the server answers it with an error
// reply); an unknown one is a Request of kind Unknown.
func Parse(p []byte) (Request, error) {
	if len(p) == 0 {
		return Request{Kind: Unknown}, nil
	}
	s := string(p)
	switch p[0] {
	case '?':
		return Request{Kind: HaltReason, Name: "?"}, nil
	case 'g':
		if len(p) == 1 {
			return Request{Kind: ReadRegisters, Name: "g"}, nil
		}
	case 'G':
		return Request{Kind: WriteRegisters, Name: "G"}, nil
	case 'p':
		n, err := parseHex(s[1:])
		if err != nil || n > 1<<16 {
			return Request{}, perr("p: bad register number %q", s[1:])
		}
		return Request{Kind: ReadRegister, Name: "p", Reg: int(n)}, nil
	case 'P':
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			return Request{}, perr("P: no '='")
		}
		n, err := parseHex(s[1:eq])
		if err != nil || n > 1<<16 {
			return Request{}, perr("P: bad register number %q", s[1:eq])
		}
		return Request{Kind: WriteRegister, Name: "P", Reg: int(n)}, nil
	case 'm', 'M', 'X':
		rest := s[1:]
		if p[0] != 'm' {
			c := strings.IndexByte(rest, ':')
			if c < 0 {
				return Request{}, perr("%c: no ':'", p[0])
			}
			rest = rest[:c]
		}
		addr, n, err := addrLen(rest)
		if err != nil {
			return Request{}, perr("%c: %v", p[0], err)
		}
		k := ReadMemory
		if p[0] != 'm' {
			k = WriteMemory
		}
		return Request{Kind: k, Name: s[:1], Addr: addr, Len: n}, nil
	case 'Z', 'z':
		f := strings.Split(s[1:], ",")
		if len(f) < 3 {
			return Request{}, perr("%c: want type,addr,kind", p[0])
		}
		typ, err1 := strconv.Atoi(f[0])
		addr, err2 := parseHex(f[1])
		kind, err3 := parseHex(strings.SplitN(f[2], ";", 2)[0])
		if err1 != nil || err2 != nil || err3 != nil || typ < 0 || typ > 4 {
			return Request{}, perr("%c: bad type, address or kind in %q", p[0], s)
		}
		k := InsertBreak
		if p[0] == 'z' {
			k = RemoveBreak
		}
		return Request{Kind: k, Name: s[:1], Type: typ, Addr: addr, Len: kind}, nil
	case 'H':
		if len(p) < 3 {
			return Request{}, perr("H: too short")
		}
		th, err := ParseThreadID(s[2:])
		if err != nil {
			return Request{}, err
		}
		return Request{Kind: SetThread, Name: "H", Op: p[1], Thread: th}, nil
	case 'T':
		th, err := ParseThreadID(s[1:])
		if err != nil {
			return Request{}, err
		}
		return Request{Kind: ThreadAlive, Name: "T", Thread: th}, nil
	case 'c', 's':
		r := Request{Kind: Continue, Name: s[:1]}
		if p[0] == 's' {
			r.Kind = Step
		}
		if len(p) > 1 {
			a, err := parseHex(s[1:])
			if err != nil {
				return Request{}, perr("%c: bad address %q", p[0], s[1:])
			}
			r.Addr = a
		}
		return r, nil
	case 'b':
		switch s {
		case "bc":
			return Request{Kind: ReverseContinue, Name: "bc"}, nil
		case "bs":
			return Request{Kind: ReverseStep, Name: "bs"}, nil
		}
	case 'k':
		return Request{Kind: Kill, Name: "k"}, nil
	case 'D':
		// D;PID detaches one process (multiprocess+): Thread.Pid.
		r := Request{Kind: Detach, Name: "D"}
		if rest, ok := strings.CutPrefix(s, "D;"); ok {
			pid, err := strconv.ParseInt(rest, 16, 64)
			if err != nil || pid <= 0 {
				return Request{}, perr("bad process id in %q", s)
			}
			r.Thread.Pid = pid
		}
		return r, nil
	case 'v':
		return parseV(s)
	case 'q', 'Q':
		return parseQuery(s)
	}
	return Request{Kind: Unknown, Name: firstWord(s)}, nil
}

func firstWord(s string) string {
	if i := strings.IndexAny(s, ":;,"); i >= 0 {
		return s[:i]
	}
	if len(s) > 32 {
		return s[:32]
	}
	return s
}

func parseV(s string) (Request, error) {
	switch {
	case s == "vMustReplyEmpty":
		return Request{Kind: MustReplyEmpty, Name: s}, nil
	case s == "vCont?":
		return Request{Kind: VContQuery, Name: s}, nil
	case strings.HasPrefix(s, "vKill"):
		return Request{Kind: Kill, Name: "vKill"}, nil
	case strings.HasPrefix(s, "vCont;"):
		var acts []Action
		for _, f := range strings.Split(s[len("vCont;"):], ";") {
			a, err := parseAction(f)
			if err != nil {
				return Request{}, err
			}
			acts = append(acts, a)
		}
		return Request{Kind: VCont, Name: "vCont", Actions: acts}, nil
	}
	return Request{Kind: Unknown, Name: firstWord(s)}, nil
}

func parseAction(f string) (Action, error) {
	var a Action
	body := f
	if c := strings.IndexByte(f, ':'); c >= 0 {
		th, err := ParseThreadID(f[c+1:])
		if err != nil {
			return a, err
		}
		a.Thread, a.HasThread = th, true
		body = f[:c]
	}
	if body == "" {
		return a, perr("vCont: empty action")
	}
	a.Op = body[0]
	switch a.Op {
	case 'c', 's', 't':
		if len(body) != 1 {
			return a, perr("vCont: bad action %q", body)
		}
	case 'C', 'S':
		n, err := strconv.ParseUint(body[1:], 16, 8)
		if err != nil {
			return a, perr("vCont: bad signal in %q", body)
		}
		a.Signal = int(n)
	case 'r':
		lo, hi, ok := strings.Cut(body[1:], ",")
		start, err1 := parseHex(lo)
		end, err2 := parseHex(hi)
		if !ok || err1 != nil || err2 != nil {
			return a, perr("vCont: bad range in %q", body)
		}
		a.Start, a.End = start, end
	default:
		return a, perr("vCont: unknown action %q", body)
	}
	return a, nil
}

func parseQuery(s string) (Request, error) {
	name := firstWord(s)
	// arg is what follows the name and its separator.
	arg := ""
	if len(s) > len(name) {
		arg = s[len(name)+1:]
	}
	switch name {
	case "qSupported":
		var fs []string
		if arg != "" {
			fs = strings.Split(arg, ";")
		}
		return Request{Kind: QuerySupported, Name: name, Features: fs}, nil
	case "QStartNoAckMode":
		return Request{Kind: StartNoAck, Name: name}, nil
	case "qC":
		return Request{Kind: CurrentThread, Name: name}, nil
	case "qfThreadInfo":
		return Request{Kind: ThreadInfoFirst, Name: name}, nil
	case "qsThreadInfo":
		return Request{Kind: ThreadInfoNext, Name: name}, nil
	case "qAttached":
		return Request{Kind: Attached, Name: name}, nil
	case "qOffsets":
		return Request{Kind: Offsets, Name: name}, nil
	case "qSymbol":
		return Request{Kind: Symbol, Name: name}, nil
	case "qThreadExtraInfo":
		th, err := ParseThreadID(arg)
		if err != nil {
			return Request{}, err
		}
		return Request{Kind: ThreadExtraInfo, Name: name, Thread: th}, nil
	case "qRcmd":
		b, err := hex.DecodeString(arg)
		if err != nil {
			return Request{}, perr("qRcmd: bad hex")
		}
		return Request{Kind: Monitor, Name: name, Text: string(b)}, nil
	case "qGetTLSAddr":
		f := strings.Split(arg, ",")
		if len(f) != 3 {
			return Request{}, perr("qGetTLSAddr: want thread,offset,lm")
		}
		th, err := ParseThreadID(f[0])
		if err != nil {
			return Request{}, err
		}
		off, err1 := parseHex(f[1])
		lm, err2 := parseHex(f[2])
		if err1 != nil || err2 != nil {
			return Request{}, perr("qGetTLSAddr: bad offset or lm")
		}
		return Request{Kind: TLSAddress, Name: name, Thread: th, Addr: off, LM: lm}, nil
	case "qXfer":
		// qXfer:object:read:annex:offset,length
		f := strings.SplitN(s, ":", 5)
		if len(f) != 5 {
			return Request{}, perr("qXfer: want object:read:annex:offset,length")
		}
		if f[2] != "read" {
			return Request{Kind: Unknown, Name: "qXfer:" + f[1] + ":" + f[2]}, nil
		}
		off, n, err := addrLen(f[4])
		if err != nil {
			return Request{}, perr("qXfer: %v", err)
		}
		return Request{Kind: Xfer, Name: "qXfer", Object: f[1], Annex: f[3], Offset: off, Len: n}, nil
	}
	return Request{Kind: Unknown, Name: name}, nil
}

// ParseThreadID parses "pPID.TID", "pPID", "TID", with -1 for all and
// 0 for any, in hex.
func ParseThreadID(s string) (ThreadID, error) {
	one := func(x string) (int64, error) {
		if x == "-1" {
			return All, nil
		}
		v, err := strconv.ParseUint(x, 16, 31)
		if err != nil {
			return 0, perr("bad thread id %q", s)
		}
		return int64(v), nil
	}
	if strings.HasPrefix(s, "p") {
		ps, ts, dot := strings.Cut(s[1:], ".")
		pid, err := one(ps)
		if err != nil {
			return ThreadID{}, err
		}
		if !dot {
			return ThreadID{Pid: pid, Tid: All}, nil
		}
		tid, err := one(ts)
		return ThreadID{Pid: pid, Tid: tid}, err
	}
	tid, err := one(s)
	return ThreadID{Pid: Any, Tid: tid}, err
}

// String formats the thread id with the multiprocess extensions.
func (t ThreadID) String() string {
	f := func(v int64) string {
		if v == All {
			return "-1"
		}
		return strconv.FormatInt(v, 16)
	}
	return "p" + f(t.Pid) + "." + f(t.Tid)
}

func parseHex(s string) (uint64, error) {
	if s == "" {
		return 0, perr("empty number")
	}
	return strconv.ParseUint(s, 16, 64)
}

func addrLen(s string) (uint64, uint64, error) {
	a, n, ok := strings.Cut(s, ",")
	if !ok {
		return 0, 0, fmt.Errorf("want addr,length in %q", s)
	}
	addr, err1 := parseHex(a)
	ln, err2 := parseHex(n)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("bad addr,length %q", s)
	}
	return addr, ln, nil
}

// HexBytes appends b in hex.
func HexBytes(dst, b []byte) []byte {
	for _, x := range b {
		dst = append(dst, hexDigits[x>>4], hexDigits[x&15])
	}
	return dst
}

// HexUint appends the n-byte little-endian v in hex (target byte order).
func HexUint(dst []byte, v uint64, n int) []byte {
	for i := 0; i < n; i++ {
		b := byte(v >> (8 * i))
		dst = append(dst, hexDigits[b>>4], hexDigits[b&15])
	}
	return dst
}

// Unavailable appends n bytes' worth of 'x': a register whose value is
// not in the recording.
func Unavailable(dst []byte, n int) []byte {
	return append(dst, bytes.Repeat([]byte("xx"), n)...)
}
