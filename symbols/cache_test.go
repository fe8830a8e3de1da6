package symbols

import (
	"testing"
)

// TestImageCacheShares: tables loaded through one ImageCache share a
// module at the same path and load address (loaded once), and load it
// again at another address; a module that failed fails again.
func TestImageCacheShares(t *testing.T) {
	var c ImageCache
	a, err := c.Load([]Module{{Path: "/bin/sh", LoadAddr: 0x555555554000}})
	if err != nil {
		t.Skipf("no /bin/sh: %v", err)
	}
	b, _ := c.Load([]Module{{Path: "/bin/sh", LoadAddr: 0x555555554000}, {Path: "/bin/sh", LoadAddr: 0x7f0000000000}})
	if len(b.images) != 2 || a.images[0] != b.images[0] {
		t.Errorf("the same module at the same address was loaded twice")
	}
	if b.images[1] == b.images[0] || b.images[1].bias == b.images[0].bias {
		t.Errorf("the module at another address shares the first one's bias")
	}
	if a.lines() != b.lines() {
		t.Errorf("tables sharing modules do not share their line-table lock")
	}
	for i := 0; i < 2; i++ {
		if _, err := c.Load([]Module{{Path: "/nonexistent/ttd-module"}}); err == nil {
			t.Errorf("load %d of a missing file: no error", i)
		}
	}
}
