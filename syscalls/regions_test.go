package syscalls

import (
	"bytes"
	"testing"

	"ttd/internal/linux"
	"ttd/reader"
)

// TestWholeRegionsSaySo: the bytes of an anonymous mapping the program
// never stored to are zeros, and the export knows it from the Mmap
// record; a trace recorded before the recorder logged region changes
// as a diff (no header parameter regions = diff: a grown heap was
// unmapped and mapped whole) cannot tell new pages from old ones, so
// the export says so (Stats.WholeRegions) and leaves such bytes
// missing rather than exporting zeros.
func TestWholeRegionsSaySo(t *testing.T) {
	trace := record(t, buildC(t, "testdata/zeros.c"), t.TempDir())
	for _, old := range []bool{false, true} {
		tr, err := reader.Open(trace)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Header.Params["regions"] != "diff" {
			t.Fatalf("ttd record wrote no regions = diff parameter: %v", tr.Header.Params)
		}
		if old {
			delete(tr.Header.Params, "regions")
		}
		var l callLog
		st, err := Export(tr, Options{StrSize: -1}, &l)
		tr.Close()
		if err != nil {
			t.Fatal(err)
		}
		if st.WholeRegions != old {
			t.Errorf("old=%v: Stats.WholeRegions = %v", old, st.WholeRegions)
		}
		n := 0
		for _, c := range l.calls {
			if c.Nr != linux.SysWrite || int32(c.Raw[0]) != -1 {
				continue
			}
			n++
			b := c.Buffers[0]
			switch {
			case !old && (b.Missing != 0 || !bytes.Equal(b.Data, make([]byte, 8))):
				t.Errorf("new trace: %s: %+v, want 8 zeros known", c.Text, b)
			case old && b.Missing != 8:
				t.Errorf("old trace: %s: %d bytes missing, want 8 (not guessed as zeros)", c.Text, b.Missing)
			}
		}
		if n != 1 {
			t.Fatalf("%d write(-1) calls exported, want 1", n)
		}
	}
}
