package symbols

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The tests build small programs, stop them under gdb at the line marked
// BREAK, and save a core file there with gcore. gdb is the oracle: the
// backtrace, registers, breakpoint addresses and values it prints are
// compared with what this package computes from the core's registers and
// memory, without gdb.

// needTools skips (loudly) when a tool is missing, and fails under CI.
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is required under CI: %v", tool, err)
			}
			t.Skipf("SKIPPING: %s not installed (install it to run this test)", tool)
		}
	}
}

var (
	fixtureDir  string
	fixtureOnce sync.Once
	fixtureErr  error
)

func TestMain(m *testing.M) {
	// The tests' decompressed sections go to a directory of their own,
	// not the user's cache (seccache.go).
	cache, err := os.MkdirTemp("", "ttd-dwarf-cache-")
	if err == nil {
		sectionCacheDir = cache
	}
	code := m.Run()
	if fixtureDir != "" {
		os.RemoveAll(fixtureDir)
	}
	if cache != "" {
		os.RemoveAll(cache)
	}
	os.Exit(code)
}

// fixture is a program built and stopped under gdb, with gdb's answers.
type fixture struct {
	exe      string
	bias     uint64 // exe load bias as gdb ran it
	line     int    // the BREAK line
	call     int    // C: the CALL line
	gdb      map[string][]string
	core     *coreFile
	regs     Regs
	table    *Table
	breakpts map[string]uint64 // gdb's "break X" addresses, unrelocated
}

var (
	fixtures   = map[string]*fixture{}
	fixturesMu sync.Mutex
)

func breakLine(t *testing.T, src, marker string) int {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.HasSuffix(strings.TrimSpace(l), marker) {
			return i + 1
		}
	}
	t.Fatalf("no %q in %s", marker, src)
	return 0
}

func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// gdbRun runs gdb in batch mode with the commands and splits its output
// into sections announced by "echo @@name\n".
func gdbRun(t *testing.T, dir, exe string, cmds []string) map[string][]string {
	t.Helper()
	// -ex, not a script: a failing command (a frame that does not
	// exist) must not stop the rest.
	args := []string{"-batch", "-nx"}
	for _, c := range append([]string{"set pagination off", "set width 0", "set confirm off", "set print thread-events off"}, cmds...) {
		args = append(args, "-ex", c)
	}
	out := run(t, dir, "gdb", append(args, exe)...)
	sec := map[string][]string{}
	cur := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if i := strings.Index(l, "@@"); i >= 0 {
			cur = l[i+2:]
			continue
		}
		sec[cur] = append(sec[cur], l)
	}
	return sec
}

// stopAt builds nothing: it stops exe at file:line under gdb, asks the
// given questions, writes a core and loads it.
func stopAt(t *testing.T, dir, exe, src string, line int, frames, printFrame int, prints []string, breaks []string) *fixture {
	f := &fixture{exe: exe, line: line, breakpts: map[string]uint64{}}
	var cmds []string
	for _, b := range breaks {
		cmds = append(cmds, "echo @@break "+b+"\\n", "break "+b)
	}
	cmds = append(cmds, "delete", "break "+filepath.Base(src)+":"+strconv.Itoa(line), "run",
		"echo @@bt\\n", "bt")
	for i := 0; i < frames; i++ {
		cmds = append(cmds, "frame "+strconv.Itoa(i), fmt.Sprintf("echo @@args %d\\n", i), "info args",
			fmt.Sprintf("echo @@locals %d\\n", i), "info locals")
		for _, r := range []string{"pc", "sp", "rbp", "rbx", "r12", "r13", "r14", "r15"} {
			cmds = append(cmds, fmt.Sprintf("echo @@reg %d %s\\n", i, r), "p/x $"+r)
		}
	}
	cmds = append(cmds, "frame "+strconv.Itoa(printFrame))
	for _, p := range prints {
		cmds = append(cmds, "echo @@print "+p+"\\n", "print "+p)
	}
	cmds = append(cmds, "echo @@info proc\\n", "info proc mappings", "gcore "+filepath.Join(dir, filepath.Base(exe)+".core"), "kill")
	f.gdb = gdbRun(t, dir, exe, cmds)
	re := regexp.MustCompile(`Breakpoint \d+ at (0x[0-9a-f]+)`)
	for _, b := range breaks {
		for _, l := range f.gdb["break "+b] {
			if m := re.FindStringSubmatch(l); m != nil {
				f.breakpts[b], _ = strconv.ParseUint(m[1], 0, 64)
				break
			}
		}
	}
	core, err := readCore(filepath.Join(dir, filepath.Base(exe)+".core"))
	if err != nil {
		t.Fatalf("core: %v\n%s", err, strings.Join(f.gdb["bt"], "\n"))
	}
	f.core = core
	pc := f.reg(t, 0, "pc")
	regs, ok := core.thread(pc)
	if !ok {
		t.Fatalf("no thread at pc %#x in the core", pc)
	}
	f.regs = regs
	var mods []Module
	for _, m := range core.modules() {
		if m.Path == exe {
			f.bias = m.LoadAddr
			mods = append([]Module{m}, mods...)
		} else {
			mods = append(mods, m)
		}
	}
	tab, err := Load(mods)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	f.table = tab
	return f
}

// reg returns a register gdb printed for a frame.
func (f *fixture) reg(t *testing.T, frame int, name string) uint64 {
	t.Helper()
	v, ok := f.regOK(frame, name)
	if !ok {
		t.Fatalf("gdb printed no $%s for frame %d: %q", name, frame, f.gdb[fmt.Sprintf("reg %d %s", frame, name)])
	}
	return v
}

func (f *fixture) regOK(frame int, name string) (uint64, bool) {
	for _, l := range f.gdb[fmt.Sprintf("reg %d %s", frame, name)] {
		if _, v, ok := strings.Cut(l, " = "); ok && strings.HasPrefix(v, "0x") {
			n, err := strconv.ParseUint(v, 0, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// gdbVars parses "name = value" lines of a section.
func (f *fixture) gdbVars(sec string) map[string]string {
	out := map[string]string{}
	for _, l := range f.gdb[sec] {
		name, v, ok := strings.Cut(l, " = ")
		if !ok || strings.ContainsAny(name, " #") {
			continue
		}
		if _, dup := out[name]; !dup {
			out[name] = v
		}
	}
	return out
}

// gdbPrint returns the value gdb printed for an expression, without the
// "$1 = " and any "(type) " prefix.
func (f *fixture) gdbPrint(expr string) string {
	for _, l := range f.gdb["print "+expr] {
		if strings.HasPrefix(l, "$") {
			_, v, _ := strings.Cut(l, " = ")
			if strings.HasPrefix(v, "(") {
				if i := strings.Index(v, ") "); i > 0 {
					v = v[i+2:]
				}
			}
			return v
		}
	}
	return ""
}

// gdbFrame is one line of gdb's backtrace.
type gdbFrame struct {
	fn, file string
	line     int
}

var btRE = regexp.MustCompile(`^#(\d+)\s+(?:0x[0-9a-f]+ in )?(\S+) \(.*\)(?: at (\S+):(\d+))?`)

func (f *fixture) gdbBacktrace() []gdbFrame {
	var out []gdbFrame
	for _, l := range f.gdb["bt"] {
		m := btRE.FindStringSubmatch(l)
		if m == nil || m[1] != strconv.Itoa(len(out)) {
			continue
		}
		n, _ := strconv.Atoi(m[4])
		out = append(out, gdbFrame{m[2], m[3], n})
	}
	return out
}

func buildC(t *testing.T, dir, opt string) string {
	src, _ := filepath.Abs("testdata")
	lib := filepath.Join(dir, "libclib"+opt+".so")
	run(t, dir, "gcc", "-g", opt, "-shared", "-fPIC", "-o", lib, filepath.Join(src, "clib.c"))
	exe := filepath.Join(dir, "cfix"+opt)
	run(t, dir, "gcc", "-g", opt, "-o", exe, filepath.Join(src, "cfix.c"), lib, "-Wl,-rpath,"+dir)
	return exe
}

// cPrints are the expressions gdb prints in frame 1 (leaf) of the C
// fixture; goPrints in frame 0 of the Go one.
var (
	cPrints = []string{"g_counter", "g_msg", "g_origin", "g_table", "g_table[2]", "*n", "n->pos.x",
		"n->next->name", "n->vals[3]", "&g_counter", "*(int*)&g_counter", "$rsp", "n->col", "n->flag",
		"g_origin.y", "arr", "arr[1]", "&arr[1]", "*ip", "pt", "str", "ld", "f", "c", "local", "inner"}
	goPrints = []string{"main.Global", "n", "f", "b"}
)

// goExe builds the Go fixture (without stopping it) once.
func goExe(t *testing.T) string {
	t.Helper()
	fixturesMu.Lock()
	defer fixturesMu.Unlock()
	return goExeLocked(t)
}

var goExePath string

func goExeLocked(t *testing.T) string {
	t.Helper()
	if goExePath != "" {
		return goExePath
	}
	needTools(t, "go")
	fixtureOnce.Do(func() { fixtureDir, fixtureErr = os.MkdirTemp("", "symbols-test-") })
	if fixtureErr != nil {
		t.Fatal(fixtureErr)
	}
	exe := filepath.Join(fixtureDir, "gofix")
	src, _ := filepath.Abs("testdata/gofix")
	run(t, src, "go", "build", "-gcflags=all=-N -l", "-o", exe, ".")
	goExePath = exe
	return exe
}

// getFixture builds and stops a fixture once per test binary.
func getFixture(t *testing.T, name string) *fixture {
	t.Helper()
	fixturesMu.Lock()
	defer fixturesMu.Unlock()
	if f := fixtures[name]; f != nil {
		return f
	}
	fixtureOnce.Do(func() { fixtureDir, fixtureErr = os.MkdirTemp("", "symbols-test-") })
	if fixtureErr != nil {
		t.Fatal(fixtureErr)
	}
	var f *fixture
	switch name {
	case "c-O0", "c-O2":
		needTools(t, "gcc", "gdb")
		opt := strings.TrimPrefix(name, "c")
		exe := buildC(t, fixtureDir, opt)
		line := breakLine(t, "testdata/cfix.c", "/* BREAK */")
		call := breakLine(t, "testdata/cfix.c", "/* CALL */")
		f = stopAt(t, fixtureDir, exe, "cfix.c", line, 5, 1, cPrints,
			[]string{"leaf", "callback", "main", "cfix.c:" + strconv.Itoa(line), "cfix.c:" + strconv.Itoa(call)})
		f.call = call
	case "go":
		needTools(t, "gdb")
		exe := goExeLocked(t)
		line := breakLine(t, "testdata/gofix/main.go", "// BREAK")
		f = stopAt(t, fixtureDir, exe, "main.go", line, 2, 0, goPrints,
			[]string{"main.work", "main.main", "main.go:" + strconv.Itoa(line)})
	default:
		t.Fatalf("no fixture %s", name)
	}
	fixtures[name] = f
	return f
}
