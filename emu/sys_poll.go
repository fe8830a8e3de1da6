package emu

import (
	"encoding/binary"
	"time"

	"golang.org/x/sys/unix"
)

// pollFDs runs a host poll over guest pollfd entries (8 bytes each) held
// in b, rewriting their revents; timeout is in milliseconds (<0: none).
func (t *Thread) pollFDs(b []byte, timeout int) (int, error) {
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
	if nval > 0 {
		timeout = 0
	}
	t.enterBlocking()
	k, err := retry(func() (int, error) { return unix.Poll(fds, timeout) })
	t.leaveBlocking()
	if err != nil {
		return 0, errno(err)
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

// poll implements poll and ppoll.
func (t *Thread) poll(addr uint64, nfds uint64, timeout int) (uint64, error) {
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
	return t.poll(a.A[0], a.A[1], a.Int(2))
}

// Ppoll implements Linux syscall ppoll(2) (the signal mask applies only
// to signals forwarded from the host).
func Ppoll(t *Thread, a *SyscallArgs) (uint64, error) {
	timeout := -1
	if a.A[2] != 0 {
		ts, err := t.readTimespec(a.A[2])
		if err != nil {
			return 0, err
		}
		timeout = msTimeout(time.Duration(ts.Nano()))
	}
	return t.poll(a.A[0], a.A[1], timeout)
}

// msTimeout rounds a duration up to milliseconds for poll.
func msTimeout(d time.Duration) int {
	ms := (d + time.Millisecond - 1) / time.Millisecond
	if ms > 1<<31-1 {
		return 1<<31 - 1
	}
	return int(ms)
}

// selectFDs implements select and pselect6 through poll.
func (t *Thread) selectFDs(nfds int, sets [3]uint64, timeout int) (uint64, error) {
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

// Select implements Linux syscall select(2).
func Select(t *Thread, a *SyscallArgs) (uint64, error) {
	timeout := -1
	if a.A[4] != 0 {
		var tv unix.Timeval
		if err := copyInStruct(t, a.A[4], &tv); err != nil {
			return 0, err
		}
		if tv.Sec < 0 || tv.Usec < 0 {
			return 0, unix.EINVAL
		}
		timeout = msTimeout(time.Duration(tv.Nano()))
	}
	return t.selectFDs(a.Int(0), [3]uint64{a.A[1], a.A[2], a.A[3]}, timeout)
}

// Pselect6 implements Linux syscall pselect6(2).
func Pselect6(t *Thread, a *SyscallArgs) (uint64, error) {
	timeout := -1
	if a.A[4] != 0 {
		ts, err := t.readTimespec(a.A[4])
		if err != nil {
			return 0, err
		}
		timeout = msTimeout(time.Duration(ts.Nano()))
	}
	return t.selectFDs(a.Int(0), [3]uint64{a.A[1], a.A[2], a.A[3]}, timeout)
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

// epollWait waits on a host epoll descriptor.
func (t *Thread) epollWait(a *SyscallArgs, timeout int) (uint64, error) {
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
	t.enterBlocking()
	n, err := retry(func() (int, error) {
		r, err := hostSyscall(unix.SYS_EPOLL_WAIT, hInt(ep), hBuf(b), hInt(max), hInt(timeout))
		return int(r), err
	})
	t.leaveBlocking()
	if err != nil {
		return 0, errno(err)
	}
	return uint64(n), t.CopyOut(a.A[1], b[:12*n])
}

// EpollWait implements Linux syscall epoll_wait(2).
func EpollWait(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.epollWait(a, a.Int(3))
}

// EpollPwait implements Linux syscall epoll_pwait(2) (the signal mask
// applies only to forwarded host signals).
func EpollPwait(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.epollWait(a, a.Int(3))
}

// EpollPwait2 implements Linux syscall epoll_pwait2(2).
func EpollPwait2(t *Thread, a *SyscallArgs) (uint64, error) {
	timeout := -1
	if a.A[3] != 0 {
		ts, err := t.readTimespec(a.A[3])
		if err != nil {
			return 0, err
		}
		timeout = msTimeout(time.Duration(ts.Nano()))
	}
	return t.epollWait(a, timeout)
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
