package x86

import (
	"math"
	"testing"
)

// TestHostFPFlagsReachGuest checks that the flags the fast paths leave in
// the host's MXCSR reach the guest's: at stmxcsr inside a run, at the end
// of Run, and not into a value ldmxcsr replaced. Without hostfp.go's
// merging, the overflow of mulsd would be lost.
func TestHostFPFlagsReachGuest(t *testing.T) {
	code := []byte{
		0xf2, 0x0f, 0x59, 0xc1, // mulsd %xmm1, %xmm0: overflow
		0x0f, 0xae, 0x5c, 0x24, 0xf0, // stmxcsr -16(%rsp)
		0xf2, 0x0f, 0x59, 0xd3, // mulsd %xmm3, %xmm2: underflow
		0x0f, 0x05, // syscall
	}
	if !hostFPFlags {
		t.Skip("the fast paths are off on this host")
	}
	c := newTestCPU(t, code)
	c.MXCSR = mxFastPE
	c.X[0][0], c.X[1][0] = math.Float64bits(1e300), math.Float64bits(1e300)
	c.X[2][0], c.X[3][0] = math.Float64bits(1e-300), math.Float64bits(1e-300)
	if ex := c.Run(1 << 20); ex.Reason != ExitSyscall {
		t.Fatalf("exit %v", ex.Reason)
	}
	if c.X[0][0] != math.Float64bits(math.Inf(1)) || c.X[2][0] != 0 {
		t.Fatalf("results %#x %#x", c.X[0][0], c.X[2][0])
	}
	if got := c.load32(c.R[RSP] - 16); got != mxFastPE|MxOE {
		t.Errorf("stmxcsr stored %#x, want %#x (OE from the first mulsd only)", got, mxFastPE|MxOE)
	}
	if c.MXCSR != mxFastPE|MxOE|MxUE {
		t.Errorf("MXCSR after Run %#x, want %#x", c.MXCSR, mxFastPE|MxOE|MxUE)
	}
}
