package ttd

import (
	"bytes"
	"errors"
	"testing"

	"ttd/reader"
	"ttd/tracefile"
)

// encodeSegment is a segment as the bytes of an AccessSummary record,
// to compare two segments exactly.
func encodeSegment(sg *Segment) []byte {
	s := tracefile.AccessSummary{Start: sg.Start, End: sg.End, Pages: sg.Pages}
	for _, r := range sg.Resets {
		s.Unmapped = append(s.Unmapped, tracefile.PageRange{Lo: r.Lo, Hi: r.Hi})
	}
	return tracefile.AppendAccessSummary(nil, &s)
}

// writesIn lists, by a straight re-simulation in the memory of process
// pid, the positions of the instructions that wrote [addr, addr+n).
func writesIn(t *testing.T, path string, pid int, addr, n uint64) []uint64 {
	t.Helper()
	tr, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if err := tr.SetFocus(pid); err != nil {
		t.Fatal(err)
	}
	r, err := tr.NewReplay(0)
	if err != nil {
		t.Fatal(err)
	}
	var out []uint64
	r.Access = func(a *reader.Access) {
		if a.Write && a.Addr < addr+n && a.Addr+uint64(a.Size) > addr && (len(out) == 0 || out[len(out)-1] != a.Position) {
			out = append(out, a.Position)
		}
	}
	if err := r.RunTo(^uint64(0)); err != reader.ErrEnd {
		t.Fatal(err)
	}
	return out
}

// TestProcessSummariesStored checks that a recording of a process tree
// stores the access summaries of every process: a session focused on a
// child answers from them without re-simulating anything on open, they
// equal those built on open for that focus segment by segment, and
// find-prev-write in each process walks back through exactly the writes
// a straight re-simulation of its memory sees.
func TestProcessSummariesStored(t *testing.T) {
	prog := buildC(t, "forkwrites")
	path := recordSummarized(t, prog, 20_000)
	tr, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	procs := tr.Processes()
	tr.Close()
	if len(procs) != 3 {
		t.Fatalf("%d processes, want 3", len(procs))
	}
	for i, p := range procs {
		s := openSessionWith(t, path, Options{Pid: p.Pid})
		if s.Index().Built {
			t.Fatalf("process %d: summaries rebuilt on open, want them read from the trace", p.Pid)
		}
		// The same focus with the summaries built by re-simulation.
		bt, err := reader.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := bt.SetFocus(p.Pid); err != nil {
			t.Fatal(err)
		}
		built, err := BuildSummaries(bt, 0, nil)
		bt.Close()
		if err != nil {
			t.Fatal(err)
		}
		segs := s.Index().Segments
		if len(built) != len(segs) {
			t.Fatalf("process %d: %d stored segments, %d built", p.Pid, len(segs), len(built))
		}
		for k := range built {
			b := segmentOf(&built[k])
			if !bytes.Equal(encodeSegment(&b), encodeSegment(&segs[k])) {
				t.Fatalf("process %d (%+v): segment %d [%d, %d) stored differs from built:\n%+v\n%+v", p.Pid, p, k, b.Start, b.End, b, segs[k])
			}
		}
		// find-prev-write of shared, all the way back, against the
		// straight scan.
		addr := symbol(t, s, "shared")
		want := writesIn(t, path, p.Pid, addr, 8)
		var got []uint64
		for from := s.End(); ; {
			f, err := s.FindPrevWrite(addr, 8, from)
			if errors.Is(err, ErrNotFound) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append([]uint64{f.Position}, got...)
			from = f.Position
		}
		if len(want) < 20 || len(got) != len(want) {
			t.Fatalf("process %d: %d writes found, straight scan %d", p.Pid, len(got), len(want))
		}
		for j := range got {
			if got[j] != want[j] {
				t.Fatalf("process %d: write %d at %d, straight scan %d", p.Pid, j, got[j], want[j])
			}
		}
		// child_only: the first child's own write; the second child
		// was forked from the parent, which never wrote it.
		f, err := s.FindPrevWrite(symbol(t, s, "child_only"), 8, s.End())
		switch i {
		case 1:
			if err != nil || len(f.After.Data) == 0 || f.After.Data[0] != 7 {
				t.Errorf("process %d: find-prev-write child_only: %+v %v, want the write of 7", p.Pid, f, err)
			}
		default:
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("process %d: find-prev-write child_only: %+v %v, want not found", p.Pid, f, err)
			}
		}
	}
}
