package x86

import (
	"fmt"
	"testing"

	"ttd/predict"
)

// hookLogObserver is an instObserver whose Instruction calls may be records
// (HookLogger): it logs every instruction it observes, in narrow records
// if steps (HookStepLogger), and writes the same line for an exact call
// and a record.
type hookLogObserver struct {
	instObserver
	steps bool
	// memTarget counts the records of calls through memory that give
	// their target, badTarget those whose target is not f's.
	memTarget, badTarget int
	off                  bool // log nothing (the reference)
	recs                 int
	exact                int
	// soft, open and shut are the StepWindows instructions (with
	// window); until follows the window over the calls and records
	// seen, which drop soft instructions past it; softRecs counts the
	// soft records in windows, badSoft those past them.
	soft, open, shut  []uint64
	window, until     uint64
	softRecs, badSoft int
	// insts are the instructions LogInsts saw, by PC: a narrow
	// record's PC must name one, and its Kind be StepOp's with the
	// window classes StepWindows gave (badKind counts the others).
	insts   map[uint64]*Inst
	badKind int
	// leaves counts the leaf calls' records (StepLeaf), each unfolded
	// into the call's and the ret's.
	leaves int
	// merge are the MergeLeaves instructions; evs the calls and
	// records seen, in order; more the calls merged into leaf calls'
	// records (HookStep.More), by call, ret and RSP.
	merge []uint64
	evs   []stepEv
	more  map[leafKey]leafSum
}

// stepEv is a call or record a hookLogObserver saw.
type stepEv struct {
	pc, retired, rsp uint64
	call, ret        bool
	line             string
}

// leafKey is a leaf call's call, ret and RSP; leafSum the leaf calls
// of one: how many, their callees' instructions (each ret's Retired
// less its call's), and the last ret's Retired.
type leafKey struct{ call, ret, rsp uint64 }
type leafSum struct{ n, callee, last uint64 }

func (o *hookLogObserver) MergeLeaves(b *Block) uint64 { return pcsIn(b, o.merge) }

// leafSums takes the leaf calls out of evs (a call followed by the ret
// that returns from it), adds them up with more, and returns the lines
// of the other calls and records, in order.
func leafSums(evs []stepEv, more map[leafKey]leafSum) ([]string, map[leafKey]leafSum) {
	sums := map[leafKey]leafSum{}
	for k, v := range more {
		sums[k] = v
	}
	var rest []string
	for i := 0; i < len(evs); i++ {
		e := &evs[i]
		if e.call && i+1 < len(evs) && evs[i+1].ret && evs[i+1].rsp == e.rsp-8 {
			r := &evs[i+1]
			k := leafKey{e.pc, r.pc, e.rsp}
			v := sums[k]
			v.n++
			v.callee += r.retired - e.retired
			v.last = max(v.last, r.retired)
			sums[k] = v
			i++
			continue
		}
		rest = append(rest, e.line)
	}
	return rest, sums
}

func pcsIn(b *Block, pcs []uint64) uint64 {
	var m uint64
	for i := range b.Insts {
		for _, pc := range pcs {
			if pc == b.Insts[i].PC {
				m |= 1 << i
			}
		}
	}
	return m
}

func (o *hookLogObserver) StepWindows(b *Block) (soft, open, shut, window uint64) {
	return pcsIn(b, o.soft), pcsIn(b, o.open), pcsIn(b, o.shut), o.window
}

// windowed follows the window at instruction pc (Retired retired), and
// reports whether the instruction is seen: soft ones only in it.
func (o *hookLogObserver) windowed(c *CPU, pc, retired uint64, record bool) bool {
	in := retired < o.until
	has := func(pcs []uint64) bool {
		for _, p := range pcs {
			if p == pc {
				return true
			}
		}
		return false
	}
	switch {
	case has(o.open):
		o.until = retired + 1 + o.window
		if !record {
			c.SetHookUntil(o.until)
		}
	case has(o.shut):
		o.until = 0
		if !record {
			c.SetHookUntil(0)
		}
	case has(o.soft):
		if record && in {
			o.softRecs++
		} else if record {
			o.badSoft++
		}
		return in
	}
	return true
}

func (o *hookLogObserver) LogInsts(b *Block) uint64 {
	if o.off {
		return 0
	}
	if o.insts == nil {
		o.insts = map[uint64]*Inst{}
	}
	for i := range b.Insts {
		o.insts[b.Insts[i].PC] = &b.Insts[i]
	}
	return o.WantInsts(b)
}

// wantKind is the StepKind a narrow record of in must have.
func (o *hookLogObserver) wantKind(in *Inst) StepKind {
	k := StepOp(in)
	for _, c := range []struct {
		pcs  []uint64
		kind StepKind
	}{{o.soft, StepSoft}, {o.open, StepOpen}, {o.shut, StepShut}} {
		for _, pc := range c.pcs {
			if pc == in.PC {
				k |= c.kind
			}
		}
	}
	return k
}

func (o *hookLogObserver) StepsOnly() bool { return o.steps }

func (o *hookLogObserver) line(in *Inst, retired, rsp, rax, rdi, target uint64) {
	if o.steps {
		// A narrow record has neither RAX nor the arguments.
		rax, rdi = 0, 0
	}
	line := fmt.Sprintf("%#x@%d rsp=%#x rax=%#x rdi=%#x target=%#x", in.PC, retired, rsp, rax, rdi, target)
	o.seen = append(o.seen, line)
	op := StepOp(in)
	o.evs = append(o.evs, stepEv{in.PC, retired, rsp, op >= StepCall && op <= StepCallAny, op == StepRet, line})
}

func (o *hookLogObserver) Instruction(c *CPU, in *Inst) {
	o.exact++
	var target uint64
	if in.Args[0].Kind == KReg && in.Op.String() == "CALL" {
		target = c.R[in.Args[0].Reg]
	}
	if o.windowed(c, in.PC, c.Retired(), false) {
		o.line(in, c.Retired(), c.R[RSP], c.R[RAX], c.R[RDI], target)
	}
}

func (o *hookLogObserver) LoggedHooks(c *CPU, recs []HookRecord) {
	if o.steps {
		o.badTarget += 1000 // wide records for a narrow logger
	}
	for i := range recs {
		r := &recs[i]
		o.record(r.Inst, r.Retired, r.RSP, r.RAX, r.Args[0], r.Target)
	}
}

func (o *hookLogObserver) LoggedSteps(c *CPU, steps []HookStep) {
	if !o.steps {
		o.badTarget += 1000 // narrow records for a wide logger
	}
	for i := range steps {
		r := &steps[i]
		if r.Kind&StepLeaf != 0 {
			// A leaf call: the call's record, then the ret's.
			o.leaves++
			call := *r
			call.Kind &^= StepLeaf
			ret := HookStep{Retired: r.Ret, RSP: r.RSP - 8, PC: r.RetPC, Kind: r.RetKind}
			if r.More != 0 {
				if o.more == nil {
					o.more = map[leafKey]leafSum{}
				}
				k := leafKey{r.PC, r.RetPC, r.RSP}
				v := o.more[k]
				v.n += r.More
				v.callee += r.MoreCallee
				v.last = max(v.last, r.Last)
				o.more[k] = v
			}
			if op := r.Kind & StepOpMask; op < StepCall || op > StepCallAny || r.RetKind&StepOpMask != StepRet {
				o.badKind++
			}
			o.LoggedSteps(c, []HookStep{call, ret})
			continue
		}
		in := o.insts[r.PC]
		if in == nil || r.Kind != o.wantKind(in) {
			o.badKind++
			continue
		}
		if o.windowed(c, r.PC, r.Retired, true) {
			o.record(in, r.Retired, r.RSP, 0, 0, r.Target)
		}
	}
}

func (o *hookLogObserver) record(in *Inst, retired, rsp, rax, rdi, target uint64) {
	o.recs++
	if in.Args[0].Kind == KRel && in.Op.String() == "CALL" && o.steps {
		// A narrow record gives a direct call's target.
		if target != in.Args[0].Imm {
			o.badTarget++
		}
		target = 0
	}
	if in.Args[0].Kind == KMem {
		if target == memCallF {
			o.memTarget++
		} else if target != 0 {
			o.badTarget++
		}
		target = 0 // an exact call does not know it
	}
	o.line(in, retired, rsp, rax, rdi, target)
}

// TestLoggedHooks checks that an observer whose Instruction calls
// translated code logs (HookLogger) receives the same calls, at the same
// positions and with the same registers, as one whose every call is
// exact (the interpreter's, and translated code's exits), over runs of
// odd budgets, new epochs, a run without observation and one with
// another filter in between; in wide records (HookRecord) and narrow
// ones (HookStep).
func TestLoggedHooks(t *testing.T) {
	if !jitSupported {
		t.Skip("no block translation on this architecture")
	}
	cases := []struct {
		name string
		want []uint64
		mem  bool   // memCallLoop
		code []byte // instead of callLoop and memCallLoop
		// leaves: the narrow run must fold rets into calls'
		// records (StepLeaf); without, it must fold none.
		leaves bool
	}{
		{"call through memory, entry and ret", []uint64{0x400010, 0x40001a, 0x400036}, true, nil, false},
		{"call and ret", []uint64{0x400007, 0x40002e}, false, nil, true},
		{"block starts", []uint64{0x400007, 0x400017, 0x400026}, false, nil, false},
		{"mid-block and ret", []uint64{0x40000e, 0x40001a, 0x40002e}, false, nil, false},
		{"every instruction of the loop", []uint64{0x400017, 0x40001a, 0x40001f, 0x400024, 0x400026, 0x40002a, 0x40002c}, false, nil, false},
		// The ret after h's call returns from g's frame: no leaf.
		{"ret past its frame", []uint64{0x400005, 0x400010, 0x40001a}, false, skipRetLoop, false},
		// Without h's call hooked, the ret is g's.
		{"ret past a call not hooked", []uint64{0x400005, 0x40001a}, false, skipRetLoop, true},
	}
	type result struct {
		seen                 []string
		rax, count           uint64
		recs, exact          int
		memTarget, badTarget int
		badKind, leaves      int
	}
	var adoptedHooked, keptHooked int
	// run runs the case; with store, on a code cache that shares
	// through it (a second run on a second cache adopts the first's
	// translations, those made for the filters too).
	run := func(jit, logging bool, tc int, steps bool, store *CodeStore) result {
		defer SetJIT(SetJIT(jit, 0))
		filterAskAlways = !jit
		defer func() { filterAskAlways = false }()
		code := callLoop
		if cases[tc].mem {
			code = memCallLoop
		}
		if cases[tc].code != nil {
			code = cases[tc].code
		}
		c := newTestCPU(t, code)
		if store != nil {
			c.cache.ShareWith(store)
			// The second cache numbers its blocks apart from the first
			// (a translation must not carry the first's ids).
			for range store.Kept {
				c.cache.jitBlocks = append(c.cache.jitBlocks, nil)
			}
		}
		c.Pred = predict.New(10)
		o := &hookLogObserver{instObserver: instObserver{&filterObserver{name: "a", want: cases[tc].want}},
			steps: steps, off: !logging}
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
		if store != nil {
			adoptedHooked += int(c.cache.Adopted)
			keptHooked += store.hookedXlats()
		}
		return result{o.seen, c.R[RAX], c.Icount, o.recs, o.exact, o.memTarget, o.badTarget, o.badKind, o.leaves}
	}
	for k, tc := range cases {
		for _, steps := range []bool{false, true} {
			name := tc.name
			if steps {
				name += " (narrow)"
			}
			want := run(false, false, k, steps, nil)
			if len(want.seen) == 0 {
				t.Fatalf("%s: no instruction seen", name)
			}
			got := run(true, true, k, steps, nil)
			for _, shared := range []bool{false, true} {
				if shared {
					s := NewCodeStore()
					run(true, true, k, steps, s)
					got = run(true, true, k, steps, s)
					name += " (adopted)"
				}
				if got.recs == 0 {
					t.Fatalf("%s: nothing logged (%d exact calls)", name, got.exact)
				}
				if tc.mem && (got.memTarget == 0 || got.badTarget != 0) || got.badTarget != 0 {
					t.Errorf("%s: %d records of the call through memory name f, %d another target or the wrong kind", name, got.memTarget, got.badTarget)
				}
				if got.badKind != 0 {
					t.Errorf("%s: %d narrow records name no instruction or the wrong kind", name, got.badKind)
				}
				if wantLeaves := steps && tc.leaves; (got.leaves != 0) != wantLeaves {
					t.Errorf("%s: %d leaf calls' records, want some: %v", name, got.leaves, wantLeaves)
				}
				if got.rax != want.rax || got.count != want.count {
					t.Errorf("%s: rax=%#x icount=%d, want rax=%#x icount=%d", name, got.rax, got.count, want.rax, want.count)
				}
				if len(got.seen) != len(want.seen) {
					t.Errorf("%s: %d calls and records logging, %d exact calls", name, len(got.seen), len(want.seen))
				}
				for i := range min(len(got.seen), len(want.seen)) {
					if got.seen[i] != want.seen[i] {
						t.Errorf("%s: call %d is %s logging, %s exact", name, i, got.seen[i], want.seen[i])
						break
					}
				}
				t.Logf("%s: %d records (%d targets, %d leaf calls), %d exact calls", name, got.recs, got.memTarget, got.leaves, got.exact)
			}
		}
	}
	if adoptedHooked == 0 || keptHooked == 0 {
		t.Errorf("%d translations adopted from a store, %d made for a filter kept: want some", adoptedHooked, keptHooked)
	}
}

// memCallLoop is callLoop calling f through memory (its address in a
// stack slot):
//
//	     mov ecx, 200; xor eax, eax; mov qword [rsp-64], f
//	outer: call [rsp-64]
//	     dec ecx; jnz outer
//	     syscall
//	f:   ... as callLoop's
var memCallLoop = []byte{
	0xb9, 0xc8, 0x00, 0x00, 0x00, 0x31, 0xc0, // 0x400000
	0x48, 0xc7, 0x44, 0x24, 0xc0, 0x1a, 0x00, 0x40, 0x00, // 0x400007: mov qword [rsp-64], 0x40001a
	0xff, 0x54, 0x24, 0xc0, // 0x400010 outer: call [rsp-64]
	0xff, 0xc9, 0x75, 0xf8, // 0x400014: dec ecx; jnz outer
	0x0f, 0x05, // 0x400018: syscall
	0xba, 0x0a, 0x00, 0x00, 0x00, // 0x40001a f: mov edx, 10
	0x48, 0x01, 0xd0, // 0x40001f inner: add rax, rdx
	0x48, 0x89, 0x44, 0x24, 0xf0, // mov [rsp-16], rax
	0x48, 0x03, 0x44, 0x24, 0xf0, // add rax, [rsp-16]
	0xeb, 0x00, // jmp B
	0x48, 0x83, 0xf0, 0x55, // 0x40002e B: xor rax, 0x55
	0xff, 0xca, 0x75, 0xe9, // dec edx; jnz inner
	0xc3, // 0x400036: ret
}

const memCallF = 0x40001a

// skipRetLoop calls g, which calls h, which drops its return address
// and returns to g's caller: the ret right after h's call is g's.
//
//	     mov ecx, 2000
//	loop: call g
//	     dec ecx; jnz loop
//	     syscall
//	g:   call h
//	     ret
//	h:   add rsp, 8
//	     ret
var skipRetLoop = []byte{
	0xb9, 0xd0, 0x07, 0x00, 0x00, // 0x400000
	0xe8, 0x06, 0x00, 0x00, 0x00, // 0x400005 loop: call g
	0xff, 0xc9, 0x75, 0xf7, // 0x40000a: dec ecx; jnz loop
	0x0f, 0x05, // 0x40000e: syscall
	0xe8, 0x01, 0x00, 0x00, 0x00, // 0x400010 g: call h
	0xc3,                   // 0x400015: ret
	0x48, 0x83, 0xc4, 0x08, // 0x400016 h: add rsp, 8
	0xc3, // 0x40001a: ret
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

// TestStepWindows checks the windows of soft narrow records over
// callLoop, whose f's loop heads are soft: the call at R opens a window,
// the ret shuts it (or the other way round). Translated code must make the
// records of every soft instruction in a window (the calls and records,
// less the soft ones past their windows, are those of the exact
// reference) and none of one past it. f's soft instructions are at R+2,
// R+6, R+9, R+13...: a window of 8 ends at the third (Retired == until),
// one of 6 just after the second.
func TestStepWindows(t *testing.T) {
	if !jitSupported {
		t.Skip("no block translation on this architecture")
	}
	for _, tc := range []struct {
		open, shut uint64
		window     uint64
		softRecs   int
	}{
		{0x400007, 0x40002e, 8, 400},
		{0x400007, 0x40002e, 6, 400},
		{0x400007, 0x40002e, 4, 200},
		// Opened by the ret, shut by the next call: no soft record.
		{0x40002e, 0x400007, 100, 0},
	} {
		name := fmt.Sprintf("open %#x shut %#x window %d", tc.open, tc.shut, tc.window)
		want, got := stepWindowsRun(t, false, tc.open, tc.shut, tc.window), stepWindowsRun(t, true, tc.open, tc.shut, tc.window)
		if len(want.seen) == 0 {
			t.Fatalf("%s: no instruction seen", name)
		}
		if got.badKind != 0 {
			t.Errorf("%s: %d records name no instruction or the wrong kind", name, got.badKind)
		}
		if got.softRecs != tc.softRecs || got.badSoft != 0 {
			t.Errorf("%s: %d soft records in windows, %d past them (want %d, and none)", name, got.softRecs, got.badSoft, tc.softRecs)
		}
		if fmt.Sprint(got.seen) != fmt.Sprint(want.seen) {
			t.Errorf("%s: logged:\n%v\nexact:\n%v", name, got.seen, want.seen)
		}
		t.Logf("%s: %d lines, %d records (%d soft), %d exact calls", name, len(got.seen), got.recs, got.softRecs, got.exact)
	}
}

// stepWindowsRun runs callLoop with a hookLogObserver whose windows are
// open, shut and window: translated and logging if jit, else exact.
func stepWindowsRun(t *testing.T, jit bool, open, shut, window uint64) *hookLogObserver {
	defer SetJIT(SetJIT(jit, 0))
	filterAskAlways = !jit
	defer func() { filterAskAlways = false }()
	c := newTestCPU(t, callLoop)
	c.Pred = predict.New(10)
	o := &hookLogObserver{instObserver: instObserver{&filterObserver{name: "a",
		want: []uint64{0x400007, 0x400017, 0x400026, 0x40002e}}}, steps: true, off: !jit,
		soft: []uint64{0x400017, 0x400026}, open: []uint64{open}, shut: []uint64{shut}, window: window}
	for _, budget := range []uint64{700, 2333, 1 << 40} {
		c.Obs = o
		if ex := c.Run(budget); ex.Reason != ExitBudget && ex.Reason != ExitSyscall {
			t.Fatalf("exit %v", ex.Reason)
		}
	}
	return o
}

// TestStepOp checks the kinds a narrow record gives its instruction
// (HookStep.Kind), one instruction of each.
func TestStepOp(t *testing.T) {
	for _, tc := range []struct {
		code []byte
		want StepKind
	}{
		{[]byte{0xe8, 0x10, 0, 0, 0}, StepCall},          // call rel32
		{[]byte{0xff, 0xd0}, StepCallReg},                // call rax
		{[]byte{0x41, 0xff, 0xd3}, StepCallReg},          // call r11
		{[]byte{0xff, 0x54, 0x24, 0xc0}, StepCallMem},    // call [rsp-64]
		{[]byte{0xff, 0x15, 0x10, 0, 0, 0}, StepCallMem}, // call [rip+16]
		{[]byte{0xc3}, StepRet},                          // ret
		{[]byte{0xc2, 0x08, 0x00}, StepRet},              // ret 8
		{[]byte{0xff, 0xe0}, StepJmpReg},                 // jmp rax
		{[]byte{0xeb, 0x00}, StepOther},                  // jmp rel8
		{[]byte{0x48, 0x01, 0xd0}, StepOther},            // add rax, rdx
	} {
		in := Decode(0x400000, tc.code)
		if got := StepOp(&in); got != tc.want {
			t.Errorf("% x (%v): StepOp = %d, want %d", tc.code, in.Op, got, tc.want)
		}
	}
}

// altLoop calls two leaves in turn, f1 and f2, from one frame:
//
//	     mov ecx, 2000
//	loop: call f1; call f2
//	     dec ecx; jnz loop
//	     syscall
//	f1:  add rax, 1; ret
//	f2:  add rax, 2; add rax, 3; ret
var altLoop = []byte{
	0xb9, 0xd0, 0x07, 0x00, 0x00, // 0x400000
	0xe8, 0x0b, 0x00, 0x00, 0x00, // 0x400005 loop: call f1
	0xe8, 0x0b, 0x00, 0x00, 0x00, // 0x40000a: call f2
	0xff, 0xc9, 0x75, 0xf2, // 0x40000f: dec ecx; jnz loop
	0x0f, 0x05, // 0x400013: syscall
	0x48, 0x83, 0xc0, 0x01, // 0x400015 f1: add rax, 1
	0xc3,                   // 0x400019: ret
	0x48, 0x83, 0xc0, 0x02, // 0x40001a f2: add rax, 2
	0x48, 0x83, 0xc0, 0x03, // 0x40001e: add rax, 3
	0xc3, // 0x400022: ret
}

// recLoop calls r, which calls leaf and recurses to a depth of 3: the
// calls of leaf come from one call at three RSPs in turn.
//
//	     mov ecx, 2000
//	loop: mov edx, 3; call r
//	     dec ecx; jnz loop
//	     syscall
//	r:   call leaf
//	     dec edx; jz out
//	     call r
//	out: ret
//	leaf: ret
var recLoop = []byte{
	0xb9, 0xd0, 0x07, 0x00, 0x00, // 0x400000
	0xba, 0x03, 0x00, 0x00, 0x00, // 0x400005 loop: mov edx, 3
	0xe8, 0x06, 0x00, 0x00, 0x00, // 0x40000a: call r
	0xff, 0xc9, 0x75, 0xf2, // 0x40000f: dec ecx; jnz loop
	0x0f, 0x05, // 0x400013: syscall
	0xe8, 0x0a, 0x00, 0x00, 0x00, // 0x400015 r: call leaf
	0xff, 0xca, 0x74, 0x05, // 0x40001a: dec edx; jz out
	0xe8, 0xf2, 0xff, 0xff, 0xff, // 0x40001e: call r
	0xc3, // 0x400023 out: ret
	0xc3, // 0x400024 leaf: ret
}

// twoRetLoop calls f, which returns through one ret or another in turn.
//
//	     mov ecx, 2000
//	loop: call f
//	     dec ecx; jnz loop
//	     syscall
//	f:   test cl, 1; jz a
//	     ret
//	a:   ret
var twoRetLoop = []byte{
	0xb9, 0xd0, 0x07, 0x00, 0x00, // 0x400000
	0xe8, 0x06, 0x00, 0x00, 0x00, // 0x400005 loop: call f
	0xff, 0xc9, 0x75, 0xf7, // 0x40000a: dec ecx; jnz loop
	0x0f, 0x05, // 0x40000e: syscall
	0xf6, 0xc1, 0x01, 0x74, 0x01, // 0x400010 f: test cl, 1; jz a
	0xc3, // 0x400015: ret
	0xc3, // 0x400016 a: ret
}

// TestLeafRuns checks the runs of leaf calls translated code merges
// into one record (LeafMerger, HookStep.More): with the calls and rets
// picked, the leaf calls (a call and the ret that returns from it) add
// up, by call, ret and RSP, to as many calls, as many callee
// instructions and the same last ret as the exact reference's, and the
// other calls and records are the reference's, in order; some calls
// are merged where both the call and the ret are picked, none
// otherwise.
func TestLeafRuns(t *testing.T) {
	if !jitSupported {
		t.Skip("no block translation on this architecture")
	}
	for _, tc := range []struct {
		name        string
		code        []byte
		want, merge []uint64
		merged      bool
	}{
		{"two leaves in turn", altLoop, []uint64{0x400005, 0x40000a, 0x400019, 0x400022}, []uint64{0x400005, 0x40000a, 0x400019, 0x400022}, true},
		// f1's leaf calls, not picked, end each run of f2's.
		{"one of two picked", altLoop, []uint64{0x400005, 0x40000a, 0x400019, 0x400022}, []uint64{0x40000a, 0x400022}, false},
		{"the call only", altLoop, []uint64{0x400005, 0x40000a, 0x400019, 0x400022}, []uint64{0x400005, 0x40000a}, false},
		{"the ret only", altLoop, []uint64{0x400005, 0x40000a, 0x400019, 0x400022}, []uint64{0x400019, 0x400022}, false},
		{"one leaf", callLoop, []uint64{0x400007, 0x40002e}, []uint64{0x400007, 0x40002e}, true},
		{"a leaf, and a ret past its frame", skipRetLoop, []uint64{0x400005, 0x400010, 0x40001a}, []uint64{0x400005, 0x400010, 0x40001a}, false},
		{"a leaf ending another frame", skipRetLoop, []uint64{0x400005, 0x40001a}, []uint64{0x400005, 0x40001a}, true},
		// One call at three RSPs in turn, none twice in a row.
		{"one call in a recursion", recLoop, []uint64{0x400015, 0x400024}, []uint64{0x400015, 0x400024}, false},
		// One call returning through two rets in turn.
		{"two rets", twoRetLoop, []uint64{0x400005, 0x400015, 0x400016}, []uint64{0x400005, 0x400015, 0x400016}, false},
	} {
		run := func(jit bool) (*hookLogObserver, *CPU) {
			defer SetJIT(SetJIT(jit, 0))
			filterAskAlways = !jit
			defer func() { filterAskAlways = false }()
			c := newTestCPU(t, tc.code)
			c.Pred = predict.New(10)
			o := &hookLogObserver{instObserver: instObserver{&filterObserver{name: "a", want: tc.want}},
				steps: true, off: !jit, merge: tc.merge}
			for _, budget := range []uint64{700, 2333, 1 << 40} {
				c.Obs = o
				if ex := c.Run(budget); ex.Reason != ExitBudget && ex.Reason != ExitSyscall {
					t.Fatalf("%s: exit %v", tc.name, ex.Reason)
				}
			}
			return o, c
		}
		want, wc := run(false)
		got, gc := run(true)
		wantRest, wantSums := leafSums(want.evs, nil)
		gotRest, gotSums := leafSums(got.evs, got.more)
		if len(wantSums) == 0 && tc.merged {
			t.Fatalf("%s: no leaf call in the reference", tc.name)
		}
		var merged uint64
		for _, v := range got.more {
			merged += v.n
		}
		if (merged != 0) != tc.merged {
			t.Errorf("%s: %d calls merged, want some: %v", tc.name, merged, tc.merged)
		}
		if got.badKind != 0 || got.badTarget != 0 {
			t.Errorf("%s: %d records of the wrong kind, %d with the wrong target", tc.name, got.badKind, got.badTarget)
		}
		if fmt.Sprint(gotSums) != fmt.Sprint(wantSums) {
			t.Errorf("%s: leaf calls\n%v\nwant\n%v", tc.name, gotSums, wantSums)
		}
		if fmt.Sprint(gotRest) != fmt.Sprint(wantRest) {
			t.Errorf("%s: other calls and records\n%v\nwant\n%v", tc.name, gotRest, wantRest)
		}
		if gc.R[RAX] != wc.R[RAX] || gc.Icount != wc.Icount {
			t.Errorf("%s: rax=%#x icount=%d, want %#x %d", tc.name, gc.R[RAX], gc.Icount, wc.R[RAX], wc.Icount)
		}
		t.Logf("%s: %d records (%d leaf calls, %d calls merged into them), %d exact calls", tc.name, got.recs, got.leaves, merged, got.exact)
	}
}

// stubLoop calls f through a stub of four instructions (a PLT stub's
// place), and f tail-jumps to g, which returns:
//
//	     mov ecx, 2000
//	loop: call stub
//	     dec ecx; jnz loop
//	     syscall
//	stub: nop; nop; nop; jmp f
//	f:   add rax, 1; jmp g
//	g:   add rax, 2; ret
//
// f is 5 instructions after the call, g 7.
var stubLoop = []byte{
	0xb9, 0xd0, 0x07, 0x00, 0x00, // 0x400000
	0xe8, 0x06, 0x00, 0x00, 0x00, // 0x400005 loop: call stub
	0xff, 0xc9, 0x75, 0xf7, // 0x40000a: dec ecx; jnz loop
	0x0f, 0x05, // 0x40000e: syscall
	0x90, 0x90, 0x90, 0xeb, 0x00, // 0x400010 stub: nop; nop; nop; jmp f
	0x48, 0x83, 0xc0, 0x01, 0xeb, 0x00, // 0x400015 f: add rax, 1; jmp g
	0x48, 0x83, 0xc0, 0x02, // 0x40001b g: add rax, 2
	0xc3, // 0x40001f: ret
}

// foldObserver is a hookLogObserver that folds soft records into
// calls' (EntryFolder) and counts the calls' records that hold an entry
// (entries; badEntry: not f) and the soft records made (softRecs).
type foldObserver struct {
	*hookLogObserver
	fold, f            uint64
	entries, badEntry  int
	softRecs, callRecs int
}

func (o *foldObserver) FoldWindow() uint64 { return o.fold }

func (o *foldObserver) LoggedSteps(c *CPU, steps []HookStep) {
	for i := range steps {
		r := &steps[i]
		switch {
		case r.Kind&StepEntry != 0:
			o.entries++
			if r.Target != o.f || r.Kind&StepOpMask != StepCall {
				o.badEntry++
			}
		case r.Kind&StepSoft != 0:
			o.softRecs++
		}
		if op := r.Kind & StepOpMask; op == StepCall {
			o.callRecs++
		}
	}
}

// TestEntryFold: a soft record made at most FoldWindow instructions
// after a call's, with nothing logged between, folds into the call's
// (EntryFolder: its PC as the Target, StepEntry), and a later soft
// record while the call's is still the last is dropped; one past the
// window makes a record of its own. f is 5 instructions after the
// call: folded with a window of 5, not with one of 4 (then f and g each
// make a record).
func TestEntryFold(t *testing.T) {
	if !jitSupported {
		t.Skip("no block translation on this architecture")
	}
	for _, tc := range []struct {
		fold   uint64
		folded bool
	}{{5, true}, {4, false}, {100, true}, {0, false}} {
		defer SetJIT(SetJIT(true, 0))
		c := newTestCPU(t, stubLoop)
		c.Pred = predict.New(10)
		o := &foldObserver{hookLogObserver: &hookLogObserver{instObserver: instObserver{&filterObserver{name: "a",
			want: []uint64{0x400005, 0x400015, 0x40001b, 0x40001f}}}, steps: true,
			soft: []uint64{0x400015, 0x40001b}, open: []uint64{0x400005, 0x40001f}, window: 64}, fold: tc.fold, f: 0x400015}
		for _, budget := range []uint64{700, 2333, 1 << 40} {
			c.Obs = o
			if ex := c.Run(budget); ex.Reason != ExitBudget && ex.Reason != ExitSyscall {
				t.Fatalf("exit %v", ex.Reason)
			}
		}
		name := fmt.Sprintf("fold window %d", tc.fold)
		if o.callRecs < 1900 {
			t.Fatalf("%s: %d calls' records of 2000 calls", name, o.callRecs)
		}
		if o.badEntry != 0 {
			t.Errorf("%s: %d calls' records hold another entry than f's", name, o.badEntry)
		}
		if tc.folded && (o.entries < o.callRecs*9/10 || o.softRecs > o.callRecs/10) {
			t.Errorf("%s: %d of %d calls' records hold f's entry, %d soft records: want nearly all, and few", name, o.entries, o.callRecs, o.softRecs)
		}
		if !tc.folded && (o.entries != 0 || o.softRecs < 2*o.callRecs*9/10) {
			t.Errorf("%s: %d of %d calls' records hold f's entry, %d soft records: want none, and f's and g's", name, o.entries, o.callRecs, o.softRecs)
		}
		t.Logf("%s: %d calls' records, %d with f's entry, %d soft records", name, o.callRecs, o.entries, o.softRecs)
	}
}

// floorLoop calls a, then b from 16 bytes lower, each a lone ret; the
// instruction after b's call is soft:
//
//	     mov ecx, 2000
//	loop: call a
//	     sub rsp, 16; call b; add rsp, 16
//	     dec ecx; jnz loop
//	     syscall
//	a:   ret
//	b:   ret
//
// From a's call at R: a's ret at R+1, b's at R+4, dec at R+6.
var floorLoop = []byte{
	0xb9, 0xd0, 0x07, 0x00, 0x00, // 0x400000
	0xe8, 0x13, 0x00, 0x00, 0x00, // 0x400005 loop: call a
	0x48, 0x83, 0xec, 0x10, // 0x40000a: sub rsp, 16
	0xe8, 0x0b, 0x00, 0x00, 0x00, // 0x40000e: call b
	0x48, 0x83, 0xc4, 0x10, // 0x400013: add rsp, 16
	0xff, 0xc9, 0x75, 0xea, // 0x400017: dec ecx; jnz loop
	0x0f, 0x05, // 0x40001b: syscall
	0xc3, // 0x40001d a: ret
	0xc3, // 0x40001e b: ret
}

// floorObserver is a hookLogObserver that sets the CPU's ret floor
// whenever it receives records (as ttd calls does), and counts the
// soft records.
type floorObserver struct {
	*hookLogObserver
	floor    uint64
	softRecs int
}

func (o *floorObserver) LoggedSteps(c *CPU, steps []HookStep) {
	for i := range steps {
		if steps[i].Kind&StepSoft != 0 {
			o.softRecs++
		}
	}
	c.SetRetFloor(o.floor)
}

// TestRetFloor: a ret opens the window of soft records only at or above
// the floor (SetRetFloor), and one that does sets it to 0, so that every
// ret after it opens the window too. The rets of floorLoop open a window
// of 3: dec is in b's ret's window, not in a's. With the floor at a's
// slot, a's ret opens its window and b's too; with it above both,
// neither does; with it at 0, both do.
func TestRetFloor(t *testing.T) {
	if !jitSupported {
		t.Skip("no block translation on this architecture")
	}
	rsp := newTestCPU(t, floorLoop).R[RSP]
	for _, tc := range []struct {
		name   string
		floor  uint64
		opened bool
	}{{"floor 0", 0, true}, {"floor at a's slot", rsp - 8, true}, {"floor above a's slot", rsp - 7, false}, {"floor at b's slot", rsp - 24, true}} {
		defer SetJIT(SetJIT(true, 0))
		c := newTestCPU(t, floorLoop)
		c.Pred = predict.New(10)
		o := &floorObserver{hookLogObserver: &hookLogObserver{instObserver: instObserver{&filterObserver{name: "a",
			want: []uint64{0x400005, 0x40000e, 0x400017, 0x40001d, 0x40001e}}}, steps: true,
			soft: []uint64{0x400017}, open: []uint64{0x40001d, 0x40001e}, window: 3}, floor: tc.floor}
		c.SetRetFloor(tc.floor)
		for _, budget := range []uint64{700, 2333, 1 << 40} {
			c.Obs = o
			if ex := c.Run(budget); ex.Reason != ExitBudget && ex.Reason != ExitSyscall {
				t.Fatalf("exit %v", ex.Reason)
			}
		}
		if tc.opened && o.softRecs < 1800 || !tc.opened && o.softRecs > 200 {
			t.Errorf("%s: %d soft records of 2000 decs, want %s", tc.name, o.softRecs, map[bool]string{true: "nearly all", false: "few"}[tc.opened])
		}
		t.Logf("%s: %d soft records", tc.name, o.softRecs)
	}
}
