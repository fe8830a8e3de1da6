package symbols

import (
	"errors"
	"sync"
	"sync/atomic"
)

// ImageCache shares loaded modules between the Tables of several
// programs: the programs a recorded process tree ran (a shell and the
// program it execs both map libc, usually at the same address). A module
// is loaded once per path and load address, and its DWARF still loads on
// first use, once for every Table that holds it. It is safe for
// concurrent use: modules that are not cached load at the same time,
// each once.
type ImageCache struct {
	mu      sync.Mutex
	entries map[imageKey]*cachedImage
	// lineMu serialises the line-table queries of every Table made
	// through the cache (their modules' line tables are shared).
	lineMu sync.Mutex
}

type imageKey struct {
	path, debug string
	loadAddr    uint64
	symbolsOnly bool
}

// cachedImage is a module loaded, or being loaded (until ready closes),
// through the cache.
type cachedImage struct {
	ready chan struct{}
	img   *image
	err   error
}

// Load is the package's Load, reusing the modules this cache loaded
// before (at the same path and load address; Data is assumed to be the
// same file's bytes). The others load concurrently, as Load's do.
func (c *ImageCache) Load(mods []Module) (*Table, error) {
	t := &Table{sharedLines: &c.lineMu}
	imgs := make([]*image, len(mods))
	lerrs := make([]error, len(mods))
	var wg sync.WaitGroup
	for i := range mods {
		if i == len(mods)-1 {
			imgs[i], lerrs[i] = c.image(mods[i]) // (no goroutine for the last)
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			imgs[i], lerrs[i] = c.image(mods[i])
		}()
	}
	wg.Wait()
	var errs []error
	for i, img := range imgs {
		if lerrs[i] != nil {
			errs = append(errs, lerrs[i])
			continue
		}
		t.images = append(t.images, img)
	}
	return t, errors.Join(errs...)
}

// image is module m, loaded on first request; later requests wait for
// that load.
func (c *ImageCache) image(m Module) (*image, error) {
	k := imageKey{m.Path, m.DebugFile, m.LoadAddr, m.SymbolsOnly}
	c.mu.Lock()
	if e, ok := c.entries[k]; ok {
		c.mu.Unlock()
		<-e.ready
		return e.img, e.err
	}
	e := &cachedImage{ready: make(chan struct{})}
	if c.entries == nil {
		c.entries = map[imageKey]*cachedImage{}
	}
	c.entries[k] = e
	c.mu.Unlock()
	one := &Table{}
	cacheLoads.Add(1)
	if e.err = one.Add(m); e.err == nil {
		e.img = one.images[0]
	}
	close(e.ready)
	return e.img, e.err
}

// cacheLoads counts the modules every ImageCache loaded.
var cacheLoads atomic.Int64

// CacheLoads is the number of modules ImageCaches have loaded (or tried
// to) in this process: a test's way to see that a cache was reused.
func CacheLoads() int64 { return cacheLoads.Load() }

// Len is the number of modules the cache loaded or failed to load (a
// module at two addresses counts twice).
func (c *ImageCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
