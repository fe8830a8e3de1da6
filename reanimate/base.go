package reanimate

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// seedBase copies the whole of Options.Base, the copy of the recorded
// working directory as it was before the run, into the re-rooted
// working directory before the replay: files (contents and modes),
// directories and symlinks, including those the program never touched,
// so that the reanimated tree is the original one with the program's
// changes, as Re-Animator replays against a copy of the original file
// system. Entries already under the root are left alone.
func (p *replayer) seedBase(cwd string) error {
	if p.opts.Base == "" {
		return nil
	}
	n := 0
	err := filepath.WalkDir(p.opts.Base, func(src string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(p.opts.Base, src)
		dst := strings.TrimRight(cwd, "/") + "/" + filepath.ToSlash(rel)
		if rel == "." {
			dst = cwd
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		perm := uint32(info.Mode().Perm())
		switch {
		case d.IsDir():
			if err := p.root.mkdirAll(dst, 0o755); err != nil {
				return err
			}
			if fd, err := p.root.open(dst, unix.O_RDONLY|unix.O_DIRECTORY, 0); err == nil {
				unix.Fchmod(fd, perm)
				unix.Close(fd)
			}
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(src)
			if err != nil {
				return err
			}
			dfd, name, err := p.root.parent(dst)
			if err != nil {
				return err
			}
			defer unix.Close(dfd)
			if err := unix.Symlinkat(target, dfd, name); err != nil && err != unix.EEXIST {
				return err
			}
		case d.Type().IsRegular():
			b, err := os.ReadFile(src)
			if err != nil {
				return err
			}
			fd, err := p.root.open(dst, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, perm)
			if err == unix.EEXIST {
				return nil
			}
			if err != nil {
				return err
			}
			defer unix.Close(fd)
			unix.Fchmod(fd, perm)
			if _, err := unix.Write(fd, b); err != nil {
				return err
			}
		default:
			return nil // devices, sockets, fifos: not copied
		}
		n++
		return nil
	})
	if err != nil {
		return fmt.Errorf("reanimate: copying the base %s under the root: %w", p.opts.Base, err)
	}
	fmt.Fprintf(p.opts.Log, "reanimate: %s: %d files and links of the base %s copied in\n", cwd, n, p.opts.Base)
	return nil
}
