package x86

import "testing"

// chainCode is a loop whose blocks chain to each other directly (the jnz
// back, the call) and through the table of translations (the ret):
//
//	    mov ecx, 2000
//	l:  call f
//	    add rax, rcx
//	    dec ecx
//	    jnz l
//	    syscall
//	f:  add rbx, 3
//	    ret
var chainCode = []byte{
	0xb9, 0xd0, 0x07, 0x00, 0x00, // mov ecx, 2000
	0xe8, 0x09, 0x00, 0x00, 0x00, // call f
	0x48, 0x01, 0xc8, // add rax, rcx
	0xff, 0xc9, // dec ecx
	0x75, 0xf4, // jnz l
	0x0f, 0x05, // syscall
	0x48, 0x83, 0xc3, 0x03, // f: add rbx, 3
	0xc3, // ret
}

// chainRet is the address the ret of chainCode returns to.
const chainRet = testCode + 10

// chainInsts is the number of instructions chainCode retires, its syscall
// included.
const chainInsts = 1 + 2000*6 + 1

// TestJITChainBudget: translated code that chains from block to block
// stops at the budget exactly where the interpreter stops, with the same
// registers, whatever the budget (below, at and above maxBlockInsts, which
// the chaining exits keep in reserve).
func TestJITChainBudget(t *testing.T) {
	if !jitSupported {
		t.Skip("no block translation on this architecture")
	}
	for _, budget := range []uint64{1, 2, 3, 5, 7, 13, maxBlockInsts - 1, maxBlockInsts, maxBlockInsts + 1, 100, 1000, ^uint64(0)} {
		var cpus [2]*CPU
		for i, jit := range []bool{false, true} {
			func() {
				defer SetJIT(SetJIT(jit, 0))
				cpus[i] = newTestCPU(t, chainCode)
			}()
		}
		for slice := 0; ; slice++ {
			var exits [2]Exit
			for i, jit := range []bool{false, true} {
				func() {
					defer SetJIT(SetJIT(jit, 0))
					before := cpus[i].Icount
					exits[i] = cpus[i].Run(budget)
					if n := cpus[i].Icount - before; exits[i].Reason == ExitBudget && n != budget {
						t.Fatalf("budget %d, slice %d, jit %v: %d instructions retired", budget, slice, jit, n)
					}
				}()
			}
			c, j := cpus[0], cpus[1]
			if exits[0].Reason != exits[1].Reason || c.Icount != j.Icount || c.RIP != j.RIP || c.R != j.R {
				t.Fatalf("budget %d, slice %d: interpreted %v at %d (rip %#x, %x), translated %v at %d (rip %#x, %x)",
					budget, slice, exits[0].Reason, c.Icount, c.RIP, c.R, exits[1].Reason, j.Icount, j.RIP, j.R)
			}
			if exits[0].Reason != ExitBudget {
				if exits[0].Reason != ExitSyscall || c.Icount != chainInsts {
					t.Fatalf("budget %d: exit %v at %d, want a syscall at %d", budget, exits[0].Reason, c.Icount, chainInsts)
				}
				break
			}
		}
		if cpus[1].cache.Translated == 0 {
			t.Fatalf("budget %d: nothing was translated", budget)
		}
	}
}

// TestJITChainsStayInTranslatedCode: once its blocks are translated and
// linked, chainCode's loop runs without returning to Go, even after
// another translation took the ret's target's entry in the table of
// translations (a block reached from Go takes it back).
func TestJITChainsStayInTranslatedCode(t *testing.T) {
	if !jitSupported {
		t.Skip("no block translation on this architecture")
	}
	defer SetJIT(SetJIT(true, 0))
	was := StatsOn
	StatsOn = true
	defer func() { StatsOn = was }()
	c := newTestCPU(t, chainCode)
	calls := func() uint64 {
		stats.Lock()
		defer stats.Unlock()
		return stats.jitCalls
	}
	// Two rounds of the loop translate and link its blocks.
	if exit := c.Run(1 + 2*6); exit.Reason != ExitBudget {
		t.Fatalf("exit %v", exit.Reason)
	}
	e := &c.cache.jitTab[jitModeRun][jitTabIndex(chainRet)]
	if e.pc != chainRet {
		t.Fatalf("the ret's target %#x is not in the table (%#x there)", uint64(chainRet), e.pc)
	}
	*e = jitTabEntry{} // as if another block had taken it
	from := calls()
	if exit := c.Run(^uint64(0)); exit.Reason != ExitSyscall || c.Icount != chainInsts {
		t.Fatalf("exit %v at %d, want a syscall at %d", exit.Reason, c.Icount, chainInsts)
	}
	// One entry misses the table, the next runs the rest.
	if n := calls() - from; n > 4 {
		t.Errorf("%d entries into translated code from Go for 1,998 rounds of a loop, want at most 4", n)
	}
	if e.pc != chainRet {
		t.Errorf("the ret's target did not take its entry in the table back")
	}
}
