package x86

import (
	"fmt"
	"testing"
)

// SSE3, SSSE3, SSE4.1 and SSE4.2 forms (x86-64-v2) for the differential
// test against the host (diff_test.go).

func TestDiffSSE4(t *testing.T) {
	runDiff(t, 4, sse4DiffTests())
}

// genStr fills XMM0-3 and memory with short strings over a small
// alphabet (zeros included, for the implicit lengths) and rax and rdx
// with lengths around the element counts, negative ones included.
func genStr(g *diffGen, s *diffState) {
	alpha := []byte{0, 'a', 'b', 'c', 'z', 0x80, 0xff, 'a' + 1}
	fill := func(b []byte) {
		for i := range b {
			b[i] = alpha[g.Intn(len(alpha))]
			if g.Intn(3) != 0 {
				b[i] = alpha[1+g.Intn(3)]
			}
		}
		if g.Intn(3) == 0 {
			for i := range b {
				if b[i] == 0 {
					b[i] = 'a'
				}
			}
		}
	}
	var b [16]byte
	for i := 0; i < 4; i++ {
		fill(b[:])
		s.X[i] = fromBytes(b)
	}
	fill(s.Mem[:64])
	lens := []uint64{0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 100, ^uint64(0), ^uint64(7), ^uint64(16), 1 << 31, 1 << 63, 0xffffffff00000003}
	s.R[RAX], s.R[RDX] = lens[g.Intn(len(lens))], lens[g.Intn(len(lens))]
	if g.Intn(2) == 0 {
		s.R[RAX], s.R[RDX] = uint64(g.Intn(20)), uint64(g.Intn(20))
	}
}

func sse4DiffTests() []diffTest {
	var t diffTable
	add := t.add
	gen32, gen64 := genFP(32), genFP(64)

	// SSE3.
	add("movddup %xmm2, %xmm1", 20, genInt)
	add("movddup 8(%rsi), %xmm1", 20, genInt)
	add("movshdup %xmm2, %xmm1", 20, genInt)
	add("movsldup (%rsi), %xmm1", 20, genInt)
	add("movsldup 8(%rsi), %xmm1", 5, genInt) // #GP
	add("lddqu 3(%rsi), %xmm1", 20, genInt)
	for _, op := range []string{"addsubps", "haddps", "hsubps"} {
		add(op+" %xmm2, %xmm1", 500, gen32)
		add(op+" (%rsi), %xmm1", 100, gen32)
	}
	for _, op := range []string{"addsubpd", "haddpd", "hsubpd"} {
		add(op+" %xmm2, %xmm1", 500, gen64)
		add(op+" (%rsi), %xmm1", 100, gen64)
	}

	// SSSE3.
	for _, op := range []string{"pshufb", "pabsb", "pabsw", "pabsd", "phaddw", "phaddd", "phaddsw",
		"phsubw", "phsubd", "phsubsw", "pmaddubsw", "pmulhrsw", "psignb", "psignw", "psignd"} {
		add(op+" %xmm2, %xmm1", 100, genInt)
		add(op+" (%rsi), %xmm1", 30, genInt)
	}
	add("pshufb %xmm10, %xmm9", 20, genInt)
	add("phaddw 8(%rsi), %xmm1", 5, genInt) // #GP
	for _, imm := range []int{0, 1, 7, 15, 16, 17, 31, 32, 33, 255} {
		add(fmt.Sprintf("palignr $%d, %%xmm2, %%xmm1", imm), 10, genInt)
	}
	add("palignr $5, (%rsi), %xmm1", 10, genInt)

	// SSE4.1.
	for imm := 0; imm < 16; imm++ {
		add(fmt.Sprintf("roundps $%d, %%xmm2, %%xmm1", imm), 100, gen32)
		add(fmt.Sprintf("roundpd $%d, %%xmm2, %%xmm1", imm), 100, gen64)
		add(fmt.Sprintf("roundss $%d, %%xmm2, %%xmm1", imm), 100, gen32)
		add(fmt.Sprintf("roundsd $%d, %%xmm2, %%xmm1", imm), 100, gen64)
	}
	add("roundsd $4, 8(%rsi), %xmm1", 50, gen64)
	add("roundss $1, 4(%rsi), %xmm1", 50, gen32)
	add("roundps $2, (%rsi), %xmm1", 50, gen32)
	add("roundpd $0x13, (%rsi), %xmm1", 50, gen64) // high bits ignored
	for _, imm := range []int{0, 1, 5, 0xa, 0xf, 0x3c, 0xff} {
		add(fmt.Sprintf("blendps $%#x, %%xmm2, %%xmm1", imm), 10, genInt)
		add(fmt.Sprintf("blendpd $%#x, %%xmm2, %%xmm1", imm), 10, genInt)
		add(fmt.Sprintf("pblendw $%#x, (%%rsi), %%xmm1", imm), 10, genInt)
		add(fmt.Sprintf("mpsadbw $%#x, %%xmm2, %%xmm1", imm), 20, genInt)
	}
	for _, op := range []string{"blendvps", "blendvpd", "pblendvb"} {
		add(op+" %xmm0, %xmm2, %xmm1", 50, genInt)
		add(op+" %xmm0, (%rsi), %xmm1", 20, genInt)
	}
	add("ptest %xmm2, %xmm1", 100, genInt)
	add("ptest %xmm1, %xmm1", 20, genInt)
	add("ptest (%rsi), %xmm1", 30, genInt)
	for _, op := range []string{"pminsb", "pminsd", "pminuw", "pminud", "pmaxsb", "pmaxsd", "pmaxuw", "pmaxud",
		"packusdw", "pcmpeqq", "pcmpgtq", "pmuldq", "pmulld", "phminposuw"} {
		add(op+" %xmm2, %xmm1", 100, genInt)
		add(op+" (%rsi), %xmm1", 30, genInt)
	}
	add("pcmpeqq %xmm1, %xmm1", 10, genInt)
	for _, ty := range []string{"bw", "bd", "bq", "wd", "wq", "dq"} {
		add("pmovsx"+ty+" %xmm2, %xmm1", 30, genInt)
		add("pmovzx"+ty+" %xmm2, %xmm1", 30, genInt)
		add("pmovsx"+ty+" 7(%rsi), %xmm1", 20, genInt) // no alignment
		add("pmovzx"+ty+" 3(%rsi), %xmm1", 20, genInt)
	}
	add("pmovzxbq 0x1ff(%rsi), %xmm1", 5, genInt) // crosses into the unmapped page
	for _, imm := range []int{0, 1, 3, 7, 15, 16, 255} {
		add(fmt.Sprintf("pinsrb $%d, %%eax, %%xmm1", imm), 5, genInt)
		add(fmt.Sprintf("pextrb $%d, %%xmm2, %%eax", imm), 5, genInt)
		add(fmt.Sprintf("pinsrd $%d, %%ecx, %%xmm1", imm), 5, genInt)
		add(fmt.Sprintf("pextrd $%d, %%xmm2, %%ecx", imm), 5, genInt)
		add(fmt.Sprintf("pinsrq $%d, %%rcx, %%xmm1", imm), 5, genInt)
		add(fmt.Sprintf("pextrq $%d, %%xmm2, %%rcx", imm), 5, genInt)
		add(fmt.Sprintf("extractps $%d, %%xmm2, %%eax", imm), 5, genInt)
		add(fmt.Sprintf("pextrw $%d, %%xmm2, 6(%%rsi)", imm), 5, genInt)
	}
	add("pinsrb $2, 5(%rsi), %xmm1", 10, genInt)
	add("pinsrd $3, 6(%rsi), %xmm1", 10, genInt)
	add("pinsrq $1, 7(%rsi), %xmm9", 10, genInt)
	add("pextrb $9, %xmm2, 5(%rsi)", 10, genInt)
	add("pextrd $2, %xmm2, 6(%rsi)", 10, genInt)
	add("pextrq $1, %xmm11, 7(%rsi)", 10, genInt)
	add("pextrb $9, %xmm2, %rax", 10, genInt)
	add("extractps $2, %xmm2, 6(%rsi)", 10, genInt)
	for _, imm := range []int{0, 0x10, 0x5c, 0x9f, 0xe0, 0x33, 0xff} {
		add(fmt.Sprintf("insertps $%#x, %%xmm2, %%xmm1", imm), 10, genInt)
		add(fmt.Sprintf("insertps $%#x, 4(%%rsi), %%xmm1", imm), 10, genInt)
	}
	for _, imm := range []int{0xff, 0xf1, 0x31, 0x7f, 0x53, 0x0f, 0xf0, 0xa5} {
		add(fmt.Sprintf("dpps $%#x, %%xmm2, %%xmm1", imm), 200, gen32)
	}
	for _, imm := range []int{0x33, 0x31, 0x12, 0x23, 0x03, 0x30} {
		add(fmt.Sprintf("dppd $%#x, %%xmm2, %%xmm1", imm), 200, gen64)
	}
	add("dpps $0xff, (%rsi), %xmm1", 50, gen32)
	add("dppd $0x33, (%rsi), %xmm1", 50, gen64)
	add("movntdqa (%rsi), %xmm1", 10, genInt)
	add("movntdqa 8(%rsi), %xmm1", 5, genInt) // #GP

	// SSE4.2.
	for _, imm := range []int{0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x08, 0x09, 0x0a, 0x0c, 0x0d, 0x0e,
		0x10, 0x14, 0x18, 0x1a, 0x30, 0x34, 0x38, 0x3a, 0x3c, 0x40, 0x44, 0x48, 0x4c, 0x4d, 0x70, 0x7c} {
		for _, op := range []string{"pcmpestri", "pcmpestrm", "pcmpistri", "pcmpistrm"} {
			add(fmt.Sprintf("%s $%#x, %%xmm2, %%xmm1", op, imm), 40, genStr)
		}
	}
	add("pcmpistri $0x0c, 3(%rsi), %xmm1", 40, genStr) // no alignment
	add("pcmpestrm $0x44, 5(%rsi), %xmm1", 40, genStr)
	add("rex.w pcmpestri $0x0c, %xmm2, %xmm1", 40, genStr) // 64-bit lengths
	add("pcmpistri $0x1a, %xmm10, %xmm9", 20, genStr)
	for _, a := range []string{"crc32b %al, %ecx", "crc32w %ax, %ecx", "crc32l %eax, %ecx", "crc32q %rax, %rcx",
		"crc32b %al, %rcx", "crc32b 3(%rsi), %ecx", "crc32w 5(%rsi), %edx", "crc32l 1(%rsi), %r9d", "crc32q 7(%rsi), %rcx",
		"crc32b %ah, %ecx"} {
		add(a, 50, genInt)
	}
	return t
}

// TestDiffSSSE3MMX: the MMX forms of SSSE3.
func TestDiffSSSE3MMX(t *testing.T) {
	var tb diffTable
	for _, op := range []string{"pshufb", "pabsb", "pabsw", "pabsd", "phaddw", "phaddd", "phaddsw", "phsubw", "phsubd",
		"phsubsw", "pmaddubsw", "pmulhrsw", "psignb", "psignw", "psignd"} {
		tb.add(op+" %mm2, %mm1", 100, genInt)
		tb.add(op+" 3(%rsi), %mm1", 20, genInt) // no alignment
	}
	for _, imm := range []int{0, 1, 3, 7, 8, 9, 15, 16, 17, 255} {
		tb.add(fmt.Sprintf("palignr $%d, %%mm2, %%mm1", imm), 10, genInt)
	}
	tb.add("palignr $5, 1(%rsi), %mm1", 10, genInt)
	runDiff(t, 10, tb)
}
