package emu

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// Sockets are host sockets; addresses and options are copied as bytes.

const maxSockaddr = 128

// Socket implements Linux syscall socket(2).
func Socket(t *Thread, a *SyscallArgs) (uint64, error) {
	typ := a.Int(1)
	h, err := unix.Socket(a.Int(0), typ|unix.SOCK_CLOEXEC, a.Int(2))
	if err != nil {
		return 0, errno(err)
	}
	return t.installFD(h, typ&unix.SOCK_CLOEXEC != 0)
}

// Socketpair implements Linux syscall socketpair(2).
func Socketpair(t *Thread, a *SyscallArgs) (uint64, error) {
	typ := a.Int(1)
	hp, err := unix.Socketpair(a.Int(0), typ|unix.SOCK_CLOEXEC, a.Int(2))
	if err != nil {
		return 0, errno(err)
	}
	return t.installPair(a.A[3], hp, typ&unix.SOCK_CLOEXEC != 0)
}

// sockaddrIn copies in a socket address of length n.
func (t *Thread) sockaddrIn(addr uint64, n uint64) ([]byte, error) {
	if n > maxSockaddr {
		return nil, unix.EINVAL
	}
	b := make([]byte, n)
	return b, t.CopyIn(addr, b)
}

// sockaddrOut writes a socket address the host returned (in b, whose
// real length is n) to a guest buffer with its length at lenAddr.
func (t *Thread) sockaddrOut(addr, lenAddr uint64, b []byte, n uint32) error {
	if addr == 0 || lenAddr == 0 {
		return nil
	}
	glen, err := t.readU32(lenAddr)
	if err != nil {
		return err
	}
	if int32(glen) < 0 {
		return unix.EINVAL
	}
	k := min(uint32(len(b)), n, glen)
	if err := t.CopyOut(addr, b[:k]); err != nil {
		return err
	}
	return t.writeU32(lenAddr, n)
}

// sockaddrCall runs a host syscall taking (fd, sockaddr, len).
func (t *Thread) sockaddrCall(nr uintptr, a *SyscallArgs) (uint64, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	sa, err := t.sockaddrIn(a.A[1], a.A[2]&0xffffffff)
	if err != nil {
		return 0, err
	}
	t.enterBlocking()
	_, err = retry(func() (int, error) {
		r, err := hostSyscall(nr, hInt(fd), hBuf(sa), hInt(len(sa)))
		return int(r), err
	})
	t.leaveBlocking()
	return 0, errno(err)
}

// Bind implements Linux syscall bind(2).
func Bind(t *Thread, a *SyscallArgs) (uint64, error) {
	t.applyUmask() // a unix socket's file
	return t.sockaddrCall(unix.SYS_BIND, a)
}

// Connect implements Linux syscall connect(2).
func Connect(t *Thread, a *SyscallArgs) (uint64, error) { return t.sockaddrCall(unix.SYS_CONNECT, a) }

// Listen implements Linux syscall listen(2).
func Listen(t *Thread, a *SyscallArgs) (uint64, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	return 0, errno(unix.Listen(fd, a.Int(1)))
}

// Shutdown implements Linux syscall shutdown(2).
func Shutdown(t *Thread, a *SyscallArgs) (uint64, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	return 0, errno(unix.Shutdown(fd, a.Int(1)))
}

// accept4 accepts a connection for accept and accept4.
func (t *Thread) accept4(a *SyscallArgs, flags int) (uint64, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	if err := t.waitFD(a.Int(0), unix.POLLIN, ""); err != nil {
		return 0, err
	}
	var sa [maxSockaddr]byte
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], maxSockaddr)
	t.enterBlocking()
	h, err := retry(func() (int, error) {
		r, err := hostSyscall(unix.SYS_ACCEPT4, hInt(fd), hBuf(sa[:]), hBuf(n[:]), hInt(flags|unix.SOCK_CLOEXEC))
		return int(r), err
	})
	t.leaveBlocking()
	if err != nil {
		return 0, errno(err)
	}
	if err := t.sockaddrOut(a.A[1], a.A[2], sa[:], binary.LittleEndian.Uint32(n[:])); err != nil {
		unix.Close(h)
		return 0, err
	}
	return t.installFD(h, flags&unix.SOCK_CLOEXEC != 0)
}

// Accept implements Linux syscall accept(2).
func Accept(t *Thread, a *SyscallArgs) (uint64, error) { return t.accept4(a, 0) }

// Accept4 implements Linux syscall accept4(2).
func Accept4(t *Thread, a *SyscallArgs) (uint64, error) { return t.accept4(a, a.Int(3)) }

// nameCall runs getsockname or getpeername.
func (t *Thread) nameCall(nr uintptr, a *SyscallArgs) (uint64, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	var sa [maxSockaddr]byte
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], maxSockaddr)
	if _, err := hostSyscall(nr, hInt(fd), hBuf(sa[:]), hBuf(n[:])); err != nil {
		return 0, errno(err)
	}
	if a.A[1] == 0 || a.A[2] == 0 {
		return 0, unix.EFAULT
	}
	return 0, t.sockaddrOut(a.A[1], a.A[2], sa[:], binary.LittleEndian.Uint32(n[:]))
}

// Getsockname implements Linux syscall getsockname(2).
func Getsockname(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.nameCall(unix.SYS_GETSOCKNAME, a)
}

// Getpeername implements Linux syscall getpeername(2).
func Getpeername(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.nameCall(unix.SYS_GETPEERNAME, a)
}

// Sendto implements Linux syscall sendto(2).
func Sendto(t *Thread, a *SyscallArgs) (uint64, error) {
	e, err := t.P.fds.get(a.Int(0))
	if err != nil {
		return 0, err
	}
	var sa []byte
	if a.A[4] != 0 {
		if sa, err = t.sockaddrIn(a.A[4], a.A[5]&0xffffffff); err != nil {
			return 0, err
		}
	}
	flags := a.Int(3)
	op := func(fd int, b []byte, dontwait bool) (int, error) {
		saArg := hInt(0)
		if sa != nil {
			saArg = hBuf(sa)
		}
		f := flags | unix.MSG_NOSIGNAL
		if dontwait {
			f |= unix.MSG_DONTWAIT
		}
		r, err := hostSyscall(unix.SYS_SENDTO, hInt(fd), hBuf(b), hInt(len(b)), hInt(f), saArg, hInt(len(sa)))
		return int(r), err
	}
	n := ioCount(a.A[2])
	if flags&unix.MSG_DONTWAIT != 0 {
		b := t.buf(n)
		if err := t.CopyIn(a.A[1], b); err != nil {
			return 0, err
		}
		k, err := retry(func() (int, error) { return op(e.host, b, true) })
		t.sigpipe(err, flags)
		return uint64(k), errno(err)
	}
	b := t.buf(n)
	if err := t.CopyIn(a.A[1], b); err != nil {
		return 0, err
	}
	return t.writeData(e, b, op, flags)
}

// sigpipe raises SIGPIPE for a send that failed with EPIPE without
// MSG_NOSIGNAL.
func (t *Thread) sigpipe(err error, flags int) {
	if err == unix.EPIPE && flags&unix.MSG_NOSIGNAL == 0 {
		t.queue(pendingSignal{info: SigInfo{Signo: int32(unix.SIGPIPE), Code: siUser, Pid: int32(t.P.PID)}})
	}
}

// Recvfrom implements Linux syscall recvfrom(2).
func Recvfrom(t *Thread, a *SyscallArgs) (uint64, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	if a.Int(3)&unix.MSG_DONTWAIT == 0 {
		if err := t.waitFD(a.Int(0), unix.POLLIN, ""); err != nil {
			return 0, err
		}
	}
	var sa [maxSockaddr]byte
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], maxSockaddr)
	r, err := t.readInto(a.A[1], ioCount(a.A[2]), func(b []byte) (int, error) {
		r, err := hostSyscall(unix.SYS_RECVFROM, hInt(fd), hBuf(b), hInt(len(b)), hInt(a.Int(3)), hBuf(sa[:]), hBuf(n[:]))
		return int(r), err
	})
	if err != nil {
		return 0, err
	}
	if a.A[4] != 0 {
		if err := t.sockaddrOut(a.A[4], a.A[5], sa[:], binary.LittleEndian.Uint32(n[:])); err != nil {
			return 0, err
		}
	}
	return r, nil
}

// Setsockopt implements Linux syscall setsockopt(2).
func Setsockopt(t *Thread, a *SyscallArgs) (uint64, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	n := a.A[4] & 0xffffffff
	if n > 4096 {
		return 0, unix.EINVAL
	}
	b := make([]byte, n)
	if err := t.CopyIn(a.A[3], b); err != nil {
		return 0, err
	}
	_, err = hostSyscall(unix.SYS_SETSOCKOPT, hInt(fd), hInt(a.Int(1)), hInt(a.Int(2)), hBuf(b), hInt(n))
	return 0, errno(err)
}

// Getsockopt implements Linux syscall getsockopt(2).
func Getsockopt(t *Thread, a *SyscallArgs) (uint64, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	glen, err := t.readU32(a.A[4])
	if err != nil {
		return 0, err
	}
	if glen > 4096 {
		glen = 4096
	}
	b := make([]byte, glen)
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], glen)
	if _, err := hostSyscall(unix.SYS_GETSOCKOPT, hInt(fd), hInt(a.Int(1)), hInt(a.Int(2)), hBuf(b), hBuf(n[:])); err != nil {
		return 0, errno(err)
	}
	k := min(binary.LittleEndian.Uint32(n[:]), glen)
	if err := t.CopyOut(a.A[3], b[:k]); err != nil {
		return 0, err
	}
	return 0, t.writeU32(a.A[4], k)
}

// msghdr offsets (struct msghdr, 56 bytes).
const msghdrSize = 56

// Sendmsg implements Linux syscall sendmsg(2). SCM_RIGHTS descriptors are
// translated to the host's.
func Sendmsg(t *Thread, a *SyscallArgs) (uint64, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	var mh [msghdrSize]byte
	if err := t.CopyIn(a.A[1], mh[:]); err != nil {
		return 0, err
	}
	le := binary.LittleEndian
	var msg unix.Msghdr
	name, err := t.sockaddrIn(le.Uint64(mh[0:]), uint64(le.Uint32(mh[8:])))
	if err != nil {
		return 0, err
	}
	if len(name) > 0 {
		msg.Name = &name[0]
		msg.Namelen = uint32(len(name))
	}
	iov, err := t.copyInIovecs(le.Uint64(mh[16:]), le.Uint64(mh[24:]))
	if err != nil {
		return 0, err
	}
	var data []byte
	for _, v := range iov {
		k := min(int(v.len), maxIO-len(data))
		start := len(data)
		data = append(data, make([]byte, k)...)
		if err := t.CopyIn(v.base, data[start:]); err != nil {
			return 0, err
		}
	}
	data = append(data, 0) // a valid pointer even for empty messages
	hiov := unix.Iovec{Base: &data[0]}
	hiov.SetLen(len(data) - 1)
	msg.Iov = &hiov
	msg.Iovlen = 1
	clen := le.Uint64(mh[40:])
	if clen > 0 {
		if clen > 1<<16 {
			return 0, unix.ENOBUFS
		}
		ctl := make([]byte, clen)
		if err := t.CopyIn(le.Uint64(mh[32:]), ctl); err != nil {
			return 0, err
		}
		if err := t.mapRights(ctl, true); err != nil {
			return 0, err
		}
		msg.Control = &ctl[0]
		msg.SetControllen(len(ctl))
	}
	flags := a.Int(2)
	full := len(data) - 1
	op := func(fd int, b []byte, dontwait bool) (int, error) {
		m := msg
		hiov := unix.Iovec{Base: &data[full-len(b)]}
		hiov.SetLen(len(b))
		m.Iov = &hiov
		if len(b) < full {
			// The rest of a partly sent stream message: the control
			// data went with its start.
			m.Control, m.Controllen = nil, 0
		}
		f := flags | unix.MSG_NOSIGNAL
		if dontwait {
			f |= unix.MSG_DONTWAIT
		}
		return hostMsg(unix.SYS_SENDMSG, fd, &m, f)
	}
	e, err := t.P.fds.get(a.Int(0))
	if err != nil {
		return 0, err
	}
	if flags&unix.MSG_DONTWAIT != 0 {
		n, err := retry(func() (int, error) { return op(fd, data[:full], true) })
		t.sigpipe(err, flags)
		return uint64(n), errno(err)
	}
	return t.writeData(e, data[:full], op, flags)
}

// Recvmsg implements Linux syscall recvmsg(2).
func Recvmsg(t *Thread, a *SyscallArgs) (uint64, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	if a.Int(2)&unix.MSG_DONTWAIT == 0 {
		if err := t.waitFD(a.Int(0), unix.POLLIN, ""); err != nil {
			return 0, err
		}
	}
	var mh [msghdrSize]byte
	if err := t.CopyIn(a.A[1], mh[:]); err != nil {
		return 0, err
	}
	le := binary.LittleEndian
	iov, err := t.copyInIovecs(le.Uint64(mh[16:]), le.Uint64(mh[24:]))
	if err != nil {
		return 0, err
	}
	total := 0
	for _, v := range iov {
		total += int(v.len)
	}
	data := make([]byte, ioCount(uint64(total))+1)
	hiov := unix.Iovec{Base: &data[0]}
	hiov.SetLen(len(data) - 1)
	var msg unix.Msghdr
	msg.Iov = &hiov
	msg.Iovlen = 1
	var name [maxSockaddr]byte
	if le.Uint64(mh[0:]) != 0 {
		msg.Name = &name[0]
		msg.Namelen = maxSockaddr
	}
	clen := min(le.Uint64(mh[40:]), 1<<16)
	var ctl []byte
	if clen > 0 {
		ctl = make([]byte, clen)
		msg.Control = &ctl[0]
		msg.SetControllen(len(ctl))
	}
	n, err := retry(func() (int, error) { return hostMsg(unix.SYS_RECVMSG, fd, &msg, a.Int(2)|unix.MSG_CMSG_CLOEXEC) })
	if err != nil {
		return 0, errno(err)
	}
	rest := data[:min(n, len(data)-1)] // MSG_TRUNC: n is the message's length, what fit is less
	for _, v := range iov {
		k := min(int(v.len), len(rest))
		if err := t.CopyOut(v.base, rest[:k]); err != nil {
			return 0, err
		}
		rest = rest[k:]
	}
	if msg.Name != nil {
		k := min(msg.Namelen, le.Uint32(mh[8:]))
		if err := t.CopyOut(le.Uint64(mh[0:]), name[:k]); err != nil {
			return 0, err
		}
		le.PutUint32(mh[8:], msg.Namelen)
	}
	if ctl != nil {
		ctl = ctl[:msg.Controllen]
		if err := t.mapRights(ctl, false); err != nil {
			return 0, err
		}
		if err := t.CopyOut(le.Uint64(mh[32:]), ctl); err != nil {
			return 0, err
		}
	}
	le.PutUint64(mh[40:], uint64(len(ctl)))
	// The kernel reports the MSG_CMSG_CLOEXEC ttd adds for the host's
	// descriptors; the guest sees only the flags it asked for.
	mflags := msg.Flags
	if a.Int(2)&unix.MSG_CMSG_CLOEXEC == 0 {
		mflags &^= unix.MSG_CMSG_CLOEXEC
	}
	le.PutUint32(mh[48:], uint32(mflags))
	return uint64(n), t.CopyOut(a.A[1], mh[:])
}

// mapRights translates the descriptors of SCM_RIGHTS messages in a
// control buffer: guest to host when sending, host to (newly installed)
// guest descriptors when receiving.
func (t *Thread) mapRights(ctl []byte, send bool) error {
	le := binary.LittleEndian
	for len(ctl) >= 16 {
		l := le.Uint64(ctl)
		if l < 16 || l > uint64(len(ctl)) {
			break
		}
		if int32(le.Uint32(ctl[8:])) == unix.SOL_SOCKET && int32(le.Uint32(ctl[12:])) == unix.SCM_RIGHTS {
			for i := uint64(16); i+4 <= l; i += 4 {
				v := int(int32(le.Uint32(ctl[i:])))
				var m int
				var err error
				if send {
					m, err = t.P.fds.host(v)
				} else {
					var g uint64
					g, err = t.installFD(v, false)
					m = int(g)
				}
				if err != nil {
					return err
				}
				le.PutUint32(ctl[i:], uint32(m))
			}
		}
		l = (l + 7) &^ 7
		if l > uint64(len(ctl)) {
			break
		}
		ctl = ctl[l:]
	}
	return nil
}
