package x86

import (
	"math/rand"
	"testing"
)

// randFusable encodes an instruction that fuses with a following
// conditional jump (compares and tests of registers, immediates and
// memory, sub and add of an immediate, comisd), or a plain register
// instruction that does not.
func randFusable(r *rand.Rand) []byte {
	reg := func() byte {
		for {
			if g := byte(r.Intn(8)); g != RSP {
				return g
			}
		}
	}
	modrm := func(reg, rm byte) byte { return 0xc0 | reg<<3 | rm }
	rip := func(reg byte) []byte { return []byte{reg<<3 | 5, byte(r.Intn(64)), 0, 0, 0} } // [rip+disp32]: code bytes
	w := []byte{0x48}
	if r.Intn(2) == 0 {
		w = nil
	}
	switch r.Intn(12) {
	case 0: // cmp r/m, r
		return append(w, 0x39, modrm(reg(), reg()))
	case 1: // cmp r8, r8; cmp r/m8, imm8
		if r.Intn(2) == 0 {
			return []byte{0x38, modrm(reg()&3, reg()&3)}
		}
		return []byte{0x80, modrm(7, reg()&3), byte(r.Intn(256))}
	case 2: // cmp r/m, imm8; sub; add
		return append(w, 0x83, modrm([]byte{7, 5, 0}[r.Intn(3)], reg()), byte(r.Intn(256)))
	case 3: // cmp r, [rip+d]; cmp [rip+d], r
		return append(append(w, []byte{0x3b, 0x39, 0x3a, 0x38}[r.Intn(4)]), rip(reg()&3)...)
	case 4: // cmp [rip+d], imm8
		return append(append(w, 0x83), append(rip(7), byte(r.Intn(256)))...)
	case 5: // test r/m, r; test r8, r8; test r/m8 imm8
		switch r.Intn(3) {
		case 0:
			return append(w, 0x85, modrm(reg(), reg()))
		case 1:
			return []byte{0x84, modrm(reg()&3, reg()&3)}
		}
		return append([]byte{0xf6}, append(rip(0), byte(r.Intn(256)))...)
	case 6: // comisd xmm, xmm
		return []byte{0x66, 0x0f, 0x2f, modrm(byte(r.Intn(4)), byte(r.Intn(4)))}
	}
	return randRegInst(r)
}

// TestFusedMatchExact runs random blocks of fusable instructions, each
// followed by a conditional jump to the next instruction (so taken and not
// taken continue alike), whole (fused pairs) and one instruction at a time,
// and compares every register, RFLAGS and the instruction count.
func TestFusedMatchExact(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	fused := 0
	for iter := 0; iter < 3000; iter++ {
		var code []byte
		for n := 1 + r.Intn(30); n > 0; n-- {
			code = append(code, randFusable(r)...)
			if r.Intn(4) > 0 {
				code = append(code, 0x70|byte(r.Intn(16)), 0)
			}
		}
		code = append(code, 0x0f, 0x05)
		var regs [16]uint64
		for i := range regs {
			regs[i] = r.Uint64() >> uint(r.Intn(64))
			if r.Intn(4) == 0 {
				regs[i] = uint64(r.Intn(3))
			}
		}
		xmm := [4]XMM{{r.Uint64()}, {r.Uint64()}, {0}, {1 << 63}}
		flags := uint64(0x202 | r.Intn(2)*FlagCF | r.Intn(2)*FlagZF | r.Intn(2)*FlagOF)
		setup := func(c *CPU) {
			c.R = regs
			c.R[RSP] = testStack - 64
			copy(c.X[:], xmm[:])
			c.SetRflags(flags)
		}
		whole, exact := runToSyscall(t, code, setup, false), runToSyscall(t, code, setup, true)
		for pc := uint64(testCode); pc < testCode+uint64(len(code)); pc++ {
			if b := whole.cache.lookup(pc); b != nil {
				for i := range b.Insts {
					if b.Insts[i].ID >= fusedBase {
						fused++
					}
				}
			}
		}
		if whole.R != exact.R || whole.Rflags() != exact.Rflags() || whole.Icount != exact.Icount || whole.RIP != exact.RIP {
			t.Fatalf("code % x\nwhole: %x flags %#x icount %d\nexact: %x flags %#x icount %d",
				code, whole.R, whole.Rflags(), whole.Icount, exact.R, exact.Rflags(), exact.Icount)
		}
	}
	if fused == 0 {
		t.Fatal("no pair was fused: the test tests nothing")
	}
	t.Logf("%d fused pairs", fused)
}

// TestFusedStoreIntoBlock fuses two stores where the first rewrites the
// second: the pair must stop after the first, as the block does, and the
// new instruction run.
func TestFusedStoreIntoBlock(t *testing.T) {
	code := []byte{
		0x48, 0x89, 0x1d, 0, 0, 0, 0, // mov %rbx, 0(%rip): overwrites the next 8 bytes
		0x48, 0x89, 0x0a, // mov %rcx, (%rdx): faults (rdx = 0) if it runs
		0x90, 0x90, 0x90, 0x90, 0x90,
		0x0f, 0x05, // syscall
	}
	c := newTestCPU(t, code)
	addWrite(c.Mem, testCode>>PageShift)
	c.R[RBX] = 0x90909090_90902ab0 // mov $0x2a, %al; six nops
	b := c.cache.decodeBlock(testCode)
	if b.Insts[0].ID < fusedBase+seqPairsAt {
		t.Fatalf("the two stores were not fused (%s): the test tests nothing", DispatchName(&b.Insts[0]))
	}
	if exit := c.Run(100); exit.Reason != ExitSyscall || c.R[RAX]&0xff != 0x2a {
		t.Fatalf("exit %v %v al=%#x, want syscall with al=0x2a", exit.Reason, exit.Err, c.R[RAX]&0xff)
	}
}
