package dap

import (
	"context"

	"ttd/ttd"
)

// Target is what the server debugs: package ttd's Target, the debugger
// backend shared with the gdb server (a recording at a current
// position, which can move in both directions, its symbols, threads,
// frames, variables and searches). The server is a protocol layer over
// it and keeps no types of its own for what the backend says; the
// interface lists what the server uses, so that tests can stand in for
// a part of it. It is used by one goroutine at a time; a long Search
// watches its context.
type Target interface {
	Bounds() (start, end uint64)
	Position() uint64
	Seek(pos uint64) error
	Search(ctx context.Context, dir ttd.Direction, q ttd.Query) (ttd.SearchStop, error)
	Exit() ttd.ExitInfo

	Threads() ([]ttd.TargetThread, error)
	CurrentThread() int
	// OSThread is the OS thread behind thread id (a goroutine's).
	OSThread(id int) int
	// ThreadLabel names thread id's process in a recording of a process
	// tree ("PROGRAM[PID] tid TID"), "" in a recording of one process.
	ThreadLabel(id int) string
	Registers(id int) (ttd.Registers, error)
	// ReadThreadMemory reads the address space of thread id's process.
	ReadThreadMemory(id int, addr uint64, buf []byte) (known []bool, err error)

	Stack(id, max int) ([]ttd.StackFrame, error)
	Locate(pc uint64) ttd.CodeLocation
	// Locator is Locate in the program thread id's process runs at the
	// current position (in a process tree, programs overlap), usable in
	// a search's predicate.
	Locator(id int) func(pc uint64) ttd.CodeLocation
	LineAddrs(file string, line int) (addrs []uint64, actual int, err error)
	FunctionAddr(name string) (uint64, error)
	Variables(id, frame int) ([]ttd.Var, error)
	Eval(id, frame int, expr string) (ttd.Var, error)
	Disassemble(id int, addr uint64) (text string, n int)
	// OriginLines is the value origin of [addr, addr+size) at the
	// current position, one line per link.
	OriginLines(addr, size uint64) ([]string, error)

	Close() error
}

// OpenTrace opens a recording for debugging with the symbols of the
// modules it mapped (embedded in the trace, or read from their recorded
// paths, or from opts.Binaries). A recording without access summaries
// (ttd record --no-summaries) gets them built in memory.
func OpenTrace(path string, opts OpenOptions) (Target, error) {
	t, err := ttd.OpenTarget(path, opts.Binaries)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// registerNames name ttd.StackFrame.Regs (symbols' order).
var registerNames = [17]string{"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"}
