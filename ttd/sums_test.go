package ttd

import (
	"bytes"
	"os"
	"testing"

	"ttd/recorder"
	"ttd/tracefile"
)

// TestSummaryFile: a trace that logs no reads gets its access summaries
// built on its first open and kept in TRACE.sums, which the next open
// reads (not built, its bytes counted); they equal those a trace that
// logs reads stores, segment for segment, and find the same write. A
// sidecar cut short, made for another trace, missing a summary or with
// an interval one instruction off is not used: the summaries are built
// again, the file rewritten, and the answer stays the same.
func TestSummaryFile(t *testing.T) {
	prog := buildC(t, "globals")
	ref := openSession(t, recordSummarized(t, prog, 20_000), 0)
	want, err := ref.FindPrevWrite(symbol(t, ref, "counter"), 4, ref.End())
	if err != nil {
		t.Fatal(err)
	}
	path := recordWith(t, prog, recorder.Options{CheckpointEvery: 20_000, Replayable: true})
	sums := tracefile.SumsPath(path)
	check := func(what string, built bool) {
		t.Helper()
		s := openSession(t, path, 0)
		if ix := s.Index(); ix.Built != built || (!built && s.SummaryBytes() == 0) {
			t.Fatalf("%s: built %v (want %v), %d bytes read", what, ix.Built, built, s.SummaryBytes())
		}
		if len(s.Index().Segments) != len(ref.Index().Segments) {
			t.Fatalf("%s: %d segments, %d in the trace that logs reads", what, len(s.Index().Segments), len(ref.Index().Segments))
		}
		for k, a := range s.Index().Segments {
			b := ref.Index().Segments[k]
			if a.Start != b.Start || a.End != b.End || len(a.Pages) != len(b.Pages) {
				t.Fatalf("%s: segment %d: [%d,%d) %d pages, want [%d,%d) %d pages", what, k, a.Start, a.End, len(a.Pages), b.Start, b.End, len(b.Pages))
			}
		}
		got, err := s.FindPrevWrite(symbol(t, s, "counter"), 4, s.End())
		if err != nil || got.Position != want.Position || !bytes.Equal(got.Before.Data, want.Before.Data) {
			t.Fatalf("%s: %+v %v, want position %d before %x", what, got, err, want.Position, want.Before.Data)
		}
		if _, err := os.Stat(sums); err != nil {
			t.Fatalf("%s: no summary file: %v", what, err)
		}
	}
	// The summaries the sidecar held, for the damage below.
	check("first open", true)
	good, err := os.ReadFile(sums)
	if err != nil {
		t.Fatal(err)
	}
	check("second open", false)
	tr, err := tracefile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	id, err := tr.Identity()
	tr.Close()
	if err != nil {
		t.Fatal(err)
	}
	stored, err := tracefile.DecodeSums(good, id)
	if err != nil {
		t.Fatal(err)
	}
	dropped := append([]tracefile.AccessSummary(nil), stored[:len(stored)-1]...)
	late := append([]tracefile.AccessSummary(nil), stored...)
	late[1].End++
	for _, c := range []struct {
		what string
		file []byte
	}{
		{"cut short", good[:len(good)-9]},
		{"another trace's", tracefile.EncodeSums([tracefile.IdentityLen]byte{1}, stored)},
		{"a summary dropped", tracefile.EncodeSums(id, dropped)},
		{"an interval one instruction long", tracefile.EncodeSums(id, late)},
	} {
		if err := os.WriteFile(sums, c.file, 0o644); err != nil {
			t.Fatal(err)
		}
		check(c.what, true)
		if b, _ := os.ReadFile(sums); !bytes.Equal(b, good) {
			t.Errorf("%s: the summary file was not made again", c.what)
		}
		check(c.what+", made again", false)
	}
}

// TestLazyIndex: with Options.LazyIndex a trace that logs no reads opens
// and travels without its summaries; the first search builds them (and
// TRACE.sums) and finds what an eager session finds.
func TestLazyIndex(t *testing.T) {
	prog := buildC(t, "globals")
	path := recordWith(t, prog, recorder.Options{CheckpointEvery: 20_000, Replayable: true})
	eager := openSession(t, path, 0)
	want, err := eager.FindPrevWrite(symbol(t, eager, "counter"), 4, eager.End())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(tracefile.SumsPath(path)); err != nil {
		t.Fatal(err)
	}
	s := openSessionWith(t, path, Options{LazyIndex: true})
	if _, err := s.Seek(s.End() / 2); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tracefile.SumsPath(path)); err == nil || s.ix != nil {
		t.Fatalf("opening and seeking loaded the index (%v)", err)
	}
	got, err := s.FindPrevWrite(symbol(t, s, "counter"), 4, s.End())
	if err != nil || got.Position != want.Position || !bytes.Equal(got.Before.Data, want.Before.Data) {
		t.Fatalf("lazy: %+v %v, want position %d before %x", got, err, want.Position, want.Before.Data)
	}
	if _, err := os.Stat(tracefile.SumsPath(path)); err != nil || !s.Index().Built {
		t.Fatalf("the search did not build the summaries: %v", err)
	}
}
