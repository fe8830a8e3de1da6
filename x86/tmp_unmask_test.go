package x86

import "testing"

func TestTmpUnmask(t *testing.T) {
	unm := func(w int) func(g *diffGen, s *diffState) {
		base := genFP(w)
		return func(g *diffGen, s *diffState) {
			base(g, s)
			s.MXCSR = uint32(g.Intn(64))<<7 | uint32(g.Intn(4))<<13 | uint32(g.Intn(2))*MxDAZ | uint32(g.Intn(2))*MxFZ
		}
	}
	var tt []diffTest
	for _, a := range []string{"mulps %xmm2, %xmm1", "mulss %xmm2, %xmm1", "mulpd %xmm2, %xmm1", "divps %xmm2, %xmm1", "addps %xmm2, %xmm1", "sqrtps %xmm2, %xmm1", "cvtpd2ps %xmm2, %xmm1", "cvtps2dq %xmm2, %xmm1", "cmpltps %xmm2, %xmm1", "minps %xmm2, %xmm1", "comiss %xmm2, %xmm1"} {
		w := 32
		if a[5] == 'd' || a[3] == 'p' && a[4] == 'd' || a[0:5] == "cvtpd" {
			w = 64
		}
		tt = append(tt, diffTest{asm: a, n: 3000, gen: unm(w)})
	}
	runDiff(t, 5, tt)
}
