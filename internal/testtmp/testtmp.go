// Package testtmp gives a test binary one temporary directory for what
// its tests build, removed when they end.
package testtmp

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Main makes a temporary directory named after prefix, stores its path
// in *dir, points TTD_DWARF_CACHE and TTD_CODE_CACHE into it, runs the tests, removes the directory and exits with the
// tests' status. Call it from TestMain.
func Main(m *testing.M, prefix string, dir *string) {
	d, err := os.MkdirTemp("", prefix)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*dir = d
	// The DWARF section cache (symbols/seccache.go) goes here too, not
	// into the user's cache directory.
	if os.Getenv("TTD_DWARF_CACHE") == "" {
		os.Setenv("TTD_DWARF_CACHE", filepath.Join(d, "dwarf"))
	}
	// So does the cache of decoded code (x86/codefile.go): the programs
	// the tests run fill it and use it.
	if os.Getenv("TTD_CODE_CACHE") == "" {
		os.Setenv("TTD_CODE_CACHE", filepath.Join(d, "code"))
	}
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}
