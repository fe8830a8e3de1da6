package emu

import (
	"path"

	"golang.org/x/sys/unix"
)

// inotify is the host's: each guest instance is a host inotify
// descriptor, its watches the host's (watch descriptors count from 1 per
// instance, as the guest expects), and its events are read through the
// descriptor as from any other that can block (blockio.go), which also
// puts them in a recording as what the read wrote.

// InotifyInit implements Linux syscall inotify_init(2).
func InotifyInit(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.inotifyInit(0)
}

// InotifyInit1 implements Linux syscall inotify_init1(2).
func InotifyInit1(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.inotifyInit(a.Int(0))
}

func (t *Thread) inotifyInit(flags int) (uint64, error) {
	if flags&^(unix.IN_NONBLOCK|unix.IN_CLOEXEC) != 0 {
		return 0, unix.EINVAL
	}
	h, err := unix.InotifyInit1(flags | unix.IN_CLOEXEC)
	if err != nil {
		return 0, errno(err)
	}
	return t.installFD(h, flags&unix.IN_CLOEXEC != 0)
}

// InotifyAddWatch implements Linux syscall inotify_add_watch(2). A
// relative path is the guest's working directory's.
func InotifyAddWatch(t *Thread, a *SyscallArgs) (uint64, error) {
	h, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	p, err := t.copyInPath(a.A[1])
	if err != nil {
		return 0, err
	}
	if p == "" {
		return 0, unix.ENOENT
	}
	p = t.procPath(p)
	if !path.IsAbs(p) {
		p = "/proc/self/fd/" + itoa(t.P.fs.cwdFD) + "/" + p
	}
	wd, err := unix.InotifyAddWatch(h, p, uint32(a.A[2]))
	if err != nil {
		return 0, errno(err)
	}
	return uint64(wd), nil
}

// InotifyRmWatch implements Linux syscall inotify_rm_watch(2).
func InotifyRmWatch(t *Thread, a *SyscallArgs) (uint64, error) {
	h, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	_, err = unix.InotifyRmWatch(h, uint32(a.A[1]))
	return 0, errno(err)
}
