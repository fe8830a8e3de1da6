package ttd

import (
	"encoding/binary"
	"testing"

	"ttd/reader"
	"ttd/recorder"
)

// TestFindSharedWrites: in a recording of the default mode, the last
// write to memory a parent shares with its child is the child's when the
// child wrote last, through its own mapping: anonymous MAP_SHARED memory
// at the same address, a System V segment the child attached elsewhere
// (written by an instruction and by read(2)). Before, the parent's
// searches saw its own writes only: the last write to the segment was
// the parent's strcpy of "parent", though the memory said "child".
// Checkpoints every 20,000 instructions put the child's writes in
// another segment than the parent's, whose summaries do not hold them.
func TestFindSharedWrites(t *testing.T) {
	prog := buildC(t, "sharedwrites")
	path := recordWith(t, prog, recorder.Options{CheckpointEvery: 20000, Replayable: true})
	s := openSession(t, path, 0)
	procs := s.Processes()
	if len(procs) != 2 {
		t.Fatalf("%d processes, want 2", len(procs))
	}
	parent, child := procs[0].Pid, procs[1].Pid
	if procs[1].Ppid != parent {
		t.Fatalf("processes %+v", procs)
	}
	end := s.End()
	ptr := func(sym string) uint64 {
		m, err := s.ReadMemory(symbol(t, s, sym), 8)
		if err != nil || !m.Known[0] {
			t.Fatalf("%s: %v", sym, err)
		}
		return binary.LittleEndian.Uint64(m.Data)
	}
	if _, err := s.Seek(end); err != nil {
		t.Fatal(err)
	}
	anon, seg := ptr("anon"), ptr("seg")
	if m, _ := s.ReadMemory(anon+4, 4); m.Data[0] != 1 {
		t.Fatalf("the child attached the segment where the parent had it (anon[1] = %d): the test needs another address", m.Data[0])
	}
	isChilds := func(what string, f *Found, err error, src reader.AccessSource, want string) uint64 {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if s.ThreadPid(f.Tid) != child && f.Tid != child || f.Source != src || string(f.After.Data) != want {
			t.Fatalf("%s: thread %d (child %d), source %v, after %q; want the child's, %v, %q", what, f.Tid, child, f.Source, f.After.Data, src, want)
		}
		return f.Position
	}
	f, err := s.FindPrevWrite(seg, 5, end)
	atChild := isChilds("segment", f, err, reader.AccessCPU, "child")
	f, err = s.FindPrevWrite(seg+64, 5, end)
	isChilds("segment by read(2)", f, err, reader.AccessSyscall, "hello")
	f, err = s.FindPrevWrite(anon, 4, end)
	isChilds("anonymous", f, err, reader.AccessCPU, "\x02\x00\x00\x00")

	// Before the child's write, the parent's; going forward from the
	// parent's, the child's.
	f, err = s.FindPrevWrite(anon, 4, f.Position)
	if err != nil || f.Tid != parent || f.After.Data[0] != 1 || len(f.Accesses) != 1 {
		t.Fatalf("anonymous, before the child's write: %+v %v", f, err)
	}
	f, err = s.FindPrevWrite(seg, 5, atChild-10)
	if err != nil || f.Tid != parent {
		t.Fatalf("segment, before the child's write: %+v %v", f, err)
	}
	// (strcpy's first store: "chil" over "paren".)
	f, err = s.FindNextWrite(seg, 5, f.Position+1)
	isChilds("segment, forward", f, err, reader.AccessCPU, "chiln")
}
