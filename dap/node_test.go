package dap

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestNodeDebugClient runs editors/vscode/test/*.test.js: VS Code's own
// DAP test client (@vscode/debugadapter-testsupport's DebugClient) drives
// a freshly built `ttd dap` through the C and Go fixtures. make test runs
// `npm ci` in editors/vscode first. Without node or the npm packages the
// test skips loudly, except in CI, where it fails.
func TestNodeDebugClient(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPING the node DAP tests in -short mode")
	}
	ext, _ := filepath.Abs("../editors/vscode")
	missing := func(why string) {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s (CI must run the node DAP tests: make test runs npm ci)", why)
		}
		t.Skipf("SKIPPING the node DAP tests: %s (run make test, which runs npm ci in editors/vscode)", why)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed")
	}
	if _, err := os.Stat(filepath.Join(ext, "node_modules", "@vscode", "debugadapter-testsupport")); err != nil {
		missing("editors/vscode/node_modules is missing")
	}
	fix := buildFixtures(t)
	bin := filepath.Join(t.TempDir(), "ttd")
	build := exec.Command("go", "build", "-o", bin, "../cmd/ttd")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // as the Makefile builds it
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building ttd: %v\n%s", err, out)
	}
	src, _ := filepath.Abs("testdata")
	cmd := exec.Command(node, "--test", "--test-reporter=spec", "test/")
	cmd.Dir = ext
	cmd.Env = append(os.Environ(), "TTD_BIN="+bin, "TTD_FIXTURES="+fix, "TTD_SRC="+src)
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("node --test failed: %v", err)
	}
}
