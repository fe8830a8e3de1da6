package x86

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestDispatchLoopIsNotBig guards a performance cliff: once runInsts
// grows past about 5000 IR nodes, Go's inliner treats it as a big
// function and stops inlining handlers into it even when the PGO profile
// says they are hot, and the interpreter gets 10-20% slower. Adding
// direct handlers or fused pairs (x86/gen) can cross the line.
func TestDispatchLoopIsNotBig(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the package")
	}
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	pgo, err := filepath.Abs("../cmd/ttd/default.pgo")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(gobin, "build", "-pgo="+pgo, "-gcflags=ttd/x86=-d=pgodebug=1", "-o", "/dev/null", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "runInsts") {
		t.Fatalf("no PGO decisions about runInsts in the compiler's output: the test tests nothing\n%.2000s", out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "big function ttd/x86.(*CPU).runInsts") {
			t.Fatalf("runInsts is a big function for the inliner:\n%s", line)
		}
	}
}
