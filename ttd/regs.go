package ttd

import (
	"fmt"
	"strings"

	"ttd/reader"
	"ttd/tracefile"
	"ttd/x86"
)

// Registers is one thread's register state at a position.
type Registers struct {
	Tid int
	// GPR are rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8..r15 (the
	// hardware order; x86.RegNames names them).
	GPR            [16]uint64
	RIP, RFLAGS    uint64
	FSBase, GSBase uint64
	XMM            [16]x86.XMM
	MXCSR          uint32
	// FPU is the x87 state; ST returns its registers in stack order.
	FPU x86.X87
	// Instructions is the number of instructions the thread retired.
	Instructions uint64
}

func registersOf(tid int, c *x86.CPU) Registers {
	return Registers{Tid: tid, GPR: c.R, RIP: c.RIP, RFLAGS: c.Rflags(), FSBase: c.FSBase, GSBase: c.GSBase,
		XMM: c.X, MXCSR: c.MXCSR, FPU: c.FPU, Instructions: c.Icount}
}

// ST returns x87 register ST(i) as 10 little-endian bytes and whether
// its tag says it holds a value.
func (r *Registers) ST(i int) (b [10]byte, valid bool) {
	phys := (int(r.FPU.Top) + i) & 7
	r.FPU.Regs[phys].Bytes(b[:])
	return b, r.FPU.Tag&(1<<phys) != 0
}

// FSW is the x87 status word with its TOP field.
func (r *Registers) FSW() uint16 { return r.FPU.SW&^(7<<11) | uint16(r.FPU.Top&7)<<11 }

// String formats the general registers, rip and rflags.
func (r *Registers) String() string {
	var b strings.Builder
	for i, n := range x86.RegNames {
		fmt.Fprintf(&b, "%-4s 0x%016x", n, r.GPR[i])
		if i%4 == 3 {
			b.WriteByte('\n')
		} else {
			b.WriteString("  ")
		}
	}
	fmt.Fprintf(&b, "rip  %#018x  rflags %#x [%s]  fs_base %#x  gs_base %#x\n", r.RIP, r.RFLAGS, FlagString(r.RFLAGS), r.FSBase, r.GSBase)
	return b.String()
}

// FlagString names the set arithmetic and control flags.
func FlagString(f uint64) string {
	var s []string
	for _, fl := range []struct {
		bit  uint64
		name string
	}{{x86.FlagCF, "CF"}, {x86.FlagPF, "PF"}, {x86.FlagAF, "AF"}, {x86.FlagZF, "ZF"}, {x86.FlagSF, "SF"},
		{x86.FlagTF, "TF"}, {x86.FlagIF, "IF"}, {x86.FlagDF, "DF"}, {x86.FlagOF, "OF"}} {
		if f&fl.bit != 0 {
			s = append(s, fl.name)
		}
	}
	return strings.Join(s, " ")
}

// StopReason says why a travel operation stopped.
type StopReason uint8

// Stop reasons.
const (
	StopSeek         StopReason = iota + 1 // Seek arrived at the position asked for
	StopStep                               // a step completed
	StopBreakpoint                         // an execution breakpoint
	StopWatchpoint                         // a memory breakpoint (Stop.Access)
	StopEvent                              // an event breakpoint (Stop.Event)
	StopPosition                           // a position breakpoint
	StopSignal                             // a signal delivery (Stop.Event), with StopOnSignal
	StopStartOfTrace                       // going backwards reached position 0
	StopEndOfTrace                         // going forwards reached the end (Stop.Exit)
	StopMatch                              // a Search predicate matched
)

var stopNames = [...]string{"", "seek", "step", "breakpoint", "watchpoint", "event", "position", "signal",
	"start of trace", "end of trace", "match"}

func (r StopReason) String() string {
	if int(r) < len(stopNames) && r != 0 {
		return stopNames[r]
	}
	return fmt.Sprintf("StopReason(%d)", r)
}

// Stop describes where and why a travel operation stopped.
type Stop struct {
	Reason   StopReason
	Position uint64
	Tid      int    // the thread that executes the instruction at Position
	PC       uint64 // its pc
	// Breakpoint is the ID of the breakpoint that stopped (0 if none).
	Breakpoint int
	// Access is the access that hit a memory breakpoint. Going forward
	// the session stops after the accessing instruction (Position =
	// Access.Position+1, the new value visible, as a hardware watchpoint
	// reports); going backward it stops before it (Position =
	// Access.Position).
	Access *reader.Access
	// Old and New are, for a watchpoint stop, the watched range just
	// before and just after the access (watch.go).
	Old, New *Memory
	// Event is the event of an event breakpoint or a signal stop.
	Event *reader.Event
	// Exit says how the program ended, at the end of the trace.
	Exit *tracefile.Exit
}

func (st Stop) String() string {
	s := fmt.Sprintf("%v at position %d", st.Reason, st.Position)
	if st.Tid != 0 {
		s += fmt.Sprintf(" (thread %d, pc %#x)", st.Tid, st.PC)
	}
	return s
}
