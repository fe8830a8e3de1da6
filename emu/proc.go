package emu

import (
	"encoding/binary"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The guest's /proc. ttd's own /proc describes ttd (its Go threads, its
// descriptors, its pid): the files and links that describe a process are
// answered from the guest's state for every process of the tree, by
// /proc/self, /proc/thread-self or the guest pid.

// procTarget splits a /proc path naming a process of the tree into the
// process and the rest of the path ("" for the directory itself); a
// thread's directory (/proc/PID/task/TID, /proc/thread-self) names its
// process, with the rest after it.
func (t *Thread) procTarget(p string) (*Process, string, bool) {
	q, _, rest, ok := t.procTask(p)
	return q, rest, ok
}

// procTask is procTarget that also returns the thread a path names
// through /proc/thread-self or /proc/PID/task/TID (nil for a process's
// own files).
func (t *Thread) procTask(p string) (*Process, *Thread, string, bool) {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return nil, nil, "", false
	}
	id, rest, _ := strings.Cut(rest, "/")
	var q *Process
	var th *Thread
	switch id {
	case "self":
		q = t.P
	case "thread-self":
		q, th = t.P, t
	default:
		n, err := strconv.Atoi(id)
		if err != nil {
			return nil, nil, "", false
		}
		q = t.P.m.process(n)
		if q == nil {
			if th := t.P.m.threadByID(n); th != nil {
				q = th.P
			}
		}
		if q == nil {
			return nil, nil, "", false
		}
	}
	if th == nil {
		if tasks, ok := strings.CutPrefix(rest, "task/"); ok {
			id, after, _ := strings.Cut(tasks, "/")
			if n, err := strconv.Atoi(id); err == nil {
				for _, x := range q.threads {
					if x.Tid == n {
						th, rest = x, after
					}
				}
			}
		}
	}
	return q, th, rest, true
}

// procPath rewrites a path into /proc that names a guest process's
// descriptor or executable into the host path of the same object:
// /proc/self/fd/N becomes ttd's descriptor behind guest N (a missing
// one a path that does not exist), /proc/self/exe the executable.
// The directories of a guest process and thread become ttd's own
// (/proc/self, /proc/thread-self), which have their attributes: a
// process other than the first has no host directory of its pid, and
// its threads none of their tids.
func (t *Thread) procPath(p string) string {
	p = devFDPath(p)
	if !strings.HasPrefix(p, "/proc/") {
		return p
	}
	switch p {
	case "/proc/self", "/proc/thread-self":
		return p // links, to the guest's directories: readlinkat
	}
	q, th, rest, ok := t.procTask(path.Clean(p))
	if !ok {
		return p
	}
	self := "/proc/" + itoa(os.Getpid()) // not the link /proc/self
	switch {
	case rest == "" && th != nil:
		return self + "/task/" + itoa(os.Getpid())
	case rest == "" && !q.released:
		return self
	case rest == "task" && !q.released:
		return self + "/task"
	case strings.HasPrefix(rest, "task/"):
		return "/proc/self/task/-1" // not a thread of the process
	case rest == "exe":
		return q.exe
	case strings.HasPrefix(rest, "fd/") && strings.Trim(rest, "/") != "fd":
		fd, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(rest, "fd/"), "/"))
		if err != nil || q.fds == nil || q.released {
			return "/proc/self/fd/-1"
		}
		h, err := q.fds.host(fd)
		if err != nil {
			return "/proc/self/fd/-1"
		}
		return "/proc/self/fd/" + itoa(h)
	case rest == "cwd" && q.fs != nil && !q.released:
		return "/proc/self/fd/" + itoa(q.fs.cwdFD)
	case th == nil && q != t.P && !q.released:
		// Another process of the tree: what ttd does not answer itself
		// (its namespaces, root, limits...) is ttd's, not the host
		// process's that may have the same number.
		return self + "/" + rest
	}
	return p
}

// devFDPath spells the links in /dev that lead into /proc/self as the
// /proc paths they lead to: /dev/fd is a link to /proc/self/fd, and
// /dev/stdin, /dev/stdout and /dev/stderr are links to /proc/self/fd/0,
// 1 and 2. Left to the host they would name ttd's descriptors, not the
// guest's: bash's process substitution passes /dev/fd/63 to the
// command, and ttd's own 63 is another file (diff called it a directory).
// Callers that do not follow a final link (readlink, lstat) leave
// /dev/stdin, the others and /dev/fd as they are (isDevLink).
func devFDPath(p string) string {
	if !strings.HasPrefix(p, "/dev/") {
		return p
	}
	switch p {
	case "/dev/stdin":
		return "/proc/self/fd/0"
	case "/dev/stdout":
		return "/proc/self/fd/1"
	case "/dev/stderr":
		return "/proc/self/fd/2"
	case "/dev/fd", "/dev/fd/":
		return "/proc/self/fd"
	}
	if rest, ok := strings.CutPrefix(p, "/dev/fd/"); ok {
		return "/proc/self/fd/" + rest
	}
	return p
}

// isDevLink reports whether p is one of the links of /dev that
// devFDPath follows, which readlink and lstat must see as the links
// they are.
func isDevLink(p string) bool {
	switch p {
	case "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/fd":
		return true
	}
	return false
}

// procData returns the contents of the /proc file p when it describes
// a guest process; ok is false for other paths.
func (t *Thread) procData(p string) (data []byte, ok bool) {
	q, th, rest, ok := t.procTask(p)
	if !ok {
		return nil, false
	}
	gen, ok := procGen(q, th, rest)
	if !ok {
		return nil, false
	}
	return gen(), true
}

// procGen returns what makes the contents of the file rest of process q
// (of its thread th, when not nil), run when the file is read; ok is
// false for the files ttd leaves to the host.
func procGen(q *Process, th *Thread, rest string) (gen func() []byte, ok bool) {
	if th != nil {
		switch rest {
		case "comm":
			return func() []byte { return []byte(th.comm() + "\n") }, true
		case "status":
			return func() []byte { return q.statusFile(th) }, true
		case "stat":
			return func() []byte { return q.statFile(th) }, true
		}
	}
	switch rest {
	case "maps":
		return func() []byte {
			if q.MM == nil || q.released {
				return nil
			}
			return []byte(q.MM.Maps())
		}, true
	case "auxv":
		return func() (data []byte) {
			for _, v := range q.auxv {
				data = binary.LittleEndian.AppendUint64(data, v)
			}
			return data
		}, true
	case "cmdline":
		return func() (data []byte) {
			for _, a := range q.argv {
				data = append(append(data, a...), 0)
			}
			return data
		}, true
	case "comm":
		return func() []byte { return []byte(q.comm() + "\n") }, true
	case "personality":
		return func() []byte { return fmt.Appendf(nil, "%08x\n", q.persona) }, true
	case "status":
		return func() []byte { return q.statusFile(nil) }, true
	case "stat":
		return func() []byte { return q.statFile(nil) }, true
	}
	return nil, false
}

// comm is the process's name: its main thread's prctl name, or the
// executable's base name, 15 bytes at most.
func (p *Process) comm() string {
	if len(p.threads) > 0 {
		return p.threads[0].comm()
	}
	return p.exeComm()
}

// comm is the thread's name: its prctl name, or its process's
// executable's base name.
func (t *Thread) comm() string {
	if t.name[0] != 0 {
		return strings.TrimRight(string(t.name[:]), "\x00")
	}
	return t.P.exeComm()
}

// exeComm is the executable's base name, 15 bytes at most: the name a
// process starts with.
func (p *Process) exeComm() string {
	name := path.Base(p.exe)
	if len(name) > 15 {
		name = name[:15]
	}
	return name
}

// state is the process's one-letter state in /proc.
func (p *Process) state() string {
	switch {
	case p.zombie:
		return "Z"
	case p.stopped:
		return "T"
	}
	return "R"
}

func (p *Process) ppid() int {
	if p.parent != nil {
		return p.parent.PID
	}
	return os.Getppid()
}

// nameAndID are the name and id /proc shows for thread th of p, or for
// p itself when th is nil.
func (p *Process) nameAndID(th *Thread) (string, int) {
	if th != nil {
		return th.comm(), th.Tid
	}
	return p.comm(), p.PID
}

// statusFile is /proc/PID/status, or with th /proc/PID/task/TID/status:
// ttd's own with the lines that name the process and thread replaced.
func (p *Process) statusFile(th *Thread) []byte {
	name, pid := p.nameAndID(th)
	host, _ := os.ReadFile("/proc/self/status")
	caps := th
	if caps == nil && len(p.threads) > 0 {
		caps = p.threads[0]
	}
	capLine := func(key string, v uint64) string { return fmt.Sprintf("%s:\t%016x\n", key, v) }
	var b strings.Builder
	for _, line := range strings.SplitAfter(string(host), "\n") {
		key, _, _ := strings.Cut(line, ":")
		switch key {
		case "Name":
			line = "Name:\t" + name + "\n"
		case "State":
			line = "State:\t" + p.state() + " (" + map[string]string{"R": "running", "T": "stopped", "Z": "zombie"}[p.state()] + ")\n"
		case "Tgid":
			line = "Tgid:\t" + itoa(p.PID) + "\n"
		case "Pid":
			line = "Pid:\t" + itoa(pid) + "\n"
		case "PPid":
			line = "PPid:\t" + itoa(p.ppid()) + "\n"
		case "TracerPid":
			line = "TracerPid:\t0\n"
		case "Threads":
			line = "Threads:\t" + itoa(len(p.threads)) + "\n"
		case "NStgid":
			line = "NStgid:\t" + itoa(p.PID) + "\n"
		case "NSpid":
			line = "NSpid:\t" + itoa(pid) + "\n"
		case "NSpgid":
			line = "NSpgid:\t" + itoa(p.pgid) + "\n"
		case "NSsid":
			line = "NSsid:\t" + itoa(p.sid) + "\n"
		}
		if c := caps; c != nil {
			switch key {
			case "CapInh":
				line = capLine(key, c.prctl.caps.inh)
			case "CapPrm":
				line = capLine(key, c.prctl.caps.perm)
			case "CapEff":
				line = capLine(key, c.prctl.caps.eff)
			case "CapBnd":
				line = capLine(key, c.prctl.caps.bset)
			case "CapAmb":
				line = capLine(key, c.prctl.caps.amb)
			}
		}
		b.WriteString(line)
	}
	return []byte(b.String())
}

// statFile is /proc/PID/stat, or with th /proc/PID/task/TID/stat: ttd's
// own with the fields that describe the process and thread replaced.
func (p *Process) statFile(th *Thread) []byte {
	name, pid := p.nameAndID(th)
	host, _ := os.ReadFile("/proc/self/stat")
	s := string(host)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return host
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state).
	set := func(field int, v string) {
		if field-3 < len(f) {
			f[field-3] = v
		}
	}
	set(3, p.state())
	set(4, itoa(p.ppid()))
	set(5, itoa(p.pgid))
	set(6, itoa(p.sid))
	set(18, itoa(20+p.nice))
	set(19, itoa(p.nice))
	set(20, itoa(len(p.threads)))
	return []byte(itoa(pid) + " (" + name + ") " + strings.Join(f, " ") + "\n")
}

// procDir answers the directories /proc/PID/task and /proc/PID/fd of a
// guest process (ttd's own list ttd's threads and descriptors, and a
// child's pid is not the host's) with a host directory made for the
// listing: one directory per thread id, one symbolic link per
// descriptor to what it names (as Linux's d_type says). The directories
// go when the machine ends. A process listing its own descriptors also
// sees the one it reads the listing through, as on Linux: own is then
// the directory, for listOwnFD to add it once it has a number.
func (t *Thread) procDir(p string) (h int, own string, ok bool, err error) {
	q, rest, ok := t.procTarget(path.Clean(p))
	if !ok || q.released {
		return -1, "", false, nil
	}
	m := t.P.m
	var mk func(dir string) error
	switch rest {
	case "task":
		mk = func(dir string) error {
			for _, th := range q.threads {
				if err := os.Mkdir(path.Join(dir, itoa(th.Tid)), 0o555); err != nil {
					return err
				}
			}
			return nil
		}
	case "fd":
		mk = func(dir string) error {
			for fd, e := range q.fds.files {
				if e == nil {
					continue
				}
				target, _ := readFDPath(e.host)
				if err := os.Symlink(m.guestProcDir(target), path.Join(dir, itoa(fd))); err != nil {
					return err
				}
			}
			return nil
		}
	default:
		return -1, "", false, nil
	}
	dir, err := os.MkdirTemp("", "ttd-proc-")
	if err != nil {
		return -1, "", true, errno(err)
	}
	if m.procDirs == nil {
		m.procDirs = map[string]string{}
	}
	m.procDirs[dir] = "/proc/" + itoa(q.PID) + "/" + rest
	if err := mk(dir); err != nil {
		return -1, "", true, errno(err)
	}
	h, err = unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", true, errno(err)
	}
	if rest == "fd" && q == t.P {
		own = dir
	}
	return h, own, true, nil
}

// listOwnFD adds descriptor fd, the one a process reads the listing of
// its own descriptors through, to that listing (dir, from procDir): a
// link to /proc/PID/fd, the directory Linux names for it.
func (t *Thread) listOwnFD(dir string, fd int) error {
	return errno(os.Symlink(t.P.m.procDirs[dir], path.Join(dir, itoa(fd))))
}

// guestProcDir is the name of host path p for the guest: the guest
// directory a listing procDir made stands for, else p.
func (m *Machine) guestProcDir(p string) string {
	if g, ok := m.procDirs[p]; ok {
		return g
	}
	return p
}

// removeProcDirs removes the directories procDir made.
func (m *Machine) removeProcDirs() {
	for d := range m.procDirs {
		os.RemoveAll(d)
	}
	m.procDirs = nil
}
