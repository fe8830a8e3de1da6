package emu

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// maxIO caps the bytes one read or write moves (a short count, as Linux
// allows).
const maxIO = 16 << 20

// hostFD returns the host descriptor of guest fd argument i.
func (t *Thread) hostFD(a *SyscallArgs, i int) (int, error) {
	return t.P.fds.host(a.Int(i))
}

// ioCount caps a read or write count.
func ioCount(n uint64) int {
	if n > maxIO {
		return maxIO
	}
	return int(n)
}

// retry repeats a host call interrupted by one of ttd's own signals.
func retry(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != unix.EINTR {
			return n, err
		}
	}
}

// readInto runs a host read into a scratch buffer of n bytes and copies
// what it got to guest memory at addr.
func (t *Thread) readInto(addr uint64, n int, read func(b []byte) (int, error)) (uint64, error) {
	if end := addr + uint64(n); end < addr || end > taskSize {
		return 0, unix.EFAULT
	}
	b := t.buf(n)
	t.enterBlocking()
	k, err := retry(func() (int, error) { return read(b) })
	t.leaveBlocking()
	if err != nil {
		return 0, errno(err)
	}
	// A datagram read with MSG_TRUNC answers its whole length, which
	// may be more than the buffer holds.
	if err := t.CopyOut(addr, b[:min(k, len(b))]); err != nil {
		return 0, err
	}
	return uint64(k), nil
}

// writeFrom copies n bytes of guest memory at addr and writes them to
// e, waiting for room like a blocking write (see writeBlocking). EPIPE
// raises SIGPIPE.
func (t *Thread) writeFrom(e *fdEntry, addr uint64, n int, op writeOp) (uint64, error) {
	b := t.buf(n)
	if err := t.CopyIn(addr, b); err != nil {
		return 0, err
	}
	return t.writeData(e, b, op, 0)
}

// writeData writes data to e like writeFrom; flags are the send flags
// (MSG_NOSIGNAL: no SIGPIPE).
func (t *Thread) writeData(e *fdEntry, data []byte, op writeOp, flags int) (uint64, error) {
	t.enterBlocking()
	k, err := t.writeBlocking(e, data, op)
	t.leaveBlocking()
	t.sigpipe(err, flags)
	if err != nil {
		return 0, errno(err)
	}
	return uint64(k), nil
}

// plainWrite is the writeOp of write(2): a socket that must not block is
// written with send(MSG_DONTWAIT).
func plainWrite(fd int, b []byte, dontwait bool) (int, error) {
	if dontwait {
		return sendNoWait(fd, b, 0)
	}
	return unix.Write(fd, b)
}

// sendNoWait sends b on socket fd without blocking.
func sendNoWait(fd int, b []byte, flags int) (int, error) {
	r, err := hostSyscall(unix.SYS_SENDTO, hInt(fd), hBuf(b), hInt(len(b)), hInt(flags|unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL), hInt(0), hInt(0))
	return int(r), err
}

// Read implements Linux syscall read(2).
func Read(t *Thread, a *SyscallArgs) (uint64, error) {
	e, err := t.P.fds.get(a.Int(0))
	if err != nil {
		return 0, err
	}
	if e.sigfd != nil {
		return t.readSignalfd(e, a.A[1], ioCount(a.A[2]))
	}
	if e.proc != nil && e.proc.mem != nil {
		return t.procMemIO(e, a.A[1], ioCount(a.A[2]), -1, false)
	}
	if err := t.waitIO(e, unix.POLLIN, ""); err != nil {
		return 0, err
	}
	return t.readInto(a.A[1], ioCount(a.A[2]), func(b []byte) (int, error) { return unix.Read(e.host, b) })
}

// Write implements Linux syscall write(2).
func Write(t *Thread, a *SyscallArgs) (uint64, error) {
	e, err := t.P.fds.get(a.Int(0))
	if err != nil {
		return 0, err
	}
	if e.proc != nil && e.proc.mem != nil {
		return t.procMemIO(e, a.A[1], ioCount(a.A[2]), -1, true)
	}
	return t.writeFrom(e, a.A[1], ioCount(a.A[2]), plainWrite)
}

// Pread64 implements Linux syscall pread64(2).
func Pread64(t *Thread, a *SyscallArgs) (uint64, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	if int64(a.A[3]) < 0 {
		return 0, unix.EINVAL
	}
	if e, _ := t.P.fds.get(a.Int(0)); e.proc != nil && e.proc.mem != nil {
		return t.procMemIO(e, a.A[1], ioCount(a.A[2]), int64(a.A[3]), false)
	}
	return t.readInto(a.A[1], ioCount(a.A[2]), func(b []byte) (int, error) { return unix.Pread(fd, b, int64(a.A[3])) })
}

// Pwrite64 implements Linux syscall pwrite64(2).
func Pwrite64(t *Thread, a *SyscallArgs) (uint64, error) {
	e, err := t.P.fds.get(a.Int(0))
	if err != nil {
		return 0, err
	}
	if int64(a.A[3]) < 0 {
		return 0, unix.EINVAL
	}
	if e.proc != nil && e.proc.mem != nil {
		return t.procMemIO(e, a.A[1], ioCount(a.A[2]), int64(a.A[3]), true)
	}
	return t.writeFrom(e, a.A[1], ioCount(a.A[2]), func(fd int, b []byte, _ bool) (int, error) {
		return unix.Pwrite(fd, b, int64(a.A[3]))
	})
}

// vecRead reads into an iovec array with one host read.
func (t *Thread) vecRead(iovAddr, iovCnt uint64, read func(b []byte) (int, error)) (uint64, error) {
	iov, err := t.copyInIovecs(iovAddr, iovCnt)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, v := range iov {
		if end := v.base + v.len; end < v.base || end > taskSize {
			return 0, unix.EFAULT
		}
		total += int(v.len)
	}
	total = ioCount(uint64(total))
	b := t.buf(total)
	t.enterBlocking()
	n, err := retry(func() (int, error) { return read(b) })
	t.leaveBlocking()
	if err != nil {
		return 0, errno(err)
	}
	rest := b[:n]
	for _, v := range iov {
		k := min(int(v.len), len(rest))
		if err := t.CopyOut(v.base, rest[:k]); err != nil {
			return 0, err
		}
		rest = rest[k:]
	}
	return uint64(n), nil
}

// vecWrite gathers an iovec array and writes it as one write to e.
func (t *Thread) vecWrite(e *fdEntry, iovAddr, iovCnt uint64, op writeOp) (uint64, error) {
	iov, err := t.copyInIovecs(iovAddr, iovCnt)
	if err != nil {
		return 0, err
	}
	var data []byte
	for _, v := range iov {
		n := min(int(v.len), maxIO-len(data))
		start := len(data)
		data = append(data, make([]byte, n)...)
		if err := t.CopyIn(v.base, data[start:]); err != nil {
			return 0, err
		}
	}
	return t.writeData(e, data, op, 0)
}

// Readv implements Linux syscall readv(2).
func Readv(t *Thread, a *SyscallArgs) (uint64, error) {
	e, err := t.P.fds.get(a.Int(0))
	if err != nil {
		return 0, err
	}
	if err := t.waitIO(e, unix.POLLIN, ""); err != nil {
		return 0, err
	}
	return t.vecRead(a.A[1], a.A[2], func(b []byte) (int, error) { return unix.Read(e.host, b) })
}

// Writev implements Linux syscall writev(2).
func Writev(t *Thread, a *SyscallArgs) (uint64, error) {
	e, err := t.P.fds.get(a.Int(0))
	if err != nil {
		return 0, err
	}
	return t.vecWrite(e, a.A[1], a.A[2], plainWrite)
}

// Preadv implements Linux syscall preadv(2).
func Preadv(t *Thread, a *SyscallArgs) (uint64, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	return t.vecRead(a.A[1], a.A[2], func(b []byte) (int, error) { return unix.Pread(fd, b, int64(a.A[3])) })
}

// Pwritev implements Linux syscall pwritev(2).
func Pwritev(t *Thread, a *SyscallArgs) (uint64, error) {
	e, err := t.P.fds.get(a.Int(0))
	if err != nil {
		return 0, err
	}
	return t.vecWrite(e, a.A[1], a.A[2], func(fd int, b []byte, _ bool) (int, error) {
		return unix.Pwrite(fd, b, int64(a.A[3]))
	})
}

// Close implements Linux syscall close(2).
func Close(t *Thread, a *SyscallArgs) (uint64, error) {
	err := t.P.fds.close(a.Int(0))
	if err == unix.EBADF {
		return 0, err
	}
	return 0, nil // like Linux, the descriptor is gone even if the close failed
}

// Lseek implements Linux syscall lseek(2).
func Lseek(t *Thread, a *SyscallArgs) (uint64, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	off, err := unix.Seek(fd, int64(a.A[1]), a.Int(2))
	return uint64(off), errno(err)
}

// Dup implements Linux syscall dup(2).
func Dup(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.dupFD(a.Int(0), 0, false)
}

// dupFD duplicates guest fd onto the lowest free number >= min.
func (t *Thread) dupFD(fd, min int, cloexec bool) (uint64, error) {
	h, err := t.P.fds.host(fd)
	if err != nil {
		return 0, err
	}
	nh, err := unix.FcntlInt(uintptr(h), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return 0, errno(err)
	}
	nfd, err := t.P.fds.alloc(nh, cloexec, min)
	if err != nil {
		unix.Close(nh)
		return 0, err
	}
	t.P.fds.files[nfd].sigfd = t.P.fds.files[fd].sigfd.ref()
	return uint64(nfd), nil
}

// Dup2 implements Linux syscall dup2(2).
func Dup2(t *Thread, a *SyscallArgs) (uint64, error) {
	if a.Int(0) == a.Int(1) {
		if _, err := t.P.fds.get(a.Int(0)); err != nil {
			return 0, err
		}
		return uint64(a.Int(1)), nil
	}
	return t.dup3(a.Int(0), a.Int(1), 0)
}

// Dup3 implements Linux syscall dup3(2).
func Dup3(t *Thread, a *SyscallArgs) (uint64, error) {
	if a.Int(0) == a.Int(1) || a.Int(2)&^unix.O_CLOEXEC != 0 {
		return 0, unix.EINVAL
	}
	return t.dup3(a.Int(0), a.Int(1), a.Int(2))
}

func (t *Thread) dup3(old, nfd, flags int) (uint64, error) {
	h, err := t.P.fds.host(old)
	if err != nil {
		return 0, err
	}
	if nfd < 0 || nfd >= t.P.fds.limit {
		return 0, unix.EBADF
	}
	nh, err := unix.FcntlInt(uintptr(h), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return 0, errno(err)
	}
	sigfd := t.P.fds.files[old].sigfd.ref()
	t.P.fds.install(nfd, nh, flags&unix.O_CLOEXEC != 0)
	t.P.fds.files[nfd].sigfd = sigfd
	return uint64(nfd), nil
}

// Fcntl implements Linux syscall fcntl(2).
func Fcntl(t *Thread, a *SyscallArgs) (uint64, error) {
	fd := a.Int(0)
	e, err := t.P.fds.get(fd)
	if err != nil {
		return 0, err
	}
	cmd := a.Int(1)
	switch cmd {
	case unix.F_DUPFD, unix.F_DUPFD_CLOEXEC:
		if a.Int(2) < 0 {
			return 0, unix.EINVAL
		}
		return t.dupFD(fd, a.Int(2), cmd == unix.F_DUPFD_CLOEXEC)
	case unix.F_GETFD:
		if e.cloexec {
			return unix.FD_CLOEXEC, nil
		}
		return 0, nil
	case unix.F_SETFD:
		e.cloexec = a.A[2]&unix.FD_CLOEXEC != 0
		return 0, nil
	case unix.F_GETFL, unix.F_SETFL, unix.F_SETPIPE_SZ, unix.F_GETPIPE_SZ, unix.F_ADD_SEALS, unix.F_GET_SEALS,
		unix.F_GETOWN, unix.F_SETOWN, unix.F_GETSIG, unix.F_SETSIG, unix.F_GETLEASE, unix.F_SETLEASE, unix.F_NOTIFY:
		r, err := hostSyscall(unix.SYS_FCNTL, hInt(e.host), hInt(cmd), hInt(a.A[2]))
		return uint64(r), errno(err)
	case unix.F_GETLK, unix.F_SETLK, unix.F_SETLKW, unix.F_OFD_GETLK, unix.F_OFD_SETLK, unix.F_OFD_SETLKW:
		var fl [32]byte
		if err := t.CopyIn(a.A[2], fl[:]); err != nil {
			return 0, err
		}
		t.enterBlocking()
		r, err := hostSyscall(unix.SYS_FCNTL, hInt(e.host), hInt(cmd), hBuf(fl[:]))
		t.leaveBlocking()
		if err != nil {
			return 0, errno(err)
		}
		if cmd == unix.F_GETLK || cmd == unix.F_OFD_GETLK {
			if err := t.CopyOut(a.A[2], fl[:]); err != nil {
				return 0, err
			}
		}
		return uint64(r), nil
	}
	return 0, unix.EINVAL
}

// ioctl requests x/sys/unix does not name for amd64.
const (
	fionbio  = 0x5421
	fioasync = 0x5452
	fionclex = 0x5450
	fioclex  = 0x5451
	ficlone  = 0x40049409
)

// ioctlSizes are the ioctls ttd passes through: bytes copied in, bytes
// copied out; a negative size passes the argument by value.
var ioctlSizes = map[uint64][2]int{
	unix.TCGETS:     {0, 36},
	unix.TCSETS:     {36, 0},
	unix.TCSETSW:    {36, 0},
	unix.TCSETSF:    {36, 0},
	unix.TIOCGWINSZ: {0, 8},
	unix.TIOCSWINSZ: {8, 0},
	unix.TIOCINQ:    {0, 4},
	unix.TIOCGPGRP:  {0, 4},
	unix.TIOCSPGRP:  {4, 0},
	unix.TIOCGSID:   {0, 4},
	fionbio:         {4, 0},
	fioasync:        {4, 0},
	unix.TCFLSH:     {-1, 0},
	unix.TCXONC:     {-1, 0},
	unix.TCSBRK:     {-1, 0},
	unix.TIOCSCTTY:  {-1, 0},
	unix.TIOCNOTTY:  {-1, 0},
	unix.TIOCGPTN:   {0, 4},
	unix.TIOCSPTLCK: {4, 0},
}

// Ioctl implements Linux syscall ioctl(2) for terminals and FIONREAD.
func Ioctl(t *Thread, a *SyscallArgs) (uint64, error) {
	e, err := t.P.fds.get(a.Int(0))
	if err != nil {
		return 0, err
	}
	req := a.A[1] & 0xffffffff
	switch req {
	case fioclex:
		e.cloexec = true
		return 0, nil
	case fionclex:
		e.cloexec = false
		return 0, nil
	case ficlone:
		// cp's reflink attempt: the source is a descriptor.
		src, err := t.P.fds.get(a.Int(2))
		if err != nil {
			return 0, err
		}
		r, err := hostSyscall(unix.SYS_IOCTL, hInt(e.host), hInt(req), hInt(src.host))
		return uint64(r), errno(err)
	}
	sz, ok := ioctlSizes[req]
	if !ok {
		return 0, unix.ENOTTY
	}
	if sz[0] < 0 {
		r, err := hostSyscall(unix.SYS_IOCTL, hInt(e.host), hInt(req), hInt(a.A[2]))
		return uint64(r), errno(err)
	}
	b := make([]byte, max(sz[0], sz[1]))
	if sz[0] > 0 {
		if err := t.CopyIn(a.A[2], b[:sz[0]]); err != nil {
			return 0, err
		}
	}
	r, err := hostSyscall(unix.SYS_IOCTL, hInt(e.host), hInt(req), hBuf(b))
	if err != nil {
		return 0, errno(err)
	}
	if sz[1] > 0 {
		if err := t.CopyOut(a.A[2], b[:sz[1]]); err != nil {
			return 0, err
		}
	}
	return uint64(r), nil
}

// Pipe implements Linux syscall pipe(2).
func Pipe(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.pipe2(a.A[0], 0)
}

// Pipe2 implements Linux syscall pipe2(2).
func Pipe2(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.pipe2(a.A[0], a.Int(1))
}

func (t *Thread) pipe2(addr uint64, flags int) (uint64, error) {
	if flags&^(unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_DIRECT) != 0 {
		return 0, unix.EINVAL
	}
	var hp [2]int
	if err := unix.Pipe2(hp[:], flags|unix.O_CLOEXEC); err != nil {
		return 0, errno(err)
	}
	return t.installPair(addr, hp, flags&unix.O_CLOEXEC != 0)
}

// installPair gives two host descriptors guest numbers and writes them
// as int[2] at addr.
func (t *Thread) installPair(addr uint64, hp [2]int, cloexec bool) (uint64, error) {
	fds := t.P.fds
	a, err := fds.allocOrClose(hp[0], cloexec)
	if err != nil {
		unix.Close(hp[1])
		return 0, err
	}
	b, err := fds.allocOrClose(hp[1], cloexec)
	if err != nil {
		fds.close(a)
		return 0, err
	}
	var out [8]byte
	binary.LittleEndian.PutUint32(out[:], uint32(a))
	binary.LittleEndian.PutUint32(out[4:], uint32(b))
	if err := t.CopyOut(addr, out[:]); err != nil {
		fds.close(a)
		fds.close(b)
		return 0, err
	}
	return 0, nil
}

// Ftruncate implements Linux syscall ftruncate(2).
func Ftruncate(t *Thread, a *SyscallArgs) (uint64, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	return 0, errno(unix.Ftruncate(fd, int64(a.A[1])))
}

// Fsync implements Linux syscall fsync(2).
func Fsync(t *Thread, a *SyscallArgs) (uint64, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	return 0, errno(unix.Fsync(fd))
}

// Fdatasync implements Linux syscall fdatasync(2).
func Fdatasync(t *Thread, a *SyscallArgs) (uint64, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	return 0, errno(unix.Fdatasync(fd))
}

// Fadvise64 implements Linux syscall fadvise64(2).
func Fadvise64(t *Thread, a *SyscallArgs) (uint64, error) {
	e, err := t.P.fds.entry(a.Int(0)) // advice does not read a /proc file
	if err != nil {
		return 0, err
	}
	return 0, errno(unix.Fadvise(e.host, int64(a.A[1]), int64(a.A[2]), a.Int(3)))
}

// Flock implements Linux syscall flock(2).
func Flock(t *Thread, a *SyscallArgs) (uint64, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	t.enterBlocking()
	defer t.leaveBlocking()
	return 0, errno(unix.Flock(fd, a.Int(1)))
}

// Getdents64 implements Linux syscall getdents64(2).
func Getdents64(t *Thread, a *SyscallArgs) (uint64, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	n := min(ioCount(a.A[2]), 1<<20)
	return t.readInto(a.A[1], n, func(b []byte) (int, error) { return unix.Getdents(fd, b) })
}

// Fstat implements Linux syscall fstat(2).
func Fstat(t *Thread, a *SyscallArgs) (uint64, error) {
	e, err := t.P.fds.entry(a.Int(0))
	if err != nil {
		return 0, err
	}
	var st unix.Stat_t
	if e.proc != nil {
		err = unix.Stat(e.proc.statPath(), &st)
	} else {
		err = unix.Fstat(e.host, &st)
	}
	if err != nil {
		return 0, errno(err)
	}
	return 0, copyOutStruct(t, a.A[1], &st)
}

// Fstatfs implements Linux syscall fstatfs(2).
func Fstatfs(t *Thread, a *SyscallArgs) (uint64, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return 0, errno(err)
	}
	return 0, copyOutStruct(t, a.A[1], &st)
}
