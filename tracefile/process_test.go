package tracefile_test

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"ttd/tracefile"
)

// TestProcessRoundTrip writes the Process records of a small tree, with
// other records and chunk cuts between them, and reads them back, with
// Reader.Processes and folded by ProcessTree.
func TestProcessRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tree.ttd")
	w, err := tracefile.Create(path, tracefile.Header{ProgramPath: "/bin/sh", Args: []string{"sh", "-c", "ls | wc"}},
		tracefile.Options{ChunkSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	recs := []tracefile.Process{
		{Event: tracefile.ProcessStarted, Pid: 100, Ppid: 7, Path: "/bin/sh", Argv: []string{"sh", "-c", "ls | wc"}},
		{Event: tracefile.ProcessStarted, Pid: 101, Ppid: 100, Tid: 100, Position: 5000, Flags: 0x4111},
		{Event: tracefile.ProcessStarted, Pid: 102, Ppid: 100, Tid: 100, Position: 6000, Flags: 0x11},
		{Event: tracefile.ProcessExeced, Pid: 101, Tid: 101, Position: 7000, Path: "/bin/ls", Argv: []string{"ls"}, Envc: 36},
		{Event: tracefile.ProcessExeced, Pid: 102, Tid: 102, Position: 8000, Path: "/usr/bin/wc", Argv: []string{"wc", ""}},
		{Event: tracefile.ProcessExited, Pid: 101, Tid: 101, Position: 9000,
			Exit: tracefile.Exit{Kind: tracefile.ExitExited, Code: 0, Position: 9000}},
		{Event: tracefile.ProcessExited, Pid: 102, Tid: 102, Position: 9500,
			Exit: tracefile.Exit{Kind: tracefile.ExitKilled, Signo: 13, Position: 9500}},
	}
	for i := range recs {
		w.KeyFrame(tracefile.KeyFrameSyscall, 100, uint64(i+1), recs[i].Position)
		w.Process(&recs[i])
		if i == 2 {
			// A checkpoint past ChunkSize begins a chunk without
			// Process records, the next record another one.
			w.CodeBytes(0x1000, make([]byte, 5000))
			w.Checkpoint(&tracefile.Checkpoint{Position: 6500, Seq: 3, CurrentTid: 100,
				Threads: []tracefile.ThreadState{{Tid: 100, Regs: []byte("r")}}})
			w.CodeBytes(0x2000, make([]byte, 5000))
			w.Checkpoint(&tracefile.Checkpoint{Position: 6600, Seq: 3, CurrentTid: 100,
				Threads: []tracefile.ThreadState{{Tid: 100, Regs: []byte("r")}}})
		}
	}
	w.Exit(&tracefile.Exit{Kind: tracefile.ExitExited, Code: 0, Position: 10000})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := tracefile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.Processes()
	if err != nil {
		t.Fatal(err)
	}
	flagged := 0
	for i := range r.Chunks() {
		if r.Chunks()[i].HoldsProcesses() {
			flagged++
		}
	}
	if flagged < 2 || flagged == len(r.Chunks()) {
		t.Errorf("%d of %d chunks flagged as holding processes; want the two with some", flagged, len(r.Chunks()))
	}
	if !reflect.DeepEqual(got, recs) {
		t.Fatalf("read back\n%+v\nwant\n%+v", got, recs)
	}
	tree := tracefile.ProcessTree(got)
	if len(tree) != 3 {
		t.Fatalf("tree of %d processes, want 3: %+v", len(tree), tree)
	}
	if p := tree[0]; p.Pid != 100 || p.Ppid != 7 || p.Exited || p.Start != 0 {
		t.Errorf("first process %+v", p)
	}
	if p := tree[1]; p.Pid != 101 || p.Ppid != 100 || !p.Exited || p.End != 9000 || p.Execs != 1 ||
		!reflect.DeepEqual(p.Argv, []string{"ls"}) || p.Start != 5000 {
		t.Errorf("second process %+v", p)
	}
	if p := tree[2]; p.Exit.Kind != tracefile.ExitKilled || p.Exit.Signo != 13 || p.End != 9500 {
		t.Errorf("third process %+v", p)
	}
}

// TestProcessCorrupt checks that a damaged Process record is a
// FormatError naming its place, not a panic.
// TestProcessExecedEnvc: an exec's record of minor version 4 carries the
// count of its environment (plus one); one of an older version ends at
// Argv and decodes with the count unknown (0).
func TestProcessExecedEnvc(t *testing.T) {
	old := []byte{2, 101, 0, 101, 0x58, 0, 2, 'l', 's', 1, 2, 'l', 's'}
	p, _, err := tracefile.DecodeProcess(old)
	if err != nil || p.Envc != 0 || p.Path != "ls" || len(p.Argv) != 1 {
		t.Fatalf("older exec record: %+v, %v", p, err)
	}
	p, _, err = tracefile.DecodeProcess(append(old, 3))
	if err != nil || p.Envc != 3 {
		t.Fatalf("exec record with Envc 3: %+v, %v", p, err)
	}
}

func TestProcessCorrupt(t *testing.T) {
	good := []byte{1, 100, 7, 0, 0, 0, 0, 0}
	if _, _, err := tracefile.DecodeProcess(good); err != nil {
		t.Fatalf("good record: %v", err)
	}
	for _, b := range [][]byte{{}, {9}, {1, 100}, {1, 100, 7, 0, 0, 0, 50}, {3, 1, 1, 1, 0, 0, 0, 0}} {
		if _, _, err := tracefile.DecodeProcess(b); err == nil {
			t.Errorf("DecodeProcess(%v) accepted a bad record", b)
		}
	}
	// A bad record in a trace.
	path := filepath.Join(t.TempDir(), "bad.ttd")
	w, err := tracefile.Create(path, tracefile.Header{ProgramPath: "x"}, tracefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Process(&tracefile.Process{Event: tracefile.ProcessStarted, Pid: 1, Argv: []string{"x"}})
	w.Append(&tracefile.Record{Kind: tracefile.KindUnknown, Opaque: tracefile.Opaque{Tag: 0x20, Bytes: []byte{2, 1}}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := tracefile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.Processes()
	var fe *tracefile.FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("Processes of a bad record: %v, want a *FormatError", err)
	}
}

// TestProcessStateRoundTrip writes ProcessState records after a
// checkpoint and reads them back through the record iterator; a body
// cut short or with bytes after its last field is refused with the
// offset of the field.
func TestProcessStateRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ps.ttd")
	w, err := tracefile.Create(path, tracefile.Header{ProgramPath: "/bin/sh"}, tracefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []tracefile.ProcessState{{Pid: 100, Ppid: 7, Tids: []int{100, 103}}, {Pid: 101, Ppid: 100, SharesWith: 100, Tids: []int{101}}}
	w.Checkpoint(&tracefile.Checkpoint{Position: 0, Seq: 1, CurrentTid: 100})
	for i := range want {
		w.ProcessState(&want[i])
	}
	w.Exit(&tracefile.Exit{Kind: tracefile.ExitExited})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := tracefile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Chunks()[0].HoldsProcesses() {
		t.Error("the chunk is not flagged as holding process records")
	}
	it := r.Records(0)
	var got []tracefile.ProcessState
	for {
		rec, err := it.Next()
		if err != nil {
			break
		}
		if rec.IsProcessState() {
			s, _, err := tracefile.DecodeProcessState(rec.Opaque.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, s)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read %+v, want %+v", got, want)
	}
	for _, c := range []struct {
		body []byte
		off  int
	}{
		{[]byte{100, 7}, 2},            // SharesWith missing
		{[]byte{100, 7, 0, 2, 100}, 5}, // one tid of two
		{[]byte{100, 7, 0, 0, 9}, 4},   // a byte too many
	} {
		if _, off, err := tracefile.DecodeProcessState(c.body); err == nil || off != c.off {
			t.Errorf("DecodeProcessState(%v): offset %d, %v; want an error at %d", c.body, off, err, c.off)
		}
	}
}
