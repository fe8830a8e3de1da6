package symbols

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

func findVar(vs []*Variable, name string) *Variable {
	for _, v := range vs {
		if v.Name == name && !v.Shadowed {
			return v
		}
	}
	return nil
}

func childValues(v *Variable) map[string]string {
	out := map[string]string{}
	for _, c := range v.Children() {
		out[c.Name] = c.Value
	}
	return out
}

func TestGoBacktraceAndVariables(t *testing.T) {
	f := getFixture(t, "go")
	frames := checkBacktrace(t, f)
	args, locals, err := f.table.Scopes(&frames[0], f.core.mem)
	if err != nil {
		t.Fatal(err)
	}
	gdbArgs, gdbLocals := f.gdbVars("args 0"), f.gdbVars("locals 0")
	checkVars(t, "args", args, map[string]string{"n": gdbArgs["n"], "p": gdbArgs["p"]}, true)
	checkVars(t, "locals", locals, map[string]string{"f": gdbLocals["f"], "b": gdbLocals["b"]}, true)
	all := append(args, locals...)
	for name, want := range map[string]string{
		"name": `"gopher"`,
		"nums": "len: 4, cap: 4, [10, 20, 30, 40]",
		"arr":  "[-1, 0, 1]",
		"bs":   "len: 2, cap: 2, [104, 105]",
		"any":  "int(42)",
		"n":    "1",
	} {
		if v := findVar(all, name); v == nil || v.Value != want {
			t.Errorf("%s = %v, want %s", name, v, want)
		}
	}
	if v := findVar(all, "total"); v != nil {
		t.Errorf("total is declared on the stop line and should not be visible yet: %s", v.Value)
	}

	// Maps: a small one (one group) and a big one (a directory of tables).
	small := findVar(all, "small")
	if small == nil || !strings.HasPrefix(small.Value, "len: 3, [") {
		t.Fatalf("small = %v", small)
	}
	if got := childValues(small); fmt.Sprint(got) != `map[["one"]:1 ["three"]:3 ["two"]:2]` {
		t.Errorf("small's entries: %v", got)
	}
	big := findVar(all, "big")
	if big == nil || !strings.HasPrefix(big.Value, "len: 20") {
		t.Fatalf("big = %v", big)
	}
	bigKids := childValues(big)
	if len(bigKids) != 20 {
		t.Errorf("big has %d entries: %v", len(bigKids), bigKids)
	}
	for i := 0; i < 20; i++ {
		if v := bigKids[fmt.Sprintf("[%d]", i)]; v != fmt.Sprintf(`"v%d"`, i) {
			t.Errorf("big[%d] = %s", i, v)
		}
	}

	// Interfaces: dynamic type and value.
	sh := findVar(all, "sh")
	if sh == nil || !strings.HasPrefix(sh.Value, "*main.Rect(0x") {
		t.Fatalf("sh = %v", sh)
	}
	data := sh.Children()
	if len(data) != 1 {
		t.Fatalf("sh children: %v", data)
	}
	if got := childValues(data[0]); got["Name"] != `"box"` || got["Min"] != "{X: 1, Y: 2}" {
		t.Errorf("sh's *main.Rect fields: %v", got)
	}
	errv := findVar(all, "err")
	if errv == nil || !strings.HasPrefix(errv.Value, "*errors.errorString(0x") {
		t.Fatalf("err = %v", errv)
	}
	if got := childValues(errv.Children()[0]); got["s"] != `"boom"` {
		t.Errorf("err's fields: %v", got)
	}

	// Expressions.
	for expr, want := range map[string]string{
		"Global":      "12345",
		"main.Global": f.gdbPrint("main.Global"),
		"p.X":         "3",
		"*p":          "{X: 3, Y: 4}",
		"nums[2]":     "30",
		"name":        `"gopher"`,
		"arr[0]":      "-1",
	} {
		v, err := f.table.EvalExpr(expr, &frames[0], f.core.mem)
		if err != nil || v.Value != want {
			t.Errorf("EvalExpr(%q) = %v, %v; want %s", expr, v, err, want)
		}
	}
	if _, err := f.table.EvalExpr("nums[4]", &frames[0], f.core.mem); err == nil {
		t.Errorf("nums[4] out of range evaluated")
	}
	globals := f.table.Globals(&frames[0], f.core.mem)
	if g := findVar(globals, "main.Global"); g == nil || g.Value != "12345" {
		var names []string
		for _, g := range globals {
			names = append(names, g.Name)
		}
		sort.Strings(names)
		t.Errorf("Globals: no main.Global = 12345 in %v", names)
	}
}

func TestGoBreakpointsAndLines(t *testing.T) {
	f := getFixture(t, "go")
	for _, name := range []string{"main.work", "main.main"} {
		got, ok := f.table.FunctionBreakpoint(name)
		if want := f.breakpts[name]; !ok || got != want {
			t.Errorf("FunctionBreakpoint(%s) = %#x, gdb %#x", name, got, want)
		}
	}
	loc := fmt.Sprintf("main.go:%d", f.line)
	if pcs := f.table.LineToPCs("main.go", f.line); len(pcs) != 1 || pcs[0] != f.breakpts[loc] {
		t.Errorf("LineToPCs(%s) = %x, gdb %#x", loc, pcs, f.breakpts[loc])
	}
	if name, _, ok := f.table.PCToFunc(f.regs[RIP]); !ok || name != "main.work" {
		t.Errorf("PCToFunc = %s", name)
	}
	if file, ln, ok := f.table.PCToLine(f.regs[RIP]); !ok || !strings.HasSuffix(file, "gofix/main.go") || ln != f.line {
		t.Errorf("PCToLine = %s:%d", file, ln)
	}
}
