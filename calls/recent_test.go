package calls

import (
	"fmt"
	"testing"

	"ttd/x86"
)

// fakeSyms is a Symbolizer of made-up functions: each entry covers the
// addresses up to the next (the last, size), names starting with
// _dl_runtime_resolve are trampolines; asked counts PCToFunc's calls.
type fakeSyms struct {
	entries []uint64
	names   []string
	size    uint64
	asked   int
}

func (f *fakeSyms) PCToFunc(pc uint64) (string, uint64, bool) {
	f.asked++
	for i := len(f.entries) - 1; i >= 0; i-- {
		if pc >= f.entries[i] {
			if i == len(f.entries)-1 && pc-f.entries[i] >= f.size {
				return "", 0, false
			}
			return f.names[i], f.entries[i], true
		}
	}
	return "", 0, false
}

func (f *fakeSyms) PCToLine(uint64) (string, int, bool) { return "", 0, false }

// TestRecentEntriesAsTheMap: funcs.lookup answers from its 16-byte
// recent entries what the symbols and the map answer: an address at,
// inside and just past a function (offsets up to recentOffMax kept,
// beyond it only in the map), a trampoline, an address no symbol
// covers, in two program images with the same addresses; and a second
// lookup of a kept address asks the symbols nothing.
func TestRecentEntriesAsTheMap(t *testing.T) {
	const base = 0x400000
	big := uint64(recentOffMax) + 1
	a := &fakeSyms{entries: []uint64{base, base + 0x100, base + 0x200}, names: []string{"f", "_dl_runtime_resolve_xsavec", "huge"}, size: big + 0x1000}
	b := &fakeSyms{entries: []uint64{base + 0x80}, names: []string{"g"}, size: 0x1000}
	f := funcs{syms: []Symbolizer{a, b}, caches: []map[uint64]entryOf{{}, {}}}
	f.sym, f.cache = a, f.caches[0]
	pcs := []uint64{base, base + 1, base + 0xff, base + 0x100, base + 0x150, base + 0x200,
		base + 0x200 + uint64(recentOffMax), base + 0x200 + big, base - 1, 0x10}
	want := func(s *fakeSyms, pc uint64) entryOf {
		name, entry, ok := s.PCToFunc(pc)
		s.asked--
		return entryOf{entry: entry, ok: ok, tramp: len(name) >= 19 && name[:19] == "_dl_runtime_resolve"}
	}
	// Each image twice in a row (the second from recent), then both
	// again (image b's entries took a's slots: a's come from the map).
	for i, img := range []int{0, 0, 1, 1, 0, 1} {
		round := i
		s := []*fakeSyms{a, b}[img]
		f.use(img)
		{
			for _, pc := range pcs {
				asked := s.asked
				if got, w := f.lookup(pc), want(s, pc); got != w {
					t.Errorf("round %d, image %d, pc %#x: %+v, want %+v", round, img, pc, got, w)
				}
				if i != 0 && i != 2 && s.asked != asked {
					t.Errorf("image %d, pc %#x: asked the symbols again", img, pc)
				}
				// Kept in recent unless its offset does not fit.
				r := &f.recent[(pc^pc>>recentBits)&(1<<recentBits-1)]
				kept := r.pc == pc && r.img1 == int32(img+1)
				e := want(s, pc)
				if fits := !e.ok || pc-e.entry <= recentOffMax; kept != fits {
					t.Errorf("image %d, pc %#x: kept in recent %v, want %v", img, pc, kept, fits)
				}
			}
		}
	}
	f.use(0)
	if tramp := f.lookup(base + 0x100); !tramp.tramp || !tramp.ok {
		t.Errorf("the trampoline's entry: %+v", tramp)
	}
}

// lineSyms names every address as a function of its own, at a line of
// file.
type lineSyms struct{ file string }

func (l lineSyms) PCToFunc(pc uint64) (string, uint64, bool) {
	return l.file + "_f", pc, true
}

func (l lineSyms) PCToLine(pc uint64) (string, int, bool) {
	return "/src/" + l.file, int(pc & 0xfff), true
}

// TestFinishNamesSitesPerImage: finish names each call site once per
// program image (its sites memo), from that image's symbols: two
// programs of a process tree share addresses, not names.
func TestFinishNamesSitesPerImage(t *testing.T) {
	p := &Profile{syms: []Symbolizer{lineSyms{"a.c"}, lineSyms{"b.c"}}}
	for img := range 2 {
		root := newRoot()
		c := root.child(key{Site: 0x401010, Entry: 0x402000, img: img})
		c.First = 1
		c.child(key{Site: 0x402020, Entry: 0x403000, img: img}).First = 2
		// The same site again, under another caller.
		d := root.child(key{Site: 0x401030, Entry: 0x404000, img: img})
		d.First = 3
		d.child(key{Site: 0x402020, Entry: 0x403000, img: img}).First = 4
		p.Threads = append(p.Threads, &Thread{Tid: img + 1, Root: root, img: img})
	}
	p.finish(p.syms[0])
	checkImageNames(t, p, []string{"a.c", "b.c"}, 4, func(file string, m *Node) (string, string) {
		return fmt.Sprintf("%s:%d", file, m.Site&0xfff), fmt.Sprintf("%s_f", file)
	})
}

// checkImageNames checks that thread i of p, of image i, has paths
// paths, each named as want says from files[i]'s symbols.
func checkImageNames(t *testing.T, p *Profile, files []string, paths int, want func(file string, m *Node) (site, fn string)) {
	t.Helper()
	for img, th := range p.Threads {
		n := 0
		th.Root.Walk(func(m *Node) bool {
			n++
			site, fn := want(files[img], m)
			if m.SiteName != site {
				t.Errorf("image %d: site %#x named %q, want %q", img, m.Site, m.SiteName, site)
			}
			if m.Func != fn {
				t.Errorf("image %d: %#x named %q, want %q", img, m.Entry, m.Func, fn)
			}
			return !t.Failed()
		})
		if n != paths && !t.Failed() {
			t.Errorf("image %d: %d paths, want %d", img, n, paths)
		}
	}
}

// TestLeafKeysAsLeafEntry: a leaf call's record goes to the child that
// leafEntry names, whatever its class: a folded entry (StepEntry), a
// direct call to a function's entry (StepShut), a direct call to a PLT
// stub (StepOpen: named by its ret's function), a call through a
// register to an entry and to no entry (leaf asks leafEntry past the
// first two).
func TestLeafKeysAsLeafEntry(t *testing.T) {
	const mainAt, calleeAt, stub = 0x1000, 0x2000, 0x3000
	syms := &fakeSyms{entries: []uint64{mainAt, calleeAt, stub + 0x100}, names: []string{"main", "callee", "after"}, size: 0x100}
	for _, tc := range []struct {
		what   string
		kind   x86.StepKind
		target uint64
		entry  uint64
	}{
		{"folded entry", x86.StepCall | x86.StepOpen | x86.StepEntry, calleeAt, calleeAt},
		{"call to an entry", x86.StepCall | x86.StepShut, calleeAt, calleeAt},
		{"call to a stub", x86.StepCall | x86.StepOpen, stub, calleeAt},
		{"call through a register to an entry", x86.StepCallReg | x86.StepOpen, calleeAt, calleeAt},
		{"call through a register to a stub", x86.StepCallReg | x86.StepOpen, stub, calleeAt},
	} {
		s := newSegment(syms)
		st := s.thread(1, nil, true, 0)
		// main is named and on top, its slot above the call's.
		s.resolve(st, &st.stack[0], mainAt)
		st.look, st.lookTo = 0, 0
		h := x86.HookStep{Retired: 10, RSP: 0x7000, PC: mainAt + 0x10, Target: tc.target, Kind: tc.kind | x86.StepLeaf,
			Ret: 20, RetPC: calleeAt + 0x20, RetKind: x86.StepRet | x86.StepOpen}
		s.leaf(st, &h, 0)
		top := st.stack[0].node
		var got []segKey
		top.eachChild(func(k segKey, c *segNode) {
			got = append(got, k)
			if c.Count != 1 || c.Self != 10 || c.First != 10 {
				t.Errorf("%s: %+v counted %d, %d instructions, first %d", tc.what, k, c.Count, c.Self, c.First)
			}
		})
		if want := (segKey{mainAt + 0x10, tc.entry}); len(got) != 1 || got[0] != want {
			t.Errorf("%s: children %+v, want %+v", tc.what, got, want)
		}
		if s.leaves != 1 {
			t.Errorf("%s: followed as %d leaf records, want 1 (leaf's fast path)", tc.what, s.leaves)
		}
	}
}

// addrSyms names every address as a function of its own, "f" and the
// address in hex, at a line of file.c as many as the address.
type addrSyms struct{ file string }

func (a addrSyms) PCToFunc(pc uint64) (string, uint64, bool) {
	return fmt.Sprintf("%s_f%x", a.file, pc), pc, true
}

func (a addrSyms) PCToLine(pc uint64) (string, int, bool) {
	return "/src/" + a.file + ".c", int(pc), true
}

// TestFinishNamesEachAddress: finish's memos (nameMemo) name each path
// by its own function and call site, though they keep fewer addresses
// than a tree has (2,048 functions called from 2,048 sites, all in
// every slot many times, at addresses that are both a site and an
// entry), and each image's from its own symbols where two images share
// the addresses.
func TestFinishNamesEachAddress(t *testing.T) {
	const paths = 4 << nameMemoBits
	p := &Profile{syms: []Symbolizer{addrSyms{"a"}, addrSyms{"b"}}}
	for img := range 2 {
		root := newRoot()
		parent := root
		for i := range paths {
			// Every other path below the last: a chain and its leaves.
			// Sites and entries share addresses: path i's entry is
			// path 2i's site.
			c := parent.child(key{Site: 0x400000 + uint64(i)*16, Entry: 0x400000 + uint64(i)*32, img: img})
			c.First = uint64(i)
			if i%2 == 0 {
				parent = c
			}
		}
		p.Threads = append(p.Threads, &Thread{Tid: img + 1, Root: root, img: img})
	}
	p.finish(p.syms[0])
	checkImageNames(t, p, []string{"a", "b"}, paths, func(file string, m *Node) (string, string) {
		return fmt.Sprintf("%s.c:%d", file, m.Site), fmt.Sprintf("%s_f%x", file, m.Entry)
	})
}
