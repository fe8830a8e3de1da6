package reanimate

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"ttd/internal/linux"
	"ttd/reader"
	"ttd/syscalls"
)

// Options configure a replay.
type Options struct {
	// Root is the directory the calls re-execute under (it must exist).
	Root string
	// Base, if set, is a copy of the tree the program started in (its
	// working directory): the files the program read without creating
	// them come from there. Without it they are materialised from the
	// bytes the recording saw.
	Base string
	// Verify compares results and returned buffers with the recording.
	Verify bool
	// Log receives the report (materialised files and their holes,
	// divergences).
	Log io.Writer
	// Workers bounds the calls re-executed at once (<= 0: one per
	// recorded thread).
	Workers int
}

// Divergence is a call whose replay did not do what the recording says.
type Divergence struct {
	Pos  uint64
	Call string
	Msg  string
}

func (d Divergence) String() string { return fmt.Sprintf("position %d: %s: %s", d.Pos, d.Call, d.Msg) }

// Report says what a replay did.
type Report struct {
	Calls     int // calls re-executed
	Simulated int // calls on pipes, sockets and terminals, taken from the recording
	Skipped   int // calls whose paths or data the recording does not hold
	// SkippedCalls lists the first skipped calls (up to 20), with their
	// positions.
	SkippedCalls []Divergence
	Divergences  []Divergence
	Cwd          string // the recorded working directory, inside the root
	Elapsed      time.Duration
}

// Rate is the replay's speed in calls per second.
func (r *Report) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Calls) / r.Elapsed.Seconds()
}

// vfd is a recorded descriptor the replay opened.
type vfd struct {
	fd   int
	path string // inside the root, as opened
	refs *int
}

// process is a recorded process's descriptors and working directory.
type process struct {
	fds map[int]*vfd
	cwd string
}

// mapping is a shared file mapping of the recording, with a descriptor
// of the replay's file it maps.
type mapping struct {
	pid       int
	addr, len uint64
	pos       uint64 // where it was made
	fd        int
	off       uint64
	// last is what the previous write-back carried: a byte it carried
	// and the program did not change since is not written again (the
	// file may have changed under the mapping, as emu's does).
	last  []byte
	lastK []bool
}

type replayer struct {
	// mu guards the state below while a call runs (run).
	mu    sync.Mutex
	maps  []mapping
	opts  Options
	root  *root
	procs map[int]*process
	rep   *Report
	// materialised are the files made from the bytes the recording
	// saw (set before the run): their link counts are not the
	// original's.
	materialised map[string]bool
}

// Replay re-executes the file-system calls of trace t under opts.Root.
func Replay(t *reader.Trace, opts Options) (*Report, error) {
	var c collector
	if _, err := syscalls.Export(t, syscalls.Options{StrSize: -1}, &c); err != nil {
		return nil, err
	}
	return replayOps(c.ops, t.Header.Cwd, opts)
}

func replayOps(ops []op, cwd string, opts Options) (*Report, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	rt, err := openRoot(opts.Root)
	if err != nil {
		return nil, err
	}
	defer rt.close()
	if cwd == "" {
		cwd = "/"
	}
	rep := &Report{Cwd: cwd}
	p := &replayer{opts: opts, root: rt, procs: map[int]*process{}, rep: rep}
	if err := rt.mkdirAll(cwd, 0o755); err != nil {
		return nil, fmt.Errorf("reanimate: creating the working directory %s under %s: %w", cwd, opts.Root, err)
	}
	if err := p.seedBase(cwd); err != nil {
		return nil, err
	}
	if err := p.materialise(ops, cwd); err != nil {
		return nil, err
	}
	start := time.Now()
	p.run(ops, cwd)
	rep.Elapsed = time.Since(start)
	for _, pr := range p.procs {
		for _, f := range pr.fds {
			p.release(f)
		}
	}
	for _, m := range p.maps {
		unix.Close(m.fd)
	}
	return rep, nil
}

// run re-executes ops with one worker per recorded thread. A call waits
// for every call that completed before it was entered (the recorded
// order of calls that did not overlap, pipes between threads included);
// calls that overlapped in the recording run concurrently, in either
// order. The replay's state (descriptors, working directories, the
// report) is shared under p.mu, which a call releases while it moves
// data (read, write, fsync, getdents): the calls of several workers
// overlap there as they did in the recording. workers bounds how many
// run at once (<= 0: one per thread).
func (p *replayer) run(ops []op, cwd string) {
	need := make([]int, len(ops))
	byTid := map[int][]int{}
	var tids []int
	for i := range ops {
		e := ops[i].entry
		if e == 0 || e > ops[i].pos {
			e = ops[i].pos
		}
		need[i] = sort.Search(len(ops), func(j int) bool { return ops[j].pos >= e })
		if _, ok := byTid[ops[i].tid]; !ok {
			tids = append(tids, ops[i].tid)
		}
		byTid[ops[i].tid] = append(byTid[ops[i].tid], i)
	}
	var mu sync.Mutex // the schedule
	cond := sync.NewCond(&mu)
	done := make([]bool, len(ops))
	mark := 0 // ops[:mark] are all done
	slots := make(chan struct{}, max(p.opts.Workers, 1))
	if p.opts.Workers <= 0 {
		slots = make(chan struct{}, len(tids)+1)
	}
	var wg sync.WaitGroup
	for _, tid := range tids {
		wg.Add(1)
		go func(list []int) {
			defer wg.Done()
			var buf []byte
			for _, i := range list {
				mu.Lock()
				for mark < need[i] {
					cond.Wait()
				}
				mu.Unlock()
				slots <- struct{}{}
				p.mu.Lock()
				p.do(&ops[i], cwd, &buf)
				p.mu.Unlock()
				<-slots
				mu.Lock()
				done[i] = true
				advanced := false
				for mark < len(ops) && done[mark] {
					mark++
					advanced = true
				}
				if advanced {
					cond.Broadcast()
				}
				mu.Unlock()
			}
		}(byTid[tid])
	}
	wg.Wait()
}

// unlocked runs fn without the state lock, holding a reference to f so
// that an overlapping close does not close its descriptor under fn.
func (p *replayer) unlocked(f *vfd, fn func()) {
	*f.refs++
	p.mu.Unlock()
	fn()
	p.mu.Lock()
	p.release(f)
}

func (p *replayer) proc(pid int, cwd string) *process {
	pr := p.procs[pid]
	if pr == nil {
		pr = &process{fds: map[int]*vfd{}, cwd: cwd}
		p.procs[pid] = pr
	}
	return pr
}

func (p *replayer) release(f *vfd) {
	*f.refs--
	if *f.refs == 0 {
		unix.Close(f.fd)
	}
}

func (p *replayer) diverge(o *op, format string, args ...any) {
	if !p.opts.Verify {
		return
	}
	d := Divergence{Pos: o.pos, Call: o.text, Msg: fmt.Sprintf(format, args...)}
	p.rep.Divergences = append(p.rep.Divergences, d)
}

// resolve makes a recorded path argument a path inside the root.
func (p *replayer) resolve(pr *process, dirfd int64, s string) (string, bool) {
	if rest, ok := strings.CutPrefix(s, "/proc/self/fd/"); ok {
		// glibc reaches a descriptor's file through /proc (fchmodat
		// and friends): the replay's descriptor names the same file.
		n, err := strconv.Atoi(rest)
		f := pr.fds[n]
		if err != nil || f == nil {
			return "", false
		}
		return f.path, true
	}
	if strings.HasPrefix(s, "/") {
		return s, true
	}
	base := pr.cwd
	if int32(dirfd) != linux.AtFdcwd {
		f := pr.fds[int(int32(dirfd))]
		if f == nil {
			return "", false
		}
		base = f.path
	}
	if s == "" {
		return base, true
	}
	return strings.TrimRight(base, "/") + "/" + s, true
}

// check compares a replayed call's result with the recorded one.
func (p *replayer) check(o *op, ret int64, err error) {
	got := ret
	if err != nil {
		if e, ok := err.(unix.Errno); ok {
			got = -int64(e)
		} else {
			got = -int64(unix.EIO)
		}
	}
	if got == o.ret {
		return
	}
	p.diverge(o, "returned %s, recorded %s", retString(got), retString(o.ret))
}

func retString(r int64) string {
	if r < 0 && r >= -linux.MaxErrno {
		return "-1 " + linux.Errno(-r).String()
	}
	return fmt.Sprint(r)
}

// checkOK compares success and failure only (descriptor numbers differ).
func (p *replayer) checkOK(o *op, err error) {
	if err == nil && o.failed() {
		p.diverge(o, "succeeded, recorded %s", retString(o.ret))
	} else if err != nil && !o.failed() {
		p.diverge(o, "failed with %v, recorded success", err)
	} else if err != nil {
		if e, ok := err.(unix.Errno); ok && -int64(e) != o.ret {
			p.diverge(o, "failed with %s, recorded %s", linux.Errno(e).Name(), retString(o.ret))
		}
	}
}

func (p *replayer) do(o *op, cwd string, buf *[]byte) {
	pr := p.proc(o.pid, cwd)
	if o.unknown {
		p.rep.Skipped++
		if len(p.rep.SkippedCalls) < 20 {
			p.rep.SkippedCalls = append(p.rep.SkippedCalls, Divergence{Pos: o.pos, Call: o.text, Msg: "a path or a buffer the recording does not hold"})
		}
		return
	}
	fdArg := func(i int) (*vfd, bool) {
		f, ok := pr.fds[int(int32(o.raw[i]))]
		if !ok {
			p.rep.Simulated++
		}
		return f, ok
	}
	pathArg := func(k int, dirfd int64) (string, bool) {
		s, ok := p.resolve(pr, dirfd, o.paths[k])
		if !ok {
			p.rep.Simulated++
		}
		return s, ok
	}
	at := int64(linux.AtFdcwd)
	if o.shared {
		p.sharedWrite(o)
		return
	}
	switch o.nr {
	case linux.SysMmap:
		f, ok := fdArg(4)
		if !ok || o.failed() {
			return
		}
		fd, err := unix.FcntlInt(uintptr(f.fd), unix.F_DUPFD_CLOEXEC, 0)
		if err == nil {
			p.maps = append(p.maps, mapping{pid: o.pid, addr: uint64(o.ret), len: o.raw[1], pos: o.pos, fd: fd, off: o.raw[5]})
		}
	case linux.SysOpen, linux.SysOpenat, linux.SysCreat:
		var dirfd = at
		flags, mode := o.raw[1], o.raw[2]
		switch o.nr {
		case linux.SysOpenat:
			dirfd, flags, mode = int64(o.raw[0]), o.raw[2], o.raw[3]
		case linux.SysCreat:
			flags, mode = linux.O_CREAT|linux.O_WRONLY|linux.O_TRUNC, o.raw[1]
		}
		s, ok := pathArg(0, dirfd)
		if !ok {
			return
		}
		if s == "/dev" || strings.HasPrefix(s, "/dev/") {
			// Devices (a terminal, /dev/null) are not files of the
			// tree: simulated from the recording, as sockets.
			p.rep.Simulated++
			return
		}
		p.rep.Calls++
		fd, err := p.root.open(s, int(flags&^unix.O_NOCTTY), uint32(mode))
		if err == unix.ENOENT && !o.failed() && flags&linux.O_CREAT != 0 {
			// Through a symlink to a directory the program found
			// outside the re-rooted tree: create it in the root.
			if p.symlinkParent(s) {
				fd, err = p.root.open(s, int(flags&^unix.O_NOCTTY), uint32(mode))
			}
		}
		p.checkOK(o, err)
		if err == nil {
			if o.failed() {
				unix.Close(fd)
				return
			}
			if old := pr.fds[int(o.ret)]; old != nil {
				p.release(old)
			}
			n := 1
			pr.fds[int(o.ret)] = &vfd{fd: fd, path: s, refs: &n}
		}
	case linux.SysClose:
		f, ok := pr.fds[int(int32(o.raw[0]))]
		if !ok {
			p.rep.Simulated++
			return
		}
		p.rep.Calls++
		delete(pr.fds, int(int32(o.raw[0])))
		p.release(f)
	case linux.SysDup, linux.SysDup2, linux.SysDup3, linux.SysFcntl:
		if o.nr == linux.SysFcntl && o.raw[1] != 0 && o.raw[1] != 1030 {
			return // only F_DUPFD and F_DUPFD_CLOEXEC change descriptors
		}
		f, ok := pr.fds[int(int32(o.raw[0]))]
		if !ok || o.failed() {
			return
		}
		if old := pr.fds[int(o.ret)]; old != nil && old != f {
			p.release(old)
		}
		*f.refs++
		pr.fds[int(o.ret)] = f
	case linux.SysWrite, linux.SysPwrite64, linux.SysWritev, linux.SysPwritev:
		f, ok := fdArg(0)
		if !ok {
			return
		}
		p.rep.Calls++
		if o.failed() {
			return
		}
		data := o.data
		var n int
		var err error
		p.unlocked(f, func() {
			switch o.nr {
			case linux.SysPwrite64, linux.SysPwritev:
				n, err = unix.Pwrite(f.fd, data, int64(o.raw[3]))
			default:
				n, err = unix.Write(f.fd, data)
			}
		})
		p.check(o, int64(n), err)
	case linux.SysRead, linux.SysPread64, linux.SysReadv:
		f, ok := fdArg(0)
		if !ok {
			return
		}
		p.rep.Calls++
		want := int(o.raw[2])
		if o.nr == linux.SysReadv {
			want = int(max(o.ret, 0))
		}
		if cap(*buf) < want {
			*buf = make([]byte, want)
		}
		b := (*buf)[:want]
		var n int
		var err error
		p.unlocked(f, func() {
			if o.nr == linux.SysPread64 {
				n, err = unix.Pread(f.fd, b, int64(o.raw[3]))
			} else {
				n, err = unix.Read(f.fd, b)
			}
		})
		p.check(o, int64(n), err)
		if err == nil && !o.failed() && n == int(o.ret) && o.data != nil && !bytes.Equal(b[:n], o.data) {
			p.diverge(o, "read different data (first difference at byte %d)", firstDiff(b[:n], o.data))
		}
	case linux.SysCopyFileRange, linux.SysSendfile:
		// File to file in the kernel (cp): both descriptors must be
		// re-executed files, and the offsets the file positions
		// (a pointer to an offset is memory the call rewrites).
		in, out, offp := 0, 2, o.raw[1]|o.raw[3]
		if o.nr == linux.SysSendfile {
			in, out, offp = 1, 0, o.raw[2]
		}
		fi, ok1 := fdArg(in)
		fo, ok2 := fdArg(out)
		if !ok1 || !ok2 || offp != 0 {
			return
		}
		p.rep.Calls++
		if o.failed() {
			return
		}
		var n int
		var err error
		p.unlocked(fo, func() {
			if o.nr == linux.SysSendfile {
				n, err = unix.Sendfile(fo.fd, fi.fd, nil, int(o.raw[3]))
			} else {
				n, err = unix.CopyFileRange(fi.fd, nil, fo.fd, nil, int(o.raw[4]), 0)
			}
		})
		p.check(o, int64(n), err)
	case linux.SysLseek:
		f, ok := fdArg(0)
		if !ok {
			return
		}
		p.rep.Calls++
		off, err := unix.Seek(f.fd, int64(o.raw[1]), int(o.raw[2]))
		p.check(o, off, err)
	case linux.SysTruncate:
		s, ok := pathArg(0, at)
		if !ok {
			return
		}
		p.rep.Calls++
		fd, err := p.root.open(s, unix.O_WRONLY, 0)
		if err == nil {
			err = unix.Ftruncate(fd, int64(o.raw[1]))
			unix.Close(fd)
		}
		p.check(o, 0, err)
	case linux.SysFtruncate, linux.SysFsync, linux.SysFdatasync, linux.SysFchmod, linux.SysFallocate:
		f, ok := fdArg(0)
		if !ok {
			return
		}
		p.rep.Calls++
		var err error
		p.unlocked(f, func() {
			switch o.nr {
			case linux.SysFtruncate:
				err = unix.Ftruncate(f.fd, int64(o.raw[1]))
			case linux.SysFsync:
				err = unix.Fsync(f.fd)
			case linux.SysFdatasync:
				err = unix.Fdatasync(f.fd)
			case linux.SysFchmod:
				err = unix.Fchmod(f.fd, uint32(o.raw[1]))
			case linux.SysFallocate:
				err = unix.Fallocate(f.fd, uint32(o.raw[1]), int64(o.raw[2]), int64(o.raw[3]))
			}
		})
		p.check(o, 0, err)
	case linux.SysRename, linux.SysRenameat, linux.SysRenameat2, linux.SysLink, linux.SysLinkat:
		d1, d2, flags := at, at, uint64(0)
		if o.nr == linux.SysRenameat || o.nr == linux.SysRenameat2 || o.nr == linux.SysLinkat {
			d1, d2, flags = int64(o.raw[0]), int64(o.raw[2]), o.raw[4]
		}
		if o.nr == linux.SysRenameat {
			flags = 0
		}
		s1, ok1 := pathArg(0, d1)
		s2, ok2 := pathArg(1, d2)
		if !ok1 || !ok2 {
			return
		}
		p.rep.Calls++
		p.check(o, 0, p.twoPaths(o.nr, s1, s2, flags))
	case linux.SysUnlink, linux.SysUnlinkat, linux.SysRmdir, linux.SysMkdir, linux.SysMkdirat:
		dirfd, flags, mode := at, uint64(0), o.raw[1]
		switch o.nr {
		case linux.SysUnlinkat:
			dirfd, flags = int64(o.raw[0]), o.raw[2]
		case linux.SysRmdir:
			flags = unix.AT_REMOVEDIR
		case linux.SysMkdirat:
			dirfd, mode = int64(o.raw[0]), o.raw[2]
		}
		s, ok := pathArg(0, dirfd)
		if !ok {
			return
		}
		p.rep.Calls++
		pfd, name, err := p.root.parent(s)
		if err == nil {
			if o.nr == linux.SysMkdir || o.nr == linux.SysMkdirat {
				err = unix.Mkdirat(pfd, name, uint32(mode))
			} else {
				err = unix.Unlinkat(pfd, name, int(flags))
			}
			unix.Close(pfd)
		}
		p.check(o, 0, err)
	case linux.SysSymlink, linux.SysSymlinkat:
		dirfd := at
		if o.nr == linux.SysSymlinkat {
			dirfd = int64(o.raw[1])
		}
		s, ok := pathArg(1, dirfd)
		if !ok {
			return
		}
		p.rep.Calls++
		pfd, name, err := p.root.parent(s)
		if err == nil {
			err = unix.Symlinkat(o.paths[0], pfd, name)
			unix.Close(pfd)
		}
		p.check(o, 0, err)
	case linux.SysChmod, linux.SysFchmodat:
		dirfd, mode := at, o.raw[1]
		if o.nr == linux.SysFchmodat {
			dirfd, mode = int64(o.raw[0]), o.raw[2]
		}
		s, ok := pathArg(0, dirfd)
		if !ok {
			return
		}
		p.rep.Calls++
		fd, err := p.root.open(s, unix.O_PATH, 0)
		if err == nil {
			err = unix.Fchmodat(unix.AT_FDCWD, procPath(fd), uint32(mode), 0)
			unix.Close(fd)
		}
		p.check(o, 0, err)
	case linux.SysUtimensat:
		p.utimensat(o, pr)
	case linux.SysChdir, linux.SysFchdir:
		var s string
		if o.nr == linux.SysChdir {
			var ok bool
			if s, ok = pathArg(0, at); !ok {
				return
			}
		} else {
			f, ok := fdArg(0)
			if !ok {
				return
			}
			s = f.path
		}
		p.rep.Calls++
		fd, err := p.root.open(s, unix.O_PATH|unix.O_DIRECTORY, 0)
		p.checkOK(o, err)
		if err == nil {
			if c, err := p.root.canonical(fd); err == nil && !o.failed() {
				pr.cwd = c
			}
			unix.Close(fd)
		}
	case linux.SysStat, linux.SysLstat, linux.SysNewfstatat, linux.SysFstat:
		p.stat(o, pr)
	case linux.SysGetdents64:
		f, ok := fdArg(0)
		if !ok {
			return
		}
		p.rep.Calls++
		n := int(o.raw[2])
		if cap(*buf) < n {
			*buf = make([]byte, n)
		}
		var got int
		var err error
		p.unlocked(f, func() { got, err = unix.Getdents(f.fd, (*buf)[:n]) })
		if o.failed() || err != nil {
			p.checkOK(o, err)
			return
		}
		// A directory outside the recorded working directory was
		// materialised with the entries the program used, not all
		// those it listed: its listing is simulated from the recording.
		if !p.under(f.path) {
			return
		}
		if a, b := direntNames((*buf)[:got]), direntNames(o.data); a != b {
			p.diverge(o, "directory entries %s, recorded %s", a, b)
		}
	}
}

// sharedWrite writes what a shared mapping carried to its file: the
// known bytes, never past the end of the file (as Linux).
func (p *replayer) sharedWrite(o *op) {
	// The mapping is the one made at mpos; the write-back's file offset
	// places it (an mremap may have moved or grown the mapping since).
	mpos, off := o.raw[1], o.raw[2]
	for k := range p.maps {
		m := &p.maps[k]
		if m.pid != o.pid || m.pos != mpos || off < m.off {
			continue
		}
		at := int(off - m.off)
		if n := (at + len(o.data) + 4095) &^ 4095; len(m.last) < n {
			m.last = append(m.last, make([]byte, n-len(m.last))...)
			m.lastK = append(m.lastK, make([]bool, n-len(m.lastK))...)
		}
		changed := func(i int) bool {
			if !o.known[i] || at+i >= len(m.last) {
				return false
			}
			return !m.lastK[at+i] || m.last[at+i] != o.data[i]
		}
		p.rep.Calls++
		var st unix.Stat_t
		if err := unix.Fstat(m.fd, &st); err != nil {
			p.diverge(o, "fstat of the mapped file: %v", err)
			return
		}
		base := int64(off)
		for i := 0; i < len(o.data); {
			if !changed(i) {
				i++
				continue
			}
			j := i
			for j < len(o.data) && changed(j) {
				m.last[at+j], m.lastK[at+j] = o.data[j], true
				j++
			}
			if end := min(int64(j), st.Size-base); end > int64(i) {
				if _, err := unix.Pwrite(m.fd, o.data[i:end], base+int64(i)); err != nil {
					p.diverge(o, "%v", err)
				}
			}
			i = j
		}
		return
	}
	p.rep.Simulated++ // a mapping of something the replay did not open
}

// symlinkParent creates, inside the root, the directory a symlink at s
// points into, and reports whether it did.
func (p *replayer) symlinkParent(s string) bool {
	pfd, name, err := p.root.parent(s)
	if err != nil {
		return false
	}
	defer unix.Close(pfd)
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(pfd, name, buf)
	if err != nil {
		return false
	}
	target := string(buf[:n])
	if !strings.HasPrefix(target, "/") {
		dir, _ := split(s)
		target = dir + "/" + target
	}
	dir, _ := split(target)
	return p.root.mkdirAll(dir, 0o755) == nil
}

func (p *replayer) twoPaths(nr int, s1, s2 string, flags uint64) error {
	p1, n1, err := p.root.parent(s1)
	if err != nil {
		return err
	}
	defer unix.Close(p1)
	p2, n2, err := p.root.parent(s2)
	if err != nil {
		return err
	}
	defer unix.Close(p2)
	switch nr {
	case linux.SysLink, linux.SysLinkat:
		if flags&unix.AT_SYMLINK_FOLLOW != 0 {
			// Follow the symlink inside the root, then link what it
			// names through its descriptor.
			fd, err := p.root.open(s1, unix.O_PATH, 0)
			if err != nil {
				return err
			}
			defer unix.Close(fd)
			return unix.Linkat(unix.AT_FDCWD, procPath(fd), p2, n2, unix.AT_SYMLINK_FOLLOW)
		}
		return unix.Linkat(p1, n1, p2, n2, 0)
	}
	return unix.Renameat2(p1, n1, p2, n2, uint(flags))
}

func (p *replayer) utimensat(o *op, pr *process) {
	var ts []unix.Timespec
	if len(o.data) == 32 {
		ts = []unix.Timespec{
			{Sec: int64(binary.LittleEndian.Uint64(o.data)), Nsec: int64(binary.LittleEndian.Uint64(o.data[8:]))},
			{Sec: int64(binary.LittleEndian.Uint64(o.data[16:])), Nsec: int64(binary.LittleEndian.Uint64(o.data[24:]))},
		}
	}
	flags := o.raw[3]
	var err error
	if o.raw[1] == 0 { // futimens: the descriptor itself
		f, ok := pr.fds[int(int32(o.raw[0]))]
		if !ok {
			p.rep.Simulated++
			return
		}
		p.rep.Calls++
		err = unix.UtimesNanoAt(unix.AT_FDCWD, procPath(f.fd), ts, 0)
		p.check(o, 0, err)
		return
	}
	s, ok := p.resolve(pr, int64(o.raw[0]), o.paths[0])
	if !ok {
		p.rep.Simulated++
		return
	}
	p.rep.Calls++
	if flags&unix.AT_SYMLINK_NOFOLLOW != 0 {
		pfd, name, e := p.root.parent(s)
		if e == nil {
			e = unix.UtimesNanoAt(pfd, name, ts, unix.AT_SYMLINK_NOFOLLOW)
			unix.Close(pfd)
		}
		err = e
	} else {
		fd, e := p.root.open(s, unix.O_PATH, 0)
		if e == nil {
			e = unix.UtimesNanoAt(unix.AT_FDCWD, procPath(fd), ts, 0)
			unix.Close(fd)
		}
		err = e
	}
	p.check(o, 0, err)
}

// stat verifies a stat call: the result, and the mode, size (not of
// directories, whose size depends on the file system) and link count.
func (p *replayer) stat(o *op, pr *process) {
	var st unix.Stat_t
	var err error
	switch o.nr {
	case linux.SysFstat:
		f, ok := pr.fds[int(int32(o.raw[0]))]
		if !ok {
			p.rep.Simulated++
			return
		}
		err = unix.Fstat(f.fd, &st)
	default:
		dirfd, flags := int64(linux.AtFdcwd), uint64(0)
		switch o.nr {
		case linux.SysLstat:
			flags = unix.AT_SYMLINK_NOFOLLOW
		case linux.SysNewfstatat:
			dirfd, flags = int64(o.raw[0]), o.raw[3]
		}
		if o.paths[0] == "" && flags&unix.AT_EMPTY_PATH != 0 {
			f, ok := pr.fds[int(int32(dirfd))]
			if !ok {
				p.rep.Simulated++
				return
			}
			err = unix.Fstat(f.fd, &st)
			break
		}
		s, ok := p.resolve(pr, dirfd, o.paths[0])
		if !ok {
			p.rep.Simulated++
			return
		}
		if flags&unix.AT_SYMLINK_NOFOLLOW != 0 {
			pfd, name, e := p.root.parent(s)
			if e == nil {
				e = unix.Fstatat(pfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
				unix.Close(pfd)
			}
			err = e
		} else {
			fd, e := p.root.open(s, unix.O_PATH, 0)
			if e == nil {
				e = unix.Fstat(fd, &st)
				unix.Close(fd)
			}
			err = e
		}
	}
	p.rep.Calls++
	p.check(o, 0, err)
	if err != nil || o.failed() || len(o.data) < 144 {
		return
	}
	if strings.HasPrefix(p.statPath(o, pr), "/proc/") || strings.HasPrefix(p.statPath(o, pr), "/sys/") {
		return // pseudo-files: materialised with their contents, stat says size 0
	}
	mode := binary.LittleEndian.Uint32(o.data[24:])
	size := int64(binary.LittleEndian.Uint64(o.data[48:]))
	nlink := binary.LittleEndian.Uint64(o.data[16:])
	switch {
	case mode != st.Mode:
		p.diverge(o, "st_mode %#o, recorded %#o", st.Mode, mode)
	case mode&linux.S_IFMT != linux.S_IFDIR && size != st.Size:
		p.diverge(o, "st_size %d, recorded %d", st.Size, size)
	case mode&linux.S_IFMT != linux.S_IFDIR && nlink != st.Nlink && !p.materialised[p.statPath(o, pr)]:
		p.diverge(o, "st_nlink %d, recorded %d", st.Nlink, nlink)
	}
}

// statPath is the path a stat call looked at, inside the root.
func (p *replayer) statPath(o *op, pr *process) string {
	fd := int(int32(o.raw[0]))
	if o.nr == linux.SysFstat || o.nr == linux.SysNewfstatat && o.paths[0] == "" {
		if f := pr.fds[fd]; f != nil {
			return f.path
		}
		return ""
	}
	dirfd := int64(linux.AtFdcwd)
	if o.nr == linux.SysNewfstatat {
		dirfd = int64(o.raw[0])
	}
	s, _ := p.resolve(pr, dirfd, o.paths[0])
	return s
}

// direntNames lists the names of a getdents64 buffer, sorted (file
// systems order entries differently).
func direntNames(b []byte) string {
	var names []string
	for off := 0; off+19 <= len(b); {
		rl := int(binary.LittleEndian.Uint16(b[off+16:]))
		if rl == 0 || off+rl > len(b) {
			break
		}
		name := b[off+19 : off+rl]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		names = append(names, string(name))
		off += rl
	}
	sort.Strings(names)
	return "[" + strings.Join(names, " ") + "]"
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

var _ = path.Clean

// under reports whether path lies in the recorded working directory.
func (p *replayer) under(path string) bool {
	cwd := strings.TrimRight(p.rep.Cwd, "/")
	return path == p.rep.Cwd || strings.HasPrefix(path, cwd+"/")
}
