package emu

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"ttd/x86"
)

// Signal numbers and flags of the Linux x86-64 ABI.
const (
	numSignals = 64

	sigDfl = 0
	sigIgn = 1

	saSiginfo   = 0x4
	saOnstack   = 0x08000000
	saRestart   = 0x10000000
	saNodefer   = 0x40000000
	saResethand = 0x80000000
	saRestorer  = 0x04000000

	ssOnstack    = 1
	ssDisable    = 2
	ssAutodisarm = -1 << 31

	siUser  = 0
	siTkill = -6

	// Sizes of the rt_sigframe pieces.
	ucontextSize = 304
	siginfoSize  = 128
	frameSize    = 8 + ucontextSize + siginfoSize
	redZone      = 128
	fxsaveSize   = 512
	// fpstateSize is the floating-point area of a frame: an XSAVE area
	// (the fxsave image, its header and the AVX component) and
	// FP_XSTATE_MAGIC2 after it, as Linux writes on a CPU with AVX. On
	// a CPU without AVX only the fxsave image is meaningful; the rest
	// is zero.
	fpstateSize    = x86.XSaveSize + 4
	fpXstateMagic1 = 0x46505853
	fpXstateMagic2 = 0x46505845
	ucFPXstate     = 1

	// SigFrameBytes and SigFPStateBytes are the sizes of what signal
	// delivery writes (SignalEvent).
	SigFrameBytes   = frameSize
	SigFPStateBytes = fpstateSize
)

// sigBit is the mask bit of signal sig.
func sigBit(sig int) uint64 { return 1 << (sig - 1) }

// unblockable are the signals no mask can block.
var unblockable = sigBit(int(unix.SIGKILL)) | sigBit(int(unix.SIGSTOP))

// synchronous signals are dequeued before the others, like Linux does.
var synchronous = sigBit(int(unix.SIGSEGV)) | sigBit(int(unix.SIGBUS)) | sigBit(int(unix.SIGILL)) |
	sigBit(int(unix.SIGTRAP)) | sigBit(int(unix.SIGFPE)) | sigBit(int(unix.SIGSYS))

// SigInfo is a siginfo_t in the fields ttd fills.
type SigInfo struct {
	Signo int32
	Errno int32
	Code  int32
	// Addr is si_addr for faults.
	Addr uint64
	// Pid and Uid are the sender for kill, tgkill and sigqueue; Value
	// is sigqueue's value, Status SIGCHLD's status.
	Pid, Uid int32
	Value    uint64
}

// isFault reports whether the info describes a fault (si_addr layout).
func (si *SigInfo) isFault() bool {
	switch unix.Signal(si.Signo) {
	case unix.SIGSEGV, unix.SIGBUS, unix.SIGILL, unix.SIGFPE, unix.SIGTRAP:
		return si.Code > 0
	}
	return false
}

// encode writes the 128-byte siginfo_t.
func (si *SigInfo) encode(b []byte) {
	clear(b[:siginfoSize])
	le := binary.LittleEndian
	le.PutUint32(b[0:], uint32(si.Signo))
	le.PutUint32(b[4:], uint32(si.Errno))
	le.PutUint32(b[8:], uint32(si.Code))
	if si.isFault() {
		le.PutUint64(b[16:], si.Addr)
		return
	}
	le.PutUint32(b[16:], uint32(si.Pid))
	le.PutUint32(b[20:], uint32(si.Uid))
	le.PutUint64(b[24:], si.Value)
}

// sigAction is one signal's disposition (struct kernel_sigaction).
type sigAction struct {
	handler, flags, restorer, mask uint64
}

// sigHandlers are a process's dispositions, by signal number.
type sigHandlers [numSignals + 1]sigAction

// trapInfo is what a fault leaves in the frame's err, trapno and cr2.
type trapInfo struct {
	trapno, err, cr2 uint64
}

// pendingSignal is a signal waiting to be delivered to a thread.
type pendingSignal struct {
	info  SigInfo
	trap  trapInfo
	fault bool   // raised by a faulting instruction
	pc    uint64 // that instruction
}

// sigQueue is a set of pending signals: one instance of each standard
// signal, and every instance of real-time signals, in order.
type sigQueue struct {
	mask uint64
	sigs [numSignals + 1]pendingSignal
	more [numSignals + 1][]pendingSignal // further real-time instances
}

// sigRTMin is the kernel's first real-time signal.
const sigRTMin = 32

// maxQueued bounds the queued instances of one real-time signal.
const maxQueued = 1 << 12

// add makes ps pending; a standard signal already pending is not queued
// twice. It reports whether ps was queued.
func (q *sigQueue) add(ps pendingSignal) bool {
	sig := int(ps.info.Signo)
	bit := sigBit(sig)
	if q.mask&bit == 0 {
		q.mask |= bit
		q.sigs[sig] = ps
		return true
	}
	if sig < sigRTMin || len(q.more[sig]) >= maxQueued {
		return false
	}
	q.more[sig] = append(q.more[sig], ps)
	return true
}

// take removes and returns the first pending instance of sig.
func (q *sigQueue) take(sig int) pendingSignal {
	ps := q.sigs[sig]
	if m := q.more[sig]; len(m) > 0 {
		q.sigs[sig] = m[0]
		q.more[sig] = m[1:]
	} else {
		q.mask &^= sigBit(sig)
	}
	return ps
}

// discard drops every pending instance of sig.
func (q *sigQueue) discard(sig int) {
	q.mask &^= sigBit(sig)
	q.more[sig] = nil
}

// stackT is a stack_t (sigaltstack).
type stackT struct {
	sp    uint64
	flags int32
	size  uint64
}

// Default actions.
type defaultAction uint8

const (
	actTerm defaultAction = iota
	actCore
	actIgnore
	actStop
)

func defaultActionOf(sig int) defaultAction {
	switch unix.Signal(sig) {
	case unix.SIGCHLD, unix.SIGURG, unix.SIGWINCH, unix.SIGCONT:
		return actIgnore
	case unix.SIGSTOP, unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU:
		return actStop
	case unix.SIGQUIT, unix.SIGILL, unix.SIGTRAP, unix.SIGABRT, unix.SIGBUS, unix.SIGFPE,
		unix.SIGSEGV, unix.SIGXCPU, unix.SIGXFSZ, unix.SIGSYS:
		return actCore
	}
	return actTerm
}

// SignalName returns "SIGSEGV" and the like.
func SignalName(s unix.Signal) string {
	if n := unix.SignalName(syscall.Signal(s)); n != "" {
		return n
	}
	if s >= 34 && s <= 64 {
		return fmt.Sprintf("SIGRT%d", int(s)-34)
	}
	return fmt.Sprintf("signal %d", int(s))
}

// faultCodeName explains a fault's si_code.
func faultCodeName(sig unix.Signal, code int32) string {
	switch sig {
	case unix.SIGSEGV:
		switch code {
		case x86.SEGVMapErr:
			return "address not mapped"
		case x86.SEGVAccErr:
			return "invalid permissions"
		case x86.SIKernel:
			return "general protection"
		}
	case unix.SIGFPE:
		switch code {
		case x86.FPEIntDiv:
			return "integer divide by zero"
		case x86.FPEIntOvf:
			return "integer overflow"
		}
	case unix.SIGILL:
		return "illegal instruction"
	case unix.SIGTRAP:
		return "breakpoint"
	}
	return ""
}

// forwardedSignals are the host signals Config.ForwardSignals passes on.
var forwardedSignals = []os.Signal{unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT,
	unix.SIGUSR1, unix.SIGUSR2, unix.SIGWINCH, unix.SIGALRM}

// pollHostSignals queues the host signals received since the last call.
func (m *Machine) pollHostSignals() {
	if m.hostSigs == nil {
		return
	}
	for {
		select {
		case s := <-m.hostSigs:
			m.queueHost(s)
		default:
			return
		}
	}
}

// queueHost queues a signal received by the host process for the
// processes of the first process's group (the terminal's foreground
// group, as a terminal would signal them).
func (m *Machine) queueHost(s os.Signal) {
	sig, ok := s.(syscall.Signal)
	if !ok {
		return
	}
	for _, p := range append([]*Process(nil), m.procs...) {
		if p.pgid == m.init.pgid && !p.exited {
			p.queueProcess(pendingSignal{info: SigInfo{Signo: int32(sig), Code: siUser}})
		}
	}
}

// ignored reports whether sig's action is to do nothing (SIG_IGN, or the
// default action of a signal that is ignored or stops).
func (p *Process) ignored(sig int) bool {
	switch p.sig[sig].handler {
	case sigIgn:
		return true
	case sigDfl:
		a := defaultActionOf(sig)
		return a == actIgnore || a == actStop && p == p.m.init
	}
	return false
}

// jobControl applies what sending sig does at once, whatever the
// thread masks: SIGCONT and SIGKILL continue a stopped process, and
// SIGCONT and stop signals discard each other's pending instances.
func (p *Process) jobControl(sig int) {
	if unix.Signal(sig) == unix.SIGKILL {
		p.ptKilled()
	}
	switch unix.Signal(sig) {
	case unix.SIGCONT, unix.SIGKILL:
		for _, s := range []unix.Signal{unix.SIGSTOP, unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU} {
			p.shared.discard(int(s))
			for _, t := range p.threads {
				t.pending.discard(int(s))
			}
		}
		p.cont()
	case unix.SIGSTOP, unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU:
		p.shared.discard(int(unix.SIGCONT))
		for _, t := range p.threads {
			t.pending.discard(int(unix.SIGCONT))
		}
	}
}

// queue makes a signal pending on thread t (tgkill, tkill, SIGPIPE…). A
// standard signal already pending is not queued twice; an ignored signal
// that t does not block is discarded, as by Linux.
func (t *Thread) queue(ps pendingSignal) {
	p := t.P
	sig := int(ps.info.Signo)
	if sig < 1 || sig > numSignals {
		return
	}
	bit := sigBit(sig)
	p.jobControl(sig)
	if t.sigMask&bit == 0 && p.ignored(sig) && bit&unblockable == 0 && t.pt == nil {
		return
	}
	if t.pending.add(ps) {
		p.syncSignalfds()
		p.signalWake(t, sig)
	}
}

// queueProcess makes a process-directed signal pending (kill, timers,
// host signals): the first thread that does not block it takes it.
func (p *Process) queueProcess(ps pendingSignal) {
	sig := int(ps.info.Signo)
	if sig < 1 || sig > numSignals || len(p.threads) == 0 || p.exited {
		return
	}
	bit := sigBit(sig)
	p.jobControl(sig)
	if p.threads[0].sigMask&bit == 0 && p.ignored(sig) && bit&unblockable == 0 && !p.traced() {
		return
	}
	if !p.shared.add(ps) {
		return
	}
	p.syncSignalfds()
	// Wake a thread that can take it (Linux's complete_signal): the
	// first, in creation order, that does not block it or waits for it.
	for _, th := range p.threads {
		if th.sigMask&bit == 0 || th.state == threadBlocked && th.w.sigset&bit != 0 {
			p.signalWake(th, sig)
			return
		}
	}
}

// signalWake wakes t if it is blocked and the new pending signal sig
// concerns it.
func (p *Process) signalWake(t *Thread, sig int) {
	if t.state != threadBlocked || t.ready {
		return
	}
	bit := sigBit(sig)
	if t.w.sigset&bit != 0 || (t.sigMask&^unblockable)&bit == 0 && !p.ignored(sig) ||
		bit&unblockable != 0 {
		p.wake(t)
	}
}

// deliverable returns the pending signals that t would act on now: not
// blocked, and not ignored.
func (t *Thread) deliverable() uint64 {
	p := t.P
	m := (t.pending.mask | p.shared.mask) &^ (t.sigMask &^ unblockable)
	for r := m; r != 0; r &= r - 1 {
		sig := trailingZeros(r) + 1
		if p.ignored(sig) && sigBit(sig)&unblockable == 0 {
			m &^= sigBit(sig)
		}
	}
	return m
}

// interrupted reports whether a signal is pending that must interrupt
// the syscall t is in.
func (t *Thread) interrupted() bool { return t.deliverable() != 0 }

// restartAllowed decides, for a syscall interrupted with ERESTARTSYS,
// whether it runs again after the handler of the signal about to be
// delivered (SA_RESTART).
func (t *Thread) restartAllowed() bool {
	m := t.deliverable()
	if m == 0 {
		return true
	}
	if m&synchronous != 0 {
		m &= synchronous
	}
	act := &t.P.sig[trailingZeros(m)+1]
	if act.handler > sigIgn {
		return act.flags&saRestart != 0
	}
	return true
}

func trailingZeros(v uint64) int { return bits.TrailingZeros64(v) }

// forceFault delivers a synchronous signal raised by the instruction that
// caused ex. A blocked or ignored fault signal kills the process, as on
// Linux.
func (t *Thread) forceFault(si SigInfo, trap trapInfo, ex x86.Exit) {
	sig := int(si.Signo)
	act := &t.P.sig[sig]
	if t.sigMask&sigBit(sig) != 0 || act.handler == sigIgn {
		act.handler = sigDfl
		t.sigMask &^= sigBit(sig)
	}
	pc := t.CPU.RIP
	if ex.Inst != nil {
		pc = ex.Inst.PC
	}
	if t.pending.mask&sigBit(sig) != 0 {
		t.pending.discard(sig)
	}
	t.pending.add(pendingSignal{info: si, trap: trap, fault: true, pc: pc})
}

// deliverSignals acts on the pending, unblocked signals of t, its own
// first and then the process's: it runs default actions and sets up
// handler frames. Like Linux, it goes on while signals are deliverable:
// each handler's frame stacks on the previous one (and blocks its
// signal), so the last set up runs first.
func (t *Thread) deliverSignals() {
	p := t.P
	if pt := t.pt; pt != nil && pt.inject && !pt.stopped && t.state == threadRunnable {
		pt.inject = false
		t.deliver(int(pt.ps.info.Signo), &pt.ps)
	}
	for !p.exited && !p.stopped && t.state == threadRunnable && !t.ptStopped() {
		blocked := t.sigMask &^ unblockable
		q := &t.pending
		ready := q.mask &^ blocked
		if ready == 0 {
			q = &p.shared
			ready = q.mask &^ blocked
		}
		if ready == 0 {
			return
		}
		if ready&synchronous != 0 {
			ready &= synchronous
		}
		sig := trailingZeros(ready) + 1
		ps := q.take(sig)
		p.syncSignalfds()
		if t.pt != nil && t.ptSignal(sig, &ps) {
			return
		}
		t.deliver(sig, &ps)
	}
}

// deliver performs the action for one signal.
func (t *Thread) deliver(sig int, ps *pendingSignal) {
	p := t.P
	act := p.sig[sig]
	if unix.Signal(sig) == unix.SIGKILL || unix.Signal(sig) == unix.SIGSTOP {
		act = sigAction{}
	}
	switch act.handler {
	case sigIgn:
		return
	case sigDfl:
		switch defaultActionOf(sig) {
		case actIgnore:
			return
		case actStop:
			p.stop(sig)
			return
		}
		st := ExitStatus{Signal: unix.Signal(sig), CoreDumps: defaultActionOf(sig) == actCore}
		if ps.fault {
			st.Fault = true
			st.Addr = ps.info.Addr
			st.PC = ps.pc
			st.SigCode = ps.info.Code
			st.Inst = t.disasm(ps.pc)
			if mf := t.missing; mf != nil && unix.Signal(sig) == unix.SIGILL && mf.PC == ps.pc {
				st.Lacks = mf.Need.String()
			}
		}
		if p.obs != nil {
			p.obs.Signal(t, &SignalEvent{Info: ps.info, Fatal: true})
		}
		p.exitProcess(st, nil)
		return
	}
	frame, fpstate, err := t.setupFrame(sig, &act, ps)
	if err != nil {
		// The frame could not be written: SIGSEGV, fatal if that was
		// the signal being delivered.
		if unix.Signal(sig) == unix.SIGSEGV {
			p.exitProcess(ExitStatus{Signal: unix.SIGSEGV}, nil)
			return
		}
		p.sig[unix.SIGSEGV].handler = sigDfl
		t.queue(pendingSignal{info: SigInfo{Signo: int32(unix.SIGSEGV), Code: x86.SIKernel}})
		return
	}
	if act.flags&saResethand != 0 {
		p.sig[sig].handler = sigDfl
		p.sig[sig].flags &^= saSiginfo
	}
	if p.obs != nil {
		p.obs.Signal(t, &SignalEvent{Info: ps.info, Handler: act.handler, Frame: frame, FPState: fpstate})
	}
}

// onAltStack reports whether sp is on t's alternate signal stack.
func (t *Thread) onAltStack(sp uint64) bool {
	a := &t.altStack
	return a.size != 0 && sp > a.sp && sp-a.sp <= a.size
}

// altStackFlags is ss_flags as sigaltstack reports it for sp.
func (t *Thread) altStackFlags(sp uint64) int32 {
	if t.altStack.size == 0 {
		return ssDisable
	}
	f := t.altStack.flags & ssAutodisarm
	if t.onAltStack(sp) {
		f |= ssOnstack
	}
	return f
}

// setupFrame writes a Linux x86-64 rt_sigframe for sig and points the
// registers at the handler. It returns the frame's address.
func (t *Thread) setupFrame(sig int, act *sigAction, ps *pendingSignal) (frame, fpstate uint64, err error) {
	c := t.CPU
	if act.flags&saRestorer == 0 {
		return 0, 0, unix.EFAULT // x86-64 requires a restorer
	}
	oldSP := c.R[x86.RSP]
	sp := oldSP
	if act.flags&saOnstack != 0 && t.altStack.size != 0 && !t.onAltStack(sp) {
		sp = t.altStack.sp + t.altStack.size
	} else {
		sp -= redZone
	}
	sp = (sp - fpstateSize) &^ 63
	fpstate = sp
	sp = (sp-frameSize)&^15 - 8
	frame = sp

	var fx [fpstateSize]byte
	le := binary.LittleEndian
	ucFlags := uint64(6) // UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS
	if xcr0 := c.XCR0(); xcr0&4 != 0 {
		// The XSAVE format: fx_sw_bytes at 464 say so.
		c.XSave(fx[:], xcr0)
		le.PutUint32(fx[464:], fpXstateMagic1)
		le.PutUint32(fx[468:], fpstateSize)
		le.PutUint64(fx[472:], xcr0)
		le.PutUint32(fx[480:], x86.XSaveSize)
		le.PutUint32(fx[x86.XSaveSize:], fpXstateMagic2)
		ucFlags |= ucFPXstate
	} else {
		c.FXSave(fx[:fxsaveSize])
	}
	var b [frameSize]byte
	le.PutUint64(b[0:], act.restorer)
	uc := b[8:]
	le.PutUint64(uc[0:], ucFlags)
	le.PutUint64(uc[16:], t.altStack.sp)
	le.PutUint32(uc[24:], uint32(t.altStackFlags(oldSP)))
	le.PutUint64(uc[32:], t.altStack.size)
	mask := t.sigMask
	if t.hasSavedMask {
		mask = t.savedMask
		t.hasSavedMask = false
	}
	g := uc[40:]
	regs := [23]uint64{
		c.R[x86.R8], c.R[x86.R9], c.R[x86.R10], c.R[x86.R11], c.R[x86.R12], c.R[x86.R13], c.R[x86.R14], c.R[x86.R15],
		c.R[x86.RDI], c.R[x86.RSI], c.R[x86.RBP], c.R[x86.RBX], c.R[x86.RDX], c.R[x86.RAX], c.R[x86.RCX],
		oldSP, c.RIP, c.Rflags(),
		0x33 | 0x2b<<48, // cs, gs, fs, ss
		ps.trap.err, ps.trap.trapno, mask, ps.trap.cr2,
	}
	for i, v := range regs {
		le.PutUint64(g[8*i:], v)
	}
	le.PutUint64(g[8*23:], fpstate)
	le.PutUint64(uc[296:], mask)
	ps.info.encode(b[8+ucontextSize:])

	if err := t.CopyOut(fpstate, fx[:]); err != nil {
		return 0, 0, err
	}
	if err := t.CopyOut(frame, b[:]); err != nil {
		return 0, 0, err
	}
	if act.flags&saOnstack != 0 && t.altStack.flags&ssAutodisarm != 0 {
		t.altStack = stackT{flags: ssDisable}
	}
	t.sigMask |= act.mask
	if act.flags&saNodefer == 0 {
		t.sigMask |= sigBit(sig)
	}
	t.sigMask &^= unblockable

	c.R[x86.RDI] = uint64(sig)
	c.R[x86.RSI] = frame + 8 + ucontextSize
	c.R[x86.RDX] = frame + 8
	c.R[x86.RAX] = 0
	c.R[x86.RSP] = frame
	c.RIP = act.handler
	c.SetRflags(c.Rflags() &^ (x86.FlagDF | x86.FlagTF))
	resetFPU(c)
	return frame, fpstate, nil
}

// sigreturn restores the state saved by setupFrame from the ucontext the
// handler may have modified.
func (t *Thread) sigreturn() error {
	c := t.CPU
	frame := c.R[x86.RSP] - 8
	var b [8 + ucontextSize]byte
	if err := t.CopyIn(frame, b[:]); err != nil {
		return err
	}
	le := binary.LittleEndian
	uc := b[8:]
	g := uc[40:]
	r := func(i int) uint64 { return le.Uint64(g[8*i:]) }
	fpstate := r(23)
	if fpstate != 0 {
		var fx [fpstateSize]byte
		if err := t.CopyIn(fpstate, fx[:fxsaveSize]); err != nil {
			return err
		}
		xcr0 := c.XCR0()
		if xcr0&4 != 0 && le.Uint32(fx[464:]) == fpXstateMagic1 && le.Uint32(fx[480:]) >= x86.XSaveSize {
			// An XSAVE frame: restore the components it holds, the
			// others to their initial state (Linux's XRSTOR).
			if err := t.CopyIn(fpstate+fxsaveSize, fx[fxsaveSize:]); err != nil {
				return err
			}
			if !c.XRstor(fx[:x86.XSaveSize], xcr0&le.Uint64(fx[472:])|3) {
				return unix.EFAULT
			}
		} else {
			if !c.FXRstor(fx[:fxsaveSize]) {
				return unix.EFAULT
			}
			c.YH = [16]x86.XMM{}
		}
	} else {
		resetFPU(c)
	}
	order := [...]int{x86.R8, x86.R9, x86.R10, x86.R11, x86.R12, x86.R13, x86.R14, x86.R15,
		x86.RDI, x86.RSI, x86.RBP, x86.RBX, x86.RDX, x86.RAX, x86.RCX, x86.RSP}
	for i, reg := range order {
		c.R[reg] = r(i)
	}
	c.RIP = r(16)
	const userFlags = x86.ArithFlags | x86.FlagTF | x86.FlagDF | x86.FlagAC | x86.FlagID
	c.SetRflags(c.Rflags()&^userFlags | r(17)&userFlags)
	t.sigMask = le.Uint64(uc[296:]) &^ unblockable
	ss := stackT{sp: le.Uint64(uc[16:]), flags: int32(le.Uint32(uc[24:])), size: le.Uint64(uc[32:])}
	t.setAltStack(ss) // errors are ignored, as by the kernel's restore_altstack
	return nil
}

// setAltStack implements the setting half of sigaltstack.
func (t *Thread) setAltStack(ss stackT) error {
	if t.onAltStack(t.CPU.R[x86.RSP]) {
		return unix.EPERM
	}
	mode := ss.flags &^ ssAutodisarm
	switch mode {
	case ssDisable:
		t.altStack = stackT{flags: ssDisable}
		return nil
	case 0, ssOnstack:
	default:
		return unix.EINVAL
	}
	if ss.size < minSigStackSz {
		return unix.ENOMEM
	}
	t.altStack = stackT{sp: ss.sp, size: ss.size, flags: ss.flags & ssAutodisarm}
	return nil
}

// resetFPU puts the x87 and SSE state in its initial state, as Linux does
// for a signal handler.
func resetFPU(c *x86.CPU) {
	c.FPU = x86.X87{CW: 0x37f}
	c.MXCSR = 0x1f80
	c.X = [16]x86.XMM{}
	c.YH = [16]x86.XMM{}
}

// Interrupt queues sig for the processes of the first process's group as
// if the host had received it (queueHost): an observer ending the run
// early (ttd probe's exit(), as dtrace -c kills the command it started)
// sends SIGKILL. Call it on the goroutine running the machine, from an
// observer; the signal acts when the running thread's slice ends.
func (p *Process) Interrupt(sig syscall.Signal) { p.m.queueHost(sig) }
