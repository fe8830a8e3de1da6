package symbols

import (
	"errors"
	"sync"
)

// ImageCache shares loaded modules between the Tables of several
// programs: the programs a recorded process tree ran (a shell and the
// program it execs both map libc, usually at the same address). A module
// is loaded once per path and load address, and its DWARF still loads on
// first use, once for every Table that holds it. It is safe for
// concurrent use.
type ImageCache struct {
	mu     sync.Mutex
	images map[imageKey]*image
	errs   map[imageKey]error
	// lineMu serialises the line-table queries of every Table made
	// through the cache (their modules' line tables are shared).
	lineMu sync.Mutex
}

type imageKey struct {
	path, debug string
	loadAddr    uint64
	symbolsOnly bool
}

// Load is the package's Load, reusing the modules this cache loaded
// before (at the same path and load address; Data is assumed to be the
// same file's bytes).
func (c *ImageCache) Load(mods []Module) (*Table, error) {
	t := &Table{sharedLines: &c.lineMu}
	var errs []error
	for _, m := range mods {
		img, err := c.image(m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		t.images = append(t.images, img)
	}
	return t, errors.Join(errs...)
}

func (c *ImageCache) image(m Module) (*image, error) {
	k := imageKey{m.Path, m.DebugFile, m.LoadAddr, m.SymbolsOnly}
	c.mu.Lock()
	defer c.mu.Unlock()
	if img, ok := c.images[k]; ok {
		return img, nil
	}
	if err, ok := c.errs[k]; ok {
		return nil, err
	}
	one := &Table{}
	err := one.Add(m)
	if c.images == nil {
		c.images, c.errs = map[imageKey]*image{}, map[imageKey]error{}
	}
	if err != nil {
		c.errs[k] = err
		return nil, err
	}
	c.images[k] = one.images[0]
	return one.images[0], nil
}
