package diskcache

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// names lists dir's files.
func names(dir string) string {
	var n []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		n = append(n, e.Name())
	}
	return strings.Join(n, " ")
}

// oldFiles writes 100-byte files in dir, each a minute newer than the
// one before it.
func oldFiles(t *testing.T, dir string, files ...string) {
	t.Helper()
	now := time.Now()
	for i, name := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, make([]byte, 100), 0o600); err != nil {
			t.Fatal(err)
		}
		mt := now.Add(time.Duration(i-10) * time.Minute)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTrim keeps the directory under its limit by removing the oldest
// files, and leaves another run's temporary file and the kept file alone.
func TestTrim(t *testing.T) {
	dir := t.TempDir()
	oldFiles(t, dir, "a", "b", "c", "d", ".tmp-1")
	Trim(dir, 400, "")
	if got := names(dir); got != ".tmp-1 a b c d" {
		t.Errorf("at the limit: left %q, want every file", got)
	}
	Trim(dir, 250, filepath.Join(dir, "a"))
	if got := names(dir); got != ".tmp-1 a d" {
		t.Errorf("left %q, want the kept one, the newest and the temporary file", got)
	}
}

// TestWrite writes through a renamed temporary file, trims the rest of
// the directory but not the new file, and leaves nothing on an error.
func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sub")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	oldFiles(t, dir, "a", "b")
	p := filepath.Join(dir, "new")
	err := Write(p, 250, func(w io.Writer) error {
		_, err := io.WriteString(w, strings.Repeat("x", 150))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); len(b) != 150 {
		t.Errorf("wrote %d bytes, want 150", len(b))
	}
	if got := names(dir); got != "b new" {
		t.Errorf("left %q, want b and the new file", got)
	}
	bad := errors.New("bad")
	if err := Write(filepath.Join(dir, "x"), 1<<20, func(w io.Writer) error { return bad }); err != bad {
		t.Errorf("error %v, want %v", err, bad)
	}
	if got := names(dir); got != "b new" {
		t.Errorf("after a failed write: left %q", got)
	}
}

func TestDir(t *testing.T) {
	t.Setenv("TTD_X_CACHE", "off")
	if d := Dir("TTD_X_CACHE", "x"); d != "" {
		t.Errorf("off: %q", d)
	}
	t.Setenv("TTD_X_CACHE", "/some/where")
	if d := Dir("TTD_X_CACHE", "x"); d != "/some/where" {
		t.Errorf("set: %q", d)
	}
	t.Setenv("TTD_X_CACHE", "")
	t.Setenv("XDG_CACHE_HOME", "/cache")
	if d := Dir("TTD_X_CACHE", "x"); d != "/cache/ttd/x" {
		t.Errorf("default: %q", d)
	}
}
