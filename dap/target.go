package dap

import (
	"context"
	"errors"
)

// Target is what the server debugs: a recording at a current position,
// which can move in both directions, and the program's symbols. It is
// used by one goroutine at a time; a long Search watches its context.
type Target interface {
	// Bounds are the first and the last position of the recording: the
	// state before the first instruction and after the last one.
	Bounds() (start, end uint64)
	// Position is the current position.
	Position() uint64
	// Seek moves to pos (clamped to Bounds).
	Seek(pos uint64) error
	// Search moves in dir to the nearest position that matches q,
	// strictly after (Forward) or before (Backward) the current one, and
	// says why it stopped. Without a match it stops at the end or the
	// start of the recording (StopEnd, StopStart). It returns ctx's error
	// if ctx is cancelled, staying where the search had come to.
	Search(ctx context.Context, dir Direction, q Query) (Stop, error)
	// Exit says how the program ended (at the end of the recording).
	Exit() Exit

	// Threads lists the threads alive at the current position; the one
	// about to run is CurrentThread.
	Threads() ([]Thread, error)
	CurrentThread() int
	// Registers returns thread tid's registers at the current position.
	Registers(tid int) (Registers, error)
	// ReadMemory fills buf from addr as the memory is at the current
	// position; known[i] is false for a byte the recording does not
	// know (buf[i] is then meaningless); known == nil means all known.
	ReadMemory(addr uint64, buf []byte) (known []bool, err error)

	// Stack unwinds thread tid at the current position, innermost frame
	// first, at most max frames.
	Stack(tid, max int) ([]Frame, error)
	// Locate describes the code at pc: function, source line and whether
	// pc begins a statement.
	Locate(pc uint64) Location
	// LineAddrs returns the addresses at which a breakpoint on file:line
	// stops, and the line they belong to (the next line with code).
	LineAddrs(file string, line int) (addrs []uint64, actual int, err error)
	// FunctionAddr returns the address of function name, after its
	// prologue.
	FunctionAddr(name string) (uint64, error)
	// Variables returns frame's arguments and locals (frame indexes
	// Stack(tid)).
	Variables(tid, frame int) ([]Var, error)
	// Eval evaluates a source expression (or a register, $rax) in frame.
	Eval(tid, frame int, expr string) (Var, error)
	// Disassemble decodes the instruction at addr; n is its length (0 if
	// its bytes are unknown).
	Disassemble(addr uint64) (text string, n int)

	Close() error
}

// osThreader is a Target whose thread ids are not all OS threads (the
// goroutines of a Go program): OSThread returns the OS thread that runs
// id, or id.
type osThreader interface {
	OSThread(id int) int
}

// osThread is the OS thread behind thread id: a step's Query.Step sees
// OS threads (InstState.Tid).
func osThread(t Target, id int) int {
	if o, ok := t.(osThreader); ok {
		return o.OSThread(id)
	}
	return id
}

// Direction is the direction of execution.
type Direction int

// Directions of Search.
const (
	Forward Direction = iota
	Backward
)

func (d Direction) String() string {
	if d == Backward {
		return "backward"
	}
	return "forward"
}

// Query is what a Search stops at; an empty Query runs to the end (or
// start) of the recording.
type Query struct {
	// Exec stops before an instruction at one of these addresses, on any
	// thread.
	Exec map[uint64]bool
	// Watch stops at an instruction that accesses memory in one of the
	// ranges.
	Watch []Watch
	// Step, when set, is called for every instruction; true stops there.
	// It must be cheap: it runs in the re-simulation's inner loop.
	Step func(s *InstState) bool
	// Signals stops where a signal is delivered to the program.
	Signals bool
	// Thread, when set, makes the search one instruction step of that OS
	// thread (ttd's Session.StepThread: other threads run or un-run as
	// they did in between); Step is then the same step as a predicate.
	Thread int
}

// Watch is a data breakpoint: an address range and the accesses that
// trigger it.
type Watch struct {
	Addr        uint64
	Size        int
	Read, Write bool
}

// InstState is the state before one instruction, as Query.Step sees it.
type InstState struct {
	Pos    uint64
	Tid    int
	PC, SP uint64
}

// StopReason says why a Search stopped.
type StopReason int

// Stop reasons.
const (
	StopExec   StopReason = iota + 1 // an instruction in Query.Exec
	StopWatch                        // an access to a Query.Watch range
	StopStep                         // Query.Step returned true
	StopSignal                       // a signal was delivered
	StopStart                        // the start of the recording
	StopEnd                          // the end of the recording
)

// Stop is where a Search stopped.
type Stop struct {
	Reason StopReason
	Pos    uint64
	Tid    int
	PC     uint64
	// For StopWatch: which watch and the access.
	Watch  int
	Access Access
	// For StopSignal: the signal.
	Signal int
}

// Access is one memory access.
type Access struct {
	Addr  uint64
	Size  int
	Value uint64
	Write bool
	// Old and New are the watched range just before and just after the
	// access (nil when unknown).
	Old, New []byte
}

// Exit says how the recorded program ended.
type Exit struct {
	// Kind is "exited", "killed" (by a signal), "cut" (the recording was
	// interrupted) or "" while unknown.
	Kind      string
	Code      int
	Signal    int
	FaultAddr uint64
	Pos       uint64
}

// Thread is one guest thread.
type Thread struct {
	ID   int
	Name string
}

// Registers are a thread's registers at a position.
type Registers struct {
	GPR    [16]uint64 // x86 encoding order: rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8–r15
	RIP    uint64
	Rflags uint64
	FSBase uint64
	GSBase uint64
}

// Frame is one stack frame.
type Frame struct {
	PC, CFA  uint64
	Func     string
	Entry    uint64
	File     string
	Line     int
	Module   string
	Inlined  bool
	HasDebug bool
	// Regs are the registers as they are in this frame, in the order of
	// RegisterNames; bit i of RegsKnown says Regs[i] was recovered.
	Regs      [17]uint64
	RegsKnown uint32
}

// RegisterNames names Frame.Regs.
var RegisterNames = [17]string{"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"}

// Location describes an address of code.
type Location struct {
	Func  string
	Entry uint64
	File  string
	Line  int
	// Stmt reports that the address begins a statement in the line table.
	Stmt bool
	OK   bool
}

// Var is a variable or an evaluated expression, formatted.
type Var struct {
	Name  string
	Type  string
	Value string
	// Addr is the variable's address (0 if it lives in registers).
	Addr uint64
	Size int
	// Arg marks a function argument.
	Arg bool
	// Children, when set, lists the members, elements or the pointee.
	Children func() ([]Var, error)
	// IndexedCount is the number of elements of an array or slice.
	IndexedCount int
}

// Errors a Target returns.
var (
	ErrNoSymbols  = errors.New("no debug information")
	ErrNotFound   = errors.New("not found")
	ErrNoThread   = errors.New("no such thread")
	ErrUnknownMem = errors.New("memory unknown at this position")
)
