package emu

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// signalfd: signals are emulated, so a signalfd is too. Its host
// descriptor is an eventfd that ttd keeps readable while a signal of the
// fd's mask is pending for the process that made it (poll, select and
// epoll then see it as Linux shows a signalfd); reading it dequeues
// those signals as struct signalfd_siginfo. After fork the child's copy
// still follows the creator's signals (Linux: the reader's), and readv
// is not emulated.

// signalFD is one signalfd's state, shared by the descriptors dup and
// fork make of it.
type signalFD struct {
	mask  uint64
	efd   int // ttd's own duplicate of the eventfd
	owner *Process
	refs  int
	ready bool
}

const signalfdSiginfoSize = 128

// ref counts one more descriptor of s.
func (s *signalFD) ref() *signalFD {
	if s != nil {
		s.refs++
	}
	return s
}

// release drops one descriptor of s; the last closes it.
func (s *signalFD) release() {
	if s.refs--; s.refs > 0 {
		return
	}
	p := s.owner
	for i, x := range p.sigfds {
		if x == s {
			p.sigfds = append(p.sigfds[:i], p.sigfds[i+1:]...)
			break
		}
	}
	unix.Close(s.efd)
	s.efd = -1
}

// syncSignalfds makes each signalfd of p readable exactly when one of
// its signals is pending.
func (p *Process) syncSignalfds() {
	if len(p.sigfds) == 0 {
		return
	}
	pending := p.shared.mask
	for _, th := range p.threads {
		pending |= th.pending.mask
	}
	for _, s := range p.sigfds {
		ready := pending&s.mask != 0
		if ready == s.ready {
			continue
		}
		s.ready = ready
		if ready {
			var one = [8]byte{1}
			unix.Write(s.efd, one[:])
		} else {
			var b [8]byte
			unix.Read(s.efd, b[:])
		}
	}
}

// Signalfd4 implements Linux syscall signalfd4(2): a new signalfd, or a
// new mask for an existing one.
func Signalfd4(t *Thread, a *SyscallArgs) (uint64, error) {
	flags := a.Int(3)
	if flags&^(unix.SFD_CLOEXEC|unix.SFD_NONBLOCK) != 0 || a.A[2] != 8 {
		return 0, unix.EINVAL
	}
	mask, err := t.readU64(a.A[1])
	if err != nil {
		return 0, err
	}
	mask &^= unblockable
	p := t.P
	if fd := a.Int(0); fd != -1 {
		e, err := p.fds.get(fd)
		if err != nil {
			return 0, err
		}
		if e.sigfd == nil {
			return 0, unix.EINVAL
		}
		e.sigfd.mask = mask
		e.sigfd.owner.syncSignalfds()
		return uint64(fd), nil
	}
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return 0, errno(err)
	}
	own, err := unix.FcntlInt(uintptr(efd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		unix.Close(efd)
		return 0, errno(err)
	}
	if flags&unix.SFD_NONBLOCK == 0 {
		// The guest's descriptor blocks (its reads are emulated; the
		// flag is what fcntl shows).
		unix.SetNonblock(efd, false)
	}
	fd, err := p.fds.allocOrClose(efd, flags&unix.SFD_CLOEXEC != 0)
	if err != nil {
		unix.Close(own)
		return 0, err
	}
	s := &signalFD{mask: mask, efd: own, owner: p, refs: 1}
	p.fds.files[fd].sigfd = s
	p.sigfds = append(p.sigfds, s)
	p.syncSignalfds()
	return uint64(fd), nil
}

// Signalfd implements Linux syscall signalfd(2) (signalfd4 without
// flags).
func Signalfd(t *Thread, a *SyscallArgs) (uint64, error) {
	b := *a
	b.A[3] = 0
	return Signalfd4(t, &b)
}

// readSignalfd reads a signalfd: as many pending signals of its mask as
// fit, each a struct signalfd_siginfo; it blocks while there are none
// (unless the descriptor is non-blocking).
func (t *Thread) readSignalfd(e *fdEntry, addr uint64, n int) (uint64, error) {
	s := e.sigfd
	p := t.P
	if n < signalfdSiginfoSize {
		return 0, unix.EINVAL
	}
	var out []byte
	for len(out)+signalfdSiginfoSize <= n {
		q := &t.pending
		ready := q.mask & s.mask
		if ready == 0 {
			q = &p.shared
			ready = q.mask & s.mask
		}
		if ready == 0 {
			break
		}
		sig := trailingZeros(ready) + 1
		ps := q.take(sig)
		var info [signalfdSiginfoSize]byte
		ps.info.encodeSignalfd(info[:])
		out = append(out, info[:]...)
	}
	if len(out) > 0 {
		p.syncSignalfds()
		if err := t.CopyOut(addr, out); err != nil {
			return 0, err
		}
		return uint64(len(out)), nil
	}
	if hostNonblocking(e.host) {
		return 0, unix.EAGAIN
	}
	if t.interrupted() {
		return 0, errRestartSys
	}
	return 0, t.sleep(wait{what: "a signal (signalfd)", sigset: s.mask})
}

// encodeSignalfd writes si as a struct signalfd_siginfo into b, which is
// zero.
func (si *SigInfo) encodeSignalfd(b []byte) {
	le := binary.LittleEndian
	le.PutUint32(b[0:], uint32(si.Signo))
	le.PutUint32(b[4:], uint32(si.Errno))
	le.PutUint32(b[8:], uint32(si.Code))
	if si.isFault() {
		le.PutUint64(b[72:], si.Addr) // ssi_addr
		return
	}
	if si.Code == siTimer { // ttd keeps the timer's id and overrun in Pid and Uid
		le.PutUint32(b[24:], uint32(si.Pid)) // ssi_tid
		le.PutUint32(b[32:], uint32(si.Uid)) // ssi_overrun
		le.PutUint32(b[44:], uint32(si.Value))
		le.PutUint64(b[48:], si.Value)
		return
	}
	le.PutUint32(b[12:], uint32(si.Pid)) // ssi_pid
	le.PutUint32(b[16:], uint32(si.Uid)) // ssi_uid
	switch {
	case unix.Signal(si.Signo) == unix.SIGCHLD && si.Code > 0:
		le.PutUint32(b[40:], uint32(si.Value)) // ssi_status
	case si.Code == siQueue:
		le.PutUint32(b[44:], uint32(si.Value)) // ssi_int
		le.PutUint64(b[48:], si.Value)         // ssi_ptr
	}
}
