package dap

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"
)

// TestThinLayer: the DAP server is a protocol layer over ttd.Target: it
// imports none of the packages under the debugger backend (the trace
// format, re-simulation, the CPU).
func TestThinLayer(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	for _, f := range files {
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			switch p {
			case "ttd/reader", "ttd/tracefile", "ttd/x86", "ttd/symbols":
				t.Errorf("%s imports %s: dap must go through ttd.Target", f, p)
			}
		}
	}
}
