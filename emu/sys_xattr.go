package emu

import (
	"golang.org/x/sys/unix"
)

// Extended attributes, passed through to the host. The host calls take
// paths, so a relative guest path is reached through the working
// directory's descriptor in /proc/self/fd.

// maxXattr bounds an attribute value or name list.
const maxXattr = 1 << 16

// xattrPath reads a path argument and makes it usable by host calls.
func (t *Thread) xattrPath(addr uint64) (string, error) {
	p, err := t.copyInPath(addr)
	if err != nil {
		return "", err
	}
	if p == "" {
		return "", unix.ENOENT
	}
	if p[0] == '/' {
		return p, nil
	}
	return "/proc/self/fd/" + itoa(t.P.fs.cwdFD) + "/" + p, nil
}

// xattrOut runs a host call that fills a buffer of the guest's size and
// copies the result out.
func (t *Thread) xattrOut(addr, size uint64, call func(b []byte) (int, error)) (uint64, error) {
	n := min(size, maxXattr)
	b := make([]byte, n)
	k, err := call(b)
	if err != nil {
		return 0, errno(err)
	}
	if size == 0 {
		return uint64(k), nil
	}
	return uint64(k), t.CopyOut(addr, b[:k])
}

func (t *Thread) getxattr(a *SyscallArgs, get func(path, name string, b []byte) (int, error)) (uint64, error) {
	p, err := t.xattrPath(a.A[0])
	if err != nil {
		return 0, err
	}
	name, err := t.CopyInString(a.A[1], 256)
	if err != nil {
		return 0, err
	}
	return t.xattrOut(a.A[2], a.A[3], func(b []byte) (int, error) { return get(p, name, b) })
}

// Getxattr implements Linux syscall getxattr(2).
func Getxattr(t *Thread, a *SyscallArgs) (uint64, error) { return t.getxattr(a, unix.Getxattr) }

// Lgetxattr implements Linux syscall lgetxattr(2).
func Lgetxattr(t *Thread, a *SyscallArgs) (uint64, error) { return t.getxattr(a, unix.Lgetxattr) }

// Fgetxattr implements Linux syscall fgetxattr(2).
func Fgetxattr(t *Thread, a *SyscallArgs) (uint64, error) {
	fd, name, err := t.fdAndXattrName(a)
	if err != nil {
		return 0, err
	}
	return t.xattrOut(a.A[2], a.A[3], func(b []byte) (int, error) { return unix.Fgetxattr(fd, name, b) })
}

func (t *Thread) listxattr(a *SyscallArgs, list func(path string, b []byte) (int, error)) (uint64, error) {
	p, err := t.xattrPath(a.A[0])
	if err != nil {
		return 0, err
	}
	return t.xattrOut(a.A[1], a.A[2], func(b []byte) (int, error) { return list(p, b) })
}

// Listxattr implements Linux syscall listxattr(2).
func Listxattr(t *Thread, a *SyscallArgs) (uint64, error) { return t.listxattr(a, unix.Listxattr) }

// Llistxattr implements Linux syscall llistxattr(2).
func Llistxattr(t *Thread, a *SyscallArgs) (uint64, error) { return t.listxattr(a, unix.Llistxattr) }

// Flistxattr implements Linux syscall flistxattr(2).
func Flistxattr(t *Thread, a *SyscallArgs) (uint64, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, err
	}
	return t.xattrOut(a.A[1], a.A[2], func(b []byte) (int, error) { return unix.Flistxattr(fd, b) })
}

func (t *Thread) setxattr(a *SyscallArgs, set func(path, name string, b []byte, flags int) error) (uint64, error) {
	p, err := t.xattrPath(a.A[0])
	if err != nil {
		return 0, err
	}
	name, err := t.CopyInString(a.A[1], 256)
	if err != nil {
		return 0, err
	}
	if a.A[3] > maxXattr {
		return 0, unix.E2BIG
	}
	b := make([]byte, a.A[3])
	if err := t.CopyIn(a.A[2], b); err != nil {
		return 0, err
	}
	return 0, errno(set(p, name, b, a.Int(4)))
}

// Setxattr implements Linux syscall setxattr(2).
func Setxattr(t *Thread, a *SyscallArgs) (uint64, error) { return t.setxattr(a, unix.Setxattr) }

// Lsetxattr implements Linux syscall lsetxattr(2).
func Lsetxattr(t *Thread, a *SyscallArgs) (uint64, error) { return t.setxattr(a, unix.Lsetxattr) }

// Fsetxattr implements Linux syscall fsetxattr(2).
func Fsetxattr(t *Thread, a *SyscallArgs) (uint64, error) {
	fd, name, err := t.fdAndXattrName(a)
	if err != nil {
		return 0, err
	}
	if a.A[3] > maxXattr {
		return 0, unix.E2BIG
	}
	b := make([]byte, a.A[3])
	if err := t.CopyIn(a.A[2], b); err != nil {
		return 0, err
	}
	return 0, errno(unix.Fsetxattr(fd, name, b, a.Int(4)))
}

func (t *Thread) removexattr(a *SyscallArgs, remove func(path, name string) error) (uint64, error) {
	p, err := t.xattrPath(a.A[0])
	if err != nil {
		return 0, err
	}
	name, err := t.CopyInString(a.A[1], 256)
	if err != nil {
		return 0, err
	}
	return 0, errno(remove(p, name))
}

// Removexattr implements Linux syscall removexattr(2).
func Removexattr(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.removexattr(a, unix.Removexattr)
}

// Lremovexattr implements Linux syscall lremovexattr(2).
func Lremovexattr(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.removexattr(a, unix.Lremovexattr)
}

// Fremovexattr implements Linux syscall fremovexattr(2).
func Fremovexattr(t *Thread, a *SyscallArgs) (uint64, error) {
	fd, name, err := t.fdAndXattrName(a)
	if err != nil {
		return 0, err
	}
	return 0, errno(unix.Fremovexattr(fd, name))
}

// fdAndXattrName reads the descriptor and attribute name arguments of the
// f*xattr syscalls.
func (t *Thread) fdAndXattrName(a *SyscallArgs) (int, string, error) {
	fd, err := t.hostFD(a, 0)
	if err != nil {
		return 0, "", err
	}
	name, err := t.CopyInString(a.A[1], 256)
	return fd, name, err
}
