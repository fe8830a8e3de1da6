package x86

import (
	"fmt"
	"strings"

	"golang.org/x/arch/x86/x86asm"
)

// Features is a set of optional instruction-set extensions: what the
// guest's CPUID reports, and what the decoder accepts. An instruction of
// an extension outside the set is #UD (SIGILL), as on a processor without
// it; lzcnt and tzcnt then run as bsr and bsf, whose encodings they share.
type Features uint32

// The extensions, by the CPUID bit that reports each.
const (
	FeatSSE3   Features = 1 << iota // CPUID.1:ECX.0
	FeatSSSE3                       // CPUID.1:ECX.9
	FeatSSE41                       // CPUID.1:ECX.19
	FeatSSE42                       // CPUID.1:ECX.20
	FeatPOPCNT                      // CPUID.1:ECX.23
	FeatCX16                        // CPUID.1:ECX.13 (cmpxchg16b)
	FeatLAHF                        // CPUID.80000001:ECX.0 (lahf/sahf in 64-bit mode)
	FeatMOVBE                       // CPUID.1:ECX.22
	FeatLZCNT                       // CPUID.80000001:ECX.5 (ABM)
	FeatBMI1                        // CPUID.7.0:EBX.3
	FeatBMI2                        // CPUID.7.0:EBX.8
	FeatXSAVE                       // CPUID.1:ECX.26-27 (xsave, xgetbv; OSXSAVE)
	FeatAVX                         // CPUID.1:ECX.28
	FeatAVX2                        // CPUID.7.0:EBX.5
	FeatFMA                         // CPUID.1:ECX.12
	FeatF16C                        // CPUID.1:ECX.29
	// Beyond the levels (--cpu host only, when the host has them).
	FeatAES      // CPUID.1:ECX.25 (AES-NI)
	FeatPCLMUL   // CPUID.1:ECX.1 (pclmulqdq)
	FeatXSAVEOPT // CPUID.(0DH,1):EAX.0
	FeatXSAVEC   // CPUID.(0DH,1):EAX.1 (xsavec, and xrstor of the compacted format)
)

// FeaturesExtra are the extensions no x86-64 level includes: a guest
// CPU has them only as "host", and a trace names them after the level
// (Features.Name).
const FeaturesExtra = FeatAES | FeatPCLMUL | FeatXSAVEOPT | FeatXSAVEC

var featNames = []string{"pni", "ssse3", "sse4_1", "sse4_2", "popcnt", "cx16", "lahf_lm", "movbe",
	"abm", "bmi1", "bmi2", "xsave", "avx", "avx2", "fma", "f16c", "aes", "pclmulqdq",
	"xsaveopt", "xsavec"}

// The x86-64 microarchitecture levels (the psABI's x86-64-v1 to v3).
const (
	LevelV1 Features = 0
	LevelV2          = LevelV1 | FeatSSE3 | FeatSSSE3 | FeatSSE41 | FeatSSE42 | FeatPOPCNT | FeatCX16 | FeatLAHF
	LevelV3          = LevelV2 | FeatMOVBE | FeatLZCNT | FeatBMI1 | FeatBMI2 | FeatXSAVE | FeatAVX | FeatAVX2 |
		FeatFMA | FeatF16C
)

// Implemented is every extension the interpreter implements: the default
// of a new CodeCache.
var FeaturesImplemented Features = LevelV2 | FeatMOVBE | FeatLZCNT | FeatBMI1 | FeatBMI2 | FeatAVX | FeatAVX2 | FeatFMA | FeatF16C | FeatXSAVE |
	FeatAES | FeatPCLMUL | FeatXSAVEOPT | FeatXSAVEC

// FeaturesLegacy are the extensions ttd decoded before it had levels
// (traces without a "cpu" parameter): the baseline plus the few it
// implemented beyond it.
const FeaturesLegacy = FeatCX16 | FeatLAHF | FeatPOPCNT | FeatMOVBE | FeatLZCNT | FeatBMI1 | FeatXSAVE

// Has reports whether every extension of g is in f.
func (f Features) Has(g Features) bool { return f&g == g }

// String lists the extensions by their /proc/cpuinfo names (SSE3 is
// "pni", LZCNT "abm").
func (f Features) String() string {
	var s []string
	for i, n := range featNames {
		if f&(1<<i) != 0 {
			s = append(s, n)
		}
	}
	return strings.Join(s, " ")
}

// Level returns the highest level whose extensions f has, by name ("v1",
// "v2" or "v3").
func (f Features) Level() string {
	switch {
	case f.Has(LevelV3):
		return "v3"
	case f.Has(LevelV2):
		return "v2"
	}
	return "v1"
}

// Name is the level followed by the extensions beyond it that f has,
// each after a "+" ("v3+aes+pclmulqdq"): what a trace records, and
// ParseLevel reads.
func (f Features) Name() string {
	s := f.Level()
	for i, n := range featNames {
		if FeaturesExtra&f&(1<<i) != 0 {
			s += "+" + n
		}
	}
	return s
}

// ParseLevel returns the extensions of level "v1", "v2" or "v3", with
// the extensions beyond the levels that Name appends.
func ParseLevel(s string) (Features, error) {
	if i := strings.IndexByte(s, '+'); i >= 0 {
		f, err := ParseLevel(s[:i])
		if err != nil {
			return 0, err
		}
	ext:
		for _, e := range strings.Split(s[i+1:], "+") {
			for k, n := range featNames {
				if n == e && FeaturesExtra&(1<<k) != 0 {
					f |= 1 << k
					continue ext
				}
			}
			return 0, fmt.Errorf("unknown CPU extension %q in %q", e, s)
		}
		return f, nil
	}
	switch s {
	case "v1":
		return LevelV1, nil
	case "v2":
		return LevelV2, nil
	case "v3":
		return LevelV3, nil
	}
	return 0, fmt.Errorf("unknown CPU level %q (want v1, v2, v3 or host)", s)
}

// opFeature is the extension each legacy-encoded op needs (0: none).
var opFeature [4096]Features

func init() {
	set := func(f Features, ops ...x86asm.Op) {
		for _, op := range ops {
			opFeature[op] = f
		}
	}
	set(FeatSSE3, x86asm.MOVDDUP, x86asm.MOVSHDUP, x86asm.MOVSLDUP, x86asm.ADDSUBPS, x86asm.ADDSUBPD,
		x86asm.HADDPS, x86asm.HADDPD, x86asm.HSUBPS, x86asm.HSUBPD, x86asm.LDDQU, x86asm.FISTTP)
	set(FeatSSSE3, x86asm.PSHUFB, x86asm.PALIGNR, x86asm.PABSB, x86asm.PABSW, x86asm.PABSD, x86asm.PHADDW,
		x86asm.PHADDD, x86asm.PHADDSW, x86asm.PHSUBW, x86asm.PHSUBD, x86asm.PHSUBSW, x86asm.PMADDUBSW,
		x86asm.PMULHRSW, x86asm.PSIGNB, x86asm.PSIGNW, x86asm.PSIGND)
	set(FeatSSE41, x86asm.ROUNDPS, x86asm.ROUNDPD, x86asm.ROUNDSS, x86asm.ROUNDSD, x86asm.BLENDPS,
		x86asm.BLENDPD, x86asm.BLENDVPS, x86asm.BLENDVPD, x86asm.PBLENDVB, x86asm.PBLENDW, x86asm.PTEST,
		x86asm.PMINSB, x86asm.PMINSD, x86asm.PMINUW, x86asm.PMINUD, x86asm.PMAXSB, x86asm.PMAXSD,
		x86asm.PMAXUW, x86asm.PMAXUD, x86asm.PMOVSXBW, x86asm.PMOVSXBD, x86asm.PMOVSXBQ, x86asm.PMOVSXWD,
		x86asm.PMOVSXWQ, x86asm.PMOVSXDQ, x86asm.PMOVZXBW, x86asm.PMOVZXBD, x86asm.PMOVZXBQ,
		x86asm.PMOVZXWD, x86asm.PMOVZXWQ, x86asm.PMOVZXDQ, x86asm.PINSRB, x86asm.PINSRD, x86asm.PINSRQ,
		x86asm.PEXTRB, x86asm.PEXTRD, x86asm.PEXTRQ, x86asm.INSERTPS, x86asm.EXTRACTPS, x86asm.DPPS,
		x86asm.DPPD, x86asm.MPSADBW, x86asm.PACKUSDW, x86asm.PCMPEQQ, x86asm.PMULDQ, x86asm.PMULLD,
		x86asm.PHMINPOSUW, x86asm.MOVNTDQA)
	set(FeatSSE42, x86asm.PCMPGTQ, x86asm.PCMPESTRI, x86asm.PCMPESTRM, x86asm.PCMPISTRI, x86asm.PCMPISTRM,
		x86asm.CRC32)
	set(FeatPOPCNT, x86asm.POPCNT)
	set(FeatCX16, x86asm.CMPXCHG16B)
	set(FeatLAHF, x86asm.LAHF, x86asm.SAHF)
	set(FeatMOVBE, x86asm.MOVBE)
	set(FeatLZCNT, x86asm.LZCNT)
	set(FeatBMI1, x86asm.TZCNT)
	set(FeatAES, x86asm.AESENC, x86asm.AESENCLAST, x86asm.AESDEC, x86asm.AESDECLAST, x86asm.AESIMC, x86asm.AESKEYGENASSIST)
	set(FeatPCLMUL, x86asm.PCLMULQDQ)
	set(FeatXSAVE|FeatXSAVEOPT, x86asm.XSAVEOPT, x86asm.XSAVEOPT64)
	set(FeatXSAVE|FeatXSAVEC, x86asm.XSAVEC, x86asm.XSAVEC64)
	set(FeatXSAVE, x86asm.XGETBV, x86asm.XSAVE, x86asm.XRSTOR, x86asm.XSAVE64, x86asm.XRSTOR64)
}

// gate makes in, decoded for a CPU with extensions f, what that CPU
// would do: #UD when it needs an extension f lacks (lzcnt and tzcnt fall
// back to bsr and bsf, as the prefix that tells them apart is ignored).
func gate(in *Inst, f Features) {
	var need Features
	if vo := vexOpOf(in.Op); vo != nil {
		need = vo.feat
	} else if in.Op < 4096 {
		need = opFeature[in.Op]
	}
	if need == 0 || f.Has(need) || in.Fn == nil {
		return
	}
	switch in.Op {
	case x86asm.LZCNT:
		in.Op, in.Fn = x86asm.BSR, opBsr
	case x86asm.TZCNT:
		in.Op, in.Fn = x86asm.BSF, opBsf
	default:
		in.Aux = uint32(need)
		in.Fn = illegalFeature
		in.Flags |= InstEndsBlock
	}
	in.ID = handlerID(in.Fn)
}

// illegalFeature is the #UD of an instruction the CPU's level lacks; Aux
// is the missing extension. The exit's Err is a *MissingFeatureError, so
// that ttd --verbose can name it.
func illegalFeature(c *CPU, in *Inst) {
	panic(exception{reason: ExitIllegal, code: ILLIllOpc, err: &MissingFeatureError{PC: in.PC, Op: in.Op, Need: Features(in.Aux)}})
}

// MissingFeatureError says that an instruction raised #UD because the
// guest CPU's level lacks the extension it belongs to.
type MissingFeatureError struct {
	PC   uint64
	Op   x86asm.Op
	Need Features
}

func (e *MissingFeatureError) Error() string {
	return fmt.Sprintf("%s at %#x needs %s, which the guest CPU does not have", OpName(e.Op), e.PC, e.Need)
}

// SetFeatures sets the extensions of the CPU's code cache (shared by the
// threads of a process): only before any code of it is decoded.
func (c *CPU) SetFeatures(f Features) { c.cache.Features = f }

// Features returns the extensions of the CPU's code cache.
func (c *CPU) Features() Features { return c.cache.Features }

// OpName names an Inst.Op: x86asm's name, or the VEX instruction's.
func OpName(op x86asm.Op) string {
	if vo := vexOpOf(op); vo != nil {
		return vo.name
	}
	return op.String()
}
