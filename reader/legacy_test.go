package reader

import (
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
