package reader

import (
	"strings"
	"testing"

	"ttd/x86"
)

// TestByteReadsTrace replays a trace recorded before logged reads carried
// whole words (no "reads": "words" parameter): musl's string_mem, 40
// million instructions, by the interpreter and with block translation,
// from the start and from its checkpoints.
func TestByteReadsTrace(t *testing.T) {
	tr, err := Open("testdata/string_mem-bytereads.ttd")
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if tr.byteWords {
		t.Fatal("the trace says its logged byte reads are words")
	}
	for _, jit := range []bool{false, true} {
		was, th := x86.SetJIT(jit, 0)
		r, err := tr.NewReplay(0)
		if err != nil {
			t.Fatal(err)
		}
		r.Verify = true
		if err := r.RunTo(^uint64(0)); err != ErrEnd {
			t.Fatalf("jit %v: %v", jit, err)
		}
		if r.Checkpoints < 2 || r.Position() != tr.End() {
			t.Fatalf("jit %v: %d checkpoints, at %d of %d", jit, r.Checkpoints, r.Position(), tr.End())
		}
		if _, err := tr.VerifySegments(1); err != nil {
			t.Fatalf("jit %v: %v", jit, err)
		}
		x86.SetJIT(was, th)
	}
}

// TestFirstProcessOnlyTrace replays a trace recorded before ttd
// re-simulated whole trees (format 1.1: the child of a fork ran
// unrecorded, its life in Process records): the first process
// re-simulates and verifies as it did, and asking for the child says
// why it cannot be shown.
func TestFirstProcessOnlyTrace(t *testing.T) {
	tr, err := Open("testdata/fork-first-only.ttd")
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	procs := tr.Processes()
	if tr.Tree() || len(procs) != 2 {
		t.Fatalf("tree %v, %d processes", tr.Tree(), len(procs))
	}
	r, err := tr.NewReplay(0)
	if err != nil {
		t.Fatal(err)
	}
	r.Verify = true
	var out []byte
	r.Output = func(fd int, b []byte) { out = append(out, b...) }
	if err := r.RunTo(^uint64(0)); err != ErrEnd {
		t.Fatal(err)
	}
	if string(out) != "parent 4\n" || r.Checkpoints < 3 || len(r.Processes()) != 1 {
		t.Errorf("output %q, %d checkpoints, %d processes re-simulated", out, r.Checkpoints, len(r.Processes()))
	}
	if err := tr.SetFocus(procs[1].Pid); err == nil || !strings.Contains(err.Error(), "first process only") {
		t.Errorf("SetFocus(child): %v", err)
	}
	if err := tr.SetFocus(procs[0].Pid); err != nil {
		t.Errorf("SetFocus(first): %v", err)
	}
}
