package emu

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// Host signals. With Config.ForwardSignals, the signals a user sends to
// ttd are queued for the guest and delivered at the next instruction
// boundary ttd reaches. While the guest waits in a host syscall, a signal
// whose guest action is to terminate kills ttd at once with that signal,
// as it would have killed the program.

// startForwarding installs the host signal handlers.
func (m *Machine) startForwarding() (stop func()) {
	in := make(chan os.Signal, 16)
	m.hostSigs = make(chan os.Signal, 64)
	signal.Notify(in, forwardedSignals...)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for s := range in {
			sig, ok := s.(syscall.Signal)
			if !ok {
				continue
			}
			if m.blocking.Load() && m.fatalMask.Load()&sigBit(int(sig)) != 0 {
				if f := m.cfg.BeforeHostKill; f != nil {
					f(ExitStatus{Signal: unix.Signal(sig)})
				}
				signal.Reset(sig)
				unix.Kill(unix.Getpid(), sig)
			}
			select {
			case m.hostSigs <- s:
			default:
			}
		}
	}()
	return func() {
		signal.Stop(in)
		close(in)
		<-done
	}
}

// enterBlocking marks the start of a host call that may block.
func (t *Thread) enterBlocking() {
	p := t.P
	m := p.m
	if m.hostSigs == nil {
		return
	}
	var fatal uint64
	for sig := 1; sig <= numSignals; sig++ {
		if t.sigMask&sigBit(sig) == 0 && p.sig[sig].handler == sigDfl {
			if a := defaultActionOf(sig); a == actTerm || a == actCore {
				fatal |= sigBit(sig)
			}
		}
	}
	m.fatalMask.Store(fatal)
	m.blocking.Store(true)
}

// leaveBlocking marks the end of a host call that may block.
func (t *Thread) leaveBlocking() {
	t.P.m.blocking.Store(false)
}
