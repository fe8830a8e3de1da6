package fleet

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"ttd/probe"
)

// Probe scripts read recordings through probe.OpenTarget, which wants a
// file (a script that reads memory also builds the recording's index
// next to it). A recording named by a URL of a Beam filesystem (gs://,
// s3://, memfs://...) is copied once per process into a local
// temporary file, through Beam's filesystem abstraction, and opened
// there; its target keeps the URL as its name, which is what the
// workers are told to open.

// OpenTarget opens a recording for a probe script: a path as
// probe.OpenTarget does, or a URL of a Beam filesystem through a local
// copy (Localize).
func OpenTarget(ctx context.Context, name string, withIndex bool, progress func(done, total int)) (t *probe.Target, close func(), symErr, err error) {
	path, err := Localize(ctx, name)
	if err != nil {
		return nil, nil, nil, traceErr(name, err)
	}
	t, close, symErr, err = probe.OpenTarget(path, withIndex, progress)
	if err != nil {
		return nil, nil, nil, traceErr(name, err)
	}
	t.Name = name
	return t, close, symErr, nil
}

// copies holds the local copies of recordings named by URLs, for the
// life of the process (Cleanup removes them).
var copies = struct {
	sync.Mutex
	dir   string
	files map[string]*localCopy
}{files: map[string]*localCopy{}}

type localCopy struct {
	once sync.Once
	path string
	err  error
}

// Localize returns a local path for name: name itself unless it is a
// URL, else a copy of the file made once per process.
func Localize(ctx context.Context, name string) (string, error) {
	if !hasScheme(name) {
		return name, nil
	}
	copies.Lock()
	if copies.dir == "" {
		d, err := os.MkdirTemp("", "ttd-fleet-copies-")
		if err != nil {
			copies.Unlock()
			return "", err
		}
		copies.dir = d
	}
	c := copies.files[name]
	if c == nil {
		c = &localCopy{path: filepath.Join(copies.dir, fmt.Sprintf("%d.ttd", len(copies.files)))}
		copies.files[name] = c
	}
	copies.Unlock()
	c.once.Do(func() { c.err = download(ctx, name, c.path) })
	return c.path, c.err
}

func download(ctx context.Context, url, path string) error {
	fs, err := filesystem.New(ctx, url)
	if err != nil {
		return err
	}
	defer fs.Close()
	rc, err := fs.OpenRead(ctx, url)
	if err != nil {
		return err
	}
	defer rc.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, rc); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

// Cleanup removes the local copies Localize made.
func Cleanup() {
	copies.Lock()
	defer copies.Unlock()
	if copies.dir != "" {
		os.RemoveAll(copies.dir)
	}
	copies.dir = ""
	copies.files = map[string]*localCopy{}
}

// removeTmp removes a file this program made for the workers' results
// (a URL's, where the filesystem can remove).
func removeTmp(ctx context.Context, path string) {
	if !hasScheme(path) {
		os.Remove(path)
		return
	}
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return
	}
	defer fs.Close()
	if r, ok := fs.(filesystem.Remover); ok {
		r.Remove(ctx, path)
	}
}
