package symbols

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// goTable loads the Go fixture at its link address. The Go toolchain is
// the oracle for it ("go tool nm", "go tool addr2line"): no gdb needed.
func goTable(t *testing.T) (string, *Table) {
	t.Helper()
	exe := goExe(t)
	tab, err := Load([]Module{{Path: exe}})
	if err != nil {
		t.Fatal(err)
	}
	return exe, tab
}

// addr2line asks the Go toolchain for the function and file:line of pcs.
func addr2line(t *testing.T, exe string, pcs []uint64) [][2]string {
	t.Helper()
	var in strings.Builder
	for _, pc := range pcs {
		fmt.Fprintf(&in, "%#x\n", pc)
	}
	cmd := exec.Command("go", "tool", "addr2line", exe)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go tool addr2line: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var res [][2]string
	for i := 0; i+1 < len(lines); i += 2 {
		res = append(res, [2]string{lines[i], lines[i+1]})
	}
	return res
}

func TestGoToolOracle(t *testing.T) {
	exe, tab := goTable(t)
	out, err := exec.Command("go", "tool", "nm", "-size", "-sort", "address", exe).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	type sym struct {
		name string
		addr uint64
	}
	var funcs []sym
	for _, l := range strings.Split(string(out), "\n") {
		fs := strings.Fields(l)
		if len(fs) < 4 || fs[2] != "T" {
			continue
		}
		addr, err1 := strconv.ParseUint(fs[0], 16, 64)
		size, err2 := strconv.ParseUint(fs[1], 10, 64)
		if err1 == nil && err2 == nil && size > 16 {
			funcs = append(funcs, sym{strings.Join(fs[3:], " "), addr})
		}
	}
	if len(funcs) < 100 {
		t.Fatalf("go tool nm found %d functions", len(funcs))
	}
	var sample []sym
	for i, f := range funcs {
		if i%37 == 0 || f.name == "main.work" || f.name == "main.main" || f.name == "runtime.main" {
			sample = append(sample, f)
		}
	}
	var pcs []uint64
	for _, f := range sample {
		bp, ok := tab.FunctionBreakpoint(f.name)
		if !ok {
			t.Errorf("FunctionBreakpoint(%s) not found", f.name)
		}
		pcs = append(pcs, f.addr+1, bp)
	}
	want := addr2line(t, exe, pcs)
	for i, f := range sample {
		name, entry, ok := tab.PCToFunc(f.addr + 1)
		if !ok || name != want[2*i][0] || entry != f.addr {
			t.Errorf("PCToFunc(%s+1) = %s %#x %v, addr2line says %s", f.name, name, entry, ok, want[2*i][0])
		}
		if e, ok := tab.FunctionEntry(f.name); !ok || e != f.addr {
			t.Errorf("FunctionEntry(%s) = %#x %v, nm says %#x", f.name, e, ok, f.addr)
		}
		file, line, ok := tab.PCToLine(pcs[2*i+1])
		if got := fmt.Sprintf("%s:%d", file, line); !ok || got != want[2*i+1][1] {
			t.Errorf("PCToLine(%s breakpoint %#x) = %s, addr2line says %s", f.name, pcs[2*i+1], got, want[2*i+1][1])
		}
		if pcs[2*i+1] < f.addr {
			t.Errorf("FunctionBreakpoint(%s) = %#x is before the entry %#x", f.name, pcs[2*i+1], f.addr)
		}
	}
	// Back and forth: the breakpoint line of main.work maps to its address.
	bp, _ := tab.FunctionBreakpoint("main.work")
	file, line, _ := tab.PCToLine(bp)
	if got := tab.LineToPCs(file, line); len(got) != 1 || got[0] != bp {
		t.Errorf("LineToPCs(%s:%d) = %x, want [%x]", file, line, got, bp)
	}
	if got := tab.LineToPCs("gofix/main.go", line); len(got) != 1 || got[0] != bp {
		t.Errorf("LineToPCs by suffix = %x, want [%x]", got, bp)
	}
	if srcs := tab.Sources(); !strings.Contains(strings.Join(srcs, "\n"), "gofix/main.go") {
		t.Errorf("Sources lacks main.go (%d files)", len(srcs))
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("not an ELF file at all"), 0o644)
	exe, _ := goTable(t)
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []Module{
		{Path: filepath.Join(dir, "missing")},
		{Path: text},
		{Path: "truncated", Data: data[:300]},
		{Path: exe, LoadAddr: 0x7000000}, // an ET_EXEC cannot move
	} {
		_, err := Load([]Module{m})
		var le *LoadError
		if !errors.As(err, &le) || le.Path != m.Path || !strings.Contains(err.Error(), m.Path) {
			t.Errorf("Load(%s): %v", m.Path, err)
		}
	}
	// One bad module does not spoil the others.
	tab, err := Load([]Module{{Path: exe}, {Path: text}})
	if err == nil || len(tab.Modules()) != 1 {
		t.Errorf("partial Load: %v, %d modules", err, len(tab.Modules()))
	}
	if e, ok := tab.FunctionEntry("main.main"); !ok {
		t.Errorf("table without the bad module is unusable")
	} else if _, _, ok := tab.PCToFunc(e); !ok {
		t.Errorf("table without the bad module is unusable")
	}
}

// TestCorruptFiles feeds damaged copies of a real binary: Load and the
// queries may fail, but must not panic or hang.
func TestCorruptFiles(t *testing.T) {
	exe, tab0 := goTable(t)
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var targets []*elf.Section
	for _, s := range f.Sections {
		switch s.Name {
		case ".debug_info", ".debug_line", ".debug_frame", ".debug_loclists", ".debug_abbrev", ".symtab", ".eh_frame":
			if s.Type != elf.SHT_NOBITS && s.FileSize > 0 {
				targets = append(targets, s)
			}
		}
	}
	rng := rand.New(rand.NewSource(1))
	pc, _ := tab0.FunctionEntry("main.work")
	n := 3 * len(targets)
	if testing.Short() {
		n = len(targets)
	}
	loaded := 0
	for i := 0; i < n; i++ {
		bad := bytes.Clone(data)
		s := targets[i%len(targets)] // one section at a time, so the others still load
		for j := 0; j < 16<<(i/len(targets)); j++ {
			bad[s.Offset+uint64(rng.Int63n(int64(s.FileSize)))] = byte(rng.Intn(256))
		}
		tab, _ := Load([]Module{{Path: "corrupt", Data: bad}})
		if len(tab.Modules()) == 1 {
			loaded++
		}
		tab.PCToFunc(pc)
		tab.PCToLine(pc)
		tab.LineToPCs("main.go", 40)
		tab.FunctionBreakpoint("main.main")
		tab.Sources()
		var regs Regs
		regs[RIP], regs[RSP], regs[RBP] = pc+4, 0x1000, 0x1010
		frames := tab.Unwind(regs, func(addr uint64, b []byte) ([]bool, error) {
			for i := range b {
				b[i] = byte(addr) + byte(i)
			}
			return nil, nil
		}, 20)
		for i := range frames {
			args, locals, _ := tab.Scopes(&frames[i], nil)
			for _, v := range append(args, locals...) {
				v.Children()
			}
		}
		tab.EvalExpr("p.X", &frames[0], nil)
	}
	if loaded == 0 {
		t.Errorf("no damaged copy loaded: the test does not reach the DWARF readers")
	}
}

func TestRegistersAndParse(t *testing.T) {
	for name, want := range map[string]int{"rax": RAX, "$RSP": RSP, "pc": RIP, "r15": R15, "$rbp": RBP} {
		if i, ok := RegisterIndex(name); !ok || i != want {
			t.Errorf("RegisterIndex(%s) = %d %v", name, i, ok)
		}
	}
	if _, ok := RegisterIndex("xmm0"); ok {
		t.Errorf("xmm0 is not in Regs")
	}
	tab := &Table{}
	for s, want := range map[string]uint64{"0x10": 16, "42": 42, " 0X1f ": 31} {
		if got, err := tab.ParseAddr(s); err != nil || got != want {
			t.Errorf("ParseAddr(%q) = %d %v", s, got, err)
		}
	}
	if _, err := tab.ParseAddr("nosuch"); !errors.Is(err, ErrNoSymbol) {
		t.Errorf("ParseAddr(nosuch): %v", err)
	}
}

// TestUnknownMemory hides part of the stack: the values there become
// "<unknown>", the unwinder stops where it needs them, and nothing shown
// differs from the full view.
func TestUnknownMemory(t *testing.T) {
	f := getFixture(t, "c-O0")
	full := f.table.Unwind(f.regs, f.core.mem, 64)
	lo, hi := full[1].CFA-0x40, full[1].CFA // the top of leaf's frame, its return address included
	mem := func(addr uint64, b []byte) ([]bool, error) {
		known, err := f.core.mem(addr, b)
		if err != nil {
			return nil, err
		}
		for i := range b {
			if a := addr + uint64(i); a >= lo && a < hi {
				if known == nil {
					known = make([]bool, len(b))
					for j := range known {
						known[j] = true
					}
				}
				known[i] = false
			}
		}
		return known, nil
	}
	part := f.table.Unwind(f.regs, mem, 64)
	if len(part) >= len(full) || len(part) < 2 {
		t.Fatalf("with the return address unknown: %d frames, all known: %d", len(part), len(full))
	}
	for i := range part {
		if part[i].PC != full[i].PC || part[i].Func != full[i].Func {
			t.Errorf("frame %d differs: %s vs %s", i, part[i].String(), full[i].String())
		}
	}
	_, fullLocals, _ := f.table.Scopes(&full[1], f.core.mem)
	_, partLocals, _ := f.table.Scopes(&part[1], mem)
	unknown := 0
	for i, v := range partLocals {
		w := fullLocals[i]
		inside := v.Addr < hi && v.Addr+8 > lo
		switch {
		case v.Value == w.Value:
		case inside && strings.Contains(v.Value, "<unknown>"):
			unknown++
		default:
			t.Errorf("%s = %s with memory hidden, %s with all of it", v.Name, v.Value, w.Value)
		}
	}
	if unknown == 0 {
		t.Errorf("no local became <unknown>")
	}
	// Unmapped memory is an error, shown as such.
	v, err := f.table.EvalExpr("*(int*)0x10", &full[1], f.core.mem)
	if err != nil || !strings.HasPrefix(v.Value, "<unreadable") {
		t.Errorf("*(int*)0x10 = %v, %v", v, err)
	}
}

// copyWith writes a copy of path changed by objcopy.
func copyWith(t *testing.T, path string, args ...string) string {
	t.Helper()
	needTools(t, "objcopy")
	out := filepath.Join(t.TempDir(), filepath.Base(path))
	if b, err := exec.Command("objcopy", append(args, path, out)...).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v\n%s", err, b)
	}
	return out
}

// reload loads the fixture's modules with some replaced.
func reload(t *testing.T, f *fixture, repl map[string]Module) *Table {
	t.Helper()
	var mods []Module
	for _, m := range f.core.modules() {
		if r, ok := repl[m.Path]; ok {
			r.LoadAddr = m.LoadAddr
			m = r
		}
		mods = append(mods, m)
	}
	tab, err := Load(mods)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func samePCs(t *testing.T, what string, got, want []Frame, n int) {
	t.Helper()
	if len(got) < n {
		t.Fatalf("%s: %d frames, want at least %d", what, len(got), n)
	}
	for i := 0; i < n; i++ {
		if got[i].PC != want[i].PC || got[i].Func != want[i].Func || got[i].CFA != want[i].CFA {
			t.Errorf("%s: frame %d = %s cfa %#x, want %s cfa %#x", what, i, got[i].String(), got[i].CFA, want[i].String(), want[i].CFA)
		}
	}
}

// TestEmbeddedModule loads the executable from bytes under the path it
// had when recorded.
func TestEmbeddedModule(t *testing.T) {
	f := getFixture(t, "c-O0")
	data, err := os.ReadFile(f.exe)
	if err != nil {
		t.Fatal(err)
	}
	tab := reload(t, f, map[string]Module{f.exe: {Path: f.exe, Data: data}})
	samePCs(t, "embedded", tab.Unwind(f.regs, f.core.mem, 64), f.table.Unwind(f.regs, f.core.mem, 64), 6)
}

// TestWithoutDWARF strips the debug information: names come from the
// symbol table, unwinding from .eh_frame, and Scopes says why it is empty.
func TestWithoutDWARF(t *testing.T) {
	f := getFixture(t, "c-O0")
	want := f.table.Unwind(f.regs, f.core.mem, 64)
	stripped := copyWith(t, f.exe, "--strip-debug")
	tab := reload(t, f, map[string]Module{f.exe: {Path: stripped}})
	got := tab.Unwind(f.regs, f.core.mem, 64)
	// mix was inlined: without DWARF its frame is leaf's.
	if got[0].Func != "leaf" || got[0].File != "" {
		t.Errorf("frame 0 without DWARF: %s", got[0].String())
	}
	samePCs(t, "stripped", got[1:], want[2:], 5)
	if _, _, err := tab.Scopes(&got[0], f.core.mem); !errors.Is(err, ErrNoDebugInfo) {
		t.Errorf("Scopes without DWARF: %v", err)
	}
	if bp, ok := tab.FunctionBreakpoint("leaf"); !ok {
		t.Errorf("no breakpoint on leaf without DWARF")
	} else if e, _ := tab.FunctionEntry("leaf"); bp != e {
		t.Errorf("breakpoint without DWARF should be the entry: %#x vs %#x", bp, e)
	}
}

// TestFramePointerFallback removes the CFI of the program and its library:
// the frame-pointer chain gives the same frames.
func TestFramePointerFallback(t *testing.T) {
	f := getFixture(t, "c-O0")
	want := f.table.Unwind(f.regs, f.core.mem, 64)
	var lib string
	for _, m := range f.core.modules() {
		if strings.Contains(m.Path, "libclib") {
			lib = m.Path
		}
	}
	args := []string{"--remove-section", ".eh_frame", "--remove-section", ".eh_frame_hdr", "--remove-section", ".debug_frame"}
	tab := reload(t, f, map[string]Module{f.exe: {Path: copyWith(t, f.exe, args...)}, lib: {Path: copyWith(t, lib, args...)}})
	samePCs(t, "frame pointers", tab.Unwind(f.regs, f.core.mem, 64), want, 5)
}

// TestConcurrentQueries runs queries from several goroutines (a DAP
// server does); run with -race.
func TestConcurrentQueries(t *testing.T) {
	_, tab := goTable(t)
	bp, _ := tab.FunctionBreakpoint("main.work")
	file, line, _ := tab.PCToLine(bp)
	// answers is what the queries return, as text, from one goroutine;
	// every goroutine must get the same while the others query too (the
	// table builds its indexes lazily).
	answers := func() []string {
		var out []string
		for i := 0; i < 20; i++ {
			name, entry, ok := tab.PCToFunc(bp + uint64(i))
			f, l, lok := tab.PCToLine(bp + uint64(i))
			pcs := tab.LineToPCs(file, line+i%3)
			mainBP, mok := tab.FunctionBreakpoint("main.main")
			s := fmt.Sprint(name, entry, ok, f, l, lok, pcs, mainBP, mok)
			var regs Regs
			regs[RIP], regs[RSP] = bp, 0x1000
			frames := tab.Unwind(regs, func(addr uint64, b []byte) ([]bool, error) { return make([]bool, len(b)), nil }, 4)
			s += fmt.Sprint(len(frames))
			if len(frames) > 0 {
				args, locals, err := tab.Scopes(&frames[0], nil)
				s += fmt.Sprint(len(args), len(locals), err)
				for _, v := range append(args, locals...) {
					s += fmt.Sprint(v.Name, len(v.Children()))
				}
				v, err := tab.EvalExpr("main.Global", &frames[0], nil)
				if err == nil {
					s += v.Name
				}
				s += fmt.Sprint(err)
			}
			out = append(out, s)
		}
		return out
	}
	want := answers()
	if want[0] == "" || !strings.Contains(want[0], "main.work") {
		t.Fatalf("the first answer does not name main.work: %q", want[0])
	}
	_, tab = goTable(t) // a fresh table: its lazy indexes are built concurrently
	errs := make(chan string, 4)
	for g := 0; g < 4; g++ {
		go func() {
			got := answers()
			for i := range got {
				if got[i] != want[i] {
					errs <- fmt.Sprintf("query %d: %q, want %q", i, got[i], want[i])
					return
				}
			}
			errs <- ""
		}()
	}
	for g := 0; g < 4; g++ {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}

// TestUnwindLastCFA checks that the last frame Unwind returns has its CFA
// (the frame base of -O0 code) even when max cuts the stack there, and
// that variables in memory carry their size.
func TestUnwindLastCFA(t *testing.T) {
	f := getFixture(t, "c-O0")
	full := f.table.Unwind(f.regs, f.core.mem, 64)
	for n := 1; n <= len(full); n++ {
		part := f.table.Unwind(f.regs, f.core.mem, n)
		if len(part) != n {
			t.Fatalf("Unwind(max %d) returned %d frames", n, len(part))
		}
		for i := range part {
			if part[i].CFA != full[i].CFA {
				t.Errorf("Unwind(max %d): frame %d (%s) CFA %#x, want %#x", n, i, part[i].Func, part[i].CFA, full[i].CFA)
			}
		}
	}
	for i := range full {
		args, locals, err := f.table.Scopes(&full[i], f.core.mem)
		if err != nil {
			continue
		}
		for _, v := range append(args, locals...) {
			if v.Addr != 0 && v.Size <= 0 {
				t.Errorf("frame %d: %s (%s) at %#x has no size", i, v.Name, v.Type, v.Addr)
			}
			if v.Type == "int" && v.Size != 4 {
				t.Errorf("frame %d: %s (int) has size %d", i, v.Name, v.Size)
			}
		}
	}
}

// TestSymbolsOnlyLoadsNoDWARF: a table loaded for a script that needs no
// DWARF lists its functions (a probe's binding walks every image) without
// loading the DWARF the files have.
func TestSymbolsOnlyLoadsNoDWARF(t *testing.T) {
	f := getFixture(t, "c-O0")
	tab := symbolsOnly(t, f)
	found := false
	for _, s := range tab.FuncSymbols() {
		found = found || s.Name == "leaf"
	}
	if !found {
		t.Errorf("FuncSymbols without DWARF has no leaf")
	}
	for _, m := range tab.Modules() {
		if m.HasDWARF {
			t.Errorf("%s: DWARF loaded for a symbols-only table", m.Path)
		}
	}
	if ms := f.table.Modules(); !ms[0].HasDWARF {
		t.Fatalf("the fixture %s has no DWARF: the test tests nothing", ms[0].Path)
	}
}

// symbolsOnly loads fixture f's modules as a script that needs no DWARF
// does (Module.SymbolsOnly).
func symbolsOnly(t *testing.T, f *fixture) *Table {
	t.Helper()
	var mods []Module
	for _, m := range f.core.modules() {
		m.SymbolsOnly = true
		mods = append(mods, m)
	}
	tab, err := Load(mods)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}
