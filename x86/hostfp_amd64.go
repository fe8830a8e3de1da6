package x86

// hostFPFlags: the host is x86-64, so its SSE arithmetic raises exactly the
// guest's exception flags (see hostfp.go).
const hostFPFlags = true

// takeHostFPFlags returns the host thread's MXCSR and clears its six
// exception flags (hostfp_amd64.s).
func takeHostFPFlags() uint32
