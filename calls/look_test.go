package calls

import (
	"testing"

	"ttd/x86"
)

// TestMemCallLooksOneInstruction: after a call through memory whose
// target the record does not hold (the interpreter made it), the gate
// opens for the callee's first instruction only, which gives the frame
// its target or names it at an entry; past it a function's entry names
// the frame within the lookLimit instructions after the call, as when
// the gate stayed open for all of them, and not after.
func TestMemCallLooksOneInstruction(t *testing.T) {
	const mainAt, fAt, anon = 0x1000, 0x2000, 0x9000
	syms := &fakeSyms{entries: []uint64{mainAt, fAt}, names: []string{"main", "f"}, size: 0x100}
	const call = 10
	for _, tc := range []struct {
		what    string
		first   uint64 // the callee's first instruction
		entryAt uint64 // Retired of a record at f's entry (0: none)
		want    uint64 // the frame's entry (0: still pending)
	}{
		{"first instruction at an entry", fAt, 0, fAt},
		{"no symbol, f's entry last in the window", anon, call + lookLimit, fAt},
		{"no symbol, f's entry past the window", anon, call + lookLimit + 1, 0},
	} {
		s := newSegment(syms)
		st := s.thread(1, nil, true, 0)
		s.cur = st
		s.resolve(st, &st.stack[0], mainAt)
		st.look, st.lookTo = 0, 0
		h := x86.HookStep{Retired: call, RSP: 0x7000, PC: mainAt + 0x10, Kind: x86.StepCallMem | x86.StepOpen}
		s.step(st, &h, 0)
		if !s.gate(nil, nil) {
			t.Fatalf("%s: gate closed before the callee's first instruction", tc.what)
		}
		s.step(st, &x86.HookStep{Retired: call + 1, RSP: 0x6ff8, PC: tc.first}, 0)
		f := &st.stack[len(st.stack)-1]
		if s.gate(nil, nil) {
			t.Errorf("%s: gate open after the callee's first instruction", tc.what)
		}
		if f.target != tc.first {
			t.Errorf("%s: target %#x, want %#x", tc.what, f.target, tc.first)
		}
		if tc.entryAt != 0 {
			s.step(st, &x86.HookStep{Retired: tc.entryAt, RSP: 0x6ff0, PC: fAt, Kind: x86.StepSoft}, 0)
		}
		var got uint64
		if f.node != nil {
			got = f.node.Entry
		}
		if got != tc.want {
			t.Errorf("%s: frame named %#x, want %#x", tc.what, got, tc.want)
		}
	}
}
