package x86

import "runtime"

// The SSE fast paths (ssefast.go) leave exception flags to the host CPU.
//
// When the guest's MXCSR is the default (every exception masked, round to
// nearest, no DAZ or FTZ), a scalar or packed double operation that the
// fast path computes with Go's float64 arithmetic runs the very same SSE
// instruction on the host, whose MXCSR is in that same state: the result is
// the guest's bit for bit (NaN results excepted: Go may order the operands
// of a commutative operation either way, so those go to the exact handler),
// and the host raises exactly the exception flags the guest would. Rather
// than test operands and results for denormals, underflow and overflow in
// software before every operation, the fast paths let those flags collect
// in the host's MXCSR, and Run merges them into the guest's:
//
//   - Run locks its goroutine to its thread (MXCSR is per thread), clears
//     the host's flags on entry and merges them on exit, panics included.
//   - The instructions that read or replace MXCSR inside Run (stmxcsr,
//     ldmxcsr, fxsave, fxrstor) merge first.
//   - Only IE, DE, ZE, OE and UE are merged. The fast paths run only with
//     the guest's sticky PE already set, and the exact handlers, which
//     also compute with host floats, take care to raise nothing else that
//     the guest would not (their error terms never underflow), but they
//     raise PE freely.
//
// Go code that runs on the locked thread in between must raise none of
// those five flags, and the Go runtime's may: debug.SetGCPercent(-1)
// converts an out-of-range float64 to uint64 in the pacer (IE), and an
// allocation can run that pacer on this thread. So the code that runs
// inside Run and is not a guest instruction, and may allocate or call out,
// sets the guest's flags aside first and drops what it raised itself
// (setHostFPAside, takeHostFPBack): translating a block, and decoding
// one, with the OnFirstDecode hook (cmd/ttd changes GOGC there: `ttd replay --verify`
// diverged on MXCSR's IE, a flag no guest instruction raised, whenever a
// collection had ended before the first block was decoded).
// Signal handlers do not disturb MXCSR: the kernel restores it on return.

// hostFoldFlags are the host flags Run merges into the guest's MXCSR.
const hostFoldFlags = MxIE | MxDE | MxZE | MxOE | MxUE

// enterHostFP starts a stretch of guest execution whose fast paths leave
// their flags in the host's MXCSR.
func (c *CPU) enterHostFP() {
	if hostFPFlags {
		runtime.LockOSThread()
		takeHostFPFlags()
	}
}

// foldHostFP merges the flags the fast paths left in the host's MXCSR into
// the guest's and clears them.
func (c *CPU) foldHostFP() {
	if hostFPFlags {
		c.MXCSR |= takeHostFPFlags() & hostFoldFlags
	}
}

// leaveHostFP ends the stretch enterHostFP began.
func (c *CPU) leaveHostFP() {
	if hostFPFlags {
		c.foldHostFP()
		runtime.UnlockOSThread()
	}
}

// setHostFPAside merges the flags the guest's instructions left in the
// host's MXCSR into the guest's before Go code that is no guest
// instruction runs on this thread (see above); takeHostFPBack drops the
// flags that code raised.
func (c *CPU) setHostFPAside() { c.foldHostFP() }

// takeHostFPBack ends what setHostFPAside began.
func (c *CPU) takeHostFPBack() {
	if hostFPFlags {
		takeHostFPFlags()
	}
}
