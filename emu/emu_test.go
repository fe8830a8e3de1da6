package emu

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"ttd/x86"
)

// The host is the oracle: each test program is built at test time, run
// natively and under the emulator, and the two runs must agree.

// toolchain is a way to build a test program.
type toolchain struct {
	name string
	cc   []string
}

var (
	muslStatic = toolchain{"musl-static", []string{"musl-gcc", "-static"}}
	glibcStat  = toolchain{"glibc-static", []string{"gcc", "-static"}}
	glibcDyn   = toolchain{"glibc-dynamic", []string{"gcc"}}
	glibcPIE   = toolchain{"glibc-static-pie", []string{"gcc", "-static-pie"}}
	noLibc     = toolchain{"nolibc", []string{"gcc", "-static", "-nostdlib", "-fno-stack-protector"}}
	noLibcPIE  = toolchain{"nolibc-pie", []string{"gcc", "-static-pie", "-nostdlib", "-fPIE", "-fno-stack-protector"}}

	libcToolchains = []toolchain{muslStatic, glibcStat, glibcDyn, glibcPIE}
)

var (
	buildMu    sync.Mutex
	buildDir   string
	buildCache = map[string]string{}
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ttd-emu-test")
	if err != nil {
		panic(err)
	}
	buildDir = dir
	// The cache of decoded code (x86/codefile.go) goes here, not into
	// the user's cache directory: the tests' programs fill it and use it.
	if os.Getenv("TTD_CODE_CACHE") == "" {
		os.Setenv("TTD_CODE_CACHE", filepath.Join(dir, "code"))
	}
	// TTD_WINDOW=1 runs the tests in `ttd run`'s host window
	// (UseHostWindow; off by default here, as for record and replay).
	if os.Getenv("TTD_WINDOW") == "1" {
		UseHostWindow()
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// build compiles testdata/src (or the C text src when it contains a
// newline) with tc once per test binary run.
func build(t *testing.T, tc toolchain, src string) string {
	t.Helper()
	if _, err := exec.LookPath(tc.cc[0]); err != nil {
		t.Skipf("%s not installed", tc.cc[0])
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	key := tc.name + "\x00" + src
	if exe, ok := buildCache[key]; ok {
		return exe
	}
	file := src
	name := strings.TrimSuffix(filepath.Base(src), ".c")
	if strings.Contains(src, "\n") {
		name = "prog" + itoa(len(buildCache))
		file = filepath.Join(buildDir, name+".c")
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	} else {
		file = filepath.Join("testdata", src)
	}
	exe := filepath.Join(buildDir, name+"-"+tc.name)
	args := append(append([]string{}, tc.cc[1:]...), "-O1", "-o", exe, file)
	out, err := exec.Command(tc.cc[0], args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", tc.cc[0], strings.Join(args, " "), err, out)
	}
	buildCache[key] = exe
	return exe
}

// result is the outcome of one run.
type result struct {
	stdout string
	status ExitStatus
}

// runNative runs exe on the host.
func runNative(t *testing.T, exe string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	r := result{stdout: out.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		ws := ee.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			r.status.Signal = unix.Signal(ws.Signal())
		} else {
			r.status.Code = ws.ExitStatus()
		}
	} else if err != nil {
		t.Fatalf("native %s: %v", exe, err)
	}
	return r
}

// runEmu runs exe under the emulator; a program that needs an instruction
// the interpreter lacks skips the test.
func runEmu(t *testing.T, exe string, env []string, args ...string) result {
	t.Helper()
	r, err := runEmuErr(t, Config{Path: exe, Args: append([]string{exe}, args...), Env: env})
	if errors.Is(err, x86.ErrUnimplemented) {
		t.Skipf("x86 interpreter: %v", err)
	}
	if err != nil {
		t.Fatalf("emulating %s: %v", exe, err)
	}
	return r
}

func runEmuErr(t *testing.T, cfg Config) (result, error) {
	t.Helper()
	out, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cfg.Stdout = out
	var log bytes.Buffer
	if cfg.Log == nil {
		cfg.Log = &log
	}
	p, err := NewProcess(cfg)
	if err != nil {
		return result{}, err
	}
	st, err := p.Run()
	b, rerr := os.ReadFile(out.Name())
	if rerr != nil {
		t.Fatal(rerr)
	}
	return result{stdout: string(b), status: st}, err
}

// compare runs exe natively and emulated with the same arguments.
func compare(t *testing.T, exe string, args ...string) result {
	t.Helper()
	env := []string{"TTD_TEST=yes", "PATH=/usr/bin:/bin"}
	want := runNative(t, exe, env, args...)
	got := runEmu(t, exe, env, args...)
	if hostNeutral(got.stdout) != hostNeutral(want.stdout) {
		t.Errorf("stdout differs\n--- native\n%s--- ttd\n%s", want.stdout, got.stdout)
	}
	if got.status.Code != want.status.Code || got.status.Signal != want.status.Signal {
		t.Errorf("status: native %v, ttd %v", want.status, got.status)
	}
	return got
}

// hostNeutral drops the output lines that legitimately differ between
// the host and ttd: ttd reports no AT_HWCAP2 features, the host may.
func hostNeutral(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "hwcap2 ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func forEachToolchain(t *testing.T, tcs []toolchain, f func(t *testing.T, tc toolchain)) {
	for _, tc := range tcs {
		t.Run(tc.name, func(t *testing.T) { f(t, tc) })
	}
}

const nolibcHello = `
static long sys(long n, long a, long b, long c) {
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return r;
}
void _start(void) {
	static const char msg[] = "hello from nolibc\n";
	sys(1, 1, (long)msg, sizeof msg - 1);
	sys(60, 42, 0, 0);
}
`

func TestNoLibc(t *testing.T) {
	forEachToolchain(t, []toolchain{noLibc, noLibcPIE}, func(t *testing.T, tc toolchain) {
		r := compare(t, build(t, tc, nolibcHello))
		if r.status.Code != 42 || r.stdout != "hello from nolibc\n" {
			t.Errorf("got %q, %v", r.stdout, r.status)
		}
	})
}

func TestAuxv(t *testing.T) {
	forEachToolchain(t, libcToolchains, func(t *testing.T, tc toolchain) {
		exe := build(t, tc, "auxv.c")
		env := []string{"TTD_TEST=yes"}
		want := runNative(t, exe, env, "x", "y z")
		got := runEmu(t, exe, env, "x", "y z")
		if hostNeutral(got.stdout) != hostNeutral(want.stdout) {
			t.Errorf("native:\n%s\nttd:\n%s", want.stdout, got.stdout)
		}
		if !strings.Contains(got.stdout, "hwcap2 0\n") {
			t.Errorf("AT_HWCAP2 not 0:\n%s", got.stdout)
		}
		if got.status.Code != 3 {
			t.Errorf("exit %v, want 3", got.status)
		}
	})
}

func TestSignals(t *testing.T) {
	forEachToolchain(t, libcToolchains, func(t *testing.T, tc toolchain) {
		compare(t, build(t, tc, "signals.c"))
	})
}

func TestMemory(t *testing.T) {
	forEachToolchain(t, libcToolchains, func(t *testing.T, tc toolchain) {
		compare(t, build(t, tc, "memory.c"))
	})
}

// TestIoprio compares ioprio_get and ioprio_set with the host's.
func TestIoprio(t *testing.T) {
	forEachToolchain(t, libcToolchains, func(t *testing.T, tc toolchain) {
		compare(t, build(t, tc, "ioprio.c"))
	})
}

// TestSignalfd compares the emulated signalfd with the host's.
func TestSignalfd(t *testing.T) {
	forEachToolchain(t, libcToolchains, func(t *testing.T, tc toolchain) {
		compare(t, build(t, tc, "signalfd.c"))
	})
}

func TestFiles(t *testing.T) {
	forEachToolchain(t, libcToolchains, func(t *testing.T, tc toolchain) {
		exe := build(t, tc, "files.c")
		env := []string{"TTD_TEST=yes"}
		d1, d2 := t.TempDir(), t.TempDir()
		want := runNative(t, exe, env, d1)
		got := runEmu(t, exe, env, d2)
		if got.stdout != want.stdout || got.status != want.status {
			t.Errorf("native (%v):\n%s\nttd (%v):\n%s", want.status, want.stdout, got.status, got.stdout)
		}
	})
}

// TestExitStatus checks exit codes and deaths by signal, with the fault
// details ttd reports for a crash.
func TestExitStatus(t *testing.T) {
	cases := []struct {
		name, body string
		code       int
		sig        unix.Signal
	}{
		{"return", "return 7;", 7, 0},
		{"exit-truncated", "exit(300);", 44, 0},
		{"abort", "abort();", 0, unix.SIGABRT},
		{"null", "*(volatile int *)0 = 1; return 0;", 0, unix.SIGSEGV},
		{"sigterm", "kill(getpid(), SIGTERM); pause(); return 0;", 0, unix.SIGTERM},
		{"divide", "volatile int z = 0; return 5 / z;", 0, unix.SIGFPE},
		{"ud2", `__asm__ volatile("ud2"); return 0;`, 0, unix.SIGILL},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "#include <signal.h>\n#include <stdlib.h>\n#include <unistd.h>\nint main(void) { " + c.body + " }\n"
			r := compare(t, build(t, muslStatic, src))
			if r.status.Code != c.code || r.status.Signal != c.sig {
				t.Fatalf("status %v, want code %d signal %v", r.status, c.code, c.sig)
			}
			if c.sig == unix.SIGSEGV {
				if !r.status.Fault || r.status.Addr != 0 || r.status.Inst == "" {
					t.Errorf("no fault details: %+v", r.status)
				}
				if s := r.status.String(); !strings.Contains(s, "SIGSEGV") || !strings.Contains(s, "address 0x0") {
					t.Errorf("message %q", s)
				}
			}
			if r.status.ExitCode() != 128+int(c.sig) && c.sig != 0 {
				t.Errorf("ExitCode %d", r.status.ExitCode())
			}
		})
	}
}

// TestLoadErrors checks that bad programs give clear errors.
func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "text")
	os.WriteFile(text, []byte("not a program\n"), 0o755)
	noexec := filepath.Join(dir, "noexec")
	os.WriteFile(noexec, []byte("\x7fELF"), 0o644)
	for _, c := range []struct {
		path string
		want error
	}{
		{filepath.Join(dir, "missing"), os.ErrNotExist},
		{text, ErrNotExecutable},
		{noexec, unix.EACCES},
		{dir, unix.EISDIR},
	} {
		_, err := NewProcess(Config{Path: c.path})
		var le *LoadError
		if !errors.As(err, &le) || !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.path, err, c.want)
		}
	}
}

// TestScript runs a "#!" script through its interpreter.
func TestScript(t *testing.T) {
	exe := build(t, muslStatic, "auxv.c")
	script := filepath.Join(t.TempDir(), "script")
	os.WriteFile(script, []byte("#!"+exe+" first\n"), 0o755)
	r := runEmu(t, script, nil, "last")
	want := "argc 4\nargv[1] first\nargv[2] " + script + "\nargv[3] last\n"
	if !strings.HasPrefix(r.stdout, want) {
		t.Errorf("got\n%s\nwant prefix\n%s", r.stdout, want)
	}
}

// TestUnimplementedInstruction checks that an instruction the interpreter
// lacks stops the program with an error naming it, not a panic.
func TestUnimplementedInstruction(t *testing.T) {
	src := `void _start(void) { __asm__ volatile("rdrand %eax; hlt"); }`
	exe := build(t, noLibc, src+"\n")
	r, err := runEmuErr(t, Config{Path: exe})
	var ue *x86.UnimplementedError
	if !errors.As(err, &ue) {
		t.Skipf("rdrand is implemented now (%v, %v); pick another instruction", err, r.status)
	}
	if r.status.Signal != unix.SIGILL || !strings.Contains(err.Error(), "0f c7") {
		t.Errorf("status %v, error %v", r.status, err)
	}
}

// TestSyscallTable checks that the table names every syscall number.
func TestSyscallTable(t *testing.T) {
	tab := Syscalls()
	if len(tab) < 450 {
		t.Fatalf("table has %d rows", len(tab))
	}
	for nr, want := range map[int]string{0: "read", 1: "write", 9: "mmap", 13: "rt_sigaction", 15: "rt_sigreturn",
		60: "exit", 158: "arch_prctl", 231: "exit_group", 262: "newfstatat", 334: "rseq", 435: "clone3"} {
		if tab[nr].Name != want {
			t.Errorf("syscall %d is %q, want %q", nr, tab[nr].Name, want)
		}
	}
	for nr, s := range tab {
		if s.Fn != nil && s.Support == SupportNone || s.Fn == nil && s.Support != SupportNone {
			t.Errorf("syscall %d %s: support %v with handler %v", nr, s.Name, s.Support, s.Fn != nil)
		}
	}
}

// TestVerboseNamesUnimplemented checks that --verbose names an
// unimplemented syscall once.
func TestVerboseNamesUnimplemented(t *testing.T) {
	src := `
static long sys(long n) {
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n) : "rcx", "r11", "memory");
	return r;
}
void _start(void) {
	long a = sys(334), b = sys(334);  /* rseq, twice */
	sys(60 + 0 * (a + b));
	for (;;) ;
}
`
	exe := build(t, noLibc, src)
	var log bytes.Buffer
	_, err := runEmuErr(t, Config{Path: exe, Verbose: true, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(log.String(), "rseq (334)"); n != 1 {
		t.Errorf("log %q names rseq %d times", log.String(), n)
	}
}

// TestExecve replaces the image in place and keeps the process.
func TestExecve(t *testing.T) {
	target := build(t, muslStatic, "auxv.c")
	src := `#include <unistd.h>
#include <stdio.h>
int main(int argc, char **argv) {
	char *args[] = {argv[1], "from-exec", 0};
	char *env[] = {"TTD_TEST=exec", 0};
	printf("before\n");
	fflush(stdout);
	execve("/nonexistent", args, env);
	perror("nonexistent");
	execve(argv[1], args, env);
	return 99;
}
`
	exe := build(t, muslStatic, src)
	r := compare(t, exe, target)
	if !strings.HasPrefix(r.stdout, "before\nargc 2\nargv[1] from-exec\nenvc 1\nTTD_TEST=exec\n") || r.status.Code != 2 {
		t.Errorf("got %q, %v", r.stdout, r.status)
	}
}

// TestSIGILLNamesTheMissingExtension checks that a program killed by the
// #UD of an extension the guest CPU's level lacks is told which one and
// how to get it, and that a plain ud2 is not.
func TestSIGILLNamesTheMissingExtension(t *testing.T) {
	for _, c := range []struct{ asm, lacks string }{
		{"vmovups (%rsp), %xmm0", "avx"},
		{"ud2", ""},
	} {
		exe := build(t, noLibc, `void _start(void) { __asm__ volatile("`+c.asm+`"); }`+"\n")
		r, err := runEmuErr(t, Config{Path: exe, CPU: "v2"})
		if err != nil {
			t.Fatal(err)
		}
		if r.status.Signal != unix.SIGILL || r.status.Lacks != c.lacks {
			t.Errorf("%s: status %v, lacks %q, want SIGILL lacking %q", c.asm, r.status, r.status.Lacks, c.lacks)
		}
		if hint := strings.Contains(r.status.String(), "--cpu host"); hint != (c.lacks != "") {
			t.Errorf("%s: %q", c.asm, r.status.String())
		}
	}
}

// TestWinFault: guest reads that translated code makes at addresses the
// guest may not read (unmapped, PROT_NONE, munmapped, moved by mremap,
// across a page into one of those, non-canonical, at and across 2^40,
// after a fork) fault as natively, with the same si_addr and si_code.
// With the host window and TTD_WINFAULT=1 (`ttd run`; in a child test
// process, as both are on or off for a whole process) those reads take
// no TLB check and the host's faults must stand for it (x86's
// winfault): the child checks that they did.
func TestWinFault(t *testing.T) {
	exe := build(t, glibcDyn, "winfault.c")
	before := x86.HostFaults()
	compare(t, exe)
	// (Under the default TTD_WINFAULT_AFTER, winfault.c ends before
	// its address space goes over to host faults.)
	if after, on := x86.WinFaultAfter(); !on || after > 1e6 {
		return
	}
	if d := x86.HostFaults() - before; d == 0 || d > 5000 {
		// (20,000 reads above 2^40 must leave by the window's end
		// check, not fault.)
		t.Errorf("%d host faults of translated code with the window on", d)
	}
	if os.Getenv("TTD_WINDOW") != "" || runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return
	}
	// Host faults from the start (TTD_WINFAULT=1), from a switch while
	// the program runs (toFault), before its tests: pages materialised
	// with the TLB checks must be opened by it; and the default, where
	// winfault.c ends before its switch.
	for _, env := range []string{"TTD_WINFAULT=1", "TTD_WINFAULT_AFTER=20000", "TTD_WINFAULT="} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestWinFault$", "-test.v")
		cmd.Env = append(os.Environ(), "TTD_WINDOW=1", env)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestWinFault") {
			t.Fatalf("with the window, %s: %v\n%s", env, err, out)
		}
	}
}
