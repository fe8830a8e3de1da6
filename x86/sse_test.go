package x86

import (
	"math"
	"math/rand"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// sseLoopCode is a loop in the style of glibc's string functions and of
// scalar floating-point code, ending in syscall:
//
//	mov ecx, 100000; mov esi, 0x7fe000; pxor xmm0, xmm0
//	1: movdqa xmm1, [rsi]; pcmpeqb xmm1, xmm0; pmovmskb eax, xmm1
//	   movdqu xmm2, [rsi+17]; por xmm2, xmm1; movaps [rsi+32], xmm2
//	   movq rdx, xmm2; addsd xmm4, xmm3; mulsd xmm4, xmm5
//	   cvtsi2sd xmm6, ecx; ucomisd xmm4, xmm3; mulps xmm7, xmm8
//	   dec ecx; jnz 1b
//	syscall
var sseLoopCode = []byte{
	0xb9, 0xa0, 0x86, 0x01, 0x00, 0xbe, 0x00, 0xe0, 0x7f, 0x00, 0x66, 0x0f,
	0xef, 0xc0, 0x66, 0x0f, 0x6f, 0x0e, 0x66, 0x0f, 0x74, 0xc8, 0x66, 0x0f,
	0xd7, 0xc1, 0xf3, 0x0f, 0x6f, 0x56, 0x11, 0x66, 0x0f, 0xeb, 0xd1, 0x0f,
	0x29, 0x56, 0x20, 0x66, 0x48, 0x0f, 0x7e, 0xd2, 0xf2, 0x0f, 0x58, 0xe3,
	0xf2, 0x0f, 0x59, 0xe5, 0xf2, 0x0f, 0x2a, 0xf1, 0x66, 0x0f, 0x2e, 0xe3,
	0x41, 0x0f, 0x59, 0xf8, 0xff, 0xc9, 0x75, 0xca, 0x0f, 0x05,
}

func newSSELoopCPU(t testing.TB) *CPU {
	c := newTestCPU(t, sseLoopCode)
	c.X[3] = XMM{math.Float64bits(1)}
	c.X[4] = XMM{math.Float64bits(1.5)}
	c.X[5] = XMM{math.Float64bits(1.0000001)}
	c.X[7] = XMM{0x3f8000003f800000, 0x3f8000003f800000}
	c.X[8] = XMM{0x3f8000013f800001, 0x3f7fffff3f7fffff}
	return c
}

func TestSSELoopAllocatesNothing(t *testing.T) {
	c := newSSELoopCPU(t)
	if ex := c.Run(1 << 40); ex.Reason != ExitSyscall {
		t.Fatalf("exit %v (%v)", ex.Reason, ex.Err)
	}
	allocs := testing.AllocsPerRun(3, func() {
		c.RIP = testCode
		c.Run(1 << 40)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run of the SSE loop", allocs)
	}
}

// BenchmarkSSE measures the interpreter on sseLoopCode; it must report 0
// allocs/op.
func BenchmarkSSE(b *testing.B) {
	c := newSSELoopCPU(b)
	c.Run(1 << 40)
	b.ReportAllocs()
	b.ResetTimer()
	var insts uint64
	for i := 0; i < b.N; i++ {
		c.RIP = testCode
		start := c.Icount
		c.Run(1 << 40)
		insts += c.Icount - start
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(insts), "ns/inst")
}

func TestMsb8(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 10000; i++ {
		v := r.Uint64()
		if i < 256 {
			v = 0
			for j := 0; j < 8; j++ {
				if i>>j&1 != 0 {
					v |= 0x80 << (8 * j)
				}
			}
			v |= r.Uint64() & 0x7f7f7f7f7f7f7f7f
		}
		var want uint64
		for j := 0; j < 8; j++ {
			want |= v >> (8*j + 7) & 1 << j
		}
		if got := msb8(v); got != want {
			t.Fatalf("msb8(%#x) = %#x, want %#x", v, got, want)
		}
	}
}

// TestSSEImplemented checks that every SSE/SSE2 instruction ttd promises
// has a handler (the differential test checks what they do).
func TestSSEImplemented(t *testing.T) {
	ops := []x86asm.Op{
		x86asm.MOVAPS, x86asm.MOVUPS, x86asm.MOVAPD, x86asm.MOVUPD, x86asm.MOVSS, x86asm.MOVSD_XMM,
		x86asm.MOVLPS, x86asm.MOVHPS, x86asm.MOVLPD, x86asm.MOVHPD, x86asm.MOVHLPS, x86asm.MOVLHPS,
		x86asm.MOVD, x86asm.MOVQ, x86asm.MOVDQA, x86asm.MOVDQU, x86asm.MOVNTDQ, x86asm.MOVNTPS,
		x86asm.MOVNTPD, x86asm.MOVNTI, x86asm.MOVMSKPS, x86asm.MOVMSKPD, x86asm.PMOVMSKB, x86asm.MASKMOVDQU,
		x86asm.MOVQ2DQ, x86asm.MOVDQ2Q, x86asm.EMMS,
		x86asm.ADDPS, x86asm.ADDPD, x86asm.ADDSS, x86asm.ADDSD, x86asm.SUBPS, x86asm.SUBPD, x86asm.SUBSS,
		x86asm.SUBSD, x86asm.MULPS, x86asm.MULPD, x86asm.MULSS, x86asm.MULSD, x86asm.DIVPS, x86asm.DIVPD,
		x86asm.DIVSS, x86asm.DIVSD, x86asm.MINPS, x86asm.MINPD, x86asm.MINSS, x86asm.MINSD, x86asm.MAXPS,
		x86asm.MAXPD, x86asm.MAXSS, x86asm.MAXSD, x86asm.SQRTPS, x86asm.SQRTPD, x86asm.SQRTSS, x86asm.SQRTSD,
		x86asm.RCPPS, x86asm.RCPSS, x86asm.RSQRTPS, x86asm.RSQRTSS,
		x86asm.ANDPS, x86asm.ANDPD, x86asm.ANDNPS, x86asm.ANDNPD, x86asm.ORPS, x86asm.ORPD, x86asm.XORPS,
		x86asm.XORPD, x86asm.CMPPS, x86asm.CMPPD, x86asm.CMPSS, x86asm.CMPSD_XMM, x86asm.COMISS,
		x86asm.COMISD, x86asm.UCOMISS, x86asm.UCOMISD,
		x86asm.CVTSI2SS, x86asm.CVTSI2SD, x86asm.CVTSS2SI, x86asm.CVTSD2SI, x86asm.CVTTSS2SI,
		x86asm.CVTTSD2SI, x86asm.CVTSS2SD, x86asm.CVTSD2SS, x86asm.CVTPS2PD, x86asm.CVTPD2PS,
		x86asm.CVTDQ2PS, x86asm.CVTPS2DQ, x86asm.CVTTPS2DQ, x86asm.CVTDQ2PD, x86asm.CVTPD2DQ,
		x86asm.CVTTPD2DQ, x86asm.CVTPI2PS, x86asm.CVTPS2PI, x86asm.CVTTPS2PI, x86asm.CVTPI2PD,
		x86asm.CVTPD2PI, x86asm.CVTTPD2PI,
		x86asm.SHUFPS, x86asm.SHUFPD, x86asm.UNPCKLPS, x86asm.UNPCKHPS, x86asm.UNPCKLPD, x86asm.UNPCKHPD,
		x86asm.PADDB, x86asm.PADDW, x86asm.PADDD, x86asm.PADDQ, x86asm.PSUBB, x86asm.PSUBW, x86asm.PSUBD,
		x86asm.PSUBQ, x86asm.PADDSB, x86asm.PADDSW, x86asm.PADDUSB, x86asm.PADDUSW, x86asm.PSUBSB,
		x86asm.PSUBSW, x86asm.PSUBUSB, x86asm.PSUBUSW, x86asm.PMULLW, x86asm.PMULHW, x86asm.PMULHUW,
		x86asm.PMULUDQ, x86asm.PMADDWD, x86asm.PSADBW, x86asm.PAVGB, x86asm.PAVGW, x86asm.PMINUB,
		x86asm.PMAXUB, x86asm.PMINSW, x86asm.PMAXSW, x86asm.PAND, x86asm.PANDN, x86asm.POR, x86asm.PXOR,
		x86asm.PCMPEQB, x86asm.PCMPEQW, x86asm.PCMPEQD, x86asm.PCMPGTB, x86asm.PCMPGTW, x86asm.PCMPGTD,
		x86asm.PSLLW, x86asm.PSLLD, x86asm.PSLLQ, x86asm.PSRLW, x86asm.PSRLD, x86asm.PSRLQ, x86asm.PSRAW,
		x86asm.PSRAD, x86asm.PSLLDQ, x86asm.PSRLDQ, x86asm.PUNPCKLBW, x86asm.PUNPCKLWD, x86asm.PUNPCKLDQ,
		x86asm.PUNPCKLQDQ, x86asm.PUNPCKHBW, x86asm.PUNPCKHWD, x86asm.PUNPCKHDQ, x86asm.PUNPCKHQDQ,
		x86asm.PACKSSWB, x86asm.PACKSSDW, x86asm.PACKUSWB, x86asm.PSHUFD, x86asm.PSHUFLW, x86asm.PSHUFHW,
		x86asm.PEXTRW, x86asm.PINSRW,
		x86asm.LDMXCSR, x86asm.STMXCSR, x86asm.LFENCE, x86asm.MFENCE, x86asm.SFENCE, x86asm.PAUSE,
		x86asm.PREFETCHNTA, x86asm.PREFETCHT0, x86asm.PREFETCHT1, x86asm.PREFETCHT2, x86asm.PREFETCHW,
		x86asm.CLFLUSH,
	}
	for _, op := range ops {
		if !Implemented(op) {
			t.Errorf("%v has no handler", op)
		}
	}
}

// TestSoftFloatMatchesHost checks the exact model against the host's own
// float32/float64 arithmetic (Go compiles it to the same SSE instructions,
// NaN rules included) under the default MXCSR, and the fast paths'
// exception flags against the exact model's, on many more inputs than the
// differential test runs. It needs no C compiler.
func TestSoftFloatMatchesHost(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	g := &diffGen{Rand: r}
	type op struct {
		name string
		fast fop
		soft fop
		host func(a, b uint64) uint64
		w    int
	}
	h32 := func(f func(x, y float32) float32) func(a, b uint64) uint64 {
		return func(a, b uint64) uint64 { return b32(f(f32(a), f32(b))) }
	}
	h64 := func(f func(x, y float64) float64) func(a, b uint64) uint64 {
		return func(a, b uint64) uint64 { return math.Float64bits(f(f64(a), f64(b))) }
	}
	ops := []op{
		{"add32", add32, fmt32.add, h32(func(x, y float32) float32 { return x + y }), 32},
		{"sub32", sub32, fmt32.sub, h32(func(x, y float32) float32 { return x - y }), 32},
		{"mul32", mul32, fmt32.mul, h32(func(x, y float32) float32 { return x * y }), 32},
		{"div32", div32, fmt32.div, h32(func(x, y float32) float32 { return x / y }), 32},
		{"sqrt32", sqrt32b, func(a, b uint64, mx uint32) (uint64, uint32) { return fmt32.sqrt(a, mx) },
			func(a, b uint64) uint64 { return b32(float32(math.Sqrt(float64(f32(a))))) }, 32},
		{"add64", add64, fmt64.add, h64(func(x, y float64) float64 { return x + y }), 64},
		{"sub64", sub64, fmt64.sub, h64(func(x, y float64) float64 { return x - y }), 64},
		{"mul64", mul64, fmt64.mul, h64(func(x, y float64) float64 { return float64(x * y) }), 64},
		{"div64", div64, fmt64.div, h64(func(x, y float64) float64 { return x / y }), 64},
		{"sqrt64", sqrt64b, func(a, b uint64, mx uint32) (uint64, uint32) { return fmt64.sqrt(a, mx) },
			func(a, b uint64) uint64 { return math.Float64bits(math.Sqrt(f64(a))) }, 64},
		{"cvt64to32", func(a, b uint64, mx uint32) (uint64, uint32) { return cvt64to32(a, mx) },
			func(a, b uint64, mx uint32) (uint64, uint32) { return cvt64to32Exact(a, mx) },
			func(a, b uint64) uint64 { return b32(float32(f64(a))) }, 64},
	}
	n := 200000
	if testing.Short() {
		n = 20000
	}
	for _, o := range ops {
		bad := 0
		for i := 0; i < n; i++ {
			var a, b uint64
			if o.w == 32 {
				a, b = randF32(g), randF32(g)
			} else {
				a, b = randF64(g), randF64(g)
			}
			want := o.host(a, b)
			sr, sf := o.soft(a, b, mxDefault)
			fr, ff := o.fast(a, b, mxDefault)
			if sr != want || fr != want || sf != ff {
				if bad++; bad <= 5 {
					t.Errorf("%s(%#x, %#x): host %#x, exact %#x flags %#x, fast %#x flags %#x",
						o.name, a, b, want, sr, sf, fr, ff)
				}
			}
		}
	}
}
