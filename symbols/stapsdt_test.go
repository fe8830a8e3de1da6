package symbols

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// readelf -n is the oracle for the .note.stapsdt notes: every probe it
// lists, with its location, semaphore and argument string, and nothing
// else.

var readelfProbe = regexp.MustCompile(`(?m)^\s+Provider: (\S+)\n\s+Name: (\S+)\n\s+Location: (0x[0-9a-f]+), Base: 0x[0-9a-f]+, Semaphore: (0x[0-9a-f]+)\n\s+Arguments:(.*)$`)

func compareReadelf(t *testing.T, path string) int {
	t.Helper()
	out, err := exec.Command("readelf", "-n", path).Output()
	if err != nil {
		t.Fatalf("readelf -n %s: %v", path, err)
	}
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := ReadUSDTNotes(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	want := readelfProbe.FindAllStringSubmatch(string(out), -1)
	if len(got) != len(want) {
		t.Fatalf("%s: %d probes, readelf lists %d", path, len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		loc, _ := strconv.ParseUint(w[3], 0, 64)
		sem, _ := strconv.ParseUint(w[4], 0, 64)
		if g.Provider != w[1] || g.Name != w[2] || g.Addr != loc || g.Semaphore != sem || g.ArgsString != strings.TrimSpace(w[5]) {
			t.Errorf("%s probe %d: got %s:%s at %#x sem %#x args %q; readelf: %s:%s at %s sem %s args %q",
				path, i, g.Provider, g.Name, g.Addr, g.Semaphore, g.ArgsString, w[1], w[2], w[3], w[4], strings.TrimSpace(w[5]))
		}
		if len(g.Args) != len(strings.Fields(w[5])) {
			t.Errorf("%s probe %s: %d arguments decoded from %q", path, g.Name, len(g.Args), w[5])
		}
	}
	return len(got)
}

func TestUSDTNotesMatchReadelf(t *testing.T) {
	needTools(t, "readelf", "gcc")
	if _, err := os.Stat("/usr/include/x86_64-linux-gnu/sys/sdt.h"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("sys/sdt.h (systemtap-sdt-dev) is required under CI")
		}
		t.Skip("SKIPPING: /usr/include/x86_64-linux-gnu/sys/sdt.h missing (apt-get install systemtap-sdt-dev)")
	}
	dir := t.TempDir()
	src, _ := filepath.Abs("../probe/testdata/usdt.c")
	for _, opt := range []string{"-O0", "-O2"} {
		exe := filepath.Join(dir, "usdt"+opt)
		if b, err := exec.Command("gcc", opt, "-g", "-o", exe, src).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, b)
		}
		if n := compareReadelf(t, exe); n != 2 {
			t.Errorf("%s: %d probes, want demo:tick and demo:done", exe, n)
		}
	}
	// The system's own: libstdc++'s throw/catch/rethrow, python's.
	for _, lib := range []string{"/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/lib/x86_64-linux-gnu/libc.so.6", "/usr/bin/python3"} {
		if p, err := filepath.EvalSymlinks(lib); err == nil {
			t.Logf("%s: %d probes", lib, compareReadelf(t, p))
		}
	}
}

// TestUSDTArgs decodes the operand forms gcc emits.
func TestUSDTArgs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want USDTArg
	}{
		{"8@%rdi", USDTArg{Size: 8, Kind: USDTReg, Reg: "rdi", RegBytes: 8}},
		{"-4@%esi", USDTArg{Size: 4, Signed: true, Kind: USDTReg, Reg: "rsi", RegBytes: 4}},
		{"-2@%r8w", USDTArg{Size: 2, Signed: true, Kind: USDTReg, Reg: "r8", RegBytes: 2}},
		{"1@%r9b", USDTArg{Size: 1, Kind: USDTReg, Reg: "r9", RegBytes: 1}},
		{"1@%ah", USDTArg{Size: 1, Kind: USDTReg, Reg: "rax", RegBytes: 1, RegHigh: true}},
		{"-4@-20(%rbp)", USDTArg{Size: 4, Signed: true, Kind: USDTMem, Base: "rbp", Disp: -20}},
		{"8@-80(%rbx)", USDTArg{Size: 8, Kind: USDTMem, Base: "rbx", Disp: -80}},
		{"-4@112(%rsp)", USDTArg{Size: 4, Signed: true, Kind: USDTMem, Base: "rsp", Disp: 112}},
		{"8@8(%rax,%rdx,8)", USDTArg{Size: 8, Kind: USDTMem, Base: "rax", Index: "rdx", Scale: 8, Disp: 8}},
		{"4@(%rdi)", USDTArg{Size: 4, Kind: USDTMem, Base: "rdi"}},
		{"-4@$42", USDTArg{Size: 4, Signed: true, Kind: USDTImm, Disp: 42}},
		{"8@$-1", USDTArg{Size: 8, Kind: USDTImm, Disp: -1}},
		{"%rdi", USDTArg{Size: 8, Kind: USDTReg, Reg: "rdi", RegBytes: 8}},
		{"-8@total(%rip)", USDTArg{Size: 8, Signed: true, Kind: USDTMem, Base: "rip", symbol: "total"}},
		{"4@counts+8(%rip)", USDTArg{Size: 4, Kind: USDTMem, Base: "rip", symbol: "counts", Disp: 8}},
	} {
		got, err := ParseUSDTArgs(c.in)
		if err != nil || len(got) != 1 {
			t.Errorf("%q: %v %v", c.in, got, err)
			continue
		}
		c.want.Text = c.in
		if got[0] != c.want {
			t.Errorf("%q: got %+v, want %+v", c.in, got[0], c.want)
		}
	}
	for _, bad := range []string{"3@%rdi", "8@%xyz", "8@-20(%rbp", "x@%rdi", "8@", "8@4(%eax)", "8@1(%rax,%rbx,3)", "8@sym(%rbx)"} {
		if _, err := ParseUSDTArgs(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestUSDTCorruptNote: a truncated note is an error with its offset.
func TestUSDTCorruptNote(t *testing.T) {
	desc := make([]byte, 24)
	desc = append(desc, "demo\x00tick"...) // no NUL after the name
	if _, err := decodeUSDT(desc, binary.LittleEndian); err == nil || !strings.Contains(err.Error(), "unterminated name") {
		t.Errorf("unterminated name: %v", err)
	}
	if _, err := decodeUSDT(make([]byte, 10), binary.LittleEndian); err == nil {
		t.Error("short descriptor: no error")
	}
	// A note whose descriptor runs past the section.
	sec := []byte{8, 0, 0, 0, 200, 0, 0, 0, 3, 0, 0, 0}
	sec = append(sec, "stapsdt\x00"...)
	sec = append(sec, make([]byte, 30)...)
	err := walkNotes(sec, binary.LittleEndian, func(uint64, string, uint32, []byte) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "offset 0x0") {
		t.Errorf("descriptor past the end: %v", err)
	}
}
