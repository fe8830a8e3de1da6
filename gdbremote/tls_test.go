package gdbremote

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"ttd/emu"
	"ttd/recorder"
)

// TestGDBLibraryTLS: gdb reads __thread variables of a shared library
// (qGetTLSAddr with the library's lm: the thread's dynamic thread
// vector) and of the program, in two threads; libc's own thread-local
// block comes after the library's in module order, so a wrong module id
// reads libc's bytes.
func TestGDBLibraryTLS(t *testing.T) {
	needTool(t, "gcc")
	dir := t.TempDir()
	lib := filepath.Join(dir, "libttdtls.so")
	prog := filepath.Join(dir, "tlsmain")
	src := func(n string) string { p, _ := filepath.Abs(filepath.Join("..", "ttd", "testdata", n)); return p }
	for _, args := range [][]string{
		{"-O0", "-g", "-shared", "-fPIC", "-o", lib, src("tlslib.c")},
		{"-O0", "-g", "-pthread", "-o", prog, src("tlsmain.c"), "-L" + dir, "-lttdtls", "-Wl,-rpath," + dir},
	} {
		if b, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", args, err, b)
		}
	}
	trace := prog + ".ttd"
	null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer null.Close()
	st, _, err := recorder.Record(emu.Config{Path: prog, Args: []string{prog}, Env: []string{"PATH=/usr/bin:/bin"},
		Stdout: null, Stderr: null}, recorder.Options{Path: trace})
	if err != nil || st.Signal != 0 || st.Code != 0 {
		t.Fatalf("recording: %v %v", st, err)
	}
	out := gdb(t, prog, trace, "break tlsmain.c:15", "continue", "p id", "p libcount", "p libname", "p mine",
		"continue", "p id", "p libcount", "p libname", "p mine")
	// Whichever thread gets there first: id 1 has 110, "lib1" and 8;
	// id 2 has 120, "lib2" and 9.
	first, second := []string{"$1 = 1", "$2 = 110", `$3 = "lib1\000\000\000"`, "$4 = 8"}, []string{"$5 = 2", "$6 = 120", `$7 = "lib2\000\000\000"`, "$8 = 9"}
	if !strings.Contains(out, "$1 = 1") {
		first = []string{"$1 = 2", "$2 = 120", `$3 = "lib2\000\000\000"`, "$4 = 9"}
		second = []string{"$5 = 1", "$6 = 110", `$7 = "lib1\000\000\000"`, "$8 = 8"}
	}
	inOrder(t, out, append(first, second...)...)
}
