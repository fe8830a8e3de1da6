package emu

import (
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
// process and the rest of the path ("" for the directory itself).
func (t *Thread) procTarget(p string) (*Process, string, bool) {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return nil, "", false
	}
	id, rest, _ := strings.Cut(rest, "/")
	switch id {
	case "self", "thread-self":
		return t.P, rest, true
	}
	n, err := strconv.Atoi(id)
	if err != nil {
		return nil, "", false
	}
	q := t.P.m.process(n)
	if q == nil {
		if th := t.P.m.threadByID(n); th != nil {
			q = th.P
		}
	}
	if q == nil {
		return nil, "", false
	}
	return q, rest, true
}

// procPath rewrites a path into /proc that names a guest process's
// descriptor or executable into the host path of the same object:
// /proc/self/fd/N becomes ttd's descriptor behind guest N (a missing
// one a path that does not exist), /proc/self/exe the executable.
func (t *Thread) procPath(p string) string {
	if !strings.HasPrefix(p, "/proc/") {
		return p
	}
	q, rest, ok := t.procTarget(p)
	if !ok {
		return p
	}
	switch {
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
	}
	return p
}

// procData returns the contents of the /proc file p when it describes
// a guest process; ok is false for other paths.
func (t *Thread) procData(p string) (data []byte, ok bool) {
	q, rest, ok := t.procTarget(p)
	if !ok {
		return nil, false
	}
	switch rest {
	case "maps":
		if q.MM == nil || q.released {
			return nil, true
		}
		return []byte(q.MM.Maps()), true
	case "auxv":
		for _, v := range q.auxv {
			data = append(data, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
		}
		return data, true
	case "cmdline":
		for _, a := range q.argv {
			data = append(data, a...)
			data = append(data, 0)
		}
		return data, true
	case "comm":
		return []byte(q.comm() + "\n"), true
	case "status":
		return q.statusFile(), true
	case "stat":
		return q.statFile(), true
	}
	return nil, false
}

// comm is the process's name: its main thread's prctl name, or the
// executable's base name, 15 bytes at most.
func (p *Process) comm() string {
	if len(p.threads) > 0 {
		n := p.threads[0].name
		if n[0] != 0 {
			return strings.TrimRight(string(n[:]), "\x00")
		}
	}
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

// statusFile is /proc/PID/status: ttd's own with the lines that name
// the process replaced.
func (p *Process) statusFile() []byte {
	host, _ := os.ReadFile("/proc/self/status")
	var b strings.Builder
	for _, line := range strings.SplitAfter(string(host), "\n") {
		key, _, _ := strings.Cut(line, ":")
		switch key {
		case "Name":
			line = "Name:\t" + p.comm() + "\n"
		case "State":
			line = "State:\t" + p.state() + " (" + map[string]string{"R": "running", "T": "stopped", "Z": "zombie"}[p.state()] + ")\n"
		case "Tgid", "Pid":
			line = key + ":\t" + itoa(p.PID) + "\n"
		case "PPid":
			line = "PPid:\t" + itoa(p.ppid()) + "\n"
		case "TracerPid":
			line = "TracerPid:\t0\n"
		case "Threads":
			line = "Threads:\t" + itoa(len(p.threads)) + "\n"
		case "NSpid", "NStgid":
			line = key + ":\t" + itoa(p.PID) + "\n"
		case "NSpgid":
			line = "NSpgid:\t" + itoa(p.pgid) + "\n"
		case "NSsid":
			line = "NSsid:\t" + itoa(p.sid) + "\n"
		}
		b.WriteString(line)
	}
	return []byte(b.String())
}

// statFile is /proc/PID/stat: ttd's own with the fields that describe
// the process replaced.
func (p *Process) statFile() []byte {
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
	set(20, itoa(len(p.threads)))
	return []byte(itoa(p.PID) + " (" + p.comm() + ") " + strings.Join(f, " ") + "\n")
}

// procDir answers the directories /proc/PID/task and /proc/PID/fd of a
// guest process (ttd's own list ttd's threads and descriptors, and a
// child's pid is not the host's) with a host directory made for the
// listing: one directory per thread id, one symbolic link per
// descriptor to what it names (as Linux's d_type says). The directories
// go when the machine ends.
func (t *Thread) procDir(p string) (int, bool, error) {
	q, rest, ok := t.procTarget(path.Clean(p))
	if !ok || q.released {
		return -1, false, nil
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
				if err := os.Symlink(target, path.Join(dir, itoa(fd))); err != nil {
					return err
				}
			}
			return nil
		}
	default:
		return -1, false, nil
	}
	dir, err := os.MkdirTemp("", "ttd-proc-")
	if err != nil {
		return -1, true, errno(err)
	}
	m.procDirs = append(m.procDirs, dir)
	if err := mk(dir); err != nil {
		return -1, true, errno(err)
	}
	h, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, true, errno(err)
	}
	return h, true, nil
}

// removeProcDirs removes the directories procDir made.
func (m *Machine) removeProcDirs() {
	for _, d := range m.procDirs {
		os.RemoveAll(d)
	}
	m.procDirs = nil
}
