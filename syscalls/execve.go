package syscalls

import (
	"ttd/internal/linux"
	"ttd/tracefile"
)

// A successful execve replaced the memory its arguments were in: by the
// time the re-simulation meets its record, the path and argv are gone
// with the old address space. The trace's ProcessExeced record keeps
// them, so the call is printed from it as strace prints it at entry:
// execve("/usr/bin/cat", ["cat"], 0x7ffc... /* envp */) = 0. The
// environment's variables are not in the record: envp prints as the
// pointer it was.

// execArgs fills c's arguments and text for an execve (or execveat)
// that p, the process's exec record, describes.
func (d *decoder) execArgs(c *Call, p *tracefile.Process) {
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
	start := len(b)
	b = appendQuoted(b, []byte(p.Path), d.strSize)
	c.Args = append(c.Args, Arg{Type: ArgString, Value: c.Raw[i], Text: string(b[start:]), Data: []byte(p.Path)})
	b = append(b, ", "...)
	start = len(b)
	b = append(b, '[')
	for k, a := range p.Argv {
		if k > 0 {
			b = append(b, ", "...)
		}
		b = appendQuoted(b, []byte(a), d.strSize)
	}
	b = append(b, ']')
	c.Args = append(c.Args, Arg{Type: ArgStruct, Value: c.Raw[i+1], Text: string(b[start:])})
	b = append(b, ", "...)
	start = len(b)
	b = appendPtr(b, c.Raw[i+2])
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
