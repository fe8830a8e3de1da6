package ttd

import (
	"testing"

	"ttd/reader"
	"ttd/x86"
)

// TestSummariesExact checks the access summaries of adjacent.c against a
// straight re-simulation: every byte a segment's instructions read or
// wrote is in its summary, and no other byte of the lines they touched
// (neighbours written in the same cache line do not count).
func TestSummariesExact(t *testing.T) {
	prog := buildC(t, "adjacent")
	path := recordSummarized(t, prog, 3000)
	ref := straight(t, path)
	s := openSession(t, path, 0)
	segs := s.Index().Segments
	type key struct {
		seg  int
		addr uint64
	}
	read, written := map[key]bool{}, map[key]bool{}
	for _, a := range ref.accesses {
		k := reader.CheckpointAt(s.Index().Checkpoints, a.Position)
		for i := 0; i < a.Size; i++ {
			if a.Write {
				written[key{k, a.Addr + uint64(i)}] = true
			} else {
				read[key{k, a.Addr + uint64(i)}] = true
			}
		}
	}
	checked, neighbours := 0, 0
	for k := range segs {
		sg := &segs[k]
		for _, p := range sg.Pages {
			for line := 0; line < 64; line++ {
				if (p.Read.Lines|p.Written.Lines)&(1<<line) == 0 {
					continue
				}
				for b := 0; b < 64; b++ {
					addr := p.PN<<x86.PageShift + uint64(line*64+b)
					kk := key{k, addr}
					if got := sg.MayAccess(addr, 1, false, true, false); got != written[kk] {
						t.Fatalf("segment %d: byte %#x written %v, summary says %v", k, addr, written[kk], got)
					}
					if got := sg.MayAccess(addr, 1, true, false, false); got != read[kk] {
						t.Fatalf("segment %d: byte %#x read %v, summary says %v", k, addr, read[kk], got)
					}
					checked++
					if !written[kk] && !read[kk] {
						neighbours++
					}
				}
			}
		}
	}
	if checked == 0 || neighbours == 0 {
		t.Fatalf("%d bytes checked, %d untouched neighbours: the test checks nothing", checked, neighbours)
	}
	// And the other way: every accessed byte is in its segment's summary.
	for kk := range written {
		if !segs[kk.seg].MayAccess(kk.addr, 1, false, true, false) {
			t.Fatalf("segment %d wrote %#x; its summary does not say so", kk.seg, kk.addr)
		}
	}
}
