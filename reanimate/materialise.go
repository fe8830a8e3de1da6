package reanimate

import (
	"encoding/binary"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"ttd/internal/linux"
)

// input is a file the program used without creating it.
type input struct {
	path     string
	dir      bool
	size     int64 // -1: unknown
	mode     uint32
	data     []byte
	have     []bool
	modified bool // written to: later reads no longer show the original
}

func (in *input) put(off int64, b []byte) {
	if in.modified || off < 0 {
		return
	}
	if end := off + int64(len(b)); end > int64(len(in.data)) {
		in.data = append(in.data, make([]byte, end-int64(len(in.data)))...)
		in.have = append(in.have, make([]bool, end-int64(len(in.have)))...)
	}
	copy(in.data[off:], b)
	for i := range b {
		in.have[off+int64(i)] = true
	}
}

type mfd struct {
	in  *input
	off int64
	dir string // the path, for *at calls and fchdir
}

// materialise creates, before the replay, the files and directories the
// program used without creating them: copied from Base when they lie in
// the recorded working directory and Base has them, else from the bytes
// the recording saw (the holes it never read are reported).
func (p *replayer) materialise(ops []op, cwd string) error {
	created := map[string]bool{}
	inputs := map[string]*input{}
	var order []*input
	type mproc struct {
		fds map[int]*mfd
		cwd string
	}
	procs := map[int]*mproc{}
	get := func(key string) *input {
		if created[key] {
			return nil
		}
		in := inputs[key]
		if in == nil {
			in = &input{path: key, size: -1}
			inputs[key] = in
			order = append(order, in)
		}
		return in
	}
	for i := range ops {
		o := &ops[i]
		pr := procs[o.pid]
		if pr == nil {
			pr = &mproc{fds: map[int]*mfd{}, cwd: cwd}
			procs[o.pid] = pr
		}
		if o.unknown {
			continue
		}
		res := func(dirfd int64, s string) string {
			if strings.HasPrefix(s, "/") {
				return path.Clean(s)
			}
			base := pr.cwd
			if int32(dirfd) != linux.AtFdcwd {
				if f := pr.fds[int(int32(dirfd))]; f != nil {
					base = f.dir
				}
			}
			return path.Clean(base + "/" + s)
		}
		at := int64(linux.AtFdcwd)
		fd := int(int32(o.raw[0]))
		switch o.nr {
		case linux.SysOpen, linux.SysOpenat, linux.SysCreat:
			dirfd, flags := at, o.raw[1]
			switch o.nr {
			case linux.SysOpenat:
				dirfd, flags = int64(o.raw[0]), o.raw[2]
			case linux.SysCreat:
				flags = linux.O_CREAT | linux.O_TRUNC
			}
			key := res(dirfd, o.paths[0])
			if o.failed() {
				continue
			}
			f := &mfd{dir: key}
			if flags&(linux.O_CREAT|linux.O_TRUNC) != 0 && inputs[key] == nil {
				created[key] = true
			} else if in := get(key); in != nil {
				f.in = in
				if flags&linux.O_DIRECTORY != 0 {
					in.dir = true
				}
			}
			pr.fds[int(o.ret)] = f
		case linux.SysClose:
			delete(pr.fds, fd)
		case linux.SysDup, linux.SysDup2, linux.SysDup3:
			if f := pr.fds[fd]; f != nil && !o.failed() {
				pr.fds[int(o.ret)] = f
			}
		case linux.SysRead, linux.SysPread64, linux.SysReadv:
			f := pr.fds[fd]
			if f == nil || f.in == nil || o.failed() {
				continue
			}
			if o.nr == linux.SysPread64 {
				f.in.put(int64(o.raw[3]), o.data)
			} else {
				f.in.put(f.off, o.data)
				f.off += o.ret
			}
		case linux.SysLseek:
			if f := pr.fds[fd]; f != nil && !o.failed() {
				f.off = o.ret
			}
		case linux.SysWrite, linux.SysPwrite64, linux.SysWritev, linux.SysPwritev, linux.SysFtruncate, linux.SysFallocate:
			if f := pr.fds[fd]; f != nil && f.in != nil {
				f.in.modified = true
			}
		case linux.SysFstat:
			if f := pr.fds[fd]; f != nil && f.in != nil && !o.failed() {
				f.in.stat(o.data)
			}
		case linux.SysStat, linux.SysNewfstatat, linux.SysLstat:
			if o.failed() {
				continue
			}
			dirfd := at
			if o.nr == linux.SysNewfstatat {
				dirfd = int64(o.raw[0])
				if o.paths[0] == "" {
					if f := pr.fds[int(int32(dirfd))]; f != nil && f.in != nil {
						f.in.stat(o.data)
					}
					continue
				}
			}
			nofollow := o.nr == linux.SysLstat || o.nr == linux.SysNewfstatat && o.raw[3]&unix.AT_SYMLINK_NOFOLLOW != 0
			if len(o.data) >= 144 && nofollow && binary.LittleEndian.Uint32(o.data[24:])&linux.S_IFMT != linux.S_IFDIR {
				continue // a symlink itself: says nothing of its target
			}
			if in := get(res(dirfd, o.paths[0])); in != nil {
				in.stat(o.data)
			}
		case linux.SysMkdir, linux.SysMkdirat, linux.SysSymlink, linux.SysSymlinkat, linux.SysLink, linux.SysLinkat,
			linux.SysRename, linux.SysRenameat, linux.SysRenameat2:
			if o.failed() {
				continue
			}
			var key string
			switch o.nr {
			case linux.SysMkdir, linux.SysSymlink, linux.SysLink, linux.SysRename:
				key = res(at, o.paths[o.npaths-1])
			case linux.SysMkdirat:
				key = res(int64(o.raw[0]), o.paths[0])
			case linux.SysSymlinkat:
				key = res(int64(o.raw[1]), o.paths[1])
			default:
				key = res(int64(o.raw[2]), o.paths[1])
			}
			created[key] = true
		case linux.SysChdir:
			if !o.failed() {
				pr.cwd = res(at, o.paths[0])
				if in := get(pr.cwd); in != nil {
					in.dir = true
				}
			}
		case linux.SysFchdir:
			if f := pr.fds[fd]; f != nil && !o.failed() {
				pr.cwd = f.dir
			}
		}
	}
	for _, in := range order {
		if err := p.create(in, cwd); err != nil {
			return err
		}
	}
	return nil
}

func (in *input) stat(b []byte) {
	if len(b) < 144 {
		return
	}
	mode := binary.LittleEndian.Uint32(b[24:])
	switch mode & linux.S_IFMT {
	case linux.S_IFDIR:
		in.dir = true
	case linux.S_IFREG:
		if in.size < 0 {
			in.size = int64(binary.LittleEndian.Uint64(b[48:]))
		}
	}
	if in.mode == 0 {
		in.mode = mode
	}
}

// create materialises one input under the root.
func (p *replayer) create(in *input, cwd string) error {
	if in.dir || in.mode&linux.S_IFMT == linux.S_IFDIR {
		if err := p.root.mkdirAll(in.path, 0o755); err != nil {
			return fmt.Errorf("reanimate: creating %s under the root: %w", in.path, err)
		}
		if in.mode != 0 {
			fd, err := p.root.open(in.path, unix.O_PATH|unix.O_DIRECTORY, 0)
			if err == nil {
				unix.Fchmodat(unix.AT_FDCWD, procPath(fd), in.mode&0o7777, 0)
				unix.Close(fd)
			}
		}
		return nil
	}
	if in.mode != 0 && in.mode&linux.S_IFMT != linux.S_IFREG {
		return nil // devices, pipes: nothing to create
	}
	dir, _ := split(in.path)
	if err := p.root.mkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("reanimate: creating %s under the root: %w", dir, err)
	}
	perm := in.mode & 0o7777
	if perm == 0 {
		perm = 0o644
	}
	fd, err := p.root.open(in.path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, perm)
	if err == unix.EEXIST {
		return nil // already there (a root used before): left alone
	}
	if err != nil {
		return fmt.Errorf("reanimate: creating %s under the root: %w", in.path, err)
	}
	defer unix.Close(fd)
	unix.Fchmod(fd, perm)
	if p.opts.Base != "" && (in.path == cwd || strings.HasPrefix(in.path, strings.TrimRight(cwd, "/")+"/")) {
		rel := strings.TrimPrefix(strings.TrimPrefix(in.path, strings.TrimRight(cwd, "/")), "/")
		if b, err := os.ReadFile(filepath.Join(p.opts.Base, rel)); err == nil {
			_, err = unix.Write(fd, b)
			fmt.Fprintf(p.opts.Log, "reanimate: %s: copied from %s (%d bytes)\n", in.path, filepath.Join(p.opts.Base, rel), len(b))
			return err
		}
	}
	size := max(in.size, int64(len(in.data)))
	if p.materialised == nil {
		p.materialised = map[string]bool{}
	}
	p.materialised[in.path] = true
	if _, err := unix.Write(fd, in.data); err != nil {
		return err
	}
	if err := unix.Ftruncate(fd, size); err != nil {
		return err
	}
	holes := holesOf(in, size)
	if len(holes) == 0 {
		fmt.Fprintf(p.opts.Log, "reanimate: %s: materialised from the recording (%d bytes)\n", in.path, size)
		return nil
	}
	var missing int64
	var list []string
	for _, h := range holes {
		missing += h[1] - h[0]
		if len(list) < 3 {
			list = append(list, fmt.Sprintf("[%d, %d)", h[0], h[1]))
		}
	}
	if len(holes) > 3 {
		list = append(list, fmt.Sprintf("and %d more", len(holes)-3))
	}
	fmt.Fprintf(p.opts.Log, "reanimate: %s: materialised from the recording (%d bytes); %d bytes the recording never read are zeros: %s\n",
		in.path, size, missing, strings.Join(list, ", "))
	return nil
}

// holesOf lists the byte ranges of [0, size) the recording never read.
func holesOf(in *input, size int64) [][2]int64 {
	var holes [][2]int64
	for i := int64(0); i < size; {
		if i < int64(len(in.have)) && in.have[i] {
			i++
			continue
		}
		j := i
		for j < size && !(j < int64(len(in.have)) && in.have[j]) {
			j++
		}
		holes = append(holes, [2]int64{i, j})
		i = j
	}
	sort.Slice(holes, func(a, b int) bool { return holes[a][0] < holes[b][0] })
	return holes
}
