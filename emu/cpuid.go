package emu

import (
	"encoding/binary"
	"time"

	"ttd/x86"
)

// CPUID feature bits ttd reports: a baseline x86-64 processor (SSE2, no
// SSE3 and later, no AVX, no XSAVE), which is what the interpreter
// implements.
const (
	cpuid1EDX = 1<<0 | // FPU
		1<<4 | // TSC
		1<<8 | // CX8
		1<<15 | // CMOV
		1<<19 | // CLFSH
		1<<23 | // MMX
		1<<24 | // FXSR
		1<<25 | // SSE
		1<<26 // SSE2
	cpuid1ECX = 1 << 13 // CX16
	// Extended leaf 0x80000001.
	cpuidExtECX = 1 << 0  // LAHF/SAHF in 64-bit mode
	cpuidExtEDX = 1<<11 | // SYSCALL
		1<<20 | // NX
		1<<29 // LM
	tscHz = 3_000_000_000
)

// cpuEnv is the CPUID policy and time source of the guest's processor.
// It implements x86.Env.
type cpuEnv struct {
	start time.Time
	brand [48]byte
}

var _ x86.Env = (*cpuEnv)(nil)

func newCPUEnv() cpuEnv {
	e := cpuEnv{start: time.Now()}
	copy(e.brand[:], "ttd virtual CPU")
	return e
}

// install makes cpu ask e for cpuid and rdtsc results.
func (e *cpuEnv) install(cpu *x86.CPU) {
	cpu.Env = e
}

func str4(s string) uint32 { return binary.LittleEndian.Uint32([]byte(s)) }

// CPUID answers leaf, subleaf.
func (e *cpuEnv) CPUID(leaf, subleaf uint32) (a, b, c, d uint32) {
	switch leaf {
	case 0:
		return 0xd, str4("Genu"), str4("ntel"), str4("ineI")
	case 1:
		// Family 6, model 0x3a, stepping 9; CLFLUSH line 64 bytes, one
		// logical processor.
		return 0x000306a9, 8<<8 | 1<<16, cpuid1ECX, cpuid1EDX
	case 2:
		// "No descriptors: use leaf 4."
		return 0x0000ff01, 0, 0, 0
	case 4:
		// Deterministic cache parameters: 32K L1d and L1i, 256K L2,
		// 8M L3, 64-byte lines.
		switch subleaf {
		case 0:
			return 0x121, 7<<22 | 63, 63, 0
		case 1:
			return 0x122, 7<<22 | 63, 63, 0
		case 2:
			return 0x143, 7<<22 | 63, 511, 0
		case 3:
			return 0x163, 15<<22 | 63, 8191, 0
		}
		return 0, 0, 0, 0
	case 0xb:
		// x2APIC topology: one thread, one core.
		switch subleaf {
		case 0:
			return 0, 1, 0x100, 0
		case 1:
			return 0, 1, 0x201, 0
		}
		return 0, 0, subleaf, 0
	case 0x80000000:
		return 0x80000008, 0, 0, 0
	case 0x80000001:
		return 0, 0, cpuidExtECX, cpuidExtEDX
	case 0x80000002, 0x80000003, 0x80000004:
		q := e.brand[(leaf-0x80000002)*16:]
		return binary.LittleEndian.Uint32(q), binary.LittleEndian.Uint32(q[4:]),
			binary.LittleEndian.Uint32(q[8:]), binary.LittleEndian.Uint32(q[12:])
	case 0x80000006:
		return 0, 0, 256<<16 | 6<<12 | 64, 0
	case 0x80000008:
		return 0x3027, 0, 0, 0 // 39-bit physical, 48-bit virtual addresses
	}
	return 0, 0, 0, 0
}

// Rdtsc is the time-stamp counter: the host's monotonic clock since the
// process started, at a nominal 3 GHz.
func (e *cpuEnv) Rdtsc() uint64 {
	ns := uint64(time.Since(e.start))
	return ns * (tscHz / 1_000_000_000)
}
