package reader

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"ttd/tracefile"
)

// writeTreeTrace writes a trace of a process tree whose records are
// recs, after the first process's start.
func writeTreeTrace(t *testing.T, recs ...tracefile.Record) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tree.ttd")
	hdr := tracefile.Header{ProgramPath: "/bin/x", Params: map[string]string{"processes": "tree"}}
	w, err := tracefile.Create(path, hdr, tracefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Process(&tracefile.Process{Event: tracefile.ProcessStarted, Pid: 100, Ppid: 1, Path: "/bin/x", Argv: []string{"x"}})
	w.ThreadStart(100, 0)
	w.Checkpoint(&tracefile.Checkpoint{Position: 0, Seq: 1, CurrentTid: 100})
	for i := range recs {
		w.Append(&recs[i])
	}
	w.Exit(&tracefile.Exit{Kind: tracefile.ExitExited})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCorruptProcessState: a ProcessState record cut short stops the
// replay with a format error naming the chunk and the payload offset.
func TestCorruptProcessState(t *testing.T) {
	// pid 100, ppid 1, then nothing: SharesWith and the tids are missing.
	path := writeTreeTrace(t, tracefile.Record{Kind: tracefile.KindUnknown, Opaque: tracefile.Opaque{Tag: 0x21, Bytes: []byte{100, 1}}})
	tr, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	r, err := tr.NewReplay(0)
	if err == nil {
		err = r.RunTo(^uint64(0))
	}
	var fe *tracefile.FormatError
	if !errors.As(err, &fe) || fe.Chunk != 0 || fe.InChunk <= 0 || !errors.Is(err, tracefile.ErrCorrupt) ||
		!strings.Contains(err.Error(), "process record") {
		t.Fatalf("replay of a ProcessState cut short: %v", err)
	}
}

// TestCorruptProcessRecord: a Process record with an unknown event
// makes Open fail with the offset of the event byte.
func TestCorruptProcessRecord(t *testing.T) {
	path := writeTreeTrace(t, tracefile.Record{Kind: tracefile.KindUnknown, Opaque: tracefile.Opaque{Tag: 0x20, Bytes: []byte{9, 101, 100}}})
	_, err := Open(path)
	var fe *tracefile.FormatError
	if !errors.As(err, &fe) || fe.InChunk <= 0 || !strings.Contains(err.Error(), "unknown event") {
		t.Fatalf("open with a bad Process record: %v", err)
	}
}

// TestProcessStartedByUnknownThread: a fork by a thread that does not
// exist is a divergence, not a panic.
func TestProcessStartedByUnknownThread(t *testing.T) {
	path := writeTreeTrace(t, tracefile.Record{Kind: tracefile.KindUnknown, Opaque: tracefile.Opaque{Tag: 0x20,
		Bytes: []byte{1, 101, 100, 77, 0, 0, 0, 0}}})
	tr, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	r, err := tr.NewReplay(0)
	if err == nil {
		err = r.RunTo(^uint64(0))
	}
	var de *DivergenceError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "thread 77") {
		t.Fatalf("fork by an unknown thread: %v", err)
	}
}
