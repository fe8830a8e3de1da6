package symbols

import (
	"strings"
	"sync"
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

// TestImageCacheConcurrentLoads: tables loaded at the same time through
// one cache, over overlapping module lists, get one image per path and
// address (each loaded once, the others waiting for it), in their
// lists' order, and a module that fails fails for each table.
func TestImageCacheConcurrentLoads(t *testing.T) {
	var c ImageCache
	if _, err := c.Load([]Module{{Path: "/bin/sh", LoadAddr: 0x1000000}}); err != nil {
		t.Skipf("no /bin/sh: %v", err)
	}
	var c2 ImageCache
	mods := []Module{
		{Path: "/bin/sh", LoadAddr: 0x555555554000},
		{Path: "/nonexistent/ttd-module"},
		{Path: "/bin/sh", LoadAddr: 0x7f0000000000},
		{Path: "/bin/sh", LoadAddr: 0x555555554000},
	}
	const n = 8
	tabs := make([]*Table, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tabs[i], errs[i] = c2.Load(mods[i%2:])
		}()
	}
	wg.Wait()
	var first, second *image // at 0x5555..., at 0x7f...
	for i, tb := range tabs {
		if errs[i] == nil || !strings.Contains(errs[i].Error(), "ttd-module") {
			t.Errorf("table %d: error %v, want the missing module's", i, errs[i])
		}
		want := 3 // sh, sh at another address, sh again
		if i%2 == 1 {
			want = 2
		}
		if len(tb.images) != want {
			t.Fatalf("table %d has %d images, want %d", i, len(tb.images), want)
		}
		imgs := tb.images
		if i%2 == 0 {
			if imgs[0] != imgs[2] {
				t.Errorf("table %d: the same module at the same address twice", i)
			}
			imgs = imgs[1:] // as the odd tables': at 0x7f..., at 0x5555...
		}
		if first == nil {
			first, second = imgs[1], imgs[0]
		}
		if imgs[1] != first || imgs[0] != second {
			t.Errorf("table %d does not share the other tables' images", i)
		}
	}
	if first == second || first.loadAddr != 0x555555554000 || second.loadAddr != 0x7f0000000000 {
		t.Errorf("images at %#x and %#x, want 0x555555554000 and 0x7f0000000000", first.loadAddr, second.loadAddr)
	}
	if len(c2.entries) != 3 {
		t.Errorf("the cache holds %d modules, want 3", len(c2.entries))
	}
}
