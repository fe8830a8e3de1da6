package reader

import (
	"debug/elf"
	"encoding/binary"
	"testing"

	"ttd/tracefile"
)

// TestKnownPerProcess follows what TrackProcesses knows of global g in
// each process of treeSrc's tree: the parent stores 3 and forks a child
// that stores 5 and exits, then vforks one that execs /bin/true.
// Each step re-simulates from the start to its position.
//   - the forked child knows 3 from its start (its memory is a copy of
//     what the parent's tracker knew) and 5 once it stored it; the
//     parent never learns 5;
//   - an exited process knows nothing any more;
//   - the vfork child shares its parent's memory (3) until its exec,
//     after which its new address space knows nothing of g;
//   - without TrackProcesses, only the focus's memory is known.
func TestKnownPerProcess(t *testing.T) {
	path, exe := recordTreeExe(t, 0)
	g := symbol(t, exe, "g")
	tr, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	procs := tr.Processes()
	if len(procs) != 3 || procs[2].Execs != 1 {
		t.Fatalf("processes %+v, want the parent, a forked child and an exec'd vfork child", procs)
	}
	parent, child, vchild := procs[0], procs[1], procs[2]
	var execAt uint64
	recs, err := tr.File().Processes()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range recs {
		if p.Event == tracefile.ProcessExeced && p.Pid == vchild.Pid {
			execAt = p.Position
		}
	}
	if execAt == 0 {
		t.Fatal("no exec record of the vfork child")
	}
	// vfork is what the vfork child knows of g at pos: its parent's
	// memory from its start to its exec, nothing of g after.
	vfork := func(pos uint64) int64 {
		if vchild.Start < pos && pos <= execAt {
			return 3
		}
		return -1
	}
	// alive: the forked child's g is not checked while it runs (3 or 5),
	// and unknown once it ended.
	alive := func(pos uint64) int64 {
		if pos > child.End {
			return -1
		}
		return skip
	}
	steps := []struct {
		at            uint64
		what          string
		parent, child int64
	}{
		{child.Start + 1, "just after the fork", 3, 3},
		{child.End - 1, "just before the child ends", 3, 5},
		{child.End + 1, "after the child ended", 3, -1},
		{vchild.Start + 1, "after the vfork", 3, alive(vchild.Start + 1)},
		{execAt + 1, "after the exec", 3, alive(execAt + 1)},
	}
	vforkSeen := false
	for _, s := range steps {
		r, err := tr.NewReplay(0)
		if err != nil {
			t.Fatal(err)
		}
		r.TrackProcesses()
		if err := r.RunTo(s.at); err != nil {
			t.Fatalf("%s: %v", s.what, err)
		}
		// value is g in pid's memory as the trackers know it (-1:
		// unknown).
		value := func(pid int) int64 {
			var b [8]byte
			var have [8]bool
			r.KnownOf(pid, g, b[:], have[:])
			for _, h := range have {
				if !h {
					return -1
				}
			}
			return int64(binary.LittleEndian.Uint64(b[:]))
		}
		vforkSeen = vforkSeen || vfork(s.at) == 3
		for _, c := range []struct {
			name string
			pid  int
			want int64
		}{{"parent", parent.Pid, s.parent}, {"child", child.Pid, s.child}, {"vfork child", vchild.Pid, vfork(s.at)}} {
			if got := value(c.pid); c.want != skip && got != c.want {
				t.Errorf("%s (position %d): the %s knows g = %d, want %d (-1: unknown)", s.what, s.at, c.name, got, c.want)
			}
		}
		r.Close()
	}
	if !vforkSeen {
		t.Error("no step between the vfork and the exec")
	}
	// Without TrackProcesses: the focus (the parent) only.
	r2, err := tr.NewReplay(0)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	r2.Track()
	if err := r2.RunTo(child.End); err != nil {
		t.Fatal(err)
	}
	var b [8]byte
	var have [8]bool
	r2.KnownOf(child.Pid, g, b[:], have[:])
	if have[0] {
		t.Error("without TrackProcesses, the child's memory is known")
	}
	r2.KnownOf(parent.Pid, g, b[:], have[:])
	if !have[0] || b[0] != 3 {
		t.Errorf("without TrackProcesses, the focus's g: %v %v, want 3", have[0], b[0])
	}
}

const skip = -2

// symbol is the address of symbol name in the executable exe.
func symbol(t *testing.T, exe, name string) uint64 {
	t.Helper()
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	for _, s := range syms {
		if s.Name == name {
			return s.Value
		}
	}
	t.Fatalf("no symbol %s", name)
	return 0
}
