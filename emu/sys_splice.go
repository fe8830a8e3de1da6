package emu

import (
	"golang.org/x/sys/unix"
)

// The calls that move bytes between descriptors inside the kernel:
// sendfile, copy_file_range, splice and tee. When Config.KeepMoved picks
// the destination (the recorder: the recording's output), the bytes go
// through a buffer of ttd's instead (moveKept), so that the observer
// sees them as it sees a write's.

// keptMoveMax caps the bytes one kept move copies (a short count, which
// every one of these calls allows).
const keptMoveMax = 1 << 20

// keepMoved says whether the bytes moved to guest descriptor fd must
// reach the observer.
func (t *Thread) keepMoved(fd int) bool {
	k := t.P.cfg.KeepMoved
	return k != nil && t.P.obs != nil && k(t.P, fd)
}

// offsetArg reads the loff_t a pointer argument points at (nil for a
// null pointer).
func (t *Thread) offsetArg(addr uint64) (*int64, error) {
	if addr == 0 {
		return nil, nil
	}
	v, err := t.readU64(addr)
	if err != nil {
		return nil, err
	}
	off := int64(v)
	if off < 0 {
		return nil, unix.EINVAL
	}
	return &off, nil
}

// offsetBack writes an advanced offset back to the guest's loff_t.
func (t *Thread) offsetBack(addr uint64, off *int64) error {
	if off == nil {
		return nil
	}
	return t.writeU64(addr, uint64(*off))
}

// moveKept moves at most n bytes from in to out through a buffer, from
// and to the offsets given (nil: the descriptor's own), and keeps them
// in t.moved. The caller has waited until in is readable and out
// writable. Bytes read but not written go back to a seekable source; a
// pipe's are lost as a failed host write would lose them.
func (t *Thread) moveKept(in *fdEntry, inOff *int64, out *fdEntry, outOff *int64, n int) (int, error) {
	n = min(n, keptMoveMax)
	if out.kindOf() != kindFile {
		n = min(n, pipeBuf)
	}
	b := t.buf(n)
	t.enterBlocking()
	defer t.leaveBlocking()
	k, err := retry(func() (int, error) {
		if inOff != nil {
			return unix.Pread(in.host, b, *inOff)
		}
		return unix.Read(in.host, b)
	})
	if err != nil || k == 0 {
		return 0, err
	}
	b = b[:k]
	done := 0
	for done < k {
		w, err := retry(func() (int, error) {
			if outOff != nil {
				return unix.Pwrite(out.host, b[done:], *outOff+int64(done))
			}
			return unix.Write(out.host, b[done:])
		})
		if err != nil {
			if done == 0 {
				if inOff == nil && in.kindOf() == kindFile {
					unix.Seek(in.host, -int64(k), unix.SEEK_CUR)
				}
				return 0, err
			}
			break
		}
		done += w
	}
	if done < k && inOff == nil && in.kindOf() == kindFile {
		unix.Seek(in.host, int64(done-k), unix.SEEK_CUR)
	}
	if inOff != nil {
		*inOff += int64(done)
	}
	if outOff != nil {
		*outOff += int64(done)
	}
	t.moved = b[:done]
	return done, nil
}

// Sendfile implements Linux syscall sendfile(2). To a pipe or socket it
// moves at most PIPE_BUF bytes once there is room, so that it never
// blocks the other threads.
func Sendfile(t *Thread, a *SyscallArgs) (uint64, error) {
	oe, err := t.P.fds.get(a.Int(0))
	if err != nil {
		return 0, err
	}
	out := oe.host
	count := ioCount(a.A[3])
	if oe.kindOf() != kindFile {
		if err := t.waitIO(oe, unix.POLLOUT, ""); err != nil {
			return 0, err
		}
		count = min(count, pipeBuf)
	}
	ie, err := t.P.fds.get(a.Int(1))
	if err != nil {
		return 0, err
	}
	offp, err := t.offsetArg(a.A[2])
	if err != nil {
		return 0, err
	}
	var n int
	if t.keepMoved(a.Int(0)) {
		// Linux's own checks first: a zero count moves nothing.
		if _, err := unix.Sendfile(out, ie.host, offp, 0); err != nil {
			return 0, errno(err)
		}
		// A pipe or socket source: wait for data as Linux's sendfile
		// does, rather than block every thread in the host read.
		if err := t.waitIO(ie, unix.POLLIN, "data to send"); err != nil {
			return 0, err
		}
		n, err = t.moveKept(ie, offp, oe, nil, count)
	} else {
		t.enterBlocking()
		n, err = retry(func() (int, error) { return unix.Sendfile(out, ie.host, offp, count) })
		t.leaveBlocking()
	}
	t.sigpipe(err, 0)
	if err != nil {
		return 0, errno(err)
	}
	return uint64(n), t.offsetBack(a.A[2], offp)
}

// CopyFileRange implements Linux syscall copy_file_range(2).
func CopyFileRange(t *Thread, a *SyscallArgs) (uint64, error) {
	ie, oe, err := t.fdPair(a, 0, 2)
	if err != nil {
		return 0, err
	}
	pIn, pOut, err := t.offsetPair(a)
	if err != nil {
		return 0, err
	}
	var n int
	if t.keepMoved(a.Int(2)) {
		// Linux's checks (both regular files, no overlap, no
		// O_APPEND, flags 0) run before a zero count returns.
		if _, err := unix.CopyFileRange(ie.host, pIn, oe.host, pOut, 0, a.Int(5)); err != nil {
			return 0, errno(err)
		}
		n, err = t.moveKept(ie, pIn, oe, pOut, ioCount(a.A[4]))
	} else {
		n, err = unix.CopyFileRange(ie.host, pIn, oe.host, pOut, ioCount(a.A[4]), a.Int(5))
	}
	if err != nil {
		return 0, errno(err)
	}
	return uint64(n), t.offsetsBack(a, pIn, pOut)
}

// fdPair returns the descriptors of arguments in and out.
func (t *Thread) fdPair(a *SyscallArgs, in, out int) (*fdEntry, *fdEntry, error) {
	ie, err := t.P.fds.get(a.Int(in))
	if err != nil {
		return nil, nil, err
	}
	oe, err := t.P.fds.get(a.Int(out))
	return ie, oe, err
}

// offsetPair reads the offsets of splice and copy_file_range
// (arguments 1 and 3).
func (t *Thread) offsetPair(a *SyscallArgs) (*int64, *int64, error) {
	pIn, err := t.offsetArg(a.A[1])
	if err != nil {
		return nil, nil, err
	}
	pOut, err := t.offsetArg(a.A[3])
	return pIn, pOut, err
}

// offsetsBack writes offsetPair's offsets back, advanced.
func (t *Thread) offsetsBack(a *SyscallArgs, pIn, pOut *int64) error {
	if err := t.offsetBack(a.A[1], pIn); err != nil {
		return err
	}
	return t.offsetBack(a.A[3], pOut)
}

// waitSplice waits, like a blocking splice or tee, until in has data and
// out has room; SPLICE_F_NONBLOCK does not wait (the host call then says
// EAGAIN).
func (t *Thread) waitSplice(in, out *fdEntry, flags int) error {
	if flags&unix.SPLICE_F_NONBLOCK != 0 {
		return nil
	}
	if err := t.waitIO(in, unix.POLLIN, "data to splice"); err != nil {
		return err
	}
	return t.waitIO(out, unix.POLLOUT, "room to splice into")
}

// Splice implements Linux syscall splice(2). One side must be a pipe, as
// Linux requires (the host checks it). To a pipe or socket it moves at
// most PIPE_BUF bytes once there is room, so that it never blocks the
// other threads.
func Splice(t *Thread, a *SyscallArgs) (uint64, error) {
	ie, oe, err := t.fdPair(a, 0, 2)
	if err != nil {
		return 0, err
	}
	flags := a.Int(5)
	if err := t.waitSplice(ie, oe, flags); err != nil {
		return 0, err
	}
	pIn, pOut, err := t.offsetPair(a)
	if err != nil {
		return 0, err
	}
	count := ioCount(a.A[4])
	if oe.kindOf() != kindFile {
		count = min(count, pipeBuf)
	}
	var n int64
	if t.keepMoved(a.Int(2)) {
		if ie.kindOf() != kindPipe && oe.kindOf() != kindPipe {
			return 0, unix.EINVAL
		}
		if (pIn != nil && ie.kindOf() == kindPipe) || (pOut != nil && oe.kindOf() == kindPipe) {
			return 0, unix.ESPIPE
		}
		var k int
		k, err = t.moveKept(ie, pIn, oe, pOut, count)
		n = int64(k)
	} else {
		t.enterBlocking()
		n, err = unix.Splice(ie.host, pIn, oe.host, pOut, count, flags)
		for err == unix.EINTR {
			n, err = unix.Splice(ie.host, pIn, oe.host, pOut, count, flags)
		}
		t.leaveBlocking()
	}
	t.sigpipe(err, 0)
	if err != nil {
		return 0, errno(err)
	}
	return uint64(n), t.offsetsBack(a, pIn, pOut)
}

// Tee implements Linux syscall tee(2): it copies bytes from one pipe to
// another without consuming them. Kept bytes are read back through a
// second tee into a pipe of ttd's.
func Tee(t *Thread, a *SyscallArgs) (uint64, error) {
	ie, oe, err := t.fdPair(a, 0, 1)
	if err != nil {
		return 0, err
	}
	flags := a.Int(3)
	if err := t.waitSplice(ie, oe, flags); err != nil {
		return 0, err
	}
	count := min(ioCount(a.A[2]), pipeBuf)
	t.enterBlocking()
	n, err := unix.Tee(ie.host, oe.host, count, flags)
	for err == unix.EINTR {
		n, err = unix.Tee(ie.host, oe.host, count, flags)
	}
	t.leaveBlocking()
	if err != nil {
		return 0, errno(err)
	}
	if n > 0 && t.keepMoved(a.Int(1)) {
		t.moved = t.peekPipe(ie.host, int(n))
	}
	return uint64(n), nil
}

// peekPipe returns the first n bytes in host pipe h without consuming
// them (nil if the host refuses).
func (t *Thread) peekPipe(h, n int) []byte {
	var p [2]int
	if unix.Pipe2(p[:], unix.O_CLOEXEC) != nil {
		return nil
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	k, err := unix.Tee(h, p[1], n, unix.SPLICE_F_NONBLOCK)
	if err != nil {
		return nil
	}
	b := t.buf(int(k))
	got := 0
	for got < len(b) {
		r, err := unix.Read(p[0], b[got:])
		if err != nil || r == 0 {
			break
		}
		got += r
	}
	return b[:got]
}
