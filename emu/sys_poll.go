package emu

import (
	"encoding/binary"
	"time"

	"golang.org/x/sys/unix"
)

// pollFDs polls the guest pollfd entries (8 bytes each) held in b and
// rewrites their revents. When none is ready it waits up to timeout (<0:
// for ever), the thread blocked: it returns errBlock, and the handler
// polls again when a descriptor may be ready, a signal arrives (EINTR)
// or the timeout passes (0 ready).
func (t *Thread) pollFDs(b []byte, timeout time.Duration) (int, error) {
	n := len(b) / 8
	fds := make([]unix.PollFd, n)
	nval := 0
	le := binary.LittleEndian
	for i := range fds {
		gfd := int(int32(le.Uint32(b[8*i:])))
		fds[i].Events = int16(le.Uint16(b[8*i+4:]))
		fds[i].Fd = -1
		if gfd < 0 {
			continue
		}
		h, err := t.P.fds.host(gfd)
		if err != nil {
			nval++
			continue
		}
		fds[i].Fd = int32(h)
	}
	k, err := retry(func() (int, error) { return unix.Poll(fds, 0) })
	if err != nil {
		return 0, errno(err)
	}
	if k == 0 && nval == 0 && timeout != 0 {
		if err := t.waitReady(fds, timeout); err != nil {
			return 0, err
		}
	}
	for i := range fds {
		gfd := int(int32(le.Uint32(b[8*i:])))
		rev := fds[i].Revents
		if gfd >= 0 && fds[i].Fd < 0 {
			rev = unix.POLLNVAL
			k++
		}
		le.PutUint16(b[8*i+6:], uint16(rev))
	}
	return k, nil
}

// waitReady is for a syscall that found none of fds ready: it returns
// nil when the timeout (<0: none) has passed, EINTR when a signal is
// pending, and otherwise errBlock to wait for fds.
func (t *Thread) waitReady(fds []unix.PollFd, timeout time.Duration) error {
	var dl time.Time
	if timeout > 0 {
		dl = t.deadline(timeout)
		if !time.Now().Before(dl) {
			return nil
		}
	}
	if t.interrupted() {
		return unix.EINTR
	}
	return t.sleep(wait{fds: fds, deadline: dl})
}

// withSigmask runs a syscall body with the temporary signal mask at addr
// (ppoll, pselect6, epoll_pwait): the old mask comes back when the
// syscall completes, or, when a signal interrupts it, after the handler.
func (t *Thread) withSigmask(addr, size uint64, body func() (uint64, error)) (uint64, error) {
	if addr != 0 && !t.retrying {
		if size != 8 {
			return 0, unix.EINVAL
		}
		m, err := t.readU64(addr)
		if err != nil {
			return 0, err
		}
		t.savedMask, t.hasSavedMask = t.sigMask, true
		t.sigMask = m &^ unblockable
	}
	r, err := body()
	if addr != 0 && err != errBlock && err != unix.EINTR && t.hasSavedMask {
		t.sigMask, t.hasSavedMask = t.savedMask, false
	}
	return r, err
}

// poll implements poll and ppoll.
func (t *Thread) poll(addr uint64, nfds uint64, timeout time.Duration) (uint64, error) {
	if nfds > uint64(t.P.fds.limit) {
		return 0, unix.EINVAL
	}
	b := make([]byte, 8*nfds)
	if err := t.CopyIn(addr, b); err != nil {
		return 0, err
	}
	n, err := t.pollFDs(b, timeout)
	if err != nil {
		return 0, err
	}
	return uint64(n), t.CopyOut(addr, b)
}

// Poll implements Linux syscall poll(2).
func Poll(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.poll(a.A[0], a.A[1], time.Duration(a.Int(2))*time.Millisecond)
}

// Ppoll implements Linux syscall ppoll(2).
func Ppoll(t *Thread, a *SyscallArgs) (uint64, error) {
	timeout := time.Duration(-1)
	if a.A[2] != 0 {
		ts, err := t.readTimespec(a.A[2])
		if err != nil {
			return 0, err
		}
		timeout = tsDuration(ts)
	}
	return t.withSigmask(a.A[3], a.A[4], func() (uint64, error) {
		r, err := t.poll(a.A[0], a.A[1], timeout)
		if err == nil && a.A[2] != 0 {
			err = t.writeLeft(a.A[2], timeout, false)
		}
		return r, err
	})
}

// writeLeft writes the time left of the current syscall's timeout at
// addr, as a timespec or (tv) a timeval.
func (t *Thread) writeLeft(addr uint64, timeout time.Duration, tv bool) error {
	left := time.Duration(0)
	if timeout > 0 {
		left = max(0, time.Until(t.deadline(timeout)))
	}
	var b [16]byte
	if tv {
		putTv(b[:], left)
	} else {
		putTs(b[:], left)
	}
	return t.CopyOut(addr, b[:])
}

// selectFDs implements select and pselect6 through poll.
func (t *Thread) selectFDs(nfds int, sets [3]uint64, timeout time.Duration) (uint64, error) {
	if nfds < 0 || nfds > 1<<20 {
		return 0, unix.EINVAL
	}
	words := (nfds + 63) / 64
	var bits [3][]uint64
	for i, addr := range sets {
		if addr == 0 {
			continue
		}
		raw := make([]byte, 8*words)
		if err := t.CopyIn(addr, raw); err != nil {
			return 0, err
		}
		bits[i] = make([]uint64, words)
		for w := range bits[i] {
			bits[i][w] = binary.LittleEndian.Uint64(raw[8*w:])
		}
	}
	var pb []byte
	var which []int
	events := [3]int16{unix.POLLIN, unix.POLLOUT, unix.POLLPRI}
	for fd := 0; fd < nfds; fd++ {
		var ev int16
		for i := range bits {
			if bits[i] != nil && bits[i][fd/64]&(1<<(fd%64)) != 0 {
				ev |= events[i]
			}
		}
		if ev == 0 {
			continue
		}
		if _, err := t.P.fds.get(fd); err != nil {
			return 0, unix.EBADF
		}
		var e [8]byte
		binary.LittleEndian.PutUint32(e[:], uint32(fd))
		binary.LittleEndian.PutUint16(e[4:], uint16(ev))
		pb = append(pb, e[:]...)
		which = append(which, fd)
	}
	if _, err := t.pollFDs(pb, timeout); err != nil {
		return 0, err
	}
	for i := range bits {
		clear(bits[i])
	}
	count := 0
	for k, fd := range which {
		rev := int16(binary.LittleEndian.Uint16(pb[8*k+6:]))
		set := func(i int, hit bool) {
			if hit && bits[i] != nil {
				bits[i][fd/64] |= 1 << (fd % 64)
				count++
			}
		}
		set(0, rev&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) != 0)
		set(1, rev&(unix.POLLOUT|unix.POLLERR) != 0)
		set(2, rev&unix.POLLPRI != 0)
	}
	for i, addr := range sets {
		if addr == 0 {
			continue
		}
		raw := make([]byte, 8*words)
		for w, v := range bits[i] {
			binary.LittleEndian.PutUint64(raw[8*w:], v)
		}
		if err := t.CopyOut(addr, raw); err != nil {
			return 0, err
		}
	}
	return uint64(count), nil
}

// Select implements Linux syscall select(2); like Linux, it writes the
// time left to the timeout.
func Select(t *Thread, a *SyscallArgs) (uint64, error) {
	timeout := time.Duration(-1)
	if a.A[4] != 0 {
		var tv unix.Timeval
		if err := copyInStruct(t, a.A[4], &tv); err != nil {
			return 0, err
		}
		if tv.Sec < 0 || tv.Usec < 0 {
			return 0, unix.EINVAL
		}
		timeout = secDuration(tv.Sec, tv.Usec*1000)
	}
	r, err := t.selectFDs(a.Int(0), [3]uint64{a.A[1], a.A[2], a.A[3]}, timeout)
	if (err == nil || err == unix.EINTR) && a.A[4] != 0 {
		t.writeLeft(a.A[4], timeout, true)
	}
	return r, err
}

// Pselect6 implements Linux syscall pselect6(2).
func Pselect6(t *Thread, a *SyscallArgs) (uint64, error) {
	timeout := time.Duration(-1)
	if a.A[4] != 0 {
		ts, err := t.readTimespec(a.A[4])
		if err != nil {
			return 0, err
		}
		timeout = tsDuration(ts)
	}
	var mask, size uint64
	if a.A[5] != 0 {
		// struct { const sigset_t *ss; size_t ss_len; }
		var b [16]byte
		if err := t.CopyIn(a.A[5], b[:]); err != nil {
			return 0, err
		}
		mask, size = binary.LittleEndian.Uint64(b[:]), binary.LittleEndian.Uint64(b[8:])
	}
	return t.withSigmask(mask, size, func() (uint64, error) {
		r, err := t.selectFDs(a.Int(0), [3]uint64{a.A[1], a.A[2], a.A[3]}, timeout)
		if (err == nil || err == unix.EINTR) && a.A[4] != 0 {
			t.writeLeft(a.A[4], timeout, false)
		}
		return r, err
	})
}

// EpollCreate1 implements Linux syscall epoll_create1(2).
func EpollCreate1(t *Thread, a *SyscallArgs) (uint64, error) {
	if a.Int(0)&^unix.EPOLL_CLOEXEC != 0 {
		return 0, unix.EINVAL
	}
	h, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return 0, errno(err)
	}
	return t.installFD(h, a.Int(0)&unix.EPOLL_CLOEXEC != 0)
}

// EpollCreate implements Linux syscall epoll_create(2).
func EpollCreate(t *Thread, a *SyscallArgs) (uint64, error) {
	if a.Int(0) <= 0 {
		return 0, unix.EINVAL
	}
	h, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return 0, errno(err)
	}
	return t.installFD(h, false)
}

// EpollCtl implements Linux syscall epoll_ctl(2). The event's data is
// the guest's, returned unchanged by epoll_wait.
func EpollCtl(t *Thread, a *SyscallArgs) (uint64, error) {
	ep, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	fd, err := t.hostFD(a, 2)
	if err != nil {
		return 0, err
	}
	var ev [12]byte
	if a.Int(1) != unix.EPOLL_CTL_DEL {
		if err := t.CopyIn(a.A[3], ev[:]); err != nil {
			return 0, err
		}
	}
	_, err = hostSyscall(unix.SYS_EPOLL_CTL, hInt(ep), hInt(a.Int(1)), hInt(fd), hBuf(ev[:]))
	return 0, errno(err)
}

// epollWait waits on a host epoll descriptor; the thread blocks while
// none of its events is ready.
func (t *Thread) epollWait(a *SyscallArgs, timeout time.Duration) (uint64, error) {
	ep, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	max := a.Int(2)
	if max <= 0 || max > 1<<16 {
		return 0, unix.EINVAL
	}
	b := make([]byte, 12*max)
	if !t.P.MM.accessible(a.A[1], uint64(len(b)), unix.PROT_WRITE) {
		return 0, unix.EFAULT
	}
	n, err := retry(func() (int, error) {
		r, err := hostSyscall(unix.SYS_EPOLL_WAIT, hInt(ep), hBuf(b), hInt(max), hInt(0))
		return int(r), err
	})
	if err != nil {
		return 0, errno(err)
	}
	if n == 0 && timeout != 0 {
		if err := t.waitReady([]unix.PollFd{{Fd: int32(ep), Events: unix.POLLIN}}, timeout); err != nil {
			return 0, err
		}
	}
	return uint64(n), t.CopyOut(a.A[1], b[:12*n])
}

// EpollWait implements Linux syscall epoll_wait(2).
func EpollWait(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.epollWait(a, time.Duration(a.Int(3))*time.Millisecond)
}

// EpollPwait implements Linux syscall epoll_pwait(2).
func EpollPwait(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.withSigmask(a.A[4], a.A[5], func() (uint64, error) {
		return t.epollWait(a, time.Duration(a.Int(3))*time.Millisecond)
	})
}

// EpollPwait2 implements Linux syscall epoll_pwait2(2).
func EpollPwait2(t *Thread, a *SyscallArgs) (uint64, error) {
	timeout := time.Duration(-1)
	if a.A[3] != 0 {
		ts, err := t.readTimespec(a.A[3])
		if err != nil {
			return 0, err
		}
		timeout = tsDuration(ts)
	}
	return t.withSigmask(a.A[4], a.A[5], func() (uint64, error) {
		return t.epollWait(a, timeout)
	})
}

// Eventfd2 implements Linux syscall eventfd2(2).
func Eventfd2(t *Thread, a *SyscallArgs) (uint64, error) {
	flags := a.Int(1)
	h, err := unix.Eventfd(uint(a.A[0]), flags|unix.EFD_CLOEXEC)
	if err != nil {
		return 0, errno(err)
	}
	return t.installFD(h, flags&unix.EFD_CLOEXEC != 0)
}

// Eventfd implements Linux syscall eventfd(2).
func Eventfd(t *Thread, a *SyscallArgs) (uint64, error) {
	h, err := unix.Eventfd(uint(a.A[0]), unix.EFD_CLOEXEC)
	if err != nil {
		return 0, errno(err)
	}
	return t.installFD(h, false)
}

// TimerfdCreate implements Linux syscall timerfd_create(2).
func TimerfdCreate(t *Thread, a *SyscallArgs) (uint64, error) {
	flags := a.Int(1)
	h, err := unix.TimerfdCreate(a.Int(0), flags|unix.TFD_CLOEXEC)
	if err != nil {
		return 0, errno(err)
	}
	return t.installFD(h, flags&unix.TFD_CLOEXEC != 0)
}

// TimerfdSettime implements Linux syscall timerfd_settime(2).
func TimerfdSettime(t *Thread, a *SyscallArgs) (uint64, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	var nv, ov [32]byte
	if err := t.CopyIn(a.A[2], nv[:]); err != nil {
		return 0, err
	}
	if _, err := hostSyscall(unix.SYS_TIMERFD_SETTIME, hInt(fd), hInt(a.Int(1)), hBuf(nv[:]), hBuf(ov[:])); err != nil {
		return 0, errno(err)
	}
	if a.A[3] != 0 {
		return 0, t.CopyOut(a.A[3], ov[:])
	}
	return 0, nil
}

// TimerfdGettime implements Linux syscall timerfd_gettime(2).
func TimerfdGettime(t *Thread, a *SyscallArgs) (uint64, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	var v [32]byte
	if _, err := hostSyscall(unix.SYS_TIMERFD_GETTIME, hInt(fd), hBuf(v[:])); err != nil {
		return 0, errno(err)
	}
	return 0, t.CopyOut(a.A[1], v[:])
}
