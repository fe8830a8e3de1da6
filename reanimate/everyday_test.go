package reanimate

import (
	"os"
	"path/filepath"
	"testing"
)

// everydaySetup is the tree the everyday commands work on: files, a
// subdirectory, a symlink, a file to sort.
func everydaySetup(dir string) {
	os.MkdirAll(filepath.Join(dir, "tree", "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "tree", "f1"), []byte("hello\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "tree", "sub", "f2"), []byte("world\n"), 0o600)
	os.Symlink("f1", filepath.Join(dir, "tree", "link"))
	os.WriteFile(filepath.Join(dir, "in.txt"), []byte("pear\napple\nfig\n"), 0o644)
}

// TestReanimateEveryday: everyday commands run natively, recorded and
// reanimated with --base (a copy of the tree before the run, copied
// into the root whole: seedBase); the trees must be identical and the
// replay verified without divergence. cp copies with copy_file_range,
// bash's pipeline forks two processes, and the commands list and stat
// directories (/etc, the libraries') that reanimate materialises only
// in part.
func TestReanimateEveryday(t *testing.T) {
	for _, tc := range []struct {
		name string
		prog string
		args []string
	}{
		{"cp", "cp", []string{"-r", "tree", "copy"}},
		{"tar", "tar", []string{"cf", "out.tar", "tree"}},
		{"sort", "sort", []string{"-o", "sorted.txt", "in.txt"}},
		{"bash", "bash", []string{"-c", "cat in.txt | wc -l > count.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			threeWays(t, everydaySetup, true, tool(t, tc.prog), tc.args...)
		})
	}
}
