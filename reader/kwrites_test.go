package reader

import (
	"fmt"
	"strings"
	"testing"
)

// TestExecPieces: the watched bytes an exec replaces are reported once
// each, in address order, whatever the ranges' order and overlaps (two
// probes on the same bytes, one for reads and one for writes, gave the
// exec's read and write twice), and only inside the region.
func TestExecPieces(t *testing.T) {
	for _, c := range []struct {
		lo, hi uint64
		ws     []Range
		want   string
	}{
		{0x1000, 0x2000, []Range{{0x1010, 0x1014}}, "1010+4"},
		{0x1000, 0x2000, []Range{{0x1010, 0x1014}, {0x1010, 0x1014}}, "1010+4"},
		{0x1000, 0x2000, []Range{{0x1020, 0x1024}, {0x1010, 0x1014}}, "1010+4 1020+4"},
		{0x1000, 0x2000, []Range{{0x1010, 0x1020}, {0x1008, 0x1014}}, "1008+8 1010+4 1014+8 101c+4"},
		{0x1000, 0x2000, []Range{{0x1010, 0x1014}, {0x1010, 0x1013}, {0x1011, 0x1012}}, "1010+4"},
		{0x1000, 0x2000, []Range{{0x0ffc, 0x1004}, {0x1ffe, 0x2010}}, "1000+4 1ffe+2"},
		{0x1000, 0x2000, []Range{{0x2000, 0x2004}, {0x0ff0, 0x1000}}, ""},
		{0x1000, 0x2000, []Range{{0x1000, 0x1009}, {0x1009, 0x100a}}, "1000+8 1008+1 1009+1"},
		{0x1000, 0x2000, nil, ""},
	} {
		var got []string
		ExecPieces(c.lo, c.hi, c.ws, func(a uint64, n int) { got = append(got, fmt.Sprintf("%x+%d", a, n)) })
		if s := strings.Join(got, " "); s != c.want {
			t.Errorf("ExecPieces(%#x, %#x, %v) = %q, want %q", c.lo, c.hi, c.ws, s, c.want)
		}
	}
}
