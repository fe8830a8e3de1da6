// Package diskcache is what ttd's on-disk caches share (the inflated
// DWARF sections of package symbols, the code files of package x86):
// where a cache lives, how a file is written into it so that a
// concurrent reader sees the old file or the new one whole, and how the
// directory is kept under its size limit. What a file holds, and how it
// is checked when read back, is each cache's own.
package diskcache

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Dir is the directory of the cache named sub: the value of the
// environment variable env when it is set, "" (no cache) when that is
// "off", else the user's cache directory's ttd/sub ("" if there is none).
func Dir(env, sub string) string {
	switch v := os.Getenv(env); v {
	case "off":
		return ""
	case "":
		d, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		return filepath.Join(d, "ttd", sub)
	default:
		return v
	}
}

// tmpPrefix starts the names of files being written (Write).
const tmpPrefix = ".tmp-"

// Write writes the file at path with write, through a temporary file in
// its directory renamed into place, then trims the directory to limit
// bytes (Trim), never removing path. On an error nothing is left behind.
func Write(path string, limit int64, write func(w io.Writer) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, tmpPrefix+"*")
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	Trim(dir, limit, path)
	return nil
}

// Trim removes the oldest regular files of dir, other than keep and the
// files other runs are writing, while they add up to more than limit
// bytes.
func Trim(dir string, limit int64, keep string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type file struct {
		path string
		size int64
		mod  int64
	}
	var files []file
	var total int64
	for _, e := range ents {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || strings.HasPrefix(e.Name(), tmpPrefix) {
			continue
		}
		files = append(files, file{filepath.Join(dir, e.Name()), info.Size(), info.ModTime().UnixNano()})
		total += info.Size()
	}
	if total <= limit {
		return
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mod < files[j].mod })
	for _, f := range files {
		if total <= limit {
			break
		}
		if f.path != keep && os.Remove(f.path) == nil {
			total -= f.size
		}
	}
}
