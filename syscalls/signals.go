package syscalls

import (
	"strconv"

	"ttd/internal/linux"
	"ttd/tracefile"
)

// Signal is a signal delivered to a thread (to its handler, or acting
// by default).
type Signal struct {
	Pos      uint64
	Pid, Tid int
	// Text is the siginfo as strace prints it:
	// {si_signo=SIGUSR1, si_code=SI_TKILL, si_pid=12, si_uid=0}.
	Text []byte
	Rec  *tracefile.Signal
}

// SignalSink is a Sink that also takes signal deliveries.
type SignalSink interface {
	Signal(s *Signal) error
}

// siginfoOff is where the siginfo lies in an x86-64 rt_sigframe: after
// the return address and the ucontext.
const (
	siginfoOff = 8 + 304
	sigmaskOff = 8 + 296 // uc_sigmask
	siKernel   = 0x80
	siUser     = 0
	siTkill    = -6
	siQueue    = -1
)

var siCodes = map[int]string{0: "SI_USER", 0x80: "SI_KERNEL", -1: "SI_QUEUE", -2: "SI_TIMER", -3: "SI_MESGQ",
	-4: "SI_ASYNCIO", -5: "SI_SIGIO", -6: "SI_TKILL"}

// faultCodes name si_code of the fault signals.
var faultCodes = map[int]map[int]string{
	11: {1: "SEGV_MAPERR", 2: "SEGV_ACCERR", 3: "SEGV_BNDERR", 4: "SEGV_PKUERR"},
	7:  {1: "BUS_ADRALN", 2: "BUS_ADRERR", 3: "BUS_OBJERR"},
	4:  {1: "ILL_ILLOPC", 2: "ILL_ILLOPN", 3: "ILL_ILLADR", 4: "ILL_ILLTRP", 5: "ILL_PRVOPC", 6: "ILL_PRVREG", 7: "ILL_COPROC", 8: "ILL_BADSTK"},
	8:  {1: "FPE_INTDIV", 2: "FPE_INTOVF", 3: "FPE_FLTDIV", 4: "FPE_FLTOVF", 5: "FPE_FLTUND", 6: "FPE_FLTRES", 7: "FPE_FLTINV", 8: "FPE_FLTSUB"},
	5:  {1: "TRAP_BRKPT", 2: "TRAP_TRACE"},
}

// appendSiginfo appends the siginfo of a delivery as strace prints it;
// the sender's pid and uid come from the frame when there is one.
func appendSiginfo(b []byte, rec *tracefile.Signal, m Memory) []byte {
	b = append(b, "{si_signo="...)
	b = append(b, linux.SignalName(rec.Signo)...)
	b = append(b, ", si_code="...)
	code := int(int32(rec.Code))
	fault := code > 0 && code != siKernel && faultCodes[rec.Signo] != nil
	if rec.Signo == sigchld && code > 0 && code < len(cldCodes) && rec.FrameAddr != 0 {
		var info [48]byte
		if m.Read(rec.FrameAddr+siginfoOff, info[:]) == 0 {
			return appendChild(append(b, cldCodes[code]...), code, info[:])
		}
	}
	switch {
	case fault && faultCodes[rec.Signo][code] != "":
		b = append(b, faultCodes[rec.Signo][code]...)
	case siCodes[code] != "":
		b = append(b, siCodes[code]...)
	default:
		b = strconv.AppendInt(b, int64(code), 10)
	}
	if fault {
		b = appendPtr(append(b, ", si_addr="...), rec.Addr)
		return append(b, '}')
	}
	if code <= 0 && rec.FrameAddr != 0 {
		var info [32]byte
		if m.Read(rec.FrameAddr+siginfoOff, info[:]) == 0 {
			b = appendSender(b, code, info[:])
		}
	}
	return append(b, '}')
}

// appendSiginfoBytes appends a siginfo_t a program passed to the kernel
// (rt_sigqueueinfo).
func appendSiginfoBytes(b []byte, rec *tracefile.Signal, info []byte) []byte {
	b = append(b, "{si_signo="...)
	b = append(b, linux.SignalName(rec.Signo)...)
	b = append(b, ", si_code="...)
	code := int(int32(rec.Code))
	if siCodes[code] != "" {
		b = append(b, siCodes[code]...)
	} else {
		b = strconv.AppendInt(b, int64(code), 10)
	}
	return append(appendSender(b, code, info), '}')
}

// sigchld is SIGCHLD; cldCodes name its si_code values.
const sigchld = 17

var cldCodes = []string{1: "CLD_EXITED", 2: "CLD_KILLED", 3: "CLD_DUMPED", 4: "CLD_TRAPPED", 5: "CLD_STOPPED", 6: "CLD_CONTINUED"}

// appendChild appends a SIGCHLD's fields as strace prints them: the
// child, its status (an exit code, or the signal that ended or stopped
// it) and its user and system times.
func appendChild(b []byte, code int, info []byte) []byte {
	b = appendSender(b, code, info)
	st := int(int32(le32(info, 24)))
	b = append(b, ", si_status="...)
	if code == 1 {
		b = strconv.AppendInt(b, int64(st), 10)
	} else {
		b = append(b, linux.SignalName(st)...)
	}
	b = strconv.AppendInt(append(b, ", si_utime="...), int64(le64(info, 32)), 10)
	b = strconv.AppendInt(append(b, ", si_stime="...), int64(le64(info, 40)), 10)
	return append(b, '}')
}

// appendSender appends si_pid, si_uid (and for SI_QUEUE the value).
func appendSender(b []byte, code int, info []byte) []byte {
	b = strconv.AppendInt(append(b, ", si_pid="...), int64(int32(le32(info, 16))), 10)
	b = strconv.AppendInt(append(b, ", si_uid="...), int64(int32(le32(info, 20))), 10)
	if code == siQueue {
		v := le64(info, 24)
		b = strconv.AppendInt(append(b, ", si_int="...), int64(int32(v)), 10)
		b = appendPtr(append(b, ", si_ptr="...), v)
	}
	return b
}

// ThreadSink is a Sink that also takes the end of each thread.
type ThreadSink interface {
	ThreadExit(pos uint64, pid, tid, status int) error
}
