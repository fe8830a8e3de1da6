package emu

import (
	"golang.org/x/sys/unix"
)

// I/O that may block. Guest threads share the process goroutine, so a
// host read or write that blocks would stop every thread. Before a read
// (or accept, recv) on a descriptor that can block (a pipe, socket,
// terminal or other device), the handler polls it: when nothing is ready
// and the guest did not ask for non-blocking I/O, the thread blocks (a
// helper goroutine polls the descriptor) and the handler runs again when
// it is ready. Writes are done without blocking: on sockets with
// MSG_DONTWAIT, on pipes through a non-blocking duplicate of the pipe's
// open file description; what does not fit waits for room, so a blocking
// write still moves all its bytes, as on Linux.

// fdKind classifies descriptors by whether I/O on them may block.
type fdKind uint8

const (
	kindUnknown fdKind = iota
	kindFile           // regular files, directories, block devices: never block
	kindPipe           // pipes and FIFOs
	kindSocket
	kindOther // terminals, character devices, eventfd, timerfd, epoll…
)

// pipeBuf is PIPE_BUF: a write of at most this many bytes to a pipe with
// room for it never blocks.
const pipeBuf = 4096

// kindOf returns e's kind, finding it on first use.
func (e *fdEntry) kindOf() fdKind {
	if e.kind == kindUnknown {
		var st unix.Stat_t
		e.kind = kindOther
		if unix.Fstat(e.host, &st) == nil {
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFREG, unix.S_IFDIR, unix.S_IFBLK, unix.S_IFLNK:
				e.kind = kindFile
			case unix.S_IFIFO:
				e.kind = kindPipe
			case unix.S_IFSOCK:
				e.kind = kindSocket
			}
		}
	}
	return e.kind
}

// hostNonblocking reports whether the guest made host descriptor h's
// open file description non-blocking.
func hostNonblocking(h int) bool {
	fl, err := unix.FcntlInt(uintptr(h), unix.F_GETFL, 0)
	return err == nil && fl&unix.O_NONBLOCK != 0
}

// pollNow reports whether host descriptor h has one of events (or an
// error or hang-up) now.
func pollNow(h int, events int16) bool {
	fds := []unix.PollFd{{Fd: int32(h), Events: events}}
	n, err := retry(func() (int, error) { return unix.Poll(fds, 0) })
	return err != nil || n > 0
}

// waitIO returns nil when an I/O call for events on e will not block; it
// returns errBlock to wait until it will, or errRestartSys when a signal
// interrupts the wait.
func (t *Thread) waitIO(e *fdEntry, events int16, what string) error {
	if e.kindOf() == kindFile || pollNow(e.host, events) || hostNonblocking(e.host) {
		return nil
	}
	if t.interrupted() {
		return errRestartSys
	}
	return t.sleep(wait{what: what, fds: []unix.PollFd{{Fd: int32(e.host), Events: events}}})
}

// waitFD is waitIO for guest descriptor fd.
func (t *Thread) waitFD(fd int, events int16, what string) error {
	e, err := t.P.fds.get(fd)
	if err != nil {
		return err
	}
	return t.waitIO(e, events, what)
}

// shadowFD returns a non-blocking descriptor for e's pipe, or -1.
func (e *fdEntry) shadowFD() int {
	if e.shadow == -1 {
		e.shadow = -2
		fl, err := unix.FcntlInt(uintptr(e.host), unix.F_GETFL, 0)
		if err == nil {
			// Opening the pipe through /proc makes a new open file
			// description of the same pipe, whose O_NONBLOCK is ours.
			h, err := unix.Open("/proc/self/fd/"+itoa(e.host), fl&unix.O_ACCMODE|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
			if err == nil {
				e.shadow = h
			}
		}
	}
	if e.shadow < 0 {
		return -1
	}
	return e.shadow
}

// writeOp writes b to host descriptor fd; dontwait asks a socket not to
// block (MSG_DONTWAIT).
type writeOp func(fd int, b []byte, dontwait bool) (int, error)

// writeBlocking writes data to e as a blocking write does, without ever
// blocking the process goroutine: what the descriptor cannot take now
// waits for room (the handler runs again with t.ioDone bytes done). A
// signal ends the wait: the bytes written so far are the result, or
// ERESTARTSYS if there are none.
func (t *Thread) writeBlocking(e *fdEntry, data []byte, op writeOp) (int, error) {
	k := e.kindOf()
	if k == kindFile {
		return retry(func() (int, error) { return op(e.host, data, false) })
	}
	done := t.ioDone
	for done < len(data) {
		var n int
		var err error
		switch {
		case k == kindSocket:
			n, err = retry(func() (int, error) { return op(e.host, data[done:], true) })
		case k == kindPipe && e.shadowFD() >= 0:
			n, err = retry(func() (int, error) { return op(e.shadow, data[done:], false) })
		case pollNow(e.host, unix.POLLOUT):
			// Room for at least PIPE_BUF bytes.
			chunk := data[done:]
			if len(chunk) > pipeBuf && k != kindOther {
				chunk = chunk[:pipeBuf]
			}
			n, err = retry(func() (int, error) { return op(e.host, chunk, false) })
		default:
			err = unix.EAGAIN
		}
		if err == unix.EAGAIN {
			if hostNonblocking(e.host) {
				break
			}
			if t.interrupted() {
				if done > 0 {
					return done, nil
				}
				return 0, errRestartSys
			}
			t.ioDone = done
			return 0, t.sleep(wait{what: "room to write on a pipe or socket",
				fds: []unix.PollFd{{Fd: int32(e.host), Events: unix.POLLOUT}}})
		}
		if err != nil {
			if done > 0 {
				return done, nil
			}
			return 0, err
		}
		done += n
	}
	if done == 0 && len(data) > 0 {
		return 0, unix.EAGAIN
	}
	return done, nil
}
