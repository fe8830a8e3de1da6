package emu

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/cpu"

	"ttd/x86"
)

// CPUID feature bits every level reports: a baseline x86-64 processor
// (x86-64-v1: SSE2). The optional extensions come from the level
// (cpuEnv.feat, x86.Features).
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
	// Extended leaf 0x80000001.
	cpuidExtEDX = 1<<11 | // SYSCALL
		1<<20 | // NX
		1<<29 // LM
	tscHz = 3_000_000_000
)

// DefaultCPU is the level a guest CPU has unless --cpu says otherwise.
// See README.md ("CPU levels") for the measurement behind it.
const DefaultCPU = "v2"

// ResolveCPU returns the extensions of CPU level name: "v1", "v2", "v3",
// "host" (the highest of them the host has and ttd implements) or ""
// (DefaultCPU). A level ttd does not implement yet is an error.
func ResolveCPU(name string) (x86.Features, error) {
	if name == "" {
		name = DefaultCPU
	}
	if name == "host" {
		f := hostFeatures() & x86.FeaturesImplemented
		lv, _ := x86.ParseLevel(f.Level())
		return lv | f&x86.FeaturesExtra, nil
	}
	f, err := x86.ParseLevel(name)
	if err != nil {
		return 0, err
	}
	if !x86.FeaturesImplemented.Has(f) {
		return 0, fmt.Errorf("CPU level %s: ttd does not implement %s yet", name, f&^x86.FeaturesImplemented)
	}
	return f, nil
}

// hostFeatures are the extensions of the host CPU.
func hostFeatures() x86.Features {
	h := &cpu.X86
	var f x86.Features
	for _, b := range []struct {
		has bool
		f   x86.Features
	}{{h.HasSSE3, x86.FeatSSE3}, {h.HasSSSE3, x86.FeatSSSE3}, {h.HasSSE41, x86.FeatSSE41},
		{h.HasSSE42, x86.FeatSSE42}, {h.HasPOPCNT, x86.FeatPOPCNT}, {h.HasCX16, x86.FeatCX16},
		{h.HasLAHF, x86.FeatLAHF}, {h.HasMOVBE, x86.FeatMOVBE}, {h.HasLZCNT, x86.FeatLZCNT},
		{h.HasBMI1, x86.FeatBMI1}, {h.HasBMI2, x86.FeatBMI2}, {h.HasOSXSAVE, x86.FeatXSAVE},
		{h.HasAVX, x86.FeatAVX}, {h.HasAVX2, x86.FeatAVX2}, {h.HasFMA, x86.FeatFMA}, {h.HasF16C, x86.FeatF16C},
		{h.HasAES, x86.FeatAES}, {h.HasPCLMULQDQ, x86.FeatPCLMUL}} {
		if b.has {
			f |= b.f
		}
	}
	return f | x86.HostXSaveFeatures()
}

// cpuEnv is the CPUID policy and time source of the guest's processor.
// It implements x86.Env.
type cpuEnv struct {
	start time.Time
	brand [48]byte
	feat  x86.Features
}

var _ x86.Env = (*cpuEnv)(nil)

func newCPUEnv(feat x86.Features) cpuEnv {
	e := cpuEnv{start: time.Now(), feat: feat}
	copy(e.brand[:], "ttd virtual CPU")
	return e
}

// install makes cpu ask e for cpuid and rdtsc results and decode for e's
// extensions.
func (e *cpuEnv) install(cpu *x86.CPU) {
	cpu.Env = e
	cpu.SetFeatures(e.feat)
}

// bit returns b if e has every extension of f.
func (e *cpuEnv) bit(f x86.Features, b uint32) uint32 {
	if e.feat.Has(f) {
		return b
	}
	return 0
}

// leaf1ECX is CPUID.1:ECX for e's extensions.
func (e *cpuEnv) leaf1ECX() uint32 {
	return e.bit(x86.FeatSSE3, 1<<0) | e.bit(x86.FeatPCLMUL, 1<<1) | e.bit(x86.FeatSSSE3, 1<<9) | e.bit(x86.FeatFMA, 1<<12) |
		e.bit(x86.FeatCX16, 1<<13) | e.bit(x86.FeatSSE41, 1<<19) | e.bit(x86.FeatSSE42, 1<<20) |
		e.bit(x86.FeatMOVBE, 1<<22) | e.bit(x86.FeatPOPCNT, 1<<23) | e.bit(x86.FeatXSAVE, 3<<26) |
		e.bit(x86.FeatAES, 1<<25) | e.bit(x86.FeatAVX, 1<<28) | e.bit(x86.FeatF16C, 1<<29)
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
		return 0x000306a9, 8<<8 | 1<<16, e.leaf1ECX(), cpuid1EDX
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
	case 7:
		if subleaf == 0 {
			return 0, e.bit(x86.FeatBMI1, 1<<3) | e.bit(x86.FeatAVX2, 1<<5) | e.bit(x86.FeatBMI2, 1<<8), 0, 0
		}
		return 0, 0, 0, 0
	case 0xd:
		// XSAVE state components: x87 and SSE, and AVX (256 bytes at
		// 576) when the CPU has it; the compacted form with XSAVEC.
		if !e.feat.Has(x86.FeatXSAVE) {
			return 0, 0, 0, 0
		}
		xcr0, size := uint32(3), uint32(576)
		if e.feat.Has(x86.FeatAVX) {
			xcr0, size = 7, 832
		}
		switch subleaf {
		case 0:
			return xcr0, size, size, 0
		case 1:
			// XSAVEOPT, XSAVEC (then EBX: the compacted size of
			// XCR0's components).
			return e.bit(x86.FeatXSAVEOPT, 1) | e.bit(x86.FeatXSAVEC, 2), e.bit(x86.FeatXSAVEC, size), 0, 0
		case 2:
			if e.feat.Has(x86.FeatAVX) {
				return 256, 576, 0, 0
			}
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
		return 0, 0, e.bit(x86.FeatLAHF, 1<<0) | e.bit(x86.FeatLZCNT, 1<<5), cpuidExtEDX
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

// cpuinfo is /proc/cpuinfo for the guest: the processor CPUID describes
// (its brand, family, model and extensions), once for each host CPU
// the process may run on, so that a library that reads the flags
// chooses the code CPUID would have it choose.
func (e *cpuEnv) cpuinfo() []byte {
	flags := "fpu tsc cx8 cmov clflush mmx fxsr sse sse2 syscall nx lm"
	if f := e.feat.String(); f != "" {
		flags += " " + f
	}
	brand := string(e.brand[:])
	if i := strings.IndexByte(brand, 0); i >= 0 {
		brand = brand[:i]
	}
	var b strings.Builder
	n := runtime.NumCPU()
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "processor\t: %d\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 58\n"+
			"model name\t: %s\nstepping\t: 9\ncpu MHz\t\t: %d.000\ncache size\t: 8192 KB\n"+
			"physical id\t: 0\nsiblings\t: %d\ncore id\t\t: %d\ncpu cores\t: %d\napicid\t\t: %d\n"+
			"fpu\t\t: yes\nfpu_exception\t: yes\ncpuid level\t: 13\nwp\t\t: yes\nflags\t\t: %s\n"+
			"bogomips\t: %d.00\nclflush size\t: 64\ncache_alignment\t: 64\n"+
			"address sizes\t: 39 bits physical, 48 bits virtual\npower management:\n\n",
			i, brand, tscHz/1_000_000, n, i, n, i, flags, 2*tscHz/1_000_000)
	}
	return []byte(b.String())
}
