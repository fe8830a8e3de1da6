package emu

import (
	"errors"

	"golang.org/x/sys/unix"

	"ttd/x86"
)

// maxArgs bounds argv and envp (like the kernel's MAX_ARG_STRINGS, much
// smaller).
const maxArgs = 1 << 16

// copyInStrings reads a NULL-terminated array of string pointers.
func (t *Thread) copyInStrings(addr uint64) ([]string, error) {
	var out []string
	if addr == 0 {
		return nil, nil
	}
	total := 0
	for i := 0; ; i++ {
		if i >= maxArgs {
			return nil, unix.E2BIG
		}
		p, err := t.readU64(addr + uint64(8*i))
		if err != nil {
			return nil, err
		}
		if p == 0 {
			return out, nil
		}
		s, err := t.CopyInString(p, 128<<10)
		if err != nil {
			if err == unix.ENAMETOOLONG {
				err = unix.E2BIG
			}
			return nil, err
		}
		total += len(s) + 1
		if total > 2<<20 {
			return nil, unix.E2BIG
		}
		out = append(out, s)
	}
}

// execve replaces the process image, in place: the same process and
// thread run the new program in a new address space. On failure the old
// image is untouched.
func (t *Thread) execve(dirfd int, pathAddr, argvAddr, envpAddr uint64, flags int) (uint64, error) {
	p := t.P
	path, err := t.CopyInString(pathAddr, unix.PathMax)
	if err != nil {
		return 0, err
	}
	if path == "" && flags&unix.AT_EMPTY_PATH == 0 {
		return 0, unix.ENOENT
	}
	argv, err := t.copyInStrings(argvAddr)
	if err != nil {
		return 0, err
	}
	envp, err := t.copyInStrings(envpAddr)
	if err != nil {
		return 0, err
	}
	if dirfd != unix.AT_FDCWD && (len(path) == 0 || path[0] != '/') {
		h, err := p.fds.host(dirfd)
		if err != nil {
			return 0, err
		}
		if path == "" {
			path = "/proc/self/fd/" + itoa(h)
		} else {
			path = "/proc/self/fd/" + itoa(h) + "/" + path
		}
	}
	if len(argv) == 0 {
		argv = []string{""} // Linux passes an empty argv[0]
	}
	oldMM, oldCPU := p.MM, t.CPU
	oldMM.Code.WakeStore() // the new image may run the same code (the same libraries)
	p.MM = newMM(oldMM.Code.Store())
	cpu := x86.NewCPU(p.MM.Mem, p.MM.Code)
	p.env.install(cpu)
	cpu.Obs = oldCPU.Obs
	cpu.Icount = oldCPU.Icount // the thread's count goes on
	t.CPU = cpu
	if err := p.exec(t, path, argv, envp); err != nil {
		p.MM.release()
		p.MM, t.CPU = oldMM, oldCPU
		var le *LoadError
		if errors.As(err, &le) {
			err = le.Err
		}
		if errors.Is(err, ErrNotExecutable) {
			return 0, unix.ENOEXEC
		}
		return 0, errno(err)
	}
	oldMM.release() // another process may still use it (vfork)
	p.execed = true
	t.execed = true
	p.vforkRelease()
	// The other threads end (reported before the exec, so that an
	// observer sees the leader's tid free when the calling thread takes
	// it); the calling one becomes the main thread, with the thread
	// group leader's tid as Linux gives it (de_thread).
	for _, th := range append([]*Thread(nil), p.threads...) {
		if th != t {
			if p.obs != nil {
				p.obs.ThreadExit(th, 0)
			}
			p.removeThread(th)
		}
	}
	if m := p.m; m.obs != nil {
		m.obs.ProcessExec(p)
	}
	t.Tid = p.PID
	p.deletePosixTimers()
	// What execve resets: close-on-exec descriptors, caught signals
	// (ignored ones stay ignored), the alternate stack, robust list.
	for fd, e := range p.fds.files {
		if e != nil && e.cloexec {
			p.fds.close(fd)
		}
	}
	for sig := range p.sig {
		if p.sig[sig].handler != sigIgn {
			p.sig[sig] = sigAction{}
		}
	}
	t.altStack = stackT{flags: ssDisable}
	t.robustList, t.clearChildTID = 0, 0
	t.name = [16]byte{}
	t.prctl.keepcaps = false // execve resets these
	p.undumpable = false
	return 0, errNoResult
}

// Execve implements Linux syscall execve(2).
func Execve(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.execve(unix.AT_FDCWD, a.A[0], a.A[1], a.A[2], 0)
}

// Execveat implements Linux syscall execveat(2).
func Execveat(t *Thread, a *SyscallArgs) (uint64, error) {
	return t.execve(a.Int(0), a.A[1], a.A[2], a.A[3], a.Int(4))
}
