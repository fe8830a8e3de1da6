package x86

import (
	"math"
	"runtime"
	"testing"
)

var (
	testNaN  = math.NaN()
	testSink int64
)

// raiseHostIE converts a NaN to an integer, which raises IE in the host
// thread's MXCSR, as the Go runtime's pacer does when GOGC is turned off.
func raiseHostIE() { testSink = int64(testNaN) }

// TestGoCodeInRunKeepsItsFPFlags checks that the exception flags Go code
// raises inside Run, when it is no guest instruction (here the
// OnFirstDecode hook, where cmd/ttd changed GOGC), do not reach the
// guest's MXCSR, and that the guest's own flags still do. They used to:
// `ttd replay --verify` diverged on IE when a collection had ended before
// the first decode in one of the recording and the replay only.
func TestGoCodeInRunKeepsItsFPFlags(t *testing.T) {
	if !hostFPFlags {
		t.Skip("the fast paths are off on this host")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	takeHostFPFlags()
	raiseHostIE()
	if takeHostFPFlags()&MxIE == 0 {
		t.Fatal("converting a NaN to an integer raised no IE on the host: the test tests nothing")
	}
	saved := OnFirstDecode
	defer func() { OnFirstDecode = saved; firstDecodeSeen.Store(false) }()
	hooked := 0
	OnFirstDecode = func() { hooked++; raiseHostIE() }
	firstDecodeSeen.Store(false)
	code := []byte{
		0xf2, 0x0f, 0x59, 0xc1, // mulsd %xmm1, %xmm0: overflow
		0xeb, 0x00, // jmp +0: the next block is decoded after the overflow
		0x0f, 0x05, // syscall
	}
	c := newTestCPU(t, code)
	c.MXCSR = mxFastPE
	c.X[0][0], c.X[1][0] = math.Float64bits(1e300), math.Float64bits(1e300)
	if ex := c.Run(1 << 20); ex.Reason != ExitSyscall {
		t.Fatalf("exit %v", ex.Reason)
	}
	if hooked != 1 {
		t.Fatalf("OnFirstDecode ran %d times, want 1", hooked)
	}
	if c.MXCSR != mxFastPE|MxOE {
		t.Errorf("MXCSR after Run %#x, want %#x (OE from mulsd, kept across the second decode; not IE from the hook)", c.MXCSR, mxFastPE|MxOE)
	}
}
