package x86

import (
	"errors"
	"fmt"
)

// ExitReason says why CPU.Run returned.
type ExitReason uint8

// Exit reasons.
const (
	ExitNone          ExitReason = iota
	ExitBudget                   // the instruction budget ran out
	ExitSyscall                  // a syscall instruction; RIP is past it
	ExitFault                    // memory fault (SIGSEGV); RIP at the instruction
	ExitDivide                   // #DE divide error (SIGFPE)
	ExitIllegal                  // #UD invalid opcode (SIGILL)
	ExitBreakpoint               // int3 (SIGTRAP); RIP past it
	ExitGP                       // #GP general protection (SIGSEGV, e.g. hlt, privileged)
	ExitFPE                      // unmasked SIMD floating-point exception (SIGFPE)
	ExitUnimplemented            // an instruction the interpreter does not implement
	ExitYield                    // the program asked to yield (pause in a spin loop)
)

var exitNames = [...]string{"none", "budget", "syscall", "fault", "divide error",
	"illegal instruction", "breakpoint", "general protection", "SIMD floating-point exception",
	"unimplemented instruction", "yield"}

func (r ExitReason) String() string {
	if int(r) < len(exitNames) {
		return exitNames[r]
	}
	return fmt.Sprintf("exit(%d)", r)
}

// Exit describes how CPU.Run stopped.
type Exit struct {
	Reason ExitReason
	// Addr is the faulting data address for ExitFault.
	Addr  uint64
	Fault *Fault
	// Inst is the instruction that caused the exit, if any.
	Inst *Inst
	// Code is the Linux si_code for the signal the exit maps to, if known.
	Code int32
	// Err describes unimplemented or undecodable instructions.
	Err error
}

// ErrUnimplemented is wrapped by the errors of ExitUnimplemented.
var ErrUnimplemented = errors.New("unimplemented instruction")

// UnimplementedError names an instruction the interpreter cannot execute.
type UnimplementedError struct {
	PC    uint64
	Bytes []byte
	Mnem  string
}

func (e *UnimplementedError) Error() string {
	return fmt.Sprintf("unimplemented instruction %s (bytes % x) at %#x", e.Mnem, e.Bytes, e.PC)
}

func (e *UnimplementedError) Unwrap() error { return ErrUnimplemented }

// exception is the panic value handlers use to leave the loop precisely.
type exception struct {
	reason ExitReason
	code   int32
	err    error
}

// raise stops the current instruction with no effect and exits Run.
func (c *CPU) raise(r ExitReason, code int32) {
	panic(exception{reason: r, code: code})
}

// Linux si_code values for the synchronous signals.
const (
	FPEIntDiv  = 1 // FPE_INTDIV
	FPEIntOvf  = 2 // FPE_INTOVF
	ILLIllOpc  = 2 // ILL_ILLOPC
	ILLIllOpn  = 2 // ILL_ILLOPN
	SEGVMapErr = 1
	SEGVAccErr = 2
	SIKernel   = 0x80 // SI_KERNEL (for #GP)
)
