package syscalls

import (
	"strconv"

	"ttd/internal/linux"
	"ttd/reader"
	"ttd/tracefile"
)

// The recording's first process never calls execve under ttd: ttd loads
// the program itself, so the trace holds no record of it. strace shows
// that execve as its first line, and the export does too, made from the
// header (the program as strace names it: the command line's, resolved
// through PATH when it has no slash; the count of environment
// variables, parameter envc) and the process's start record (argv). Its
// Raw holds 0 for the path (the caller's pointer is in no recorded
// memory), then argv's and envp's addresses on the new stack, where the
// loader put them (argc at the initial stack pointer, then argv's
// pointers, a NULL, envp's): strace prints envp's address in the
// caller, so that value differs as every address does. A trace without
// envc counts envp's pointers in the re-simulated memory when it knows
// them (a trace that logs no reads), else prints the pointer alone.

// firstExec fills c with the execve that started process p, whose
// initial stack pointer was sp.
func (d *decoder) firstExec(c *Call, t *reader.Trace, p *tracefile.Process, m *replayMemory, sp uint64) {
	c.Pos, c.Entry, c.Pid, c.Tid = p.Position, p.Position, p.Pid, p.Pid
	c.Nr, c.Name = linux.SysExecve, linux.SyscallName(linux.SysExecve)
	c.NoReturn, c.Resumed, c.VDSO = false, false, false
	argv := sp + 8
	envp := argv + 8*uint64(len(p.Argv)+1)
	c.Raw = [6]uint64{0, argv, envp}
	x := execEntry{ok: true, envc: -1}
	if n, err := strconv.Atoi(t.Header.Params["envc"]); err == nil && n >= 0 {
		x.envc = n
	} else if n, ok := m.countEnv(sp, len(p.Argv)); ok {
		x.envc = n
	}
	q := *p
	if t.Header.ProgramPath != "" {
		q.Path = t.Header.ProgramPath
	}
	d.execArgs(c, &q, &x)
}

// countEnv counts the pointers of the envp array above a stack whose
// argc, at sp, must be argc; false when they are not known.
func (m *replayMemory) countEnv(sp uint64, argc int) (int, bool) {
	var w [8]byte
	if sp == 0 || m.Read(sp, w[:]) != 0 || le64(w[:], 0) != uint64(argc) {
		return 0, false
	}
	n, known := 0, true
	m.pointers(sp+8+8*uint64(argc+1), func(uint64) { n++ }, &known)
	return n, known
}
