package reanimate

import (
	"fmt"

	"ttd/internal/linux"
	"ttd/syscalls"
	"ttd/tracefile"
)

// op is a recorded call the replay acts on, with the bytes it needs.
type op struct {
	pos      uint64
	entry    uint64 // where it was entered (pos unless it blocked)
	pid, tid int
	nr       int
	raw      [6]uint64
	ret      int64
	paths    [2]string // path arguments, in order
	npaths   int
	unknown  bool   // a path argument was not in the recording
	data     []byte // written data (in), or returned data (out)
	text     string // the call as strace prints it (for reports)
	// shared is set for a shared mapping's write-back (not a syscall):
	// raw[0] is the address, raw[1] the mapping's position; data and
	// known the bytes.
	shared bool
	known  []bool
}

func (o *op) failed() bool { return o.ret < 0 && o.ret >= -linux.MaxErrno }

// kept are the syscalls the replay re-executes, verifies or needs to
// follow descriptors and the working directory.
var kept = map[int]bool{
	linux.SysOpen: true, linux.SysOpenat: true, linux.SysCreat: true, linux.SysClose: true,
	linux.SysWrite: true, linux.SysPwrite64: true, linux.SysWritev: true, linux.SysPwritev: true,
	linux.SysRead: true, linux.SysPread64: true, linux.SysReadv: true, linux.SysLseek: true,
	linux.SysTruncate: true, linux.SysFtruncate: true,
	linux.SysRename: true, linux.SysRenameat: true, linux.SysRenameat2: true,
	linux.SysUnlink: true, linux.SysUnlinkat: true, linux.SysRmdir: true, linux.SysMkdir: true, linux.SysMkdirat: true,
	linux.SysSymlink: true, linux.SysSymlinkat: true, linux.SysLink: true, linux.SysLinkat: true,
	linux.SysChmod: true, linux.SysFchmod: true, linux.SysFchmodat: true, linux.SysUtimensat: true,
	linux.SysFsync: true, linux.SysFdatasync: true,
	linux.SysChdir: true, linux.SysFchdir: true,
	linux.SysDup: true, linux.SysDup2: true, linux.SysDup3: true, linux.SysFcntl: true,
	linux.SysStat: true, linux.SysLstat: true, linux.SysFstat: true, linux.SysNewfstatat: true,
	linux.SysGetdents64: true, linux.SysFallocate: true, linux.SysMmap: true,
	linux.SysCopyFileRange: true, linux.SysSendfile: true,
}

// collector is the syscalls.Sink that keeps the calls the replay needs.
type collector struct {
	ops  []op
	exit *tracefile.Exit
}

func (c *collector) Call(call *syscalls.Call) error {
	if !kept[call.Nr] {
		return nil
	}
	if call.Nr == linux.SysMmap && (call.Raw[3]&linux.MAP_TYPE != linux.MAP_SHARED && call.Raw[3]&linux.MAP_TYPE != 3 || call.Raw[3]&linux.MAP_ANONYMOUS != 0) {
		return nil // only shared file mappings matter
	}
	o := op{pos: call.Pos, entry: call.Entry, pid: call.Pid, tid: call.Tid, nr: call.Nr, raw: call.Raw, ret: call.Ret, text: string(call.Text)}
	for _, a := range call.Args {
		if a.Type == syscalls.ArgString {
			if o.npaths < 2 {
				if a.Data == nil && a.Value != 0 {
					o.unknown = true
				}
				o.paths[o.npaths] = string(a.Data)
				o.npaths++
			}
		}
	}
	switch call.Nr {
	case linux.SysWrite, linux.SysPwrite64, linux.SysRead, linux.SysPread64, linux.SysNewfstatat,
		linux.SysStat, linux.SysLstat, linux.SysFstat, linux.SysGetdents64:
		for _, b := range call.Buffers {
			if b.Arg == 1 && (call.Nr == linux.SysWrite || call.Nr == linux.SysPwrite64 || call.Nr == linux.SysRead || call.Nr == linux.SysPread64 || call.Nr == linux.SysGetdents64) ||
				b.Out && b.Arg >= 1 && (call.Nr == linux.SysNewfstatat || call.Nr == linux.SysStat || call.Nr == linux.SysLstat || call.Nr == linux.SysFstat) {
				o.data = append([]byte(nil), b.Data...)
				if b.Missing > 0 {
					o.unknown = true
				}
			}
		}
	case linux.SysWritev, linux.SysPwritev, linux.SysReadv:
		// The iovec array first, then the bytes of each element.
		for k, b := range call.Buffers {
			if k > 0 && b.Arg == 1 {
				o.data = append(o.data, b.Data...)
				if b.Missing > 0 {
					o.unknown = true
				}
			}
		}
		if o.ret >= 0 && int64(len(o.data)) > o.ret {
			o.data = o.data[:o.ret]
		}
	case linux.SysUtimensat:
		for _, b := range call.Buffers {
			if b.Arg == 2 {
				o.data = append([]byte(nil), b.Data...)
			}
		}
	}
	c.ops = append(c.ops, o)
	return nil
}

// SharedWrite keeps a shared mapping's write-back (syscalls.SharedWriter).
func (c *collector) SharedWrite(w *syscalls.SharedWrite) error {
	c.ops = append(c.ops, op{pos: w.Pos, entry: w.Pos, pid: w.Pid, tid: w.Tid, shared: true, raw: [6]uint64{w.Addr, w.MapPos, w.Off},
		data: append([]byte(nil), w.Data...), known: append([]bool(nil), w.Known...),
		text: fmt.Sprintf("write-back of the shared mapping at %#x (%s, %d bytes)", w.Addr, w.Why, len(w.Data))})
	return nil
}

func (c *collector) End(e *tracefile.Exit) error {
	c.exit = e
	return nil
}
