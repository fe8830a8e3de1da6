package calls

import (
	"testing"

	"ttd/x86"
)

// TestPathMemoTellsKeysApart: the child a leaf call's record or a
// frame's naming finds through pathMemo is the one leafEntry or
// resolve's lookups name, when the memo's slot holds another key's
// child that differs from it in one part only (the parent, with the
// same id; the site; the target; the naming pc; leaf's kind, or
// resolve's against leaf's: the slot's hash leaves the kind out), and
// a repeated key is found there.
func TestPathMemoTellsKeysApart(t *testing.T) {
	const mainAt, f, g, stub = 0x1000, 0x2000, 0x100000, 0x5000000
	syms := &fakeSyms{entries: []uint64{mainAt, f, g}, names: []string{"main", "f", "g"}, size: 0x1000000}
	s := newSegment(syms)
	st := s.thread(1, nil, true, 0)
	s.resolve(st, &st.stack[0], mainAt)
	st.look, st.lookTo = 0, 0
	main := st.stack[0].node
	// other is a second frame's path with main's id: the memo's hash
	// does not tell them apart.
	other := s.children.child(main, segKey{mainAt + 0x40, f})
	other.id = main.id

	// collide is a value from on whose key takes the slot ref.
	collide := func(what string, ref *pathMemo, from uint64, slot func(v uint64) *pathMemo) uint64 {
		for w := from; w < from+1<<20; w++ {
			if slot(w) == ref {
				return w
			}
		}
		t.Fatalf("%s: no colliding key", what)
		return 0
	}
	retired := uint64(10)
	// leafCall follows a leaf call's record from parent's frame, and
	// checks the child it counted.
	leafCall := func(what string, parent *segNode, site, target, retPC uint64, kind x86.StepKind) *segNode {
		t.Helper()
		st.stack[len(st.stack)-1].node = parent
		h := x86.HookStep{Retired: retired, RSP: 0x7000, PC: site, Target: target, Kind: kind | x86.StepLeaf,
			Ret: retired + 5, RetPC: retPC, RetKind: x86.StepRet | x86.StepOpen}
		retired += 10
		want := segKey{site, s.leafEntry(&h)}
		before := map[*segNode]uint64{}
		parent.eachChild(func(_ segKey, c *segNode) { before[c] = c.Count })
		s.leaf(st, &h, 0)
		var got *segNode
		parent.eachChild(func(k segKey, c *segNode) {
			if c.Count != before[c] {
				if got != nil || k != want || c.Count != before[c]+1 {
					t.Errorf("%s: counted %+v (%d calls), want one more call of %+v", what, k, c.Count, want)
				}
				got = c
			}
		})
		if got == nil {
			t.Errorf("%s: no child of %+v counted", what, want)
		}
		return got
	}
	// The first key's ret is in no function: the callee is the
	// target.
	site, retPC := uint64(mainAt+0x10), uint64(0x3000000)
	kind := x86.StepCall | x86.StepOpen
	slot := func(parent *segNode, site, target, pc uint64) *pathMemo {
		return s.children.memo(parent, site, target, pc)
	}
	first := leafCall("first", main, site, stub, retPC, kind)
	if again := leafCall("again", main, site, stub, retPC, kind); again != first {
		t.Errorf("the same key again: another child")
	}
	ref := slot(main, site, stub, retPC)
	if ref.child != first {
		t.Errorf("the memo does not hold the first key's child")
	}
	leafCall("another parent of the same id", other, site, stub, retPC, kind)
	leafCall("the first again", main, site, stub, retPC, kind)
	site2 := collide("site", ref, site+1, func(v uint64) *pathMemo { return slot(main, v, stub, retPC) })
	leafCall("another site", main, site2, stub, retPC, kind)
	leafCall("the first again", main, site, stub, retPC, kind)
	target2 := collide("target", ref, stub+1, func(v uint64) *pathMemo { return slot(main, site, v, retPC) })
	if c := leafCall("another target", main, site, target2, retPC, kind); c.Entry != target2 {
		t.Errorf("another target: callee %#x, want %#x", c.Entry, target2)
	}
	leafCall("the first again", main, site, stub, retPC, kind)
	// A ret in g names g.
	retPC2 := collide("ret", ref, g, func(v uint64) *pathMemo { return slot(main, site, stub, v) })
	if c := leafCall("a ret in another function", main, site, stub, retPC2, kind); c.Entry != g {
		t.Errorf("a ret in g: callee %#x", c.Entry)
	}
	leafCall("the first again", main, site, stub, retPC, kind)
	// A call through a register to f's entry is f's, wherever it
	// returns; a direct call to no entry is its ret's function: the
	// same key but for the kind, in the same slot.
	reg := x86.StepCallReg | x86.StepOpen
	site3 := uint64(mainAt + 0x100)
	if c := leafCall("to an entry through a register", main, site3, f, g+0x30, reg); c.Entry != f {
		t.Errorf("a call through a register to f: callee %#x, want f", c.Entry)
	}
	if c := leafCall("a direct call, its ret in g", main, site3, f, g+0x30, kind); c.Entry != g {
		t.Errorf("a direct call returning in g: callee %#x, want g", c.Entry)
	}
	// resolve names a frame by its pc's function: the leaf call's key
	// with resolve's kind is another frame.
	site4 := uint64(mainAt + 0x200)
	if c := leafCall("to an entry through a register", main, site4, f, g+0x30, reg); c.Entry != f {
		t.Errorf("a call through a register to f: callee %#x, want f", c.Entry)
	}
	fr := st.push()
	fr.parent, fr.site, fr.target = main, site4, f
	s.resolve(st, fr, g+0x30)
	if fr.node == nil || fr.node.Entry != g || fr.node.Parent != main || fr.node.Site != site4 {
		t.Errorf("resolve after a leaf call of the same key: %+v, want g's frame", fr.node)
	}
	st.stack = st.stack[:len(st.stack)-1]
	// And the memo finds it again.
	fr = st.push()
	fr.parent, fr.site, fr.target = main, site4, f
	node := slot(main, site4, f, g+0x30).child
	s.resolve(st, fr, g+0x30)
	if node == nil || fr.node != node {
		t.Errorf("resolve again: %p, the memo's %p", fr.node, node)
	}
}
