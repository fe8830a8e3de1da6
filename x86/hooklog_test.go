package x86

import (
	"fmt"
	"strings"
	"testing"

	"ttd/predict"
)

// hookLogObserver is an instObserver whose Instruction calls may be records
// (HookLogger): it logs every instruction it observes, guarding those in
// guard, and writes the same line for an exact call and a record.
type hookLogObserver struct {
	instObserver
	guard []uint64
	sp    uint64 // the hook guard it sets
	off   bool   // log nothing (the reference)
	recs  int
	exact int
}

func (o *hookLogObserver) LogInsts(b *Block) (logged, guarded uint64) {
	if o.off {
		return 0, 0
	}
	m := o.WantInsts(b)
	for i := range b.Insts {
		for _, pc := range o.guard {
			if pc == b.Insts[i].PC {
				guarded |= 1 << i
			}
		}
	}
	return m, guarded & m
}

func (o *hookLogObserver) line(in *Inst, retired, rsp, rax, rdi, target uint64) {
	o.seen = append(o.seen, fmt.Sprintf("%#x@%d rsp=%#x rax=%#x rdi=%#x target=%#x", in.PC, retired, rsp, rax, rdi, target))
}

func (o *hookLogObserver) Instruction(c *CPU, in *Inst) {
	o.exact++
	var target uint64
	if in.Args[0].Kind == KReg && in.Op.String() == "CALL" {
		target = c.R[in.Args[0].Reg]
	}
	o.line(in, c.Retired(), c.R[RSP], c.R[RAX], c.R[RDI], target)
	c.SetHookGuard(o.sp)
}

func (o *hookLogObserver) LoggedHooks(c *CPU, recs []HookRecord) {
	for i := range recs {
		r := &recs[i]
		o.recs++
		o.line(r.Inst, r.Retired, r.RSP, r.RAX, r.Args[0], r.Target)
	}
	c.SetHookGuard(o.sp)
}

// TestLoggedHooks checks that an observer whose Instruction calls
// translated code logs (HookLogger) receives the same calls, at the same
// positions and with the same registers, as one whose every call is
// exact (the interpreter's, and translated code's exits), over runs of
// odd budgets, new epochs, a run without observation and one with
// another filter in between; with the guarded ret logged (guard above
// the stack) and left for (guard 0).
func TestLoggedHooks(t *testing.T) {
	if !jitSupported {
		t.Skip("no block translation on this architecture")
	}
	cases := []struct {
		name        string
		want, guard []uint64
		sp          uint64
	}{
		{"call and ret", []uint64{0x400007, 0x40002e}, nil, 0},
		{"block starts", []uint64{0x400007, 0x400017, 0x400026}, nil, 0},
		{"mid-block and ret, ret guarded below", []uint64{0x40000e, 0x40001a, 0x40002e}, []uint64{0x40002e}, 0},
		{"mid-block and ret, ret guarded above", []uint64{0x40000e, 0x40001a, 0x40002e}, []uint64{0x40002e}, ^uint64(0)},
		{"every instruction of the loop", []uint64{0x400017, 0x40001a, 0x40001f, 0x400024, 0x400026, 0x40002a, 0x40002c}, nil, 0},
	}
	type result struct {
		seen        []string
		rax, count  uint64
		recs, exact int
	}
	run := func(jit, logging bool, tc int) result {
		defer SetJIT(SetJIT(jit, 0))
		filterAskAlways = !jit
		defer func() { filterAskAlways = false }()
		c := newTestCPU(t, callLoop)
		c.Pred = predict.New(10)
		o := &hookLogObserver{instObserver: instObserver{&filterObserver{name: "a", want: cases[tc].want}},
			guard: cases[tc].guard, sp: cases[tc].sp, off: !logging}
		other := &filterObserver{name: "b", want: []uint64{0x400026}}
		obs := []Observer{o, &predObserver{}, o, instObserver{other}, o, o, o}
		for i, budget := range []uint64{1, 700, 2333, 5, 1500, 999, 1 << 40} {
			c.Obs = obs[i]
			if i == 5 {
				c.cache.NewEpoch()
			}
			if ex := c.Run(budget); ex.Reason != ExitBudget && ex.Reason != ExitSyscall {
				t.Fatalf("exit %v", ex.Reason)
			}
		}
		return result{o.seen, c.R[RAX], c.Icount, o.recs, o.exact}
	}
	for k, tc := range cases {
		want := run(false, false, k)
		if len(want.seen) == 0 {
			t.Fatalf("%s: no instruction seen", tc.name)
		}
		got := run(true, true, k)
		if got.recs == 0 {
			t.Fatalf("%s: nothing logged (%d exact calls)", tc.name, got.exact)
		}
		rets := 0
		for _, l := range want.seen {
			if strings.HasPrefix(l, "0x40002e@") {
				rets++
			}
		}
		if tc.guard != nil && tc.sp == 0 && got.exact < rets {
			t.Errorf("%s: %d exact calls, want at least the %d guarded rets", tc.name, got.exact, rets)
		}
		if got.rax != want.rax || got.count != want.count {
			t.Errorf("%s: rax=%#x icount=%d, want rax=%#x icount=%d", tc.name, got.rax, got.count, want.rax, want.count)
		}
		if len(got.seen) != len(want.seen) {
			t.Errorf("%s: %d calls and records logging, %d exact calls", tc.name, len(got.seen), len(want.seen))
		}
		for i := range min(len(got.seen), len(want.seen)) {
			if got.seen[i] != want.seen[i] {
				t.Errorf("%s: call %d is %s logging, %s exact", tc.name, i, got.seen[i], want.seen[i])
				break
			}
		}
		t.Logf("%s: %d records, %d exact calls", tc.name, got.recs, got.exact)
	}
}

// beyondLoop calls a function from a block whose translation stops
// before the call (cpuid is not translated, and too little follows it
// for a resume entry):
//
//	     mov esi, 100
//	loop: add rdi, 1; cpuid; call f
//	     dec esi; jnz loop
//	     syscall
//	f:   ret
var beyondLoop = []byte{
	0xbe, 0x64, 0x00, 0x00, 0x00, // 0x400000
	0x48, 0x83, 0xc7, 0x01, // 0x400005 loop: add rdi, 1
	0x0f, 0xa2, // 0x400009: cpuid
	0xe8, 0x06, 0x00, 0x00, 0x00, // 0x40000b: call f
	0xff, 0xce, 0x75, 0xf1, // 0x400010: dec esi; jnz loop
	0x0f, 0x05, // 0x400014: syscall
	0xc3, // 0x400016 f: ret
}

// TestHookBeyondTranslation: an observed instruction that a block's
// translation does not reach (the interpreter runs it) has no hook exit
// and no entry after one; runHooked, which ran the instructions before
// it, must go on in the interpreter. The translation's record of its
// hooks once counted such an instruction as an exit (so that the block
// was linkable), and runHooked looked for its entry: an index out of
// range (python3's ttd calls under hookbench), or a block cut short.
func TestHookBeyondTranslation(t *testing.T) {
	if !jitSupported {
		t.Skip("no block translation on this architecture")
	}
	run := func(jit bool) []string {
		defer SetJIT(SetJIT(jit, 0))
		filterAskAlways = !jit
		defer func() { filterAskAlways = false }()
		c := newTestCPU(t, beyondLoop)
		c.Pred = predict.New(10)
		o := instObserver{&filterObserver{name: "a", want: []uint64{0x40000b, 0x400016}}}
		c.Obs = o
		if ex := c.Run(1 << 40); ex.Reason != ExitSyscall {
			t.Fatalf("exit %v", ex.Reason)
		}
		return append(o.seen, fmt.Sprintf("rdi=%d rsi=%d icount=%d", c.R[RDI], c.R[RSI], c.Icount))
	}
	want, got := run(false), run(true)
	if len(want) != 201 || want[200] != "rdi=100 rsi=0 icount=602" {
		t.Fatalf("reference: %d lines, last %q", len(want), want[len(want)-1])
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("translated:\n%v\ninterpreted:\n%v", got, want)
	}
}
