package syscalls

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestStraceEveryday compares the whole strace -f output of everyday
// commands on a small tree (files, a subdirectory, a symlink), startup
// calls aside, and sysinfo (its numbers are the machine's of the
// moment): ls -l, sort, tar cf and cp -r (reflink ioctl,
// copy_file_range, getxattr, statfs, fadvise64, sched_getaffinity) and
// stat -f (statfs).
func TestStraceEveryday(t *testing.T) {
	setup := func(dir string) {
		os.MkdirAll(filepath.Join(dir, "tree", "sub"), 0o755)
		os.WriteFile(filepath.Join(dir, "tree", "f1"), []byte("hello\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "tree", "sub", "f2"), []byte("world\n"), 0o600)
		os.Symlink("f1", filepath.Join(dir, "tree", "link"))
		os.WriteFile(filepath.Join(dir, "in.txt"), []byte("pear\napple\nfig\n"), 0o644)
	}
	skip := maps.Clone(startup)
	skip["sysinfo"] = true
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"ls", []string{"-l", "--time-style=+", "tree"}},
		{"sort", []string{"in.txt"}},
		{"tar", []string{"cf", "out.tar", "tree"}},
		// cp -r reads a directory in inode order, and a new directory's
		// inode (ext4's Orlov allocator) falls anywhere: copy the
		// subdirectory, whose one file's order cannot differ.
		{"cp", []string{"-r", "tree/sub", "copy"}},
		// statfs's struct (its free counts vary between the runs).
		{"stat", []string{"-f", "-c", "%T %b %s %l", "."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prog, err := exec.LookPath(tc.name)
			if err != nil {
				skipOutsideCI(t, "%s: %v", tc.name, err)
			}
			a, b := filepath.Join(t.TempDir(), "run"), filepath.Join(t.TempDir(), "run")
			os.Mkdir(a, 0o755)
			os.Mkdir(b, 0o755)
			setup(a)
			setup(b)
			native := straceNative(t, prog, a, "32", tc.args...)
			got := exportText(t, record(t, prog, b, tc.args...), 32)
			compareLines(t, normalise(native, "", "", a, skip), normalise(got, "", "", b, skip))
		})
	}
}
