package symbols

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// checkBacktrace compares Unwind with gdb's bt, frame by frame up to main
// (gdb stops there), and the registers gdb recovers for each frame.
func checkBacktrace(t *testing.T, f *fixture) []Frame {
	t.Helper()
	frames := f.table.Unwind(f.regs, f.core.mem, 64)
	want := f.gdbBacktrace()
	if len(want) == 0 {
		t.Fatalf("gdb printed no backtrace:\n%s", strings.Join(f.gdb["bt"], "\n"))
	}
	var got []string
	for i := range frames {
		got = append(got, frames[i].String())
	}
	t.Logf("backtrace:\n%s", strings.Join(got, "\n"))
	if len(frames) < len(want) {
		t.Fatalf("Unwind found %d frames, gdb %d:\n%s", len(frames), len(want), strings.Join(f.gdb["bt"], "\n"))
	}
	skipped := 0
	for i, w := range want {
		g := frames[i+skipped]
		if g.Inlined && g.Func != w.fn && i+skipped+1 < len(frames) && frames[i+skipped+1].Func == w.fn {
			// gdb hides an inlined frame when a breakpoint stops at its
			// first instruction; the caller then gets the inlined line.
			skipped++
			g = frames[i+skipped]
			g.File, g.Line = frames[i+skipped-1].File, frames[i+skipped-1].Line
		}
		if g.Func != w.fn || filepath.Base(g.File) != filepath.Base(w.file) || g.Line != w.line {
			t.Errorf("frame %d: got %s at %s:%d, gdb %s at %s:%d", i+skipped, g.Func, g.File, g.Line, w.fn, w.file, w.line)
		}
		if g.Inlined {
			continue // gdb's registers of an inlined frame are the caller's
		}
		for _, r := range []string{"pc", "sp", "rbp", "rbx", "r12", "r13", "r14", "r15"} {
			gv, ok := f.regOK(i, r)
			if !ok {
				continue
			}
			idx, _ := RegisterIndex(r)
			if v, known := g.Reg(idx); known && v != gv {
				t.Errorf("frame %d %s: got %#x, gdb %#x", i, r, v, gv)
			} else if !known && (r == "pc" || r == "sp") {
				t.Errorf("frame %d %s unknown, gdb %#x", i, r, gv)
			}
		}
	}
	// Line up our frames with gdb's numbering for the callers.
	return frames[skipped:]
}

// checkVars compares variables with gdb's "info args"/"info locals". With
// exact set, every value must match; otherwise ours may also be a marker
// ("<optimized out>", "<unknown>", "<unreadable…>") where gdb has a value,
// but never a different value.
func checkVars(t *testing.T, where string, got []*Variable, want map[string]string, exact bool) {
	t.Helper()
	byName := map[string]*Variable{}
	for _, v := range got {
		if !v.Shadowed {
			byName[v.Name] = v
		}
	}
	for name, w := range want {
		v := byName[name]
		if v == nil {
			if exact {
				t.Errorf("%s: no variable %s (gdb: %s)", where, name, w)
			}
			continue
		}
		if v.Value == w {
			continue
		}
		if !exact && (strings.HasPrefix(v.Value, "<") || strings.Contains(w, "<optimized out>")) {
			continue
		}
		t.Errorf("%s: %s = %s, gdb: %s", where, name, v.Value, w)
	}
}

func TestCBacktraceAndVariables(t *testing.T) {
	f := getFixture(t, "c-O0")
	frames := checkBacktrace(t, f)
	if !frames[0].Inlined || frames[0].Func != "mix" || frames[1].Inlined || frames[1].Func != "leaf" {
		t.Errorf("want mix inlined into leaf, got %s (inlined %v), %s", frames[0].Func, frames[0].Inlined, frames[1].Func)
	}
	for i := 0; i < 5; i++ {
		args, locals, err := f.table.Scopes(&frames[i], f.core.mem)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		checkVars(t, fmt.Sprintf("frame %d args", i), args, f.gdbVars(fmt.Sprintf("args %d", i)), true)
		checkVars(t, fmt.Sprintf("frame %d locals", i), locals, f.gdbVars(fmt.Sprintf("locals %d", i)), true)
	}
	// Shadowing: the inner "local" is shown first, the outer one marked.
	_, locals, _ := f.table.Scopes(&frames[1], f.core.mem)
	var shadowed int
	for _, v := range locals {
		if v.Name == "local" && v.Shadowed {
			shadowed++
			if v.Value != "9" {
				t.Errorf("outer local = %s, want 9", v.Value)
			}
		}
	}
	if shadowed != 1 {
		t.Errorf("want one shadowed 'local', got %d", shadowed)
	}
}

func TestCEvalExpr(t *testing.T) {
	f := getFixture(t, "c-O0")
	frames := f.table.Unwind(f.regs, f.core.mem, 8)
	for _, e := range cPrints {
		want := f.gdbPrint(e)
		v, err := f.table.EvalExpr(e, &frames[1], f.core.mem)
		if err != nil {
			t.Errorf("EvalExpr(%q): %v (gdb: %s)", e, err, want)
			continue
		}
		if v.Value != want {
			t.Errorf("EvalExpr(%q) = %s (%s), gdb: %s", e, v.Value, v.Type, want)
		}
	}
	for _, bad := range []string{"nosuch", "n->", "g_counter[", "*g_counter", "n.pos", "1 +", "(struct nosuch *)n"} {
		if _, err := f.table.EvalExpr(bad, &frames[1], f.core.mem); err == nil {
			t.Errorf("EvalExpr(%q) succeeded", bad)
		}
	}
}

func TestCBreakpointsAndLines(t *testing.T) {
	f := getFixture(t, "c-O0")
	for _, name := range []string{"leaf", "callback", "main"} {
		want, ok := f.breakpts[name]
		if !ok {
			t.Fatalf("gdb gave no address for break %s", name)
		}
		got, ok := f.table.FunctionBreakpoint(name)
		if !ok || got-f.bias != want {
			t.Errorf("FunctionBreakpoint(%s) = %#x, gdb %#x", name, got-f.bias, want)
		}
		if e, ok := f.table.FunctionEntry(name); !ok || e > got {
			t.Errorf("FunctionEntry(%s) = %#x, %v", name, e, ok)
		}
	}
	for _, loc := range []string{fmt.Sprintf("cfix.c:%d", f.line), fmt.Sprintf("cfix.c:%d", f.call)} {
		var ln int
		fmt.Sscanf(loc[strings.Index(loc, ":")+1:], "%d", &ln)
		pcs := f.table.LineToPCs("cfix.c", ln)
		if len(pcs) != 1 || pcs[0]-f.bias != f.breakpts[loc] {
			t.Errorf("LineToPCs(%s) = %x (bias %#x), gdb %#x", loc, pcs, f.bias, f.breakpts[loc])
		}
		if got := f.table.LineToPCs(filepath.Join(filepath.Dir(f.exe), "nowhere", "cfix.c"), ln); len(got) != 1 {
			t.Errorf("basename match of %s: %x", loc, got)
		}
	}
	pc := f.regs[RIP]
	if file, ln, ok := f.table.PCToLine(pc); !ok || filepath.Base(file) != "cfix.c" || ln != f.line {
		t.Errorf("PCToLine(%#x) = %s:%d %v, want cfix.c:%d", pc, file, ln, ok, f.line)
	}
	if name, entry, ok := f.table.PCToFunc(pc); !ok || name != "leaf" || entry > pc { // mix is inlined
		t.Errorf("PCToFunc(%#x) = %s %#x %v", pc, name, entry, ok)
	}
	// Functions of a library without DWARF come from its symbol tables.
	if addr, ok := f.table.FunctionEntry("printf"); !ok {
		t.Errorf("printf not found")
	} else if name, _, ok := f.table.PCToFunc(addr + 1); !ok || name != "printf" && !strings.Contains(name, "printf") {
		t.Errorf("PCToFunc(printf+1) = %s", name)
	}
	// A blank or comment line moves to the next line with code.
	pcs, ln := f.table.BreakpointLine("cfix.c", 1)
	if pcs != nil {
		t.Errorf("BreakpointLine(cfix.c:1) = %x line %d, want none", pcs, ln)
	}
	if addr, size, ok := f.table.LookupSymbol("g_table"); !ok || size != 40 {
		t.Errorf("LookupSymbol(g_table) = %#x %d %v", addr, size, ok)
	}
	if a, err := f.table.ParseAddr("g_table+8"); err != nil {
		t.Errorf("ParseAddr: %v", err)
	} else if b, _, _ := f.table.LookupSymbol("g_table"); a != b+8 {
		t.Errorf("ParseAddr(g_table+8) = %#x", a)
	}
	if _, err := f.table.ParseAddr("nosuch+1"); err == nil {
		t.Errorf("ParseAddr(nosuch+1) succeeded")
	}
}

// TestCOptimized checks the -O2 build: the backtrace (through inlined and
// frameless functions) matches gdb, and every value shown either matches
// gdb's or is an honest marker, never a different value.
func TestCOptimized(t *testing.T) {
	f := getFixture(t, "c-O2")
	frames := checkBacktrace(t, f)
	shown := 0
	for i := range f.gdbBacktrace() {
		args, locals, err := f.table.Scopes(&frames[i], f.core.mem)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		checkVars(t, fmt.Sprintf("frame %d args", i), args, f.gdbVars(fmt.Sprintf("args %d", i)), false)
		checkVars(t, fmt.Sprintf("frame %d locals", i), locals, f.gdbVars(fmt.Sprintf("locals %d", i)), false)
		for _, v := range append(args, locals...) {
			if !strings.HasPrefix(v.Value, "<") {
				shown++
			}
			t.Logf("frame %d: %s = %s", i, v.Name, v.Value)
		}
	}
	if shown == 0 {
		t.Errorf("no variable of the -O2 build could be read")
	}
	for _, name := range []string{"leaf", "callback", "main"} {
		got, ok := f.table.FunctionBreakpoint(name)
		if want := f.breakpts[name]; !ok || got-f.bias != want {
			t.Errorf("FunctionBreakpoint(%s) = %#x, gdb %#x", name, got-f.bias, want)
		}
	}
}
