package emu

import (
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// Path-based syscalls. Every relative path is resolved against the
// guest's working directory through the *at host calls, so the host
// process's own working directory is never used.

// dirFD returns the host directory descriptor for a guest dirfd argument
// and the path it applies to.
func (t *Thread) dirFD(dirfd int, p string) (int, error) {
	if dirfd == unix.AT_FDCWD || path.IsAbs(p) {
		return t.P.fs.cwdFD, nil
	}
	return t.P.fds.host(dirfd)
}

// statAt is dirFD for stat and statx: an empty path names dirfd itself,
// which for a /proc file (procFile) stats the host's file of that name
// instead of the in-memory one, without filling it.
func (t *Thread) statAt(dirfd int, p string) (int, string, error) {
	if p == "" && dirfd != unix.AT_FDCWD {
		e, err := t.P.fds.entry(dirfd)
		if err != nil {
			return -1, "", err
		}
		if e.proc != nil {
			return t.P.fs.cwdFD, e.proc.statPath(), nil
		}
		return e.host, p, nil
	}
	fd, err := t.dirFD(dirfd, p)
	return fd, p, err
}

// pathArgs reads the (dirfd, path) pair at arguments i and i+1; dirfd
// may be AT_FDCWD. With at false, only the path at argument i is read.
func (t *Thread) pathAt(a *SyscallArgs, i int, at bool) (int, string, error) {
	pi, dirfd := i, unix.AT_FDCWD
	if at {
		pi, dirfd = i+1, a.Int(i)
	}
	p, err := t.copyInPath(a.A[pi])
	if err != nil {
		return -1, "", err
	}
	fd, err := t.dirFD(dirfd, p)
	return fd, p, err
}

// procSelf rewrites /proc/self paths whose host meaning differs from the
// guest's; ok is false for paths ttd answers itself.
func (t *Thread) procSelfExe(p string) bool {
	switch p {
	case "/proc/self/exe", "/proc/thread-self/exe":
		return true
	}
	return strings.HasPrefix(p, "/proc/") && strings.HasSuffix(p, "/exe") &&
		strings.TrimSuffix(strings.TrimPrefix(p, "/proc/"), "/exe") == itoa(t.P.PID)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// openat opens a file for the guest.
func (t *Thread) openat(dirfd int, pathAddr uint64, flags int, mode uint32) (uint64, error) {
	p, err := t.copyInPath(pathAddr)
	if err != nil {
		return 0, err
	}
	if p == "" {
		return 0, unix.ENOENT
	}
	p = devFDPath(p)
	if h, own, ok, err := t.procDir(p); ok {
		if err != nil {
			return 0, err
		}
		fd, err := t.installFD(h, flags&unix.O_CLOEXEC != 0)
		if err == nil && own != "" {
			if err := t.listOwnFD(own, int(fd)); err != nil {
				return 0, err
			}
		}
		return fd, err
	}
	if h, fill, ok, err := t.procFile(p); ok {
		if err != nil {
			return 0, err
		}
		fd, err := t.installFD(h, flags&unix.O_CLOEXEC != 0)
		if err == nil && fill != nil {
			t.P.fds.files[fd].proc = fill
		}
		return fd, err
	}
	p = t.procPath(p)
	dfd, err := t.dirFD(dirfd, p)
	if err != nil {
		return 0, err
	}
	if flags&(unix.O_CREAT|unix.O_TMPFILE) != 0 {
		t.applyUmask()
	}
	if t.fifo != nil || blockingFIFO(dfd, p, flags) {
		h, err := t.openFIFO(dfd, p, flags, mode)
		if err != nil {
			return 0, err
		}
		return t.installFD(h, flags&unix.O_CLOEXEC != 0)
	}
	t.enterBlocking()
	h, err := retry(func() (int, error) { return unix.Openat(dfd, p, flags|unix.O_CLOEXEC|unix.O_LARGEFILE, mode) })
	t.leaveBlocking()
	if err != nil {
		return 0, errno(err)
	}
	return t.installFD(h, flags&unix.O_CLOEXEC != 0)
}

// installFD gives host descriptor h a guest number.
func (t *Thread) installFD(h int, cloexec bool) (uint64, error) {
	fd, err := t.P.fds.allocOrClose(h, cloexec)
	return uint64(fd), err
}

// procFile answers the /proc files that describe the guest rather than
// ttd (its memory map and auxiliary vector) with an in-memory file.
// Linux writes such a file when it is read, not when it is opened (cat
// /proc/self/maps shows the buffer cat allocated after opening it): the
// file stays empty until the guest first uses its descriptor (fill).
func (t *Thread) procFile(p string) (int, *procFill, bool, error) {
	if path.Clean(p) == "/proc/cpuinfo" {
		// The guest's processor, not the host's (cpuid.go).
		h, ok, err := memFile(t.P.env.cpuinfo())
		return h, nil, ok, err
	}
	q, th, rest, ok := t.procTask(p)
	if !ok {
		return -1, nil, false, nil
	}
	if rest == "mem" && !q.released {
		h, ok, err := memFile(nil)
		return h, &procFill{rest: rest, mem: q}, ok, err
	}
	gen, ok := procGen(q, th, rest)
	if !ok {
		return -1, nil, false, nil
	}
	h, ok, err := memFile(nil)
	return h, &procFill{gen: gen, rest: rest, thread: th != nil}, ok, err
}

// procFill is the contents a /proc file's descriptor is still to be
// given, shared by the descriptors of its open file description.
type procFill struct {
	gen    func() []byte // nil once run
	rest   string
	thread bool // a thread's file
	// mem is the process whose memory the file is (/proc/PID/mem,
	// procmem.go).
	mem *Process
}

// statPath is the host file whose attributes the /proc file shows
// (a regular file, empty until read, with its mode).
func (f *procFill) statPath() string {
	if f.thread {
		return "/proc/thread-self/" + f.rest
	}
	return "/proc/self/" + f.rest
}

// fill writes the file's contents into host descriptor h, once.
func (f *procFill) fill(h int) {
	if f.gen == nil {
		return
	}
	data := f.gen()
	f.gen = nil
	for off := 0; off < len(data); {
		n, err := unix.Pwrite(h, data[off:], int64(off))
		if err != nil {
			return
		}
		off += n
	}
}

// memFile returns a host descriptor of an in-memory file holding data.
func memFile(data []byte) (int, bool, error) {
	fd, err := unix.MemfdCreate("ttd-proc", unix.MFD_CLOEXEC)
	if err != nil {
		return -1, true, errno(err)
	}
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if err != nil {
			unix.Close(fd)
			return -1, true, errno(err)
		}
		data = data[n:]
	}
	unix.Seek(fd, 0, 0)
	return fd, true, nil
}

// Open implements Linux syscall open(2).
func Open(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.openat(unix.AT_FDCWD, a.A[0], a.Int(1), uint32(a.A[2]))
}

// Openat implements Linux syscall openat(2).
func Openat(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.openat(a.Int(0), a.A[1], a.Int(2), uint32(a.A[3]))
}

// Creat implements Linux syscall creat(2).
func Creat(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.openat(unix.AT_FDCWD, a.A[0], unix.O_CREAT|unix.O_WRONLY|unix.O_TRUNC, uint32(a.A[1]))
}

// fstatat stats a path for the guest and writes struct stat at out.
func (t *Thread) fstatat(dirfd int, pathAddr uint64, out uint64, flags int) (uint64, error) {
	p, err := t.CopyInString(pathAddr, unix.PathMax)
	if err != nil {
		return 0, err
	}
	if p == "" && flags&unix.AT_EMPTY_PATH == 0 {
		return 0, unix.ENOENT
	}
	p = t.statPath(p, flags&unix.AT_SYMLINK_NOFOLLOW != 0)
	dfd, p, err := t.statAt(dirfd, p)
	if err != nil {
		return 0, err
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, p, &st, flags); err != nil {
		return 0, errno(err)
	}
	return 0, copyOutStruct(t, out, &st)
}

// statPath is procPath for stat and statx: without following the last
// link, the guest's /proc/PID/exe and /dev's links into /proc/self stay
// the links they are (ttd's own exe is a symlink too).
func (t *Thread) statPath(p string, nofollow bool) string {
	if nofollow {
		if _, rest, ok := t.procTarget(p); ok && rest == "exe" || isDevLink(p) {
			return p
		}
	}
	return t.procPath(p)
}

// Stat implements Linux syscall stat(2).
func Stat(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.fstatat(unix.AT_FDCWD, a.A[0], a.A[1], 0)
}

// Lstat implements Linux syscall lstat(2).
func Lstat(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.fstatat(unix.AT_FDCWD, a.A[0], a.A[1], unix.AT_SYMLINK_NOFOLLOW)
}

// Newfstatat implements Linux syscall newfstatat(2).
func Newfstatat(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.fstatat(a.Int(0), a.A[1], a.A[2], a.Int(3))
}

// Statx implements Linux syscall statx(2).
func Statx(t *Thread, a *SyscallArgs) (uint64, error) {
	p, err := t.CopyInString(a.A[1], unix.PathMax)
	if err != nil {
		return 0, err
	}
	p = t.statPath(p, a.Int(2)&unix.AT_SYMLINK_NOFOLLOW != 0)
	dfd, p, err := t.statAt(a.Int(0), p)
	if err != nil {
		return 0, err
	}
	var st unix.Statx_t
	if err := unix.Statx(dfd, p, a.Int(2), a.Int(3), &st); err != nil {
		return 0, errno(err)
	}
	return 0, copyOutStruct(t, a.A[4], &st)
}

// Statfs implements Linux syscall statfs(2).
func Statfs(t *Thread, a *SyscallArgs) (uint64, error) {
	dfd, p, err := t.pathAt(a, 0, false)
	if err != nil {
		return 0, err
	}
	p = t.procPath(p)
	h, err := unix.Openat(dfd, p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, errno(err)
	}
	defer unix.Close(h)
	var st unix.Statfs_t
	if err := unix.Fstatfs(h, &st); err != nil {
		return 0, errno(err)
	}
	return 0, copyOutStruct(t, a.A[1], &st)
}

// Access implements Linux syscall access(2).
func Access(t *Thread, a *SyscallArgs) (uint64, error) {
	dfd, p, err := t.pathAt(a, 0, false)
	if err != nil {
		return 0, err
	}
	p = t.procPath(p)
	return 0, errno(unix.Faccessat2(dfd, p, uint32(a.A[1]), 0))
}

// Faccessat implements Linux syscall faccessat(2).
func Faccessat(t *Thread, a *SyscallArgs) (uint64, error) {
	dfd, p, err := t.pathAt(a, 0, true)
	if err != nil {
		return 0, err
	}
	p = t.procPath(p)
	return 0, errno(unix.Faccessat2(dfd, p, uint32(a.A[2]), 0))
}

// Faccessat2 implements Linux syscall faccessat2(2).
func Faccessat2(t *Thread, a *SyscallArgs) (uint64, error) {
	dfd, p, err := t.pathAt(a, 0, true)
	if err != nil {
		return 0, err
	}
	p = t.procPath(p)
	return 0, errno(unix.Faccessat2(dfd, p, uint32(a.A[2]), a.Int(3)))
}

// Mkdir implements Linux syscall mkdir(2).
func Mkdir(t *Thread, a *SyscallArgs) (uint64, error) {
	dfd, p, err := t.pathAt(a, 0, false)
	if err != nil {
		return 0, err
	}
	t.applyUmask()
	return 0, errno(unix.Mkdirat(dfd, p, uint32(a.A[1])))
}

// Mkdirat implements Linux syscall mkdirat(2).
func Mkdirat(t *Thread, a *SyscallArgs) (uint64, error) {
	dfd, p, err := t.pathAt(a, 0, true)
	if err != nil {
		return 0, err
	}
	t.applyUmask()
	return 0, errno(unix.Mkdirat(dfd, p, uint32(a.A[2])))
}

// Mknodat implements Linux syscall mknodat(2).
func Mknodat(t *Thread, a *SyscallArgs) (uint64, error) {
	dfd, p, err := t.pathAt(a, 0, true)
	if err != nil {
		return 0, err
	}
	t.applyUmask()
	return 0, errno(unix.Mknodat(dfd, p, uint32(a.A[2]), int(a.A[3])))
}

// Mknod implements Linux syscall mknod(2).
func Mknod(t *Thread, a *SyscallArgs) (uint64, error) {
	dfd, p, err := t.pathAt(a, 0, false)
	if err != nil {
		return 0, err
	}
	t.applyUmask()
	return 0, errno(unix.Mknodat(dfd, p, uint32(a.A[1]), int(a.A[2])))
}

// Rmdir implements Linux syscall rmdir(2).
func Rmdir(t *Thread, a *SyscallArgs) (uint64, error) {
	dfd, p, err := t.pathAt(a, 0, false)
	if err != nil {
		return 0, err
	}
	return 0, errno(unix.Unlinkat(dfd, p, unix.AT_REMOVEDIR))
}

// Unlink implements Linux syscall unlink(2).
func Unlink(t *Thread, a *SyscallArgs) (uint64, error) {
	dfd, p, err := t.pathAt(a, 0, false)
	if err != nil {
		return 0, err
	}
	return 0, errno(unix.Unlinkat(dfd, p, 0))
}

// Unlinkat implements Linux syscall unlinkat(2).
func Unlinkat(t *Thread, a *SyscallArgs) (uint64, error) {
	dfd, p, err := t.pathAt(a, 0, true)
	if err != nil {
		return 0, err
	}
	return 0, errno(unix.Unlinkat(dfd, p, a.Int(2)))
}

// renameat2 renames for rename, renameat and renameat2.
func (t *Thread) renameat2(olddir int, oldAddr uint64, newdir int, newAddr uint64, flags uint) (uint64, error) {
	ofd, op, nfd, np, err := t.twoPaths(olddir, oldAddr, newdir, newAddr)
	if err != nil {
		return 0, err
	}
	return 0, errno(unix.Renameat2(ofd, op, nfd, np, flags))
}

// twoPaths copies in the two paths of rename- and link-style syscalls and
// resolves their directory descriptors.
func (t *Thread) twoPaths(olddir int, oldAddr uint64, newdir int, newAddr uint64) (ofd int, op string, nfd int, np string, err error) {
	if op, err = t.copyInPath(oldAddr); err != nil {
		return
	}
	if np, err = t.copyInPath(newAddr); err != nil {
		return
	}
	if ofd, err = t.dirFD(olddir, op); err != nil {
		return
	}
	nfd, err = t.dirFD(newdir, np)
	return
}

// Rename implements Linux syscall rename(2).
func Rename(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.renameat2(unix.AT_FDCWD, a.A[0], unix.AT_FDCWD, a.A[1], 0)
}

// Renameat implements Linux syscall renameat(2).
func Renameat(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.renameat2(a.Int(0), a.A[1], a.Int(2), a.A[3], 0)
}

// Renameat2 implements Linux syscall renameat2(2).
func Renameat2(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.renameat2(a.Int(0), a.A[1], a.Int(2), a.A[3], uint(a.A[4]))
}

// readlinkat reads a symbolic link for readlink and readlinkat.
func (t *Thread) readlinkat(dirfd int, pathAddr, buf uint64, size int) (uint64, error) {
	if size <= 0 {
		return 0, unix.EINVAL
	}
	p, err := t.copyInPath(pathAddr)
	if err != nil {
		return 0, err
	}
	var target []byte
	if q, rest, ok := t.procTarget(p); ok && rest == "exe" {
		target = []byte(q.exe)
	} else if p == "/proc/self" {
		target = []byte(itoa(t.P.PID))
	} else if p == "/proc/thread-self" {
		target = []byte(itoa(t.P.PID) + "/task/" + itoa(t.Tid))
	} else {
		if !isDevLink(p) {
			p = t.procPath(p)
		}
		dfd, err := t.dirFD(dirfd, p)
		if err != nil {
			return 0, err
		}
		b := make([]byte, unix.PathMax)
		n, err := unix.Readlinkat(dfd, p, b)
		if err != nil {
			return 0, errno(err)
		}
		target = []byte(t.P.m.guestProcDir(string(b[:n])))
	}
	if len(target) > size {
		target = target[:size]
	}
	return uint64(len(target)), t.CopyOut(buf, target)
}

// Readlink implements Linux syscall readlink(2).
func Readlink(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.readlinkat(unix.AT_FDCWD, a.A[0], a.A[1], a.Int(2))
}

// Readlinkat implements Linux syscall readlinkat(2).
func Readlinkat(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.readlinkat(a.Int(0), a.A[1], a.A[2], a.Int(3))
}

// Chdir implements Linux syscall chdir(2).
func Chdir(t *Thread, a *SyscallArgs) (uint64, error) {
	dfd, p, err := t.pathAt(a, 0, false)
	if err != nil {
		return 0, err
	}
	p = t.procPath(p)
	h, err := unix.Openat(dfd, p, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, errno(err)
	}
	if err := unix.Faccessat2(h, "", unix.X_OK, unix.AT_EMPTY_PATH); err != nil {
		unix.Close(h)
		return 0, errno(err)
	}
	t.P.fs.chdirFD(h)
	return 0, nil
}

// Fchdir implements Linux syscall fchdir(2).
func Fchdir(t *Thread, a *SyscallArgs) (uint64, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	h, err := unix.Openat(fd, ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, errno(err)
	}
	t.P.fs.chdirFD(h)
	return 0, nil
}

// Getcwd implements Linux syscall getcwd(2).
func Getcwd(t *Thread, a *SyscallArgs) (uint64, error) {
	wd, err := t.P.fs.cwd()
	if err != nil {
		return 0, unix.ENOENT
	}
	b := append([]byte(wd), 0)
	if uint64(len(b)) > a.A[1] {
		return 0, unix.ERANGE
	}
	return uint64(len(b)), t.CopyOut(a.A[0], b)
}

// Truncate implements Linux syscall truncate(2).
func Truncate(t *Thread, a *SyscallArgs) (uint64, error) {
	dfd, p, err := t.pathAt(a, 0, false)
	if err != nil {
		return 0, err
	}
	p = t.procPath(p)
	h, err := unix.Openat(dfd, p, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, errno(err)
	}
	defer unix.Close(h)
	return 0, errno(unix.Ftruncate(h, int64(a.A[1])))
}

// Chmod implements Linux syscall chmod(2).
func Chmod(t *Thread, a *SyscallArgs) (uint64, error) {
	dfd, p, err := t.pathAt(a, 0, false)
	if err != nil {
		return 0, err
	}
	p = t.procPath(p)
	return 0, errno(unix.Fchmodat(dfd, p, uint32(a.A[1]), 0))
}

// Fchmod implements Linux syscall fchmod(2).
func Fchmod(t *Thread, a *SyscallArgs) (uint64, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	return 0, errno(unix.Fchmod(fd, uint32(a.A[1])))
}

// Fchmodat implements Linux syscall fchmodat(2).
func Fchmodat(t *Thread, a *SyscallArgs) (uint64, error) {
	dfd, p, err := t.pathAt(a, 0, true)
	if err != nil {
		return 0, err
	}
	p = t.procPath(p)
	return 0, errno(unix.Fchmodat(dfd, p, uint32(a.A[2]), 0))
}

// chownat changes ownership for the chown family.
func (t *Thread) chownat(dfd int, p string, uid, gid uint64, flags int) (uint64, error) {
	return 0, errno(unix.Fchownat(dfd, p, int(int32(uid)), int(int32(gid)), flags))
}

// Chown implements Linux syscall chown(2).
func Chown(t *Thread, a *SyscallArgs) (uint64, error) {
	dfd, p, err := t.pathAt(a, 0, false)
	if err != nil {
		return 0, err
	}
	return t.chownat(dfd, p, a.A[1], a.A[2], 0)
}

// Lchown implements Linux syscall lchown(2).
func Lchown(t *Thread, a *SyscallArgs) (uint64, error) {
	dfd, p, err := t.pathAt(a, 0, false)
	if err != nil {
		return 0, err
	}
	return t.chownat(dfd, p, a.A[1], a.A[2], unix.AT_SYMLINK_NOFOLLOW)
}

// Fchownat implements Linux syscall fchownat(2).
func Fchownat(t *Thread, a *SyscallArgs) (uint64, error) {
	p, err := t.CopyInString(a.A[1], unix.PathMax)
	if err != nil {
		return 0, err
	}
	dfd, err := t.dirFD(a.Int(0), p)
	if err != nil {
		return 0, err
	}
	return t.chownat(dfd, p, a.A[2], a.A[3], a.Int(4))
}

// Fchown implements Linux syscall fchown(2).
func Fchown(t *Thread, a *SyscallArgs) (uint64, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	return 0, errno(unix.Fchown(fd, int(int32(a.A[1])), int(int32(a.A[2]))))
}

// Utimensat implements Linux syscall utimensat(2).
func Utimensat(t *Thread, a *SyscallArgs) (uint64, error) {
	var ts [32]byte
	tsArg := hostArg{}
	if a.A[2] != 0 {
		if err := t.CopyIn(a.A[2], ts[:]); err != nil {
			return 0, err
		}
		tsArg = hBuf(ts[:])
	}
	var dfd int
	var pathArg hostArg
	if a.A[1] == 0 {
		// utimensat(fd, NULL, ...) changes fd itself.
		h, err := t.P.fds.host(a.Int(0))
		if err != nil {
			return 0, err
		}
		dfd = h
	} else {
		p, err := t.copyInPath(a.A[1])
		if err != nil {
			return 0, err
		}
		if dfd, err = t.dirFD(a.Int(0), p); err != nil {
			return 0, err
		}
		pathArg = hBuf(append([]byte(p), 0))
	}
	_, err := hostSyscall(unix.SYS_UTIMENSAT, hInt(dfd), pathArg, tsArg, hInt(a.A[3]))
	return 0, errno(err)
}

// Umask implements Linux syscall umask(2): the mask is the process's
// (applyUmask sets it on the host when a call creates a file).
func Umask(t *Thread, a *SyscallArgs) (uint64, error) {
	fs := t.P.fs
	old := fs.umask
	fs.umask = uint32(a.A[0] & 0o777)
	return uint64(old), nil
}

// linkat makes a hard link for link and linkat.
func (t *Thread) linkat(olddir int, oldAddr uint64, newdir int, newAddr uint64, flags int) (uint64, error) {
	ofd, op, nfd, np, err := t.twoPaths(olddir, oldAddr, newdir, newAddr)
	if err != nil {
		return 0, err
	}
	return 0, errno(unix.Linkat(ofd, op, nfd, np, flags))
}

// Link implements Linux syscall link(2).
func Link(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.linkat(unix.AT_FDCWD, a.A[0], unix.AT_FDCWD, a.A[1], 0)
}

// Linkat implements Linux syscall linkat(2).
func Linkat(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.linkat(a.Int(0), a.A[1], a.Int(2), a.A[3], a.Int(4))
}

// symlinkat makes a symbolic link for symlink and symlinkat.
func (t *Thread) symlinkat(targetAddr uint64, newdir int, newAddr uint64) (uint64, error) {
	target, err := t.copyInPath(targetAddr)
	if err != nil {
		return 0, err
	}
	np, err := t.copyInPath(newAddr)
	if err != nil {
		return 0, err
	}
	nfd, err := t.dirFD(newdir, np)
	if err != nil {
		return 0, err
	}
	return 0, errno(unix.Symlinkat(target, nfd, np))
}

// Symlink implements Linux syscall symlink(2).
func Symlink(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.symlinkat(a.A[0], unix.AT_FDCWD, a.A[1])
}

// Symlinkat implements Linux syscall symlinkat(2).
func Symlinkat(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.symlinkat(a.A[0], a.Int(1), a.A[2])
}
