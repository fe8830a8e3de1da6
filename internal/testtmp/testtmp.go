// Package testtmp gives a test binary one temporary directory for what
// its tests build, removed when they end.
package testtmp

import (
	"fmt"
	"os"
	"testing"
)

// Main makes a temporary directory named after prefix, stores its path
// in *dir, runs the tests, removes the directory and exits with the
// tests' status. Call it from TestMain.
func Main(m *testing.M, prefix string, dir *string) {
	d, err := os.MkdirTemp("", prefix)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*dir = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}
