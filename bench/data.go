package bench

import (
	"bytes"
	"sort"
	"strings"
)

// TextData returns n bytes of deterministic, text-like data (words drawn
// from a skewed distribution), so gzip has realistic work. The speed
// comparison and the time-travel benchmarks share it.
func TextData(n int) []byte {
	words := strings.Fields("the of and to in is that for it as with was on be by this are from at or an which " +
		"have not but had his they you were their one all we can her has there been if more when will would who so " +
		"no time debugger trace record replay instruction memory register thread signal checkpoint position")
	sort.Strings(words)
	var b bytes.Buffer
	x := uint64(0x9e3779b97f4a7c15)
	for b.Len() < n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		w := words[(x>>8)%uint64(len(words))]
		if x&3 == 0 {
			w = words[(x>>20)%8]
		}
		b.WriteString(w)
		if x%11 == 0 {
			b.WriteString(".\n")
		} else {
			b.WriteByte(' ')
		}
	}
	return b.Bytes()[:n]
}
