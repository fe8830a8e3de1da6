package dap

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-dap"
)

// TestCxxValues: libstdc++ containers and smart pointers in the
// variables view and the debug console, as gdb's printers show them.
func TestCxxValues(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("g++ not installed")
		}
		t.Skip("SKIPPED LOUDLY: g++ not installed (make deps installs it)")
	}
	src, _ := filepath.Abs("../ttd/testdata/cxxstl.cpp") // one copy for ttd, dap and gdbremote
	prog := filepath.Join(t.TempDir(), "cxxstl")
	if b, err := exec.Command("g++", "-g", "-O0", "-std=c++17", "-o", prog, src).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, b)
	}
	c := startServer(t, Config{})
	stop := launchFixture(t, c, prog, map[string]any{"stopOnEntry": true}, map[string][]int{src: {markLine(t, src, "print")}})
	stop = stepAndWait(t, c, "continue", stop.Body.ThreadId, nil)
	if stop.Body.Reason != "breakpoint" {
		t.Fatalf("stop %q, want breakpoint", stop.Body.Reason)
	}
	fr := top(t, c, stop.Body.ThreadId)
	vars := locals(t, c, fr[0].Id)
	for name, want := range map[string]string{
		"v": "std::vector of length 3, capacity 3 = {1, 2, 3}",
		"m": `std::map with 3 elements = {["apple"] = 1, ["banana"] = 2, ["cherry"] = 3}`,
		"s": `"hello, recording"`,
		"o": "std::optional<int> = {[contained value] = 5}",
	} {
		if got := vars[name].Value; got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	// w's 100,000 elements expand (the first thousand).
	w := vars["w"]
	if !strings.HasPrefix(w.Value, "std::vector of length 100000, capacity 100000 = {0, 2, 4") || w.VariablesReference == 0 {
		t.Fatalf("w = %q (reference %d)", w.Value, w.VariablesReference)
	}
	c.request("variables", map[string]any{"variablesReference": w.VariablesReference})
	kids := expect[*dap.VariablesResponse](c).Body.Variables
	if len(kids) != 1000 || kids[500].Name != "[500]" || kids[500].Value != "1000" {
		t.Errorf("w's children: %d", len(kids))
	}
	// The pointee of a smart pointer.
	c.request("variables", map[string]any{"variablesReference": vars["up"].VariablesReference})
	kids = expect[*dap.VariablesResponse](c).Body.Variables
	if len(kids) != 1 || kids[0].Value != "{x = 3, y = 4}" {
		t.Errorf("up's children: %+v", kids)
	}
	// The console: indexing and size().
	for expr, want := range map[string]string{"w[50000]": "100000", "w.size()": "100000", "m.size()": "3", "d[100]": "99"} {
		c.request("evaluate", map[string]any{"expression": expr, "context": "repl", "frameId": fr[0].Id})
		r, ok := c.read().(*dap.EvaluateResponse)
		if !ok || !r.Success || r.Body.Result != want {
			t.Errorf("evaluate %s: %+v, want %s", expr, r, want)
		}
	}
}
