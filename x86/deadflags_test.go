package x86

import (
	"math/rand"
	"testing"
)

// randRegInst encodes a random register-only instruction: ALU with a
// register or an 8-bit immediate, shift or rotate by an immediate, inc,
// dec, imul, mul, mov, or a setcc that makes the flags visible in a register.
func randRegInst(r *rand.Rand) []byte {
	pick := func() byte {
		for {
			if g := byte(r.Intn(16)); g != RSP {
				return g
			}
		}
	}
	d, s := pick(), pick()
	rex := byte(0x40)
	if r.Intn(3) > 0 {
		rex |= 8 // REX.W
	}
	if d >= 8 {
		rex |= 1 // REX.B
	}
	if s >= 8 {
		rex |= 4 // REX.R
	}
	modrm := func(reg, rm byte) byte { return 0xc0 | (reg&7)<<3 | rm&7 }
	switch r.Intn(8) {
	case 6: // mul r/m (rdx:rax = rax * r/m)
		return []byte{rex &^ 4, 0xf7, modrm(4, d)}
	case 5: // imul r, r/m; imul r, r/m, imm8
		swapped := 0x40 | rex&8 | (rex&1)<<2 | (rex&4)>>2 // reg is d, r/m is s
		if r.Intn(2) == 0 {
			return []byte{swapped, 0x0f, 0xaf, modrm(d, s)}
		}
		return []byte{swapped, 0x6b, modrm(d, s), byte(r.Intn(256))}
	case 0, 1: // add or adc sbb and sub xor cmp r/m, r; test; mov
		ops := []byte{0x01, 0x09, 0x11, 0x19, 0x21, 0x29, 0x31, 0x39, 0x85, 0x89}
		return []byte{rex, ops[r.Intn(len(ops))], modrm(s, d)}
	case 2: // 83 /digit ib
		return []byte{rex &^ 4, 0x83, modrm(byte(r.Intn(8)), d), byte(r.Intn(256))}
	case 3: // C1 /digit ib: rol ror shl shr sar
		digits := []byte{0, 1, 4, 5, 7}
		counts := []byte{0, 1, 2, 7, 31, 32, 33, 63, byte(r.Intn(256))}
		return []byte{rex &^ 4, 0xc1, modrm(digits[r.Intn(len(digits))], d), counts[r.Intn(len(counts))]}
	case 4: // inc, dec
		return []byte{rex &^ 4, 0xff, modrm(byte(r.Intn(2)), d)}
	}
	// setcc r8 (with a REX prefix: no AH..BH)
	return []byte{0x40 | rex&1, 0x0f, 0x90 | byte(r.Intn(16)), modrm(0, d)}
}

// runToSyscall runs code from a fresh CPU prepared by setup up to its
// syscall, whole blocks at a time or (step) one instruction at a time,
// which runs every instruction's exact handler.
func runToSyscall(t *testing.T, code []byte, setup func(*CPU), step bool) *CPU {
	c := newTestCPU(t, code)
	setup(c)
	budget := uint64(1 << 20)
	if step {
		budget = 1
	}
	for {
		if e := c.Run(budget); e.Reason == ExitSyscall {
			return c
		} else if e.Reason != ExitBudget {
			t.Fatalf("% x: exit %v %v", code, e.Reason, e.Err)
		}
	}
}

// dispatched returns the handler the dispatch loop runs for in (the first
// of a fused pair), or nil when it runs in.Fn.
func dispatched(in *Inst) Handler {
	switch {
	case in.ID == 0:
		return nil
	case int(in.ID) < len(directHandlers):
		return directHandlers[in.ID]
	}
	return fusedPairs[int(in.ID)-fusedBase][0]
}

// TestDeadFlagsMatchExact runs random blocks of register-only
// instructions whole (where markDeadFlags drops dead flag computations)
// and one instruction at a time (exact handlers), and compares every
// register and RFLAGS.
func TestDeadFlagsMatchExact(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	dropped := 0
	for iter := 0; iter < 3000; iter++ {
		var code []byte
		for n := 1 + r.Intn(40); n > 0; n-- {
			code = append(code, randRegInst(r)...)
		}
		code = append(code, 0x0f, 0x05) // syscall ends the block
		var regs [16]uint64
		for i := range regs {
			regs[i] = r.Uint64() >> uint(r.Intn(64))
		}
		flags := uint64(0x202 | r.Intn(2)*FlagCF | r.Intn(2)*FlagZF | r.Intn(2)*FlagOF)
		setup := func(c *CPU) {
			c.R = regs
			c.R[RSP] = testStack - 64
			c.SetRflags(flags)
		}
		whole, exact := runToSyscall(t, code, setup, false), runToSyscall(t, code, setup, true)
		if b := whole.cache.lookup(testCode); b != nil {
			for i := range b.Insts {
				if h := dispatched(&b.Insts[i]); h != nil && funcPC(h) != funcPC(b.Insts[i].Fn) {
					dropped++
				}
			}
		}
		if whole.R != exact.R || whole.Rflags() != exact.Rflags() {
			t.Fatalf("code % x\nwhole: %x flags %#x\nexact: %x flags %#x", code, whole.R, whole.Rflags(), exact.R, exact.Rflags())
		}
	}
	if dropped == 0 {
		t.Fatal("no flag computation was dropped: the test tests nothing")
	}
	t.Logf("%d flag-free instructions", dropped)
}
