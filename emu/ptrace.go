package emu

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"ttd/internal/linux"
	"ttd/x86"
)

// ptrace(2), so that strace and gdb run under ttd. A traced thread (its
// tracee state in Thread.pt) stops where Linux stops one: at a
// syscall's entry and exit when the tracer resumed it with
// PTRACE_SYSCALL, before a signal is delivered, at the events its
// options ask for (fork, vfork, clone, exec), in a group-stop, and
// after PTRACE_INTERRUPT or an auto-attach. A stopped thread does not
// run (the scheduler skips it) until the tracer resumes it; the
// tracer's wait4 and waitid report each stop once, by thread id, and
// the thread's exit. A syscall stopped at its entry is held: the thread
// is blocked in it and the handler runs when the tracer resumes it,
// with the registers as the tracer left them.
//
// Everything here is the tree's own, deterministic state: a recording
// needs nothing more than the tracer's syscall results (what it read
// of its tracee) and the schedule.

// ptStop is the kind of ptrace-stop a tracee is in.
type ptStop uint8

const (
	ptNone     ptStop = iota
	ptSysEntry        // at a syscall's entry (PTRACE_SYSCALL)
	ptSysExit         // at a syscall's exit
	ptSignal          // before a signal's delivery
	ptEvent           // at an event (PTRACE_EVENT_*), or a trap (PTRACE_EVENT_STOP)
	ptGroup           // in a group-stop
)

// ptResume is how the tracer last resumed the tracee.
type ptResume uint8

const (
	resumeCont ptResume = iota
	resumeSyscall
	resumeStep
)

// tracee is a traced thread's ptrace state.
type tracee struct {
	tracer *Process
	seized bool
	opts   uint64
	// stopped: in a ptrace-stop of kind kind; the thread runs again
	// when the tracer resumes it. status is the stop's wait status,
	// reported once to the tracer's wait (report).
	stopped bool
	kind    ptStop
	status  uint32
	report  bool
	// si is what PTRACE_GETSIGINFO reads; ps the signal a
	// signal-delivery-stop holds, delivered without a new stop at the
	// thread's next deliverSignals when the tracer resumes it with a
	// signal (inject).
	si     SigInfo
	ps     pendingSignal
	inject bool
	resume ptResume
	msg    uint64
	// sysNr is the syscall of the last syscall-stop (orig_rax). inSys
	// is set from the entry-stop to the exit-stop (GET_SYSCALL_INFO's
	// op). A syscall stopped at its entry is held by the thread
	// (Thread.ptHeld), so that it runs in the thread's turn even after a
	// detach.
	sysNr int
	inSys int
	// sysDone is the thread's instruction count when its last syscall
	// (sysNr) returned: a stop there still shows it in orig_rax.
	sysDone uint64
	// event is an event stop a fork or clone owes before its
	// syscall-exit-stop; exitDue a syscall-exit-stop that follows the
	// event stop being reported.
	event   int
	exitDue bool
	// listen: resumed with PTRACE_LISTEN from a group-stop; contSeen: a
	// SIGCONT ended the group-stop before the tracer resumed it.
	listen, contSeen bool
	// gone: the thread exited; its exit status is reported once.
	gone bool
	// exitErr is the exit (errExitThread, errExitGroup) a
	// PTRACE_EVENT_EXIT stop holds until the tracer resumes the thread.
	exitErr error
}

// traced reports whether a thread of p is traced (ignored signals are
// then queued, for the tracer to see).
func (p *Process) traced() bool {
	for _, t := range p.threads {
		if t.pt != nil {
			return true
		}
	}
	return false
}

// ptStopped reports whether t is in a ptrace-stop.
func (t *Thread) ptStopped() bool { return t.pt != nil && t.pt.stopped }

// ptStop puts t in a ptrace-stop with wait status status and tells its
// tracer.
func (t *Thread) ptStop(kind ptStop, status uint32, si SigInfo) {
	pt := t.pt
	pt.stopped, pt.kind, pt.status, pt.report, pt.si = true, kind, status, true, si
	pt.listen = false
	pt.tracer.ptNotify(t, cldTrapped, int(status>>8&0x7f))
}

// ptNotify tells tracer p that tracee t stopped or exited: its threads
// waiting for children look again, and it gets SIGCHLD.
func (p *Process) ptNotify(t *Thread, code int32, status int) {
	if p.exited {
		return
	}
	if t.P.parent != p || code == cldTrapped {
		p.queueProcess(pendingSignal{info: SigInfo{Signo: int32(unix.SIGCHLD), Code: code, Pid: int32(t.Tid),
			Uid: int32(unix.Getuid()), Value: uint64(uint32(status))}})
	}
	for _, th := range p.threads {
		if th.state == threadBlocked && th.w.child {
			p.m.wake(th)
		}
	}
}

// cldTrapped is SIGCHLD's si_code for a ptrace-stop.
const cldTrapped = 4

// sysStopStatus is the wait status of a syscall-stop.
func (pt *tracee) sysStopStatus() uint32 {
	sig := uint32(unix.SIGTRAP)
	if pt.opts&linux.PTRACE_O_TRACESYSGOOD != 0 {
		sig |= 0x80
	}
	return sig<<8 | 0x7f
}

// eventStatus is the wait status of an event stop.
func eventStatus(sig, event int) uint32 { return uint32(sig|event<<8)<<8 | 0x7f }

// trapInfo is the siginfo of a syscall or event stop.
func trapSigInfo(code int32) SigInfo { return SigInfo{Signo: int32(unix.SIGTRAP), Code: code} }

// ptSyscallEntry stops t at the entry of the syscall in a, when its
// tracer asked for syscall-stops, and reports whether it did: the
// syscall is held until the tracer resumes t.
func (t *Thread) ptSyscallEntry(ent *Syscall, a *SyscallArgs) bool {
	pt := t.pt
	if pt == nil || pt.resume != resumeSyscall || t.inVDSO() {
		return false
	}
	t.sys = *a
	t.sysEnt = ent
	t.state = threadBlocked
	t.ready = false
	t.w = wait{what: "ptrace syscall-entry stop"}
	t.ptHeld = true
	pt.sysNr, pt.inSys = a.Nr, linux.PTRACE_SYSCALL_INFO_ENTRY
	t.ptStop(ptSysEntry, pt.sysStopStatus(), trapSigInfo(int32(pt.sysStopStatus()>>8)))
	return true
}

// inVDSO reports whether t's syscall was made by the vDSO's code: a
// call Linux answers without entering the kernel, so without stops.
func (t *Thread) inVDSO() bool {
	v := t.P.MM.find(t.CPU.RIP - 2)
	return v != nil && v.name == "[vdso]"
}

// ptRunHeld runs, in t's turn, the syscall t was held in at its entry,
// with its registers as the tracer left them (orig_rax: t.sys.Nr).
func (t *Thread) ptRunHeld() {
	t.ptHeld = false
	c := t.CPU
	t.state = threadRunnable
	t.ready = false
	t.retrying = false
	t.w = wait{}
	nr := t.sys.Nr
	t.args = SyscallArgs{Nr: nr,
		A: [6]uint64{c.R[x86.RDI], c.R[x86.RSI], c.R[x86.RDX], c.R[x86.R10], c.R[x86.R8], c.R[x86.R9]}}
	var ent *Syscall
	if tab := syscalls(); nr >= 0 && nr < len(tab) {
		ent = &tab[nr]
	}
	t.dispatch(ent, &t.args)
}

// ptSyscallDone makes the stops a completed syscall owes its tracer: an
// event (fork, clone, exec), then the syscall-exit-stop.
func (t *Thread) ptSyscallDone(nr int) {
	pt := t.pt
	pt.sysNr, pt.sysDone = nr, t.CPU.Icount
	exitStop := pt.resume == resumeSyscall && !t.inVDSO()
	event := pt.event
	pt.event = 0
	if t.execed {
		switch {
		case pt.opts&linux.PTRACE_O_TRACEEXEC != 0:
			event, pt.msg = linux.PTRACE_EVENT_EXEC, uint64(t.Tid)
		case !pt.seized:
			t.queue(pendingSignal{info: SigInfo{Signo: int32(unix.SIGTRAP), Code: siUser, Pid: int32(t.P.PID)}})
		}
	}
	if event != 0 {
		pt.exitDue = exitStop
		t.ptStop(ptEvent, eventStatus(int(unix.SIGTRAP), event), trapSigInfo(int32(unix.SIGTRAP)|int32(event)<<8))
		return
	}
	if exitStop {
		t.ptExitStop()
	}
}

// ptExitStop stops t at its syscall's exit.
func (t *Thread) ptExitStop() {
	pt := t.pt
	pt.inSys = linux.PTRACE_SYSCALL_INFO_EXIT
	t.ptStop(ptSysExit, pt.sysStopStatus(), trapSigInfo(int32(pt.sysStopStatus()>>8)))
}

// ptExitEvent stops t before it exits (exit or exit_group, err), when
// its tracer asked for PTRACE_EVENT_EXIT, and reports whether it did:
// the exit happens when the tracer resumes it (ptExitNow).
func (t *Thread) ptExitEvent(err error) bool {
	pt := t.pt
	if pt.opts&linux.PTRACE_O_TRACEEXIT == 0 {
		return false
	}
	pt.exitErr = err
	pt.msg = uint64(t.exitCode) << 8
	pt.inSys = linux.PTRACE_SYSCALL_INFO_NONE
	t.ptStop(ptEvent, eventStatus(int(unix.SIGTRAP), linux.PTRACE_EVENT_EXIT), trapSigInfo(int32(unix.SIGTRAP)|linux.PTRACE_EVENT_EXIT<<8))
	return true
}

// ptExitNow performs the exit a PTRACE_EVENT_EXIT stop held.
func (t *Thread) ptExitNow() {
	err := t.pt.exitErr
	t.pt.exitErr = nil
	if err == errExitThread {
		t.exit(t.exitCode)
		return
	}
	t.P.exitGroup(t.exitCode)
}

// ptStepped ends a single step (PTRACE_SINGLESTEP) after t's CPU
// stopped with ex: an instruction that completed (a syscall included)
// raises SIGTRAP with TRAP_TRACE, whose stop the tracer sees; one that
// faulted raises its own signal.
func (t *Thread) ptStepped(ex x86.Exit) {
	switch ex.Reason {
	case x86.ExitBudget, x86.ExitNone, x86.ExitSyscall, x86.ExitYield:
	default:
		t.pt.resume = resumeCont
		return
	}
	if t.state != threadRunnable || t.P.exited {
		return // (a blocked syscall steps when it completes)
	}
	t.pt.resume = resumeCont
	// A trap, forced as Linux forces it: a mask that blocks SIGTRAP
	// does not delay it. Linux reports a step over a syscall as a
	// breakpoint (user_single_step_report).
	code := int32(trapTrace)
	if ex.Reason == x86.ExitSyscall {
		code = trapBrkpt
	}
	t.forceFault(SigInfo{Signo: int32(unix.SIGTRAP), Code: code, Addr: t.CPU.RIP}, trapInfo{trapno: 1}, x86.Exit{})
}

// SIGTRAP's si_codes: a breakpoint, a single step.
const (
	trapBrkpt = 1
	trapTrace = 2
)

// ptSignal stops t before delivering ps, when it is traced, and reports
// whether it did.
func (t *Thread) ptSignal(sig int, ps *pendingSignal) bool {
	pt := t.pt
	if pt == nil || unix.Signal(sig) == unix.SIGKILL {
		return false
	}
	pt.ps = *ps
	pt.inSys = linux.PTRACE_SYSCALL_INFO_NONE
	if p := t.P; p.obs != nil {
		// A replay must see the stop where a fault raised the signal,
		// whatever the tracer then does with it.
		p.obs.Signal(t, &SignalEvent{Info: ps.info, Ptrace: true})
	}
	t.ptStop(ptSignal, uint32(sig)<<8|0x7f, ps.info)
	return true
}

// ptRegsChanged tells t's observer the registers its tracer set: a
// replay applies them at this position (the tracer's), before t runs
// again or a checkpoint compares them.
func (t *Thread) ptRegsChanged() {
	if p := t.P; p.obs != nil {
		p.obs.Signal(t, &SignalEvent{Ptrace: true})
	}
}

// foreignWrite tells the observer of tracee tt that the tracer wrote n
// bytes at addr in its memory.
func (tt *Thread) foreignWrite(addr, n uint64) {
	if o, ok := tt.P.obs.(ForeignWriteObserver); ok {
		o.ForeignWrite(tt, addr, n)
	}
}

// ptGroupStop reports p's group-stop by sig to the tracers of its
// threads.
func (p *Process) ptGroupStop(sig int) {
	for _, t := range p.threads {
		if pt := t.pt; pt != nil && !pt.stopped {
			st := uint32(sig)<<8 | 0x7f
			if pt.seized {
				st = eventStatus(sig, linux.PTRACE_EVENT_STOP)
			}
			pt.contSeen = false
			t.ptStop(ptGroup, st, SigInfo{Signo: int32(sig)})
		}
	}
}

// ptKilled ends the ptrace-stops of p's threads: SIGKILL reaches a
// stopped tracee, as on Linux. A syscall held at its entry never runs.
func (p *Process) ptKilled() {
	for _, t := range p.threads {
		pt := t.pt
		if pt == nil || !pt.stopped {
			continue
		}
		pt.stopped, pt.exitDue, pt.exitErr = false, false, nil
		if t.ptHeld {
			t.ptHeld = false
			t.state, t.ready, t.w = threadRunnable, false, wait{}
		}
	}
}

// ptContinued tells p's tracees in a group-stop that SIGCONT ended it:
// one listening traps again (PTRACE_EVENT_STOP), as on Linux.
func (p *Process) ptContinued() {
	for _, t := range p.threads {
		pt := t.pt
		if pt == nil || !pt.stopped || pt.kind != ptGroup {
			continue
		}
		if pt.listen {
			t.ptStop(ptEvent, eventStatus(int(unix.SIGTRAP), linux.PTRACE_EVENT_STOP), trapSigInfo(int32(unix.SIGTRAP)))
		} else {
			pt.contSeen = true
		}
	}
}

// ptAttachChild makes the new thread nt, made by traced thread t with
// clone flags f, a tracee of t's tracer when t's options ask for it (or
// CLONE_PTRACE), with the event t owes; nt starts stopped.
func (t *Thread) ptAttachChild(nt *Thread, f uint64, exitSig int) {
	pt := t.pt
	if pt == nil {
		return
	}
	event, opt := linux.PTRACE_EVENT_CLONE, uint64(linux.PTRACE_O_TRACECLONE)
	switch {
	case f&unix.CLONE_VFORK != 0:
		event, opt = linux.PTRACE_EVENT_VFORK, linux.PTRACE_O_TRACEVFORK
	case f&unix.CLONE_THREAD == 0 && exitSig == int(unix.SIGCHLD):
		event, opt = linux.PTRACE_EVENT_FORK, linux.PTRACE_O_TRACEFORK
	}
	if pt.opts&opt == 0 && f&unix.CLONE_PTRACE == 0 {
		return
	}
	if pt.opts&opt != 0 {
		pt.event, pt.msg = event, uint64(nt.Tid)
	}
	npt := &tracee{tracer: pt.tracer, seized: pt.seized, opts: pt.opts}
	nt.pt = npt
	pt.tracer.tracees = append(pt.tracer.tracees, nt)
	if pt.seized {
		nt.ptStop(ptEvent, eventStatus(int(unix.SIGTRAP), linux.PTRACE_EVENT_STOP), trapSigInfo(int32(unix.SIGTRAP)))
	} else {
		nt.ptStop(ptSignal, uint32(unix.SIGSTOP)<<8|0x7f, SigInfo{Signo: int32(unix.SIGSTOP), Code: siUser})
		npt.ps = pendingSignal{info: npt.si}
	}
}

// ptBlockedEvent makes the event stop a syscall that blocks owes first
// (vfork's, while it waits for the child).
func (t *Thread) ptBlockedEvent() {
	pt := t.pt
	if pt == nil || pt.event == 0 {
		return
	}
	event := pt.event
	pt.event = 0
	t.ptStop(ptEvent, eventStatus(int(unix.SIGTRAP), event), trapSigInfo(int32(unix.SIGTRAP)|int32(event)<<8))
}

// ptExited tells t's tracer that t exited with status st: a process's
// first thread whose tracer is its parent is reported by the parent's
// wait of the child; any other is reported to the tracer once.
func (t *Thread) ptExited(st ExitStatus) {
	pt := t.pt
	if pt == nil || pt.gone {
		return
	}
	tr := pt.tracer
	if t.Tid == t.P.PID && t.P.parent == tr {
		tr.untrace(t)
		return
	}
	pt.gone, pt.stopped, pt.report = true, false, true
	pt.status = exitWaitStatus(st)
	code, status := int32(cldExited), st.Code&0xff
	if st.Signal != 0 {
		code, status = cldKilled, int(st.Signal)
	}
	tr.ptNotify(t, code, status)
}

// exitWaitStatus is the wait status of an exit.
func exitWaitStatus(st ExitStatus) uint32 {
	if st.Signal != 0 {
		return uint32(st.Signal)
	}
	return uint32(st.Code&0xff) << 8
}

// untrace ends p's tracing of t.
func (p *Process) untrace(t *Thread) {
	for i, x := range p.tracees {
		if x == t {
			p.tracees = append(p.tracees[:i], p.tracees[i+1:]...)
			break
		}
	}
	t.pt = nil
}

// ptTracerExited detaches p's tracees when p ends, killing those whose
// options say PTRACE_O_EXITKILL.
func (p *Process) ptTracerExited() {
	for _, t := range append([]*Thread(nil), p.tracees...) {
		pt := t.pt
		if pt == nil || pt.gone {
			p.untrace(t)
			continue
		}
		if pt.opts&linux.PTRACE_O_EXITKILL != 0 {
			t.P.queueProcess(pendingSignal{info: SigInfo{Signo: int32(unix.SIGKILL), Code: siUser, Pid: int32(p.PID)}})
		}
		t.ptDetach(0)
	}
	p.tracees = nil
}

// ptDetach ends t's tracing and resumes it (with signal sig, when it
// was stopped before delivering one).
func (t *Thread) ptDetach(sig int) {
	pt := t.pt
	pt.tracer.untrace(t)
	if !pt.stopped {
		return
	}
	if pt.kind == ptSignal && sig != 0 {
		ps := pt.ps
		ps.info.Signo = int32(sig)
		t.pending.add(ps)
	}
	if t.ptHeld {
		t.ready = true // the syscall runs in t's turn (resume)
	}
}

// traceeReport finds a stop or exit of one of p's tracees that w
// selects; any says whether w selects a tracee at all.
func (p *Process) traceeReport(w *waitSel) (t *Thread, any bool) {
	for _, tt := range p.tracees {
		switch w.kind {
		case pPid:
			if tt.Tid != w.id {
				continue
			}
		case pPgid:
			if tt.P.pgid != w.id {
				continue
			}
		}
		any = true
		if tt.pt.report {
			return tt, true
		}
	}
	return nil, any
}

// consumeTracee marks t's report seen by a wait (unless nowait), and
// forgets an exited tracee.
func (p *Process) consumeTracee(t *Thread, nowait bool) {
	if nowait {
		return
	}
	t.pt.report = false
	if t.pt.gone {
		p.untrace(t)
	}
}

// Ptrace implements Linux syscall ptrace(2).
func Ptrace(t *Thread, a *SyscallArgs) (uint64, error) {
	req, pid, addr, data := a.A[0], a.Int(1), a.A[2], a.A[3]
	p := t.P
	switch req {
	case linux.PTRACE_TRACEME:
		if t.pt != nil || p.parent == nil {
			return 0, unix.EPERM
		}
		t.pt = &tracee{tracer: p.parent}
		p.parent.tracees = append(p.parent.tracees, t)
		return 0, nil
	case linux.PTRACE_ATTACH, linux.PTRACE_SEIZE:
		tt := p.m.threadByID(pid)
		if tt == nil || tt.P.exited {
			return 0, unix.ESRCH
		}
		if tt.P == p || tt.pt != nil {
			return 0, unix.EPERM
		}
		if req == linux.PTRACE_SEIZE && (addr != 0 || data&^linux.PTRACE_O_MASK != 0) {
			return 0, unix.EIO
		}
		pt := &tracee{tracer: p, seized: req == linux.PTRACE_SEIZE}
		if pt.seized {
			pt.opts = data
		}
		tt.pt = pt
		p.tracees = append(p.tracees, tt)
		switch {
		case !pt.seized:
			tt.queue(pendingSignal{info: SigInfo{Signo: int32(unix.SIGSTOP), Code: siUser, Pid: int32(p.PID), Uid: int32(unix.Getuid())}})
		case tt.P.stopped:
			tt.ptStop(ptGroup, eventStatus(tt.P.stopSig, linux.PTRACE_EVENT_STOP), SigInfo{Signo: int32(tt.P.stopSig)})
		}
		return 0, nil
	}
	tt := p.m.threadByID(pid)
	if tt == nil || tt.pt == nil || tt.pt.tracer != p || tt.pt.gone {
		return 0, unix.ESRCH
	}
	pt := tt.pt
	switch req {
	case linux.PTRACE_INTERRUPT:
		if !pt.seized {
			return 0, unix.EIO
		}
		if !pt.stopped {
			tt.ptStop(ptEvent, eventStatus(int(unix.SIGTRAP), linux.PTRACE_EVENT_STOP), trapSigInfo(int32(unix.SIGTRAP)))
		}
		return 0, nil
	case linux.PTRACE_KILL:
		tt.P.queueProcess(pendingSignal{info: SigInfo{Signo: int32(unix.SIGKILL), Code: siUser, Pid: int32(p.PID)}})
		return 0, nil
	}
	if !pt.stopped {
		return 0, unix.ESRCH
	}
	switch req {
	case linux.PTRACE_SETOPTIONS:
		if data&^linux.PTRACE_O_MASK != 0 {
			return 0, unix.EINVAL
		}
		pt.opts = data
		return 0, nil
	case linux.PTRACE_GETEVENTMSG:
		return 0, t.writeU64(data, pt.msg)
	case linux.PTRACE_GETSIGINFO:
		var b [siginfoSize]byte
		pt.si.encode(b[:])
		return 0, t.CopyOut(data, b[:])
	case linux.PTRACE_GET_SYSCALL_INFO:
		return t.ptSyscallInfo(tt, addr, data)
	case linux.PTRACE_PEEKTEXT, linux.PTRACE_PEEKDATA:
		var b [8]byte
		if tt.P.MM.Mem.Peek(addr, b[:]) != nil {
			return 0, unix.EIO
		}
		return 0, t.CopyOut(data, b[:])
	case linux.PTRACE_POKETEXT, linux.PTRACE_POKEDATA:
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], data)
		if tt.P.MM.Mem.Poke(addr, b[:]) != nil {
			return 0, unix.EIO
		}
		tt.foreignWrite(addr, 8)
		return 0, nil
	case linux.PTRACE_PEEKUSER:
		v, err := tt.peekUser(addr)
		if err != nil {
			return 0, err
		}
		return 0, t.writeU64(data, v)
	case linux.PTRACE_POKEUSER:
		if err := tt.pokeUser(addr, data); err != nil {
			return 0, err
		}
		tt.ptRegsChanged()
		return 0, nil
	case linux.PTRACE_GETREGS:
		var b [userRegsSize]byte
		tt.userRegs(b[:])
		return 0, t.CopyOut(data, b[:])
	case linux.PTRACE_SETREGS:
		var b [userRegsSize]byte
		if err := t.CopyIn(data, b[:]); err != nil {
			return 0, err
		}
		err := tt.setUserRegs(b[:])
		tt.ptRegsChanged()
		return 0, err
	case linux.PTRACE_GETFPREGS:
		var b [fxsaveSize]byte
		tt.CPU.FXSave(b[:])
		return 0, t.CopyOut(data, b[:])
	case linux.PTRACE_GETREGSET:
		return 0, t.ptGetRegset(tt, addr, data)
	case linux.PTRACE_GETSIGMASK:
		if addr != 8 {
			return 0, unix.EINVAL
		}
		return 0, t.writeU64(data, tt.sigMask)
	case linux.PTRACE_CONT, linux.PTRACE_SYSCALL, linux.PTRACE_SINGLESTEP, linux.PTRACE_DETACH, linux.PTRACE_LISTEN:
	default:
		return 0, unix.EIO
	}
	if data > numSignals {
		return 0, unix.EIO
	}
	switch req {
	case linux.PTRACE_DETACH:
		tt.ptDetach(int(data))
		return 0, nil
	case linux.PTRACE_LISTEN:
		if !pt.seized || pt.kind != ptGroup {
			return 0, unix.EIO
		}
		pt.listen = true
		if pt.contSeen {
			pt.contSeen = false
			pt.report = false
			tt.ptStop(ptEvent, eventStatus(int(unix.SIGTRAP), linux.PTRACE_EVENT_STOP), trapSigInfo(int32(unix.SIGTRAP)))
		}
		return 0, nil
	}
	tt.ptResume(req, int(data))
	return 0, nil
}

// ptResume resumes stopped tracee t with PTRACE_CONT or PTRACE_SYSCALL,
// delivering sig when it stopped before a signal.
func (t *Thread) ptResume(req uint64, sig int) {
	pt := t.pt
	pt.resume = resumeCont
	switch req {
	case linux.PTRACE_SYSCALL:
		pt.resume = resumeSyscall
	case linux.PTRACE_SINGLESTEP:
		pt.resume = resumeStep
	}
	pt.report = false
	if pt.kind == ptSignal && sig != 0 {
		pt.ps.info.Signo = int32(sig)
		pt.inject = true
	}
	if pt.exitDue {
		pt.exitDue = false
		if pt.resume == resumeSyscall {
			t.ptExitStop()
			return
		}
	}
	pt.stopped = false
	if t.ptHeld {
		t.ready = true
	}
	if pt.kind == ptSysExit {
		pt.inSys = linux.PTRACE_SYSCALL_INFO_NONE
	}
}

// ptSyscallInfo writes tracee tt's struct ptrace_syscall_info (at most
// size bytes) at addr and returns its full size.
func (t *Thread) ptSyscallInfo(tt *Thread, size, addr uint64) (uint64, error) {
	pt := tt.pt
	c := tt.CPU
	var b [88]byte
	le := binary.LittleEndian
	le.PutUint32(b[4:], linux.AUDIT_ARCH_X86_64)
	le.PutUint64(b[8:], c.RIP)
	le.PutUint64(b[16:], c.R[x86.RSP])
	n := 24
	switch {
	case pt.kind == ptSysEntry:
		b[0] = linux.PTRACE_SYSCALL_INFO_ENTRY
		le.PutUint64(b[24:], uint64(pt.sysNr))
		for i, r := range [...]int{x86.RDI, x86.RSI, x86.RDX, x86.R10, x86.R8, x86.R9} {
			le.PutUint64(b[32+8*i:], c.R[r])
		}
		n = 80
	case pt.kind == ptSysExit || pt.kind == ptEvent && pt.inSys == linux.PTRACE_SYSCALL_INFO_EXIT:
		b[0] = linux.PTRACE_SYSCALL_INFO_EXIT
		rv := c.R[x86.RAX]
		le.PutUint64(b[24:], rv)
		if int64(rv) < 0 && int64(rv) >= -4095 {
			b[32] = 1
		}
		n = 33
	}
	if err := t.CopyOut(addr, b[:min(uint64(n), size)]); err != nil {
		return 0, err
	}
	return uint64(n), nil
}

// userRegsSize is the size of struct user_regs_struct; userDebugRegs
// the offset of struct user's u_debugreg.
const (
	userRegsSize  = 27 * 8
	userDebugRegs = 848
)

// userRegOrder are the guest registers in user_regs_struct's order (-1:
// a field computed elsewhere).
var userRegOrder = [27]int{x86.R15, x86.R14, x86.R13, x86.R12, x86.RBP, x86.RBX, x86.R11, x86.R10,
	x86.R9, x86.R8, x86.RAX, x86.RCX, x86.RDX, x86.RSI, x86.RDI, -1, -1, -1, -1, x86.RSP, -1, -1, -1, -1, -1, -1, -1}

// userReg returns field i of t's user_regs_struct.
func (t *Thread) userReg(i int) uint64 {
	c := t.CPU
	pt := t.pt
	switch i {
	case 10: // rax: -ENOSYS at a syscall's entry, as on Linux
		if pt != nil && pt.kind == ptSysEntry && pt.stopped {
			return uint64(errnoRet(unix.ENOSYS))
		}
	case 15: // orig_rax
		if pt != nil && (pt.inSys != linux.PTRACE_SYSCALL_INFO_NONE || pt.sysDone == c.Icount) {
			return uint64(pt.sysNr)
		}
		return ^uint64(0)
	case 16:
		return c.RIP
	case 17:
		return 0x33 // cs
	case 18:
		return c.Rflags()
	case 20:
		return 0x2b // ss
	case 21:
		return c.FSBase
	case 22:
		return c.GSBase
	case 23, 24, 25, 26:
		return 0 // ds, es, fs, gs
	}
	return c.R[userRegOrder[i]]
}

// userRegs writes t's struct user_regs_struct.
func (t *Thread) userRegs(b []byte) {
	for i := range userRegOrder {
		binary.LittleEndian.PutUint64(b[8*i:], t.userReg(i))
	}
}

// setUserReg sets field i of t's user_regs_struct (the segment
// selectors are fixed: other values are refused).
func (t *Thread) setUserReg(i int, v uint64) error {
	c := t.CPU
	switch i {
	case 15:
		if t.pt != nil {
			t.pt.sysNr = int(int64(v))
		}
		if t.ptHeld {
			t.sys.Nr = int(int64(v)) // the syscall it runs
		}
	case 16:
		c.RIP = v
	case 17:
		if v != 0x33 {
			return unix.EIO
		}
	case 18:
		c.SetRflags(v)
	case 20:
		if v != 0x2b {
			return unix.EIO
		}
	case 21:
		if v >= taskSize {
			return unix.EPERM
		}
		c.FSBase = v
	case 22:
		if v >= taskSize {
			return unix.EPERM
		}
		c.GSBase = v
	case 23, 24, 25, 26:
		if v != 0 {
			return unix.EIO
		}
	default:
		c.R[userRegOrder[i]] = v
	}
	return nil
}

// setUserRegs sets t's registers from a struct user_regs_struct.
func (t *Thread) setUserRegs(b []byte) error {
	for i := range userRegOrder {
		if err := t.setUserReg(i, binary.LittleEndian.Uint64(b[8*i:])); err != nil {
			return err
		}
	}
	return nil
}

// peekUser reads the word of struct user at off: a register, or a debug
// register (always 0: ttd has no hardware watchpoints for a tracer).
func (t *Thread) peekUser(off uint64) (uint64, error) {
	switch {
	case off%8 != 0:
		return 0, unix.EIO
	case off < userRegsSize:
		return t.userReg(int(off / 8)), nil
	case off >= userDebugRegs && off < userDebugRegs+64:
		return 0, nil
	}
	return 0, unix.EIO
}

// pokeUser writes the word of struct user at off.
func (t *Thread) pokeUser(off, v uint64) error {
	switch {
	case off%8 != 0:
		return unix.EIO
	case off < userRegsSize:
		return t.setUserReg(int(off/8), v)
	case off >= userDebugRegs && off < userDebugRegs+64 && v == 0:
		return nil
	}
	return unix.EIO
}

// ptGetRegset implements PTRACE_GETREGSET: the register set named by
// nt into the iovec at iov, whose length is updated.
func (t *Thread) ptGetRegset(tt *Thread, nt, iov uint64) error {
	base, err := t.readU64(iov)
	if err != nil {
		return err
	}
	n, err := t.readU64(iov + 8)
	if err != nil {
		return err
	}
	var buf []byte
	switch nt {
	case linux.NT_PRSTATUS:
		buf = make([]byte, userRegsSize)
		tt.userRegs(buf)
	case linux.NT_PRFPREG:
		buf = make([]byte, fxsaveSize)
		tt.CPU.FXSave(buf)
	case linux.NT_X86_XSTATE:
		xcr0 := tt.CPU.XCR0()
		buf = make([]byte, x86.XSaveSize)
		tt.CPU.XSave(buf, xcr0)
		binary.LittleEndian.PutUint64(buf[464:], xcr0) // sw_reserved: xstate_bv of the area
	default:
		return unix.EINVAL
	}
	n = min(n, uint64(len(buf)))
	if err := t.CopyOut(base, buf[:n]); err != nil {
		return err
	}
	return t.writeU64(iov+8, n)
}

// ProcessVMReadv implements Linux syscall process_vm_readv(2): it
// copies from another process of the tree, as the kernel would.
func ProcessVMReadv(t *Thread, a *SyscallArgs) (uint64, error) { return t.processVM(a, false) }

// ProcessVMWritev implements Linux syscall process_vm_writev(2).
func ProcessVMWritev(t *Thread, a *SyscallArgs) (uint64, error) { return t.processVM(a, true) }

func (t *Thread) processVM(a *SyscallArgs, write bool) (uint64, error) {
	if a.A[5] != 0 {
		return 0, unix.EINVAL
	}
	tt := t.P.m.threadByID(a.Int(0))
	if tt == nil || tt.P.exited {
		return 0, unix.ESRCH
	}
	local, err := t.copyInIovecs(a.A[1], a.A[2])
	if err != nil {
		return 0, err
	}
	remote, err := t.copyInIovecs(a.A[3], a.A[4])
	if err != nil {
		return 0, err
	}
	mem := tt.P.MM.Mem
	var done uint64
	li, loff := 0, uint64(0)
	for _, r := range remote {
		for roff := uint64(0); roff < r.len; {
			for li < len(local) && loff == local[li].len {
				li, loff = li+1, 0
			}
			if li == len(local) {
				return done, nil
			}
			n := min(r.len-roff, local[li].len-loff, pageSize-(r.base+roff)%pageSize)
			b := t.buf(int(n))
			if write {
				if t.CopyIn(local[li].base+loff, b) != nil {
					return doneOr(done, unix.EFAULT)
				}
				if mem.Poke(r.base+roff, b) != nil {
					return doneOr(done, unix.EFAULT)
				}
				tt.foreignWrite(r.base+roff, n)
			} else {
				if mem.Peek(r.base+roff, b) != nil {
					return doneOr(done, unix.EFAULT)
				}
				if t.CopyOut(local[li].base+loff, b) != nil {
					return doneOr(done, unix.EFAULT)
				}
			}
			done += n
			roff += n
			loff += n
		}
	}
	return done, nil
}

// doneOr is a partial transfer's result: the bytes moved, or err when
// none were.
func doneOr(done uint64, err error) (uint64, error) {
	if done > 0 {
		return done, nil
	}
	return 0, err
}

// syscalls is the syscall table, for ptRunHeld (which the table refers
// to through Ptrace: a direct reference would be an initialization
// cycle).
var syscalls func() []Syscall

func init() { syscalls = Syscalls }
