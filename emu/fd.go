package emu

import (
	"os"
	"path"
	"strconv"

	"golang.org/x/sys/unix"
)

// fdEntry is one guest file descriptor: a host descriptor (always
// close-on-exec on the host) and the guest's FD_CLOEXEC flag.
type fdEntry struct {
	host    int
	cloexec bool
	// kind says whether I/O on the descriptor may block (see
	// blockio.go); shadow is a non-blocking duplicate of a pipe's open
	// file description (-1: none yet, -2: cannot have one).
	kind   fdKind
	shadow int
	// sigfd is the signalfd the descriptor is (signalfd.go), or nil.
	sigfd *signalFD
}

// newEntry returns the entry for host descriptor h.
func newEntry(h int, cloexec bool) *fdEntry {
	return &fdEntry{host: h, cloexec: cloexec, shadow: -1}
}

// closeHost closes the entry's host descriptors.
func (e *fdEntry) closeHost() error {
	if e.shadow >= 0 {
		unix.Close(e.shadow)
		e.shadow = -1
	}
	if e.sigfd != nil {
		e.sigfd.release()
		e.sigfd = nil
	}
	return unix.Close(e.host)
}

// fdTable maps guest file descriptor numbers to host descriptors. Guest
// numbers are allocated like the kernel does (lowest free); host numbers
// are whatever the host gives, so ttd's own descriptors never collide
// with the guest's. Threads share one table.
type fdTable struct {
	files []*fdEntry
	limit int
	// users counts the processes sharing the table beyond the first
	// (clone with CLONE_FILES).
	users int
}

// fork returns a copy of the table for a child process: each
// descriptor is duplicated, sharing its open file description (offset,
// status flags) as fork(2) does.
func (ft *fdTable) fork() (*fdTable, error) {
	n := &fdTable{limit: ft.limit, files: make([]*fdEntry, len(ft.files))}
	for fd, e := range ft.files {
		if e == nil {
			continue
		}
		h, err := unix.FcntlInt(uintptr(e.host), unix.F_DUPFD_CLOEXEC, 3)
		if err != nil {
			n.closeAll()
			return nil, err
		}
		n.files[fd] = &fdEntry{host: h, cloexec: e.cloexec, kind: e.kind, shadow: -1, sigfd: e.sigfd.ref()}
	}
	return n, nil
}

// release drops one process's use of the table; the last one closes
// every descriptor.
func (ft *fdTable) release() {
	if ft.users > 0 {
		ft.users--
		return
	}
	ft.closeAll()
}

// newFDTable returns a table whose 0, 1 and 2 are duplicates of the given
// host files (nil: the host's own), and whose descriptors numbered as in
// inherit are duplicates of those host descriptors.
func newFDTable(inherit []int, stdio ...*os.File) (*fdTable, error) {
	ft := &fdTable{limit: 1 << 20}
	for i, f := range stdio {
		hostFD := i
		if f != nil {
			hostFD = int(f.Fd())
		}
		nfd, err := unix.FcntlInt(uintptr(hostFD), unix.F_DUPFD_CLOEXEC, 3)
		if err != nil {
			// A closed standard descriptor stays closed for the guest.
			ft.files = append(ft.files, nil)
			continue
		}
		ft.files = append(ft.files, newEntry(nfd, false))
	}
	for _, fd := range inherit {
		if fd < 3 || fd >= ft.limit {
			continue
		}
		nfd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 3)
		if err != nil {
			continue // closed since: the guest does not see it either
		}
		for len(ft.files) <= fd {
			ft.files = append(ft.files, nil)
		}
		if ft.files[fd] != nil {
			unix.Close(ft.files[fd].host)
		}
		ft.files[fd] = newEntry(nfd, false)
	}
	return ft, nil
}

// InheritedFDs lists the descriptors above 2 this process inherited
// (those open and not close-on-exec), which a guest it runs inherits in
// turn (Config.Inherit).
func InheritedFDs() []int {
	// Raw system calls: os.Open would start Go's poller, whose own
	// descriptors would then be listed.
	dir, err := unix.Open("/proc/self/fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	var names []string
	buf := make([]byte, 4096)
	for {
		n, err := unix.ReadDirent(dir, buf)
		if err != nil || n <= 0 {
			break
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
	unix.Close(dir)
	var fds []int
	for _, name := range names {
		fd, err := strconv.Atoi(name)
		if err != nil || fd < 3 {
			continue
		}
		// An inherited descriptor came through exec, so it is not
		// close-on-exec; ttd's own (the Go runtime's poller and cgroup
		// files, the directory read here) all are.
		if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && fl&unix.FD_CLOEXEC == 0 {
			fds = append(fds, fd)
		}
	}
	return fds
}

// get returns the entry of guest fd.
func (ft *fdTable) get(fd int) (*fdEntry, error) {
	if fd < 0 || fd >= len(ft.files) || ft.files[fd] == nil {
		return nil, unix.EBADF
	}
	return ft.files[fd], nil
}

// host returns the host descriptor behind guest fd.
func (ft *fdTable) host(fd int) (int, error) {
	e, err := ft.get(fd)
	if err != nil {
		return -1, err
	}
	return e.host, nil
}

// alloc installs host descriptor h at the lowest free guest number >= min.
func (ft *fdTable) alloc(h int, cloexec bool, min int) (int, error) {
	for fd := min; ; fd++ {
		if fd >= ft.limit {
			return -1, unix.EMFILE
		}
		if fd >= len(ft.files) {
			for len(ft.files) <= fd {
				ft.files = append(ft.files, nil)
			}
		}
		if ft.files[fd] == nil {
			ft.files[fd] = newEntry(h, cloexec)
			return fd, nil
		}
	}
}

// allocOrClose is alloc that closes h when no number is free.
func (ft *fdTable) allocOrClose(h int, cloexec bool) (int, error) {
	fd, err := ft.alloc(h, cloexec, 0)
	if err != nil {
		unix.Close(h)
	}
	return fd, err
}

// install puts host descriptor h at guest number fd, closing what was
// there.
func (ft *fdTable) install(fd, h int, cloexec bool) error {
	if fd < 0 || fd >= ft.limit {
		return unix.EBADF
	}
	for len(ft.files) <= fd {
		ft.files = append(ft.files, nil)
	}
	if old := ft.files[fd]; old != nil {
		old.closeHost()
	}
	ft.files[fd] = newEntry(h, cloexec)
	return nil
}

// close closes guest fd.
func (ft *fdTable) close(fd int) error {
	e, err := ft.get(fd)
	if err != nil {
		return err
	}
	ft.files[fd] = nil
	return e.closeHost()
}

func (ft *fdTable) closeAll() {
	for fd, e := range ft.files {
		if e != nil {
			e.closeHost()
			ft.files[fd] = nil
		}
	}
}

// fsState is the guest's view of the file system: its working directory,
// kept as a host directory descriptor so that the host process's own
// working directory is never changed.
type fsState struct {
	cwdFD int
	// umask is the process's file mode creation mask (Linux keeps it
	// in fs_struct too: shared with CLONE_FS, copied by fork).
	umask uint32
	// users counts the processes sharing it beyond the first
	// (CLONE_FS).
	users int
}

// fork returns a copy for a child process.
func (fs *fsState) fork() (*fsState, error) {
	fd, err := unix.FcntlInt(uintptr(fs.cwdFD), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, err
	}
	return &fsState{cwdFD: fd, umask: fs.umask}, nil
}

// release drops one process's use of it.
func (fs *fsState) release() {
	if fs.users > 0 {
		fs.users--
		return
	}
	fs.close()
}

func newFSState(dir string) (*fsState, error) {
	if dir == "" {
		dir = "."
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return &fsState{cwdFD: fd, umask: uint32(hostUmask())}, nil
}

// hostUmask returns the host process's umask.
func hostUmask() int {
	old := unix.Umask(0o22)
	unix.Umask(old)
	return old
}

// applyUmask makes the host apply the guest process's umask to the
// files the next host call creates (the host's umask is one for all
// guest processes; the scheduler runs one guest syscall at a time).
func (t *Thread) applyUmask() {
	m, u := t.P.m, int(t.P.fs.umask)
	if !m.umaskSet {
		m.hostUmask, m.umaskSet = hostUmask(), true
		m.curUmask = m.hostUmask
	}
	if m.curUmask != u {
		unix.Umask(u)
		m.curUmask = u
	}
}

// restoreUmask gives the host process its own umask back.
func (m *Machine) restoreUmask() {
	if m.umaskSet && m.curUmask != m.hostUmask {
		unix.Umask(m.hostUmask)
		m.curUmask = m.hostUmask
	}
}

func (fs *fsState) close() {
	if fs.cwdFD >= 0 {
		unix.Close(fs.cwdFD)
		fs.cwdFD = -1
	}
}

// open opens path relative to the guest's working directory; the host
// descriptor is close-on-exec.
func (fs *fsState) open(p string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat(fs.cwdFD, p, flags|unix.O_CLOEXEC, mode)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// cwd returns the working directory's absolute path.
func (fs *fsState) cwd() (string, error) {
	return os.Readlink("/proc/self/fd/" + strconv.Itoa(fs.cwdFD))
}

// abs makes p absolute relative to the working directory.
func (fs *fsState) abs(p string) (string, error) {
	if path.IsAbs(p) {
		return path.Clean(p), nil
	}
	wd, err := fs.cwd()
	if err != nil {
		return "", err
	}
	return path.Join(wd, p), nil
}

// chdirFD makes the directory open as host descriptor fd (which fsState
// takes over) the working directory.
func (fs *fsState) chdirFD(fd int) {
	unix.Close(fs.cwdFD)
	fs.cwdFD = fd
}

// HostFD returns the host descriptor behind the process's guest
// descriptor fd (a recorder asks whether fd 1 is still the terminal or a
// pipe to another process of the tree).
func (p *Process) HostFD(fd int) (int, bool) {
	if p.fds == nil {
		return 0, false
	}
	h, err := p.fds.host(fd)
	return h, err == nil
}
