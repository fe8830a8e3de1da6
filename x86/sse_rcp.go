package x86

// rcpps, rcpss, rsqrtps and rsqrtss return approximations (relative error
// at most 1.5*2^-12) whose exact bits are implementation-specific: AMD and
// Intel differ, and neither documents its tables. On an amd64 host the
// interpreter executes the host's own instruction (hostRecip, in assembly),
// so results match the machine it runs on bit for bit; the values are
// reported through Observer.NonDet so that a recording replays identically
// on a machine of another vendor. On other hosts a portable approximation
// is used (see sse_rcp_other.go), which is not bit-exact with any CPU.
//
// The instructions raise no exceptions and ignore MXCSR except DAZ and
// FTZ, which the host instruction is run with.

import "golang.org/x/arch/x86/x86asm"

// Operations of hostRecip.
const (
	recipRcp = iota
	recipRsqrt
)

// recip computes rcpps or rsqrtps of s (all four lanes) through the
// observer.
func (c *CPU) recip(in *Inst, op int, s XMM) XMM {
	r := hostRecip(op, s, c.MXCSR&(MxDAZ|MxFZ)|mxDefault)
	if c.Obs != nil {
		vals := [2]uint64{r[0], r[1]}
		out := c.Obs.NonDet(c, in, vals[:])
		r = XMM{out[0], out[1]}
	}
	return r
}

func init() {
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) { *d = c.recip(in, recipRcp, s) }, x86asm.RCPPS)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) { *d = c.recip(in, recipRsqrt, s) }, x86asm.RSQRTPS)
	// The scalar forms compute only the low lane; the others stay. (The
	// packed computation of the high lanes is discarded.)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		r := c.recip(in, recipRcp, XMM{s[0] & 0xffffffff})
		d[0] = d[0]&^0xffffffff | r[0]&0xffffffff
	}, x86asm.RCPSS)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		r := c.recip(in, recipRsqrt, XMM{s[0] & 0xffffffff})
		d[0] = d[0]&^0xffffffff | r[0]&0xffffffff
	}, x86asm.RSQRTSS)
	handle(x86asm.EMMS, func(c *CPU, in *Inst) { c.FPU.Tag = 0 })
}
