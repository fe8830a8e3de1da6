package reanimate

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// root is the directory a replay re-executes calls under. Every path is
// resolved by the kernel from its descriptor with RESOLVE_IN_ROOT.
type root struct {
	dir string
	fd  int
}

func openRoot(dir string) (*root, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return &root{dir: dir, fd: fd}, nil
}

func (r *root) close() { unix.Close(r.fd) }

const resolve = unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS

// open opens p (a path inside the root, "/" being the root itself).
func (r *root) open(p string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat2(r.fd, p, &unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Mode: uint64(mode), Resolve: resolve})
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		return fd, err
	}
}

// split cuts p into its parent and its last component.
func split(p string) (dir, name string) {
	p = strings.TrimRight(p, "/")
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ".", p
	}
	if i == 0 {
		return "/", p[1:]
	}
	return p[:i], p[i+1:]
}

// parent opens p's parent directory (O_PATH) and returns it with the
// last component, which the caller uses relative to it.
func (r *root) parent(p string) (int, string, error) {
	dir, name := split(p)
	if name == "" || name == "." || name == ".." {
		// The root itself or a dot: resolve it whole.
		fd, err := r.open(p, unix.O_PATH|unix.O_DIRECTORY, 0)
		if err != nil {
			return -1, "", err
		}
		pfd, err := unix.Openat(fd, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		return pfd, ".", err
	}
	fd, err := r.open(dir, unix.O_PATH|unix.O_DIRECTORY, 0)
	return fd, name, err
}

// procPath names an open descriptor so that calls without an *at form
// reach the file it refers to (and nothing else).
func procPath(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

// canonical returns the path inside the root of directory descriptor fd.
func (r *root) canonical(fd int) (string, error) {
	p, err := os.Readlink(procPath(fd))
	if err != nil {
		return "", err
	}
	base := strings.TrimRight(r.dir, "/")
	if p == base {
		return "/", nil
	}
	if !strings.HasPrefix(p, base+"/") {
		return "", errors.New("outside the root")
	}
	return p[len(base):], nil
}

// mkdirAll creates directory p and its parents inside the root.
func (r *root) mkdirAll(p string, mode uint32) error {
	p = path.Clean("/" + p)
	if p == "/" {
		return nil
	}
	fd, err := r.open(p, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err == nil {
		unix.Close(fd)
		return nil
	}
	dir, _ := split(p)
	if err := r.mkdirAll(dir, 0o755); err != nil {
		return err
	}
	pfd, name, err := r.parent(p)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	if err := unix.Mkdirat(pfd, name, mode); err != nil && err != unix.EEXIST {
		return err
	}
	return nil
}
