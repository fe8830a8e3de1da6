package x86

import (
	"fmt"
	"strings"
	"testing"
)

// AVX, AVX2, BMI1 and BMI2 forms (x86-64-v3) for the differential test
// against the host (diff_test.go): the 128- and 256-bit forms, the upper
// halves of the YMM registers included.

func TestDiffAVX(t *testing.T) {
	if !diffYMM {
		t.Skip("SKIPPING the AVX differential test: the host CPU has no AVX")
	}
	runDiff(t, 5, markJIT(avxDiffTests()))
}

// avxNotTranslated are the mnemonics of the AVX table that the
// translator leaves to the interpreter (jit_avx_amd64.go): every other
// VEX row, and the BMI2 shifts, pdep, pext and rorx, must translate on a
// host with AVX2 (FMA and BMI2 for theirs).
var avxNotTranslated = map[string]bool{}

func init() {
	for _, m := range strings.Fields(`vcvtsi2sd vcvtsi2ssl vcvttsd2si vcvtss2si vmovlps vmovhps vmovlpd vmovhpd
		vmovhlps vmovlhps vldmxcsr vstmxcsr vpinsrb vpinsrw vpinsrd vpinsrq vpextrb vpextrw vpextrd vpextrq
		vextractps vinsertps vmaskmovps vmaskmovpd vpmaskmovd vpmaskmovq vpcmpistri vpcmpestrm vcvtph2ps vcvtps2ph`) {
		avxNotTranslated[m] = true
	}
}

// markJIT sets diffTest.jit on the rows the translator must take.
func markJIT(t []diffTest) []diffTest {
	for i := range t {
		m := strings.Fields(t[i].asm)[0]
		switch {
		case strings.HasPrefix(m, "vf"):
			t[i].jit = jitFMA
		case m == "sarx" || m == "shlx" || m == "shrx" || m == "pdep" || m == "pext" || m == "rorx":
			t[i].jit = jitBMI2
		case m[0] == 'v' && !avxNotTranslated[m]:
			t[i].jit = jitAVX2
		}
	}
	return t
}

// genIntY is genInt with the upper halves and 128 bytes of memory random
// too (diffBase fills the upper halves).
func genIntY(g *diffGen, s *diffState) {
	genInt(g, s)
	for i := 0; i < 4; i++ {
		s.YH[i] = XMM{s.X[(i+1)&3][1] ^ s.X[i][0], s.X[(i+2)&3][0]}
	}
}

func genFPY(width int) func(g *diffGen, s *diffState) {
	gen := genFP(width)
	return func(g *diffGen, s *diffState) {
		var lo [4]XMM
		gen(g, s)
		copy(lo[:], s.X[:4])
		gen(g, s)
		copy(s.YH[:4], s.X[:4])
		copy(s.X[:4], lo[:])
	}
}

func avxDiffTests() []diffTest {
	var t diffTable
	add := t.add
	addU := t.addU
	g32, g64 := genFPY(32), genFPY(64)
	both := t.both
	for _, op := range []string{"vaddps", "vsubps", "vmulps", "vdivps", "vminps", "vmaxps", "vaddsubps", "vhaddps", "vhsubps",
		"vandps", "vandnps", "vorps", "vxorps", "vunpcklps", "vunpckhps"} {
		both(op, 200, g32)
	}
	for _, op := range []string{"vaddpd", "vsubpd", "vmulpd", "vdivpd", "vminpd", "vmaxpd", "vaddsubpd", "vhaddpd", "vhsubpd",
		"vandpd", "vxorpd", "vunpcklpd", "vunpckhpd"} {
		both(op, 200, g64)
	}
	for _, op := range []string{"vaddss", "vmulss", "vdivss", "vsqrtss", "vminss", "vcvtss2sd"} {
		add(op+" %xmm2, %xmm3, %xmm1", 100, g32)
		add(op+" 4(%rsi), %xmm3, %xmm1", 30, g32)
	}
	for _, op := range []string{"vaddsd", "vsubsd", "vmulsd", "vdivsd", "vsqrtsd", "vmaxsd", "vcvtsd2ss"} {
		add(op+" %xmm2, %xmm3, %xmm1", 100, g64)
		add(op+" 8(%rsi), %xmm3, %xmm1", 30, g64)
	}
	for _, op := range []string{"vsqrtps", "vcvtdq2ps", "vcvtps2dq", "vcvttps2dq", "vmovshdup", "vmovsldup"} {
		add(op+" %ymm2, %ymm1", 100, g32)
		add(op+" %xmm2, %xmm1", 50, g32)
	}
	add("vsqrtpd %ymm2, %ymm1", 100, g64)
	add("vcvtps2pd %xmm2, %ymm1", 100, g32)
	add("vcvtps2pd 4(%rsi), %ymm1", 30, g32)
	add("vcvtps2pd %xmm2, %xmm1", 50, g32)
	add("vcvtpd2ps %ymm2, %xmm1", 100, g64)
	add("vcvtpd2psy (%rsi), %xmm1", 30, g64)
	add("vcvtpd2ps %xmm2, %xmm1", 50, g64)
	add("vcvtdq2pd %xmm2, %ymm1", 50, genIntY)
	add("vcvttpd2dq %ymm2, %xmm1", 100, g64)
	add("vcvtpd2dq %xmm2, %xmm1", 50, g64)
	for pred := 0; pred < 32; pred += 3 {
		add(fmt.Sprintf("vcmpps $%d, %%ymm2, %%ymm3, %%ymm1", pred), 100, g32)
		add(fmt.Sprintf("vcmpsd $%d, %%xmm2, %%xmm3, %%xmm1", pred), 100, g64)
	}
	add("vcmppd $0x1e, (%rsi), %ymm3, %ymm1", 50, g64)
	add("vcmpss $0x11, 4(%rsi), %xmm3, %xmm1", 50, g32)
	for _, op := range []string{"vucomiss", "vcomiss"} {
		add(op+" %xmm2, %xmm1", 100, g32)
	}
	add("vucomisd 8(%rsi), %xmm1", 100, g64)
	add("vcvtsi2sd %rax, %xmm3, %xmm1", 50, genCvtInt)
	add("vcvtsi2ssl (%rsi), %xmm3, %xmm1", 50, genCvtInt)
	add("vcvttsd2si %xmm2, %rax", 50, g64)
	add("vcvtss2si 4(%rsi), %eax", 50, g32)
	for imm := 0; imm < 16; imm += 5 {
		add(fmt.Sprintf("vroundps $%d, %%ymm2, %%ymm1", imm), 50, g32)
		add(fmt.Sprintf("vroundsd $%d, %%xmm2, %%xmm3, %%xmm1", imm), 50, g64)
	}
	add("vdpps $0xf1, %ymm2, %ymm3, %ymm1", 100, g32)
	add("vdppd $0x31, %xmm2, %xmm3, %xmm1", 100, g64)

	// Moves.
	for _, op := range []string{"vmovaps", "vmovapd", "vmovdqa", "vmovups", "vmovupd", "vmovdqu"} {
		add(op+" %ymm2, %ymm1", 10, genIntY)
		add(op+" %xmm2, %xmm1", 10, genIntY)
		add(op+" (%rsi), %ymm1", 10, genIntY)
		add(op+" 16(%rsi), %xmm1", 10, genIntY)
		add(op+" %ymm2, 32(%rsi)", 10, genIntY)
		add(op+" %xmm2, 16(%rsi)", 10, genIntY)
		add(op+" 16(%rsi), %ymm1", 10, genIntY) // #GP for the aligned ones
		add(op+" %ymm3, 48(%rsi)", 10, genIntY)
	}
	add("vmovdqu 0x1f0(%rsi), %ymm1", 5, genIntY) // crosses into the unmapped page
	add("vmovdqu %ymm1, 0x1e1(%rsi)", 5, genIntY)
	add("vmovntdq %ymm2, 64(%rsi)", 5, genIntY)
	add("vmovntdqa 32(%rsi), %ymm1", 5, genIntY)
	add("vlddqu 3(%rsi), %ymm1", 5, genIntY)
	for _, op := range []string{"vmovss", "vmovsd"} {
		add(op+" %xmm2, %xmm3, %xmm1", 10, genIntY)
		add(op+" 4(%rsi), %xmm1", 10, genIntY)
		add(op+" %xmm2, 12(%rsi)", 10, genIntY)
	}
	add(".byte 0xc5, 0xe2, 0x11, 0xd1", 10, genIntY) // vmovss xmm2(reg), xmm3, xmm1(rm): the store-form register move
	for _, op := range []string{"vmovlps", "vmovhps", "vmovlpd", "vmovhpd"} {
		add(op+" 4(%rsi), %xmm3, %xmm1", 10, genIntY)
		add(op+" %xmm2, 20(%rsi)", 10, genIntY)
	}
	add("vmovhlps %xmm2, %xmm3, %xmm1", 10, genIntY)
	add("vmovlhps %xmm2, %xmm3, %xmm1", 10, genIntY)
	add("vmovd %eax, %xmm1", 10, genIntY)
	add("vmovq %rax, %xmm1", 10, genIntY)
	add("vmovd %xmm2, %ecx", 10, genIntY)
	add("vmovq %xmm2, %rcx", 10, genIntY)
	add("vmovd 4(%rsi), %xmm1", 10, genIntY)
	add("vmovq 4(%rsi), %xmm1", 10, genIntY)
	add("vmovq %xmm2, %xmm1", 10, genIntY)
	add("vmovq %xmm2, 8(%rsi)", 10, genIntY)
	add("vmovd %xmm2, 8(%rsi)", 10, genIntY)
	add("vmovddup %ymm2, %ymm1", 10, genIntY)
	add("vmovddup 8(%rsi), %xmm1", 10, genIntY)
	add("vldmxcsr (%rsi)", 50, genLdmxcsr)
	add("vstmxcsr 4(%rsi)", 20, genLdmxcsr)
	add("vzeroupper", 10, genIntY)
	add("vzeroall", 10, genIntY)
	add("vmovmskps %ymm2, %eax", 20, g32)
	add("vmovmskpd %xmm2, %eax", 20, g64)
	add("vpmovmskb %ymm2, %eax", 20, genIntY)
	add("vpmovmskb %xmm2, %rcx", 20, genIntY)

	// Packed integers.
	for _, op := range []string{"vpaddb", "vpaddw", "vpaddd", "vpaddq", "vpsubb", "vpsubw", "vpsubd", "vpsubq",
		"vpaddsb", "vpaddusw", "vpsubsw", "vpsubusb", "vpmullw", "vpmulhw", "vpmulhuw", "vpmuludq", "vpmuldq", "vpmulld",
		"vpmaddwd", "vpsadbw", "vpavgb", "vpminub", "vpmaxsw", "vpminsd", "vpmaxud", "vpminsb", "vpmaxuw",
		"vpand", "vpandn", "vpor", "vpxor", "vpcmpeqb", "vpcmpeqw", "vpcmpeqd", "vpcmpeqq", "vpcmpgtb", "vpcmpgtd", "vpcmpgtq",
		"vpunpcklbw", "vpunpckhwd", "vpunpckldq", "vpunpckhqdq", "vpacksswb", "vpackuswb", "vpackssdw", "vpackusdw",
		"vpshufb", "vphaddw", "vphaddd", "vphsubsw", "vpmaddubsw", "vpmulhrsw", "vpsignb", "vpsignd"} {
		both(op, 50, genIntY)
	}
	for _, op := range []string{"vpabsb", "vpabsw", "vpabsd"} {
		add(op+" %ymm2, %ymm1", 30, genIntY)
	}
	add("vphminposuw %xmm2, %xmm1", 30, genIntY)
	for _, imm := range []int{0, 0x1b, 0xe4, 0x39} {
		add(fmt.Sprintf("vpshufd $%#x, %%ymm2, %%ymm1", imm), 10, genIntY)
		add(fmt.Sprintf("vpshuflw $%#x, (%%rsi), %%ymm1", imm), 10, genIntY)
		add(fmt.Sprintf("vpshufhw $%#x, %%xmm2, %%xmm1", imm), 10, genIntY)
		add(fmt.Sprintf("vshufps $%#x, %%ymm2, %%ymm3, %%ymm1", imm), 10, g32)
		add(fmt.Sprintf("vshufpd $%#x, %%ymm2, %%ymm3, %%ymm1", imm&15), 10, g64)
		add(fmt.Sprintf("vpalignr $%d, %%ymm2, %%ymm3, %%ymm1", imm&31), 10, genIntY)
		add(fmt.Sprintf("vpblendw $%#x, %%ymm2, %%ymm3, %%ymm1", imm), 10, genIntY)
		add(fmt.Sprintf("vpblendd $%#x, %%ymm2, %%ymm3, %%ymm1", imm), 10, genIntY)
		add(fmt.Sprintf("vblendps $%#x, %%ymm2, %%ymm3, %%ymm1", imm), 10, genIntY)
		add(fmt.Sprintf("vblendpd $%#x, %%ymm2, %%ymm3, %%ymm1", imm&15), 10, genIntY)
		add(fmt.Sprintf("vpermq $%#x, %%ymm2, %%ymm1", imm), 10, genIntY)
		add(fmt.Sprintf("vpermpd $%#x, 8(%%rsi), %%ymm1", imm), 10, genIntY)
		add(fmt.Sprintf("vpermilps $%#x, %%ymm2, %%ymm1", imm), 10, genIntY)
		add(fmt.Sprintf("vpermilpd $%#x, %%ymm2, %%ymm1", imm&15), 10, genIntY)
		add(fmt.Sprintf("vmpsadbw $%#x, %%ymm2, %%ymm3, %%ymm1", imm&0x3f), 10, genIntY)
	}
	for _, imm := range []int{0x00, 0x01, 0x10, 0x20, 0x31, 0x13, 0x08, 0x80, 0x28} {
		add(fmt.Sprintf("vperm2i128 $%#x, %%ymm2, %%ymm3, %%ymm1", imm), 10, genIntY)
		add(fmt.Sprintf("vperm2f128 $%#x, (%%rsi), %%ymm3, %%ymm1", imm), 10, genIntY)
	}
	add("vpermd %ymm2, %ymm3, %ymm1", 50, genIntY)
	add("vpermps 4(%rsi), %ymm3, %ymm1", 50, genIntY)
	add("vpermilps %ymm2, %ymm3, %ymm1", 50, genIntY)
	add("vpermilpd %xmm2, %xmm3, %xmm1", 50, genIntY)
	for _, op := range []string{"vpsllw", "vpslld", "vpsllq", "vpsrlw", "vpsrld", "vpsrlq", "vpsraw", "vpsrad"} {
		add(op+" %xmm2, %ymm3, %ymm1", 50, genShift)
		add(op+" (%rsi), %xmm3, %xmm1", 20, genShift)
		for _, imm := range []int{0, 1, 15, 16, 31, 33, 63, 64, 200} {
			add(fmt.Sprintf("%s $%d, %%ymm3, %%ymm1", op, imm), 5, genIntY)
		}
	}
	for _, imm := range []int{0, 3, 15, 16} {
		add(fmt.Sprintf("vpslldq $%d, %%ymm3, %%ymm1", imm), 5, genIntY)
		add(fmt.Sprintf("vpsrldq $%d, %%xmm3, %%xmm1", imm), 5, genIntY)
	}
	for _, op := range []string{"vpsllvd", "vpsllvq", "vpsrlvd", "vpsrlvq", "vpsravd"} {
		add(op+" %ymm2, %ymm3, %ymm1", 100, genShift)
		add(op+" (%rsi), %xmm3, %xmm1", 30, genShift)
	}
	for _, op := range []string{"vblendvps", "vblendvpd", "vpblendvb"} {
		add(op+" %ymm4, %ymm2, %ymm3, %ymm1", 30, genIntY)
		add(op+" %xmm0, (%rsi), %xmm3, %xmm1", 20, genIntY)
	}
	for _, op := range []string{"vptest", "vtestps", "vtestpd"} {
		add(op+" %ymm2, %ymm1", 50, genIntY)
		add(op+" (%rsi), %xmm1", 20, genIntY)
	}
	add("vptest %ymm1, %ymm1", 20, genIntY)
	for _, op := range []string{"vpbroadcastb", "vpbroadcastw", "vpbroadcastd", "vpbroadcastq", "vbroadcastss"} {
		add(op+" %xmm2, %ymm1", 10, genIntY)
		add(op+" 5(%rsi), %xmm1", 10, genIntY)
	}
	add("vbroadcastsd 8(%rsi), %ymm1", 10, genIntY)
	add("vbroadcastsd %xmm2, %ymm1", 10, genIntY)
	add("vbroadcastf128 16(%rsi), %ymm1", 10, genIntY)
	add("vbroadcasti128 (%rsi), %ymm1", 10, genIntY)
	for _, ty := range []string{"bw", "bd", "bq", "wd", "wq", "dq"} {
		add("vpmovzx"+ty+" %xmm2, %ymm1", 20, genIntY)
		add("vpmovsx"+ty+" 3(%rsi), %ymm1", 20, genIntY)
		add("vpmovsx"+ty+" %xmm2, %xmm1", 20, genIntY)
	}
	for _, imm := range []int{0, 1} {
		add(fmt.Sprintf("vinserti128 $%d, %%xmm2, %%ymm3, %%ymm1", imm), 10, genIntY)
		add(fmt.Sprintf("vinsertf128 $%d, 8(%%rsi), %%ymm3, %%ymm1", imm), 10, genIntY)
		add(fmt.Sprintf("vextracti128 $%d, %%ymm2, %%xmm1", imm), 10, genIntY)
		add(fmt.Sprintf("vextractf128 $%d, %%ymm2, 8(%%rsi)", imm), 10, genIntY)
	}
	for _, imm := range []int{0, 3, 9, 17} {
		add(fmt.Sprintf("vpinsrb $%d, %%eax, %%xmm3, %%xmm1", imm), 5, genIntY)
		add(fmt.Sprintf("vpinsrw $%d, 6(%%rsi), %%xmm3, %%xmm1", imm), 5, genIntY)
		add(fmt.Sprintf("vpinsrd $%d, %%ecx, %%xmm3, %%xmm1", imm), 5, genIntY)
		add(fmt.Sprintf("vpinsrq $%d, %%rcx, %%xmm3, %%xmm1", imm), 5, genIntY)
		add(fmt.Sprintf("vpextrb $%d, %%xmm2, %%eax", imm), 5, genIntY)
		add(fmt.Sprintf("vpextrw $%d, %%xmm2, %%eax", imm), 5, genIntY)
		add(fmt.Sprintf("vpextrw $%d, %%xmm2, 6(%%rsi)", imm), 5, genIntY)
		add(fmt.Sprintf("vpextrd $%d, %%xmm2, 4(%%rsi)", imm), 5, genIntY)
		add(fmt.Sprintf("vpextrq $%d, %%xmm2, %%rcx", imm), 5, genIntY)
		add(fmt.Sprintf("vextractps $%d, %%xmm2, %%eax", imm), 5, genIntY)
		add(fmt.Sprintf("vinsertps $%#x, %%xmm2, %%xmm3, %%xmm1", imm*13), 5, genIntY)
	}
	// (vpmaskmovq before vpmaskmovd: a handler builder that kept the
	// last W it saw built every later vpmaskmovd with 64-bit lanes.)
	for _, op := range []string{"vmaskmovps", "vmaskmovpd", "vpmaskmovq", "vpmaskmovd"} {
		add(op+" (%rsi), %ymm2, %ymm1", 30, genIntY)
		add(op+" %xmm1, %xmm2, 8(%rsi)", 30, genIntY)
	}
	// (Whether a masked-off lane on an unmapped page faults is
	// implementation-dependent: this AMD host faults, Intel does not, ttd
	// does not.)
	add("vpcmpistri $0x0c, %xmm2, %xmm1", 40, genStr)
	add("vpcmpestrm $0x44, (%rsi), %xmm1", 40, genStr)

	// FMA3.
	for _, form := range []string{"132", "213", "231"} {
		for _, op := range []string{"vfmadd", "vfmsub", "vfnmadd", "vfnmsub", "vfmaddsub", "vfmsubadd"} {
			add(op+form+"ps %ymm2, %ymm3, %ymm1", 300, g32)
			add(op+form+"pd %xmm2, %xmm3, %xmm1", 300, g64)
			if op != "vfmaddsub" && op != "vfmsubadd" {
				add(op+form+"ss %xmm2, %xmm3, %xmm1", 300, g32)
				add(op+form+"sd 8(%rsi), %xmm3, %xmm1", 100, g64)
			}
		}
		add("vfmadd"+form+"pd (%rsi), %ymm3, %ymm1", 100, g64)
	}

	// F16C.
	add("vcvtph2ps %xmm2, %ymm1", 200, genHalf)
	add("vcvtph2ps 8(%rsi), %xmm1", 100, genHalf)
	for imm := 0; imm < 8; imm++ {
		add(fmt.Sprintf("vcvtps2ph $%d, %%ymm2, %%xmm1", imm), 100, g32)
		add(fmt.Sprintf("vcvtps2ph $%d, %%xmm2, 8(%%rsi)", imm), 50, g32)
	}

	// BMI1, BMI2.
	const undefAP = FlagAF | FlagPF
	for i, r := range []string{"%eax, %ecx, %edx", "%rax, %rcx, %rdx", "(%rsi), %rcx, %rdx"} {
		r2 := []string{"%ecx, %eax, %edx", "%rcx, %rax, %rdx", "%rcx, (%rsi), %rdx"}[i] // vvvv second
		addU("andn "+r, 100, edgeRegs, undefAP)
		addU("bextr "+r2, 100, genBextr, undefAP|FlagSF)
		addU("bzhi "+r2, 100, genBextr, undefAP)
		add("sarx "+r2, 100, edgeRegs)
		add("shlx "+r2, 100, edgeRegs)
		add("shrx "+r2, 100, edgeRegs)
		add("pdep "+r, 100, edgeRegs)
		add("pext "+r, 100, edgeRegs)
		add("mulx "+r, 100, edgeRegs)
	}
	add("mulx %rax, %rcx, %rcx", 50, edgeRegs)
	for _, r := range []string{"%eax, %ecx", "%rax, %rcx", "(%rsi), %rcx", "4(%rsi), %ecx"} {
		addU("blsr "+r, 100, edgeRegs, undefAP)
		addU("blsmsk "+r, 100, edgeRegs, undefAP)
		addU("blsi "+r, 100, edgeRegs, undefAP)
	}
	for _, imm := range []int{0, 1, 31, 32, 63, 64, 200} {
		add(fmt.Sprintf("rorx $%d, %%rax, %%rcx", imm), 10, edgeRegs)
		add(fmt.Sprintf("rorx $%d, %%eax, %%ecx", imm), 10, edgeRegs)
	}
	add("rorx $5, (%rsi), %rcx", 10, edgeRegs)
	return t
}

// genBextr puts bextr/bzhi controls with starts and lengths around the
// operand sizes in rcx.
func genBextr(g *diffGen, s *diffState) {
	edgeRegs(g, s)
	v := []uint64{0, 1, 7, 8, 31, 32, 33, 63, 64, 65, 200, 255}
	s.R[RCX] = v[g.Intn(len(v))] | v[g.Intn(len(v))]<<8 | uint64(g.Intn(4))<<16*uint64(g.Intn(2))
}

// genHalf fills XMM registers and memory with half-precision values
// rich in NaNs, infinities, zeros and denormals.
func genHalf(g *diffGen, s *diffState) {
	genFPY(32)(g, s)
	edges := []uint64{0, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xfd55, 0x0001, 0x03ff, 0x8200, 0x0400, 0x3c00, 0x7bff}
	h := func() uint64 {
		if g.Intn(2) == 0 {
			return edges[g.Intn(len(edges))]
		}
		return uint64(g.Intn(1 << 16))
	}
	q := func() uint64 { return h() | h()<<16 | h()<<32 | h()<<48 }
	for i := 0; i < 4; i++ {
		s.X[i] = XMM{q(), q()}
	}
	for i := 0; i < 8; i++ {
		putLE64(s.Mem[8*i:], q())
	}
}

func TestDiffGather(t *testing.T) {
	if !diffYMM {
		t.Skip("SKIPPING the gather differential test: the host CPU has no AVX")
	}
	var tb diffTable
	// op: the 256-bit form's destination (and mask) and index registers.
	for _, f := range []struct{ op, dst, idx string }{
		{"vpgatherdd", "ymm", "ymm"}, {"vgatherdps", "ymm", "ymm"},
		{"vpgatherdq", "ymm", "xmm"}, {"vgatherdpd", "ymm", "xmm"},
		{"vpgatherqd", "xmm", "ymm"}, {"vgatherqps", "xmm", "ymm"},
		{"vpgatherqq", "ymm", "ymm"}, {"vgatherqpd", "ymm", "ymm"},
	} {
		q := strings.TrimPrefix(strings.TrimPrefix(f.op, "vp"), "v")[6] == 'q' // qword indexes
		for _, scale := range []int{1, 4, 8} {
			tb.add(fmt.Sprintf("%s %%%s2, 8(%%rdi,%%%s3,%d), %%%s1", f.op, f.dst, f.idx, scale, f.dst), 40, genGather(q, scale))
			tb.add(fmt.Sprintf("%s %%xmm2, -8(%%rdi,%%xmm3,%d), %%xmm1", f.op, scale), 30, genGather(q, scale))
		}
	}
	tb.add("vpgatherdd %ymm2, (%rdi,%ymm1,4), %ymm1", 3, genIntY)                // #UD: index = destination
	tb.add("vpgatherdd %ymm2, 16(%rdi,%ymm4,2), %ymm0", 30, genGather(false, 2)) // index XMM4/YMM4 (SIB index 100b)
	// A fault at element 3: the elements below it are done, their mask
	// lanes clear (the SDM requires it of the lower elements).
	fault := func(g *diffGen, s *diffState) {
		genGather(false, 4)(g, s)
		s.X[3][1] = s.X[3][1]&^0xffffffff | 0x40000000
		s.X[2], s.YH[2] = XMM{^uint64(0), ^uint64(0)}, XMM{^uint64(0), ^uint64(0)}
	}
	tb.add("vpgatherdd %ymm2, 8(%rdi,%ymm3,4), %ymm1", 10, fault)
	tb.add("vgatherdpd %ymm2, 8(%rdi,%xmm3,4), %ymm1", 10, fault)
	runDiff(t, 8, tb)
}

// genGather makes random masks in ymm2 and indexes in ymm3 (and ymm4)
// that, scaled, stay within the compared memory from rsi or rdi.
func genGather(qidx bool, scale int) func(g *diffGen, s *diffState) {
	return func(g *diffGen, s *diffState) {
		genIntY(g, s)
		lim := 200 / scale
		ix := func() uint64 { return uint64(int64(g.Intn(2*lim) - lim)) }
		for _, r := range []int{3, 4} {
			var v [4]uint64
			for i := range v {
				if qidx {
					v[i] = ix()
				} else {
					v[i] = ix()&0xffffffff | ix()<<32
				}
			}
			s.X[r], s.YH[r] = XMM{v[0], v[1]}, XMM{v[2], v[3]}
		}
	}
}
