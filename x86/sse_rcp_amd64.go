package x86

// hostRecip runs rcpps (op recipRcp) or rsqrtps (recipRsqrt) on x with
// MXCSR temporarily set to mx.
func hostRecip(op int, x XMM, mx uint32) XMM {
	var r XMM
	hostRecipAsm(op, &x, mx, &r)
	return r
}

// hostRecipAsm is in sse_rcp_amd64.s.
//
//go:noescape
func hostRecipAsm(op int, x *XMM, mx uint32, r *XMM)
