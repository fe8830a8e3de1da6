package x86

import (
	"fmt"
	"testing"

	"ttd/predict"
)

// callLoop calls a function 200 times whose loop is two blocks chained by
// a jump, so translated code chains block to block (slots), returns
// through the table of translations by address (ret), and reads memory:
//
//	     mov ecx, 200; xor eax, eax
//	outer: call f
//	     dec ecx; jnz outer
//	     syscall
//	f:   mov edx, 10
//	inner: add rax, rdx; mov [rsp-16], rax; add rax, [rsp-16]; jmp B
//	B:   xor rax, 0x55; dec edx; jnz inner
//	     ret
var callLoop = []byte{
	0xb9, 0xc8, 0x00, 0x00, 0x00, 0x31, 0xc0, // 0x400000
	0xe8, 0x06, 0x00, 0x00, 0x00, // 0x400007 outer: call f
	0xff, 0xc9, 0x75, 0xf7, // 0x40000c: dec ecx; jnz outer
	0x0f, 0x05, // 0x400010: syscall
	0xba, 0x0a, 0x00, 0x00, 0x00, // 0x400012 f: mov edx, 10
	0x48, 0x01, 0xd0, // 0x400017 inner: add rax, rdx
	0x48, 0x89, 0x44, 0x24, 0xf0, // mov [rsp-16], rax
	0x48, 0x03, 0x44, 0x24, 0xf0, // add rax, [rsp-16]
	0xeb, 0x00, // jmp B
	0x48, 0x83, 0xf0, 0x55, // 0x400026 B: xor rax, 0x55
	0xff, 0xca, 0x75, 0xe9, // dec edx; jnz inner
	0xc3, // 0x40002e: ret
}

// filterObserver sees the instructions of the blocks that contain one of
// want's addresses, and, through its HookGate, the gate instructions
// that follow any of those.
type filterObserver struct {
	predObserver
	name string
	want []uint64
	gate int
	open int
	seen []string
	// version is the FilterVersion, which changes with want.
	version uint64
}

func (o *filterObserver) FilterVersion() uint64 { return o.version }

func (o *filterObserver) WantInstructions() bool { return true }

func (o *filterObserver) WantBlock(b *Block) bool {
	for _, pc := range o.want {
		if pc >= b.PC && pc < b.End {
			return true
		}
	}
	return false
}

func (o *filterObserver) HookAll(c *CPU) bool { return o.open > 0 }

// instObserver is a filterObserver that observes only want's
// instructions of a block (InstFilter): the instructions before which
// translated code leaves for Go.
type instObserver struct{ *filterObserver }

func (o instObserver) WantInsts(b *Block) uint64 {
	var m uint64
	for i := range b.Insts {
		for _, pc := range o.want {
			if pc == b.Insts[i].PC {
				m |= 1 << i
			}
		}
	}
	return m
}

func (o *filterObserver) Instruction(c *CPU, in *Inst) {
	o.seen = append(o.seen, fmt.Sprintf("%s %#x@%d", o.name, in.PC, c.Retired()))
	if o.open > 0 {
		o.open--
	}
	for _, pc := range o.want {
		if pc == in.PC {
			o.open = o.gate
		}
	}
}

// TestFilteredHookJIT checks that an observer with a BlockFilter (and a
// HookGate) sees exactly the same Instruction calls, at the same
// positions, whether the blocks it declines run translated (chaining to
// each other, verdicts asked once per block) or interpreted (verdicts
// asked before every block), over runs of odd budgets that switch
// between two filters and a run without observation (whose translations
// chain to every block), new epochs, and a change of a filter's verdicts
// (FilterVersion).
func TestFilteredHookJIT(t *testing.T) {
	if !jitSupported {
		t.Skip("no block translation on this architecture")
	}
	cases := []struct {
		name string
		want []uint64
		gate int
		inst bool // the filter names instructions (InstFilter)
	}{
		{"loop's second block", []uint64{0x400026}, 0, false},
		{"the block a ret reaches", []uint64{0x40000c}, 0, false},
		{"the ret", []uint64{0x40002e}, 0, false},
		{"call, gate 5", []uint64{0x400007}, 5, false},
		{"loop entry, gate 2", []uint64{0x400017}, 2, false},
		// Instruction filters: translated code leaves before each.
		{"insts: block starts", []uint64{0x400007, 0x400017, 0x400026}, 0, true},
		{"insts: mid-block and ret", []uint64{0x40000e, 0x40001a, 0x40002e}, 0, true},
		{"insts: first and last of a block", []uint64{0x400017, 0x400024}, 0, true},
		{"insts: call, gate 5", []uint64{0x400007}, 5, true},
		{"insts: mid-block, gate 3", []uint64{0x40001a, 0x40002a}, 3, true},
	}
	type result struct {
		seen       []string
		rax, count uint64
		translated uint64
		// hooked: translations that leave for Instruction calls.
		hooked int
	}
	run := func(jit bool, threshold uint32, want []uint64, gate int, inst bool) result {
		defer SetJIT(SetJIT(jit, threshold))
		// The reference asks the filter before every block.
		filterAskAlways = !jit
		defer func() { filterAskAlways = false }()
		c := newTestCPU(t, callLoop)
		c.Pred = predict.New(10)
		a := &filterObserver{name: "a", want: want, gate: gate}
		var ao Observer = a
		if inst {
			ao = instObserver{a}
		}
		// b sees the loop's second block: another filter on the same
		// code cache.
		b := &filterObserver{name: "b", want: []uint64{0x400026}}
		plain := &predObserver{}
		var seen []string
		// The same filter before and after a run without one, then the
		// other, and new epochs (the reader's checkpoints) in between.
		obs := []Observer{ao, plain, ao, b, ao, ao, ao, plain, ao, b, ao}
		for i, budget := range []uint64{1, 700, 2333, 5, 1500, 999, 1777, 3000, 77, 1234, 1 << 40} {
			c.Obs = obs[i]
			if i == 5 {
				// a's filter changes its verdicts.
				a.want, a.version = []uint64{0x40000c}, a.version+1
			}
			if i == 6 || i == 9 {
				c.cache.NewEpoch()
			}
			if ex := c.Run(budget); ex.Reason != ExitBudget && ex.Reason != ExitSyscall {
				t.Fatalf("exit %v", ex.Reason)
			}
		}
		seen = append(seen, a.seen...)
		seen = append(seen, b.seen...)
		hooked := 0
		for _, b := range c.cache.jitBlocks {
			if b != nil && b.jv().hresume != nil {
				hooked++
			}
		}
		return result{seen, c.R[RAX], c.Icount, c.cache.Translated, hooked}
	}
	for _, tc := range cases {
		want := run(false, 0, tc.want, tc.gate, tc.inst)
		if len(want.seen) == 0 {
			t.Fatalf("%s: no instruction seen", tc.name)
		}
		for _, threshold := range []uint32{0, 3} {
			got := run(true, threshold, tc.want, tc.gate, tc.inst)
			if got.translated == 0 {
				t.Fatalf("%s: nothing translated", tc.name)
			}
			if tc.inst && got.hooked == 0 {
				t.Fatalf("%s: no translation leaves for Instruction calls", tc.name)
			}
			if got.rax != want.rax || got.count != want.count {
				t.Errorf("%s, threshold %d: rax=%#x icount=%d, want rax=%#x icount=%d", tc.name, threshold,
					got.rax, got.count, want.rax, want.count)
			}
			if len(got.seen) != len(want.seen) {
				t.Errorf("%s, threshold %d: %d Instruction calls translated, %d interpreted", tc.name, threshold,
					len(got.seen), len(want.seen))
			}
			for i := range min(len(got.seen), len(want.seen)) {
				if got.seen[i] != want.seen[i] {
					t.Errorf("%s, threshold %d: call %d is %s translated, %s interpreted", tc.name, threshold,
						i, got.seen[i], want.seen[i])
					break
				}
			}
		}
	}
}

// hookCounter observes the calls and rets (InstFilter) and counts them.
type hookCounter struct {
	predObserver
	n int
}

func (o *hookCounter) WantInstructions() bool       { return true }
func (o *hookCounter) WantBlock(b *Block) bool      { return false }
func (o *hookCounter) Instruction(c *CPU, in *Inst) { o.n++ }
func (o *hookCounter) WantInsts(b *Block) uint64 {
	var m uint64
	for i := range b.Insts {
		if op := b.Insts[i].Op.String(); op == "CALL" || op == "RET" {
			m |= 1 << i
		}
	}
	return m
}

// TestFilteredRunAllocs: a filtered Run, its code translated, allocates
// nothing (the reader's hot path with a probe installed): with a filter
// that declines every block (the whole program runs translated, chained,
// the filter asked once per block) and with one that observes the calls
// and rets (translations leave for those Instruction calls).
func TestFilteredRunAllocs(t *testing.T) {
	if !jitSupported {
		t.Skip("no block translation on this architecture")
	}
	defer SetJIT(SetJIT(true, 0))
	declines := &filterObserver{name: "a"}
	counter := &hookCounter{}
	for _, o := range []Observer{declines, counter} {
		c := newTestCPU(t, callLoop)
		c.Pred = predict.New(10)
		c.Obs = o
		run := func() {
			c.RIP, c.R[RSP] = testCode, testStack-64
			if ex := c.Run(1 << 40); ex.Reason != ExitSyscall {
				t.Fatalf("exit %v", ex.Reason)
			}
		}
		run()
		declines.version++ // a new generation of verdicts, too
		if o == counter && counter.n != 400 {
			t.Fatalf("%d Instruction calls, want 400 (200 calls and rets)", counter.n)
		}
		if n := testing.AllocsPerRun(10, run); n != 0 {
			t.Errorf("%T: a filtered Run allocates %v times", o, n)
		}
	}
}
