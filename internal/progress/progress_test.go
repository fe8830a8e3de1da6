package progress

import (
	"bytes"
	"strings"
	"testing"
)

func TestBarDrawsCount(t *testing.T) {
	var buf bytes.Buffer
	b := NewTo(&buf, "calls", "segments", 4)
	b.Set(3, 4)
	b.Done()
	if !strings.Contains(buf.String(), "3/4") && !strings.Contains(buf.String(), "4/4") {
		t.Fatalf("bar output %q has no count", buf.String())
	}
}

func TestNilBarDoesNothing(t *testing.T) {
	var b *Bar
	b.Set(1, 2)
	b.Set64(1)
	b.Done()
	if b.Callback() != nil {
		t.Fatal("a nil bar gives a callback")
	}
}
