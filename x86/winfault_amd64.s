//go:build linux

#include "textflag.h"

// jitSigSegv is the host's SIGSEGV handler while `ttd run`'s translated
// reads take no TLB check (winfault_linux.go), called by the kernel as
// a C function: DI the signal, SI its siginfo, DX its ucontext. A fault
// whose RIP is in a range of the JIT reservation's fault tables resumes
// at that range's exit (the exit stub a TLB miss would have jumped to);
// any other goes to Go's handler, as if the kernel had called it.
// Uses only AX, CX, R8-R11 (caller-saved); no stack.
TEXT ·jitSigSegv(SB), NOSPLIT|NOFRAME, $0
	MOVQ 168(DX), AX // uc_mcontext.gregs[REG_RIP]
	MOVQ ·jitResBase(SB), CX
	SUBQ CX, AX
	CMPQ AX, ·jitResSpan(SB)
	JAE  fwd
	MOVQ AX, R8
	SHRQ $21, R8        // the chunk
	ANDQ $0x1fffff, AX  // the offset in it
	LEAQ (R8)(R8*2), R8 // a slice header is 24 bytes
	LEAQ ·jitFaultTabs(SB), R9
	MOVQ (R9)(R8*8), R10  // the chunk's sites
	MOVQ 8(R9)(R8*8), R11 // and their number
	XORQ R8, R8           // lo
	// The first site that starts after the offset: R8.
loop:
	CMPQ R8, R11
	JAE  found
	LEAQ (R8)(R11*1), R9
	SHRQ $1, R9
	MOVQ R9, CX
	SHLQ $4, CX
	MOVL (R10)(CX*1), CX // start
	CMPQ CX, AX
	JHI  upper
	LEAQ 1(R9), R8
	JMP  loop
upper:
	MOVQ R9, R11
	JMP  loop
found:
	TESTQ R8, R8
	JZ    fwd
	DECQ  R8
	SHLQ  $4, R8
	MOVL  4(R10)(R8*1), CX // end
	CMPQ  AX, CX
	JAE   fwd
	MOVL  8(R10)(R8*1), CX // the exit
	MOVQ  168(DX), AX
	ANDQ  $-2097152, AX
	ADDQ  CX, AX
	MOVQ  AX, 168(DX)
	ADDQ  $1, ·jitFaults(SB)
	RET
fwd:
	MOVQ ·jitGoSegv(SB), AX
	JMP  AX

// func jitSigSegvAddr() uintptr: jitSigSegv's address (ABI0), for
// rt_sigaction.
TEXT ·jitSigSegvAddr(SB), NOSPLIT, $0-8
	MOVQ $·jitSigSegv(SB), AX
	MOVQ AX, ret+0(FP)
	RET
