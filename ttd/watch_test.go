package ttd

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// accessPositions lists, from the reference, the positions of the
// instructions that wrote (write) or read [addr, addr+n).
func (ref *reference) accessPositions(addr, n uint64, write bool) []uint64 {
	var out []uint64
	for _, a := range ref.accesses {
		if a.Write != write || a.Addr >= addr+n || a.Addr+uint64(a.Size) <= addr {
			continue
		}
		if len(out) == 0 || out[len(out)-1] != a.Position {
			out = append(out, a.Position)
		}
	}
	return out
}

// checkValue compares m with what the reference says [addr, addr+n)
// held at pos.
func checkValue(t *testing.T, what string, m *Memory, ref *reference, addr uint64, n int, pos uint64) {
	t.Helper()
	if m == nil {
		t.Fatalf("%s: no value", what)
	}
	data, known := ref.memAt(addr, n, pos)
	for i := range data {
		if known[i] && (!m.Known[i] || m.Data[i] != data[i]) {
			t.Fatalf("%s: byte %d is %#x (known %v), want %#x", what, i, m.Data[i], m.Known[i], data[i])
		}
	}
}

// TestWatchpointBoundaries checks gdb-on-rr semantics of watchpoints and
// the boundaries of the Find queries on adjacent.c: writes on
// consecutive instructions, writes that cover the watched cell in part,
// neighbours written without touching it; the first and the last write
// of the trace; and window boundaries placed exactly on a write and just
// after it.
func TestWatchpointBoundaries(t *testing.T) {
	prog := buildC(t, "adjacent")
	path := recordProg(t, prog, 3000)
	ref := straight(t, path)
	s0 := openSession(t, path, 0)
	cell := symbol(t, s0, "cell")
	cases := []struct {
		name string
		addr uint64
		n    uint64
	}{
		{"mid", cell + 8, 8},      // all six writes
		{"mid[7]", cell + 15, 1},  // W1, W2, W3, W5, W6: not W4
		{"mid[0:2]", cell + 8, 2}, // W1, W2, W4, W6
	}
	writes := ref.accessPositions(cell+8, 8, true)
	if len(writes) != 6 || writes[1] != writes[0]+1 {
		t.Fatalf("writes of cell.mid at %v: want six, the first two adjacent", writes)
	}
	// Window boundaries (FineEvery) that fall on the first write, just
	// after it, and on the second.
	cps := s0.Index().Checkpoints
	k := s0.segOf(writes[0])
	var fines []uint64
	for _, p := range []uint64{writes[0], writes[0] + 1, writes[1]} {
		if d := p - cps[k].Position; d > 0 {
			fines = append(fines, d)
		}
	}
	fines = append(fines, 0)
	for _, fine := range fines {
		for i, c := range cases {
			if i > 0 && fine != 0 {
				continue // the partial cells with the default windows only
			}
			t.Run(fmt.Sprintf("%s/fine%d", c.name, fine), func(t *testing.T) {
				s := openSession(t, path, fine)
				checkFind(t, s, ref, c.addr, c.n, true)
				checkWatch(t, s, ref, c.addr, c.n, true)
				if i == 0 {
					checkFind(t, s, ref, c.addr, c.n, false)
					checkWatch(t, s, ref, c.addr, c.n, false)
				}
			})
		}
	}
}

func checkWatch(t *testing.T, s *Session, ref *reference, addr, n uint64, write bool) {
	t.Helper()
	hits := ref.accessPositions(addr, n, write)
	if len(hits) == 0 {
		t.Fatalf("no access to check")
	}
	kind := AccessRead
	if write {
		kind = AccessWrite
	}
	s.ClearBreakpoints()
	if _, err := s.SetBreakpoint(Breakpoint{Kind: BreakMemory, Addr: addr, Size: n, Access: kind}); err != nil {
		t.Fatal(err)
	}
	defer s.ClearBreakpoints()
	s.Seek(0)
	for i, h := range hits {
		// Forward: just after the access, the new value in memory.
		st, err := s.Continue(Forward)
		if err != nil || st.Reason != StopWatchpoint || st.Position != h+1 || st.Access == nil || st.Access.Position != h {
			t.Fatalf("continue to access %d (at %d): %v %v", i, h, st, err)
		}
		checkValue(t, "forward old", st.Old, ref, addr, int(n), h)
		checkValue(t, "forward new", st.New, ref, addr, int(n), h+1)
		m, err := s.ReadMemory(addr, int(n))
		if err != nil || !bytes.Equal(m.Data, st.New.Data) {
			t.Fatalf("memory at the forward stop %x, want the new value %x (%v)", m.Data, st.New.Data, err)
		}
		// Reverse from there finds the same access, stopping before it.
		rs, err := s.Continue(Backward)
		if err != nil || rs.Reason != StopWatchpoint || rs.Position != h || rs.Access.Position != h {
			t.Fatalf("reverse continue after the stop at %d: %v %v, want the same access at %d", h+1, rs, err, h)
		}
		if !bytes.Equal(rs.Old.Data, st.Old.Data) || !bytes.Equal(rs.New.Data, st.New.Data) {
			t.Fatalf("reverse stop values %x → %x, forward %x → %x", rs.Old.Data, rs.New.Data, st.Old.Data, st.New.Data)
		}
		if m, _ := s.ReadMemory(addr, int(n)); !bytes.Equal(m.Data, st.Old.Data) {
			t.Fatalf("memory at the reverse stop %x, want the old value %x", m.Data, st.Old.Data)
		}
		// And forward again executes it and stops after it.
		if st2, err := s.Continue(Forward); err != nil || st2.Position != h+1 {
			t.Fatalf("continue after the reverse stop at %d: %v %v", h, st2, err)
		}
	}
	if st, err := s.Continue(Forward); err != nil || st.Reason != StopEndOfTrace {
		t.Fatalf("continue after the last access: %v %v", st, err)
	}
	// Backward from the end: every access, last first, then the start.
	for i := len(hits) - 1; i >= 0; i-- {
		st, err := s.Continue(Backward)
		if err != nil || st.Reason != StopWatchpoint || st.Position != hits[i] {
			t.Fatalf("reverse continue to access %d (at %d): %v %v", i, hits[i], st, err)
		}
	}
	if st, err := s.Continue(Backward); err != nil || st.Reason != StopStartOfTrace {
		t.Fatalf("reverse continue before the first access: %v %v", st, err)
	}
}

func checkFind(t *testing.T, s *Session, ref *reference, addr, n uint64, write bool) {
	t.Helper()
	hits := ref.accessPositions(addr, n, write)
	kind := AccessRead
	if write {
		kind = AccessWrite
	}
	for i, h := range hits {
		// From the access itself: backward finds the one before it,
		// forward finds it.
		f, err := s.Find(Backward, kind, addr, n, h)
		if i == 0 {
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("find-prev from the first access (%d): %+v %v, want none", h, f, err)
			}
		} else if err != nil || f.Position != hits[i-1] {
			t.Fatalf("find-prev from the access at %d: %v %v, want %d", h, f, err, hits[i-1])
		}
		f, err = s.Find(Forward, kind, addr, n, h)
		if err != nil || f.Position != h {
			t.Fatalf("find-next from the access at %d: %v %v, want it", h, f, err)
		}
		checkValue(t, "find before", &f.Before, ref, addr, int(n), h)
		checkValue(t, "find after", &f.After, ref, addr, int(n), h+1)
		// From just after it: backward finds it, forward the next.
		f, err = s.Find(Backward, kind, addr, n, h+1)
		if err != nil || f.Position != h {
			t.Fatalf("find-prev from just after the access at %d: %v %v", h, f, err)
		}
		f, err = s.Find(Forward, kind, addr, n, h+1)
		if i+1 < len(hits) {
			if err != nil || f.Position != hits[i+1] {
				t.Fatalf("find-next from just after the access at %d: %v %v, want %d", h, f, err, hits[i+1])
			}
		} else if !errors.Is(err, ErrNotFound) {
			t.Fatalf("find-next after the last access: %+v %v, want none", f, err)
		}
	}
}
