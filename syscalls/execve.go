package syscalls

import (
	"strconv"

	"ttd/internal/linux"
	"ttd/tracefile"
)

// A successful execve replaced the memory its arguments were in: by the
// time the re-simulation meets its record, the path and argv are gone
// with the old address space. The export stops the re-simulation just
// before each execve (entry.go) and reads them there: the path, argv
// and how many variables envp has, as strace prints them at entry:
// execve("/bin/cat", ["cat"], 0x7ffc... /* 35 vars */) = 0. When that
// memory is unknown, the trace's ProcessExeced record has the program
// (its path resolved), argv and the count of envp (traces of minor
// version 4 on; older ones print envp as the pointer alone).

// execEntry is an execve's input read before the call.
type execEntry struct {
	ok                   bool
	path                 []byte
	argv                 [][]byte
	envc                 int // -1: unknown
	pathKnown, argvKnown bool
}

// execEntry reads e's path, argv and envp count.
func (m *replayMemory) execEntry(e *entryCall) execEntry {
	a := e.args
	if e.nr == linux.SysExecveat {
		a = [6]uint64{a[1], a[2], a[3]}
	}
	x := execEntry{ok: true, envc: -1}
	x.path, x.pathKnown = m.cString(a[0])
	x.argvKnown = true
	m.pointers(a[1], func(p uint64) {
		s, ok := m.cString(p)
		x.argv = append(x.argv, s)
		x.argvKnown = x.argvKnown && ok
	}, &x.argvKnown)
	n, known := 0, true
	m.pointers(a[2], func(uint64) { n++ }, &known)
	if known {
		x.envc = n
	}
	return x
}

// cString reads the NUL-terminated string at addr (4096 bytes at most).
func (m *replayMemory) cString(addr uint64) ([]byte, bool) {
	var out []byte
	var b [1]byte
	for ; len(out) < 4096 && addr != 0; addr++ {
		if m.Read(addr, b[:]) != 0 {
			return out, false
		}
		if b[0] == 0 {
			return out, true
		}
		out = append(out, b[0])
	}
	return out, false
}

// pointers calls fn for each pointer of the NULL-terminated array at
// addr (1<<16 at most); known is cleared if one is unknown.
func (m *replayMemory) pointers(addr uint64, fn func(p uint64), known *bool) {
	if addr == 0 {
		return
	}
	var w [8]byte
	for i := 0; i < 1<<16; i++ {
		if m.Read(addr+8*uint64(i), w[:]) != 0 {
			*known = false
			return
		}
		p := le64(w[:], 0)
		if p == 0 {
			return
		}
		fn(p)
	}
}

// execArgs fills c's arguments and text for an execve (or execveat)
// that p, the process's exec record, describes.
func (d *decoder) execArgs(c *Call, p *tracefile.Process, e *execEntry) {
	d.c = c
	c.Args, c.Buffers = c.Args[:0], c.Buffers[:0]
	b := append(c.Text[:0], c.Name...)
	b = append(b, '(')
	i := 0
	if c.Nr == linux.SysExecveat {
		start := len(b)
		b, _, _ = d.arg(b, 0, arg{k: kDirfd})
		c.Args = append(c.Args, Arg{Type: ArgFd, Value: c.Raw[0], Text: string(b[start:])})
		b = append(b, ", "...)
		i = 1
	}
	path, argv, envc := []byte(p.Path), make([][]byte, len(p.Argv)), p.Envc-1
	for k, a := range p.Argv {
		argv[k] = []byte(a)
	}
	if x := e; x != nil && x.ok {
		if x.pathKnown {
			path = x.path
		}
		if x.argvKnown {
			argv = x.argv
		}
		if x.envc >= 0 {
			envc = x.envc
		}
	}
	start := len(b)
	b = appendQuoted(b, path, -1) // a path, printed whole as strace does
	c.Args = append(c.Args, Arg{Type: ArgString, Value: c.Raw[i], Text: string(b[start:]), Data: path})
	b = append(b, ", "...)
	start = len(b)
	b = append(b, '[')
	for k, a := range argv {
		if k > 0 {
			b = append(b, ", "...)
		}
		b = appendQuoted(b, a, d.strSize)
	}
	b = append(b, ']')
	c.Args = append(c.Args, Arg{Type: ArgStruct, Value: c.Raw[i+1], Text: string(b[start:])})
	b = append(b, ", "...)
	start = len(b)
	b = appendPtr(b, c.Raw[i+2])
	if envc >= 0 {
		b = append(b, " /* "...)
		b = strconv.AppendInt(b, int64(envc), 10)
		b = append(b, " var"...)
		if envc != 1 {
			b = append(b, 's')
		}
		b = append(b, " */"...)
	}
	c.Args = append(c.Args, Arg{Type: ArgPtr, Value: c.Raw[i+2], Text: string(b[start:])})
	if c.Nr == linux.SysExecveat {
		b = append(b, ", "...)
		start = len(b)
		b = linux.AtFlags.Append(b, c.Raw[4])
		c.Args = append(c.Args, Arg{Type: ArgFlags, Value: c.Raw[4], Text: string(b[start:])})
	}
	c.Text = append(b, ')')
	c.Split = len(c.Text) - 1
	c.Ret = 0 // what the new program finds in rax
	c.RetText = append(c.RetText[:0], '0')
}
