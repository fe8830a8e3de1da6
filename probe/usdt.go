package probe

import (
	"fmt"
	"path/filepath"

	"ttd/symbols"
	"ttd/x86"
)

// The usdt provider: usdt:MODULE:PROVIDER:NAME fires at the nop of a
// static probe that a binary declares in .note.stapsdt (symbols reads
// the notes). arg0..argN are the probe's operands, decoded from the
// note's argument string at the moment the nop runs: a register (or
// part of one), a constant, or memory at base+index*scale+disp, read
// through what the re-simulation knows (a fault if it is unknown), then
// truncated and extended to the operand's size and signedness.
//
// A probe with a semaphore (python's) runs its nop only while a tracer
// holds the semaphore. A live run raises it (package probe/live); a
// recording made without a tracer never reaches the nop: Bind reads the
// semaphore from the trace and SemaphoreWarnings says so.

// usdtRegs maps the notes' 64-bit register names to x86 numbers.
var usdtRegs = map[string]int{}

func init() {
	for i, n := range x86.RegNames {
		usdtRegs[n] = i
	}
}

// bindUSDT binds the static probes matching a usdt probe description,
// in every program.
func (b *Bound) bindUSDT(pr ProbeSpec, cl *Clause, get func(string, func() *boundProbe) *boundProbe, attach func(*boundProbe, *Clause)) (int, error) {
	if b.T.Syms == nil {
		return 0, errAt(pr.P, "usdt probes need the program's modules, and this trace has no symbols")
	}
	n := 0
	for si, sp := range b.spaces {
		if sp.syms == nil {
			continue
		}
		for _, up := range sp.syms.USDTProbes() {
			if !sp.moduleMatch(pr.Mod, up.Module) || !glob(pr.Func, up.Provider) || !glob(pr.Name, up.Name) {
				continue
			}
			for _, a := range up.Args {
				for _, r := range []string{a.Reg, a.Base, a.Index} {
					if _, ok := usdtRegs[r]; r != "" && !ok && r != "rip" {
						return 0, errAt(pr.P, "usdt probe %s:%s in %s: argument %q uses register %s, which probes cannot read", up.Provider, up.Name, filepath.Base(up.Module), a.Text, r)
					}
				}
				if a.Kind == symbols.USDTMem {
					b.needMemory = true
				}
			}
			up := up
			bp := get(fmt.Sprintf("%d:u%x", si, up.Addr), func() *boundProbe {
				bp := &boundProbe{Prov: "usdt", Mod: filepath.Base(up.Module), Func: up.Provider, Name: up.Name, Addr: up.Addr, usdt: &up, sp: sp}
				sp.addr[up.Addr] = append(sp.addr[up.Addr], bp)
				return bp
			})
			attach(bp, cl)
			n++
		}
	}
	return n, nil
}

// usdtArg evaluates argument i of the usdt probe firing (0 past the
// probe's last argument, as for a function's unused registers).
func (s *segEval) usdtArg(cr *clauseRun, i int) int64 {
	up := cr.ev.bp.usdt
	if i >= len(up.Args) {
		return 0
	}
	a := &up.Args[i]
	c := cr.ev.cpu
	if c == nil {
		s.faultf(cr.cl.P, "usdt argument %d (%s): no registers at this event", i, a.Text)
	}
	reg := func(name string) uint64 {
		if name == "rip" {
			return cr.ev.pc
		}
		return c.R[usdtRegs[name]]
	}
	var v uint64
	switch a.Kind {
	case symbols.USDTReg:
		v = reg(a.Reg)
		if a.RegHigh {
			v >>= 8
		}
	case symbols.USDTImm:
		v = uint64(a.Disp)
	case symbols.USDTMem:
		addr := uint64(a.Disp)
		if a.Base == "rip" {
			// %rip-relative operands count from the next instruction;
			// the probe site is a 1-byte nop.
			addr += cr.ev.pc + 1
		} else if a.Base != "" {
			addr += reg(a.Base)
		}
		if a.Index != "" {
			addr += reg(a.Index) * uint64(a.Scale)
		}
		return s.loadInt(cr.cl.P, addr, a.Size, a.Signed)
	}
	return extend(v, a.Size, a.Signed)
}

// checkSemaphores reads, at the end of the recording, the semaphore of
// every bound usdt probe that has one: a semaphore that was 0 (or never
// read) while the program was recorded means the probe's site never ran.
func (b *Bound) checkSemaphores() {
	s := &segEval{b: b, k: len(b.cps), lookback: b.T.Index != nil}
	for _, bp := range b.probes {
		up := bp.usdt
		if up == nil || up.Semaphore == 0 {
			continue
		}
		buf, known := make([]byte, 2), make([]bool, 2)
		s.readInto(up.Semaphore, buf, known)
		why := ""
		switch {
		case b.T.Index == nil:
			why = "ttd cannot tell whether a tracer raised it while the program was recorded (the trace was opened without its index)"
		case !known[0] || !known[1]:
			why = "the program never read it while it was recorded"
		case buf[0] == 0 && buf[1] == 0:
			why = "it was 0 while the program was recorded"
		default:
			continue
		}
		b.warnings = append(b.warnings, fmt.Sprintf("%s is guarded by a semaphore (%#x) that only a tracer raises, and %s: it cannot fire over this trace; probe the program live (ttd probe ... -- PROG) to raise it", bp.label(), up.Semaphore, why))
	}
}

// SemaphoreWarnings are the usdt probes bound that cannot fire over the
// trace because their semaphore was not raised when it was recorded.
func (b *Bound) SemaphoreWarnings() []string { return b.warnings }

// UsesUSDT reports whether the script has usdt probes (a runner then
// opens the trace with its index, for their semaphores).
func (p *Program) UsesUSDT() bool {
	for _, cl := range p.Script.Clauses {
		for _, pr := range cl.Probes {
			if pr.Prov == "usdt" {
				return true
			}
		}
	}
	return false
}
