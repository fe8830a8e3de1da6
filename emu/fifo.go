package emu

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Opening a FIFO without O_NONBLOCK blocks until the other end is open:
// a reader waits for a writer and a writer for a reader. The host's open
// would stop every guest thread, the other end's among them (guest
// threads share one goroutine), so such an open runs on a helper
// goroutine while the thread blocks; the helper's eventfd wakes it.

// fifoOpen is a blocking FIFO open in progress.
type fifoOpen struct {
	efd int // written when the open returns
	// dfd, p and flags name the FIFO again for abandon.
	dfd       int
	p         string
	flags     int
	mu        sync.Mutex
	done      bool
	abandoned bool          // the guest's call was interrupted: close what comes
	finished  chan struct{} // closed when the helper is done
	h         int
	err       error
}

// blockingFIFO reports whether opening path p (relative to host
// directory dfd) with flags would block on a FIFO.
func blockingFIFO(dfd int, p string, flags int) bool {
	if flags&unix.O_NONBLOCK != 0 || flags&unix.O_ACCMODE == unix.O_RDWR || flags&unix.O_PATH != 0 {
		return false
	}
	var st unix.Stat_t
	at := 0
	if flags&unix.O_NOFOLLOW != 0 {
		at = unix.AT_SYMLINK_NOFOLLOW
	}
	return unix.Fstatat(dfd, p, &st, at) == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO
}

// openFIFO opens a FIFO as a blocking open does, without blocking the
// guest's other threads: it returns the host descriptor, or errBlock
// until the other end is open, or errRestartSys when a signal ends the
// wait.
func (t *Thread) openFIFO(dfd int, p string, flags int, mode uint32) (int, error) {
	fo := t.fifo
	if fo == nil {
		efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
		if err != nil {
			return -1, errno(err)
		}
		// The helper's own copy of the directory: the guest may close
		// or change its own meanwhile.
		d, err := unix.FcntlInt(uintptr(dfd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			unix.Close(efd)
			return -1, errno(err)
		}
		d2, err := unix.FcntlInt(uintptr(dfd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			unix.Close(efd)
			unix.Close(d)
			return -1, errno(err)
		}
		fo = &fifoOpen{efd: efd, h: -1, dfd: d2, p: p, flags: flags, finished: make(chan struct{})}
		t.fifo = fo
		go fo.run(d, p, flags|unix.O_CLOEXEC|unix.O_LARGEFILE, mode)
	}
	fo.mu.Lock()
	done := fo.done
	fo.mu.Unlock()
	if done {
		t.fifo = nil
		unix.Close(fo.efd)
		unix.Close(fo.dfd)
		return fo.h, fo.err
	}
	if t.interrupted() {
		t.fifo = nil
		fo.abandon()
		return -1, errRestartSys
	}
	return -1, t.sleep(wait{what: "the other end of a FIFO", fds: []unix.PollFd{{Fd: int32(fo.efd), Events: unix.POLLIN}}})
}

// run opens the FIFO on the helper goroutine (dfd is its own, closed
// after).
func (fo *fifoOpen) run(dfd int, p string, flags int, mode uint32) {
	fo.mu.Lock()
	skip := fo.abandoned
	fo.mu.Unlock()
	h, err := -1, error(unix.EINTR)
	if !skip {
		h, err = retry(func() (int, error) { return unix.Openat(dfd, p, flags, mode) })
	}
	unix.Close(dfd)
	fo.mu.Lock()
	defer fo.mu.Unlock()
	defer close(fo.finished)
	fo.done = true
	if fo.abandoned {
		if err == nil {
			unix.Close(h)
		}
		unix.Close(fo.efd)
		return
	}
	fo.h, fo.err = h, err
	if err != nil {
		fo.err = errno(err)
	}
	var one = [8]byte{1}
	unix.Write(fo.efd, one[:])
}

// abandon ends an open the guest no longer waits for. On Linux the
// interrupted opener is gone at once; the helper's host open still
// waits, counted as a reader (or writer) of the FIFO, so abandon opens
// the other end for an instant, which lets it return, and the helper
// closes what it gets before abandon returns (the guest's next open
// must not find it). The helper may not have reached its open yet:
// until it is done, abandon tries again.
func (fo *fifoOpen) abandon() {
	fo.mu.Lock()
	if fo.done {
		if fo.err == nil {
			unix.Close(fo.h)
		}
		unix.Close(fo.efd)
		unix.Close(fo.dfd)
		fo.mu.Unlock()
		return
	}
	fo.abandoned = true
	fo.mu.Unlock()
	other := unix.O_WRONLY
	if fo.flags&unix.O_ACCMODE == unix.O_WRONLY {
		other = unix.O_RDONLY
	}
	defer unix.Close(fo.dfd)
	for {
		if h, err := unix.Openat(fo.dfd, fo.p, other|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err == nil {
			unix.Close(h)
		}
		select {
		case <-fo.finished:
			return
		case <-time.After(100 * time.Microsecond):
		}
	}
}
