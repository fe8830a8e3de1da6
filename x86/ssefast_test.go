package x86

import (
	"encoding/binary"
	"math"
	"math/rand"
	"sort"
	"strings"
	"testing"
)

// TestSSEFastPathsMatchExact runs each double-precision fast path
// (ssefast.go), with the host's flags merged as Run does (hostfp.go), and
// the exact handler it falls back to on the same operands — zeros,
// denormals, the edges of the normal range, infinities, NaNs and random
// numbers — with MXCSR in the state the fast paths accept and in others,
// and compares the result, MXCSR and RFLAGS. The exact handlers are checked
// against the host CPU by the differential tests.
func TestSSEFastPathsMatchExact(t *testing.T) {
	special := []uint64{
		0, 1, 0x000fffffffffffff, 0x0010000000000000, 0x001fffffffffffff, 0x0020000000000000,
		math.Float64bits(1), math.Float64bits(1.5), math.Float64bits(3), math.Float64bits(1e-300),
		math.Float64bits(1e300), math.Float64bits(math.MaxFloat64), math.Float64bits(math.Inf(1)),
		0x7ff8000000000000, 0x7ff0000000000001, 0x7ff4000000000000, 0x7fe0000000000000, 0x7fdfffffffffffff,
	}
	r := rand.New(rand.NewSource(1))
	val := func() uint64 {
		switch r.Intn(6) {
		case 0, 1:
			return r.Uint64()
		case 2: // near the top of the range, where TwoSum's terms may overflow
			return r.Uint64()&(1<<52-1) | uint64(0x7f0+r.Intn(15))<<52 | uint64(r.Intn(2))<<63
		}
		return special[r.Intn(len(special))] | uint64(r.Intn(2))<<63
	}
	ops := map[string][]byte{
		"addsd": {0xf2, 0x0f, 0x58}, "subsd": {0xf2, 0x0f, 0x5c}, "mulsd": {0xf2, 0x0f, 0x59},
		"divsd": {0xf2, 0x0f, 0x5e}, "sqrtsd": {0xf2, 0x0f, 0x51},
		"ucomisd": {0x66, 0x0f, 0x2e}, "comisd": {0x66, 0x0f, 0x2f},
		"addpd": {0x66, 0x0f, 0x58}, "subpd": {0x66, 0x0f, 0x5c}, "mulpd": {0x66, 0x0f, 0x59},
	}
	const data = 0x600000
	fast := 0
	names := make([]string, 0, len(ops))
	for name := range ops {
		names = append(names, name)
	}
	sort.Strings(names) // the same operands for each on every run
	for _, name := range names {
		op := ops[name]
		for _, modrm := range []byte{0xc1, 0x06} { // xmm0, xmm1 / xmm0, (%rsi)
			code := append(append([]byte{}, op...), modrm)
			in := decodeInst(testCode, code)
			if f := sseFast[in.Op]; funcPC(in.Fn) != funcPC(f.xx) && funcPC(in.Fn) != funcPC(f.xm) {
				t.Fatalf("%s % x: no fast path installed", name, code)
			}
			exact := func(c *CPU, in *Inst) { c.exact(in) }
			c := newTestCPU(t, code)
			c.Mem.SetPage(data>>PageShift, NewPage(), PermRead|PermWrite)
			c.R[RSI] = data
			for i := 0; i < 20000; i++ {
				a, b, a2, b2 := val(), val(), val(), val()
				mx := uint32(mxFastPE)
				switch r.Intn(8) {
				case 0:
					mx = mxDefault
				case 1:
					mx = uint32(r.Intn(1<<16)) | 0x1f80 // all exceptions masked
				case 2:
					mx |= uint32(r.Intn(32))
				}
				// hostFP runs h as Run does, leaving flags to the host.
				run := func(h Handler, hostFP bool) CPU {
					c.store64(data, b)
					c.store64(data+8, a2)
					c.X[0] = XMM{a, b2}
					c.X[1] = XMM{b, a2}
					c.MXCSR = mx
					c.SetRflags(0x202 | FlagSF | FlagOF)
					if hostFP {
						c.enterHostFP()
						h(c, &in)
						c.leaveHostFP()
					} else {
						h(c, &in)
					}
					return *c
				}
				// The exact handler alone computes the flags; inside Run
				// it must leave none in the host that the guest would not
				// raise.
				e := run(exact, false)
				for k, f := range []CPU{run(in.Fn, true), run(exact, true)} {
					if f.X[0] != e.X[0] || f.X[1] != e.X[1] || f.MXCSR != e.MXCSR || f.Rflags() != e.Rflags() {
						t.Fatalf("%s % x a=%#x b=%#x a2=%#x b2=%#x mxcsr=%#x:\n%s %#x mxcsr %#x flags %#x\nexact alone %#x mxcsr %#x flags %#x",
							name, code, a, b, a2, b2, mx, []string{"fast path in Run", "exact in Run"}[k],
							f.X[0], f.MXCSR, f.Rflags(), e.X[0], e.MXCSR, e.Rflags())
					}
				}
				fast++
			}
		}
	}
	if fast == 0 {
		t.Fatal("nothing compared")
	}
}

// TestFallbackReadsOnce: when addsd's fast path gives up (inf + -inf is a
// NaN), the exact handler takes the operand the fast path read: one read,
// as the hardware makes, except when replaying a trace recorded before
// (CodeCache.LegacyReads), which has two.
func TestFallbackReadsOnce(t *testing.T) {
	code := []byte{0xf2, 0x0f, 0x58, 0x0e} // addsd (%rsi), %xmm1
	for _, legacy := range []bool{false, true} {
		e := newDiffEmu()
		e.pred = true
		e.cc.LegacyReads = legacy
		var in diffState
		in.R[RSI] = diffMemAddr
		in.MXCSR = 0x1fa0 // the fast paths need PE set
		in.X[1][0] = 0x7ff0000000000000
		binary.LittleEndian.PutUint64(in.Mem[:], 0xfff0000000000000)
		r := e.run(code, &in, false)
		want := "reads 1,"
		if legacy {
			want = "reads 2,"
		}
		if !strings.HasPrefix(r.Pred, want) || r.S.X[1][0] != 0xfff8000000000000 {
			t.Errorf("legacy %v: %s, xmm1 %#x; want %s and the default NaN", legacy, r.Pred, r.S.X[1][0], want)
		}
	}
}
