package linux

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestSyscallsAgreeWithHeader checks every syscall of the host's
// asm/unistd_64.h against the table (the table may know newer ones).
func TestSyscallsAgreeWithHeader(t *testing.T) {
	h, err := os.ReadFile("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")
	if err != nil {
		skipOutsideCI(t, "the kernel headers (linux-libc-dev): %v", err)
	}
	n := 0
	for _, m := range regexp.MustCompile(`#define __NR_(\w+)\s+(\d+)`).FindAllStringSubmatch(string(h), -1) {
		nr, _ := strconv.Atoi(m[2])
		if got := SyscallName(nr); got != m[1] {
			t.Errorf("syscall %d: table says %q, header %q", nr, got, m[1])
		}
		if got, ok := SyscallNumber(m[1]); !ok || got != nr {
			t.Errorf("SyscallNumber(%q) = %d, %v; header says %d", m[1], got, ok, nr)
		}
		n++
	}
	if n < 300 {
		t.Fatalf("only %d syscalls in the header", n)
	}
	if SyscallName(100000) != "syscall_100000" || SyscallName(-1) != "syscall_-1" {
		t.Errorf("unknown numbers: %q %q", SyscallName(100000), SyscallName(-1))
	}
	if SysOpenat != 257 || SysRenameat2 != 316 || SysExitGroup != 231 {
		t.Errorf("constants: openat %d renameat2 %d exit_group %d", SysOpenat, SysRenameat2, SysExitGroup)
	}
}

// TestErrnoAgreesWithHeaders checks the errno names against the
// asm-generic headers and the messages against glibc's strerror.
func TestErrnoAgreesWithHeaders(t *testing.T) {
	var h []byte
	for _, f := range []string{"/usr/include/asm-generic/errno-base.h", "/usr/include/asm-generic/errno.h"} {
		b, err := os.ReadFile(f)
		if err != nil {
			skipOutsideCI(t, "the kernel headers (linux-libc-dev): %v", err)
		}
		h = append(h, b...)
	}
	n := 0
	for _, m := range regexp.MustCompile(`#define\s+(E\w+)\s+(\d+)`).FindAllStringSubmatch(string(h), -1) {
		v, _ := strconv.Atoi(m[2])
		if got := Errno(v).Name(); got != m[1] {
			t.Errorf("errno %d: table says %q, header %q", v, got, m[1])
		}
		if e, ok := ErrnoByName(m[1]); !ok || int(e) != v {
			t.Errorf("ErrnoByName(%q) = %d, %v", m[1], e, ok)
		}
		n++
	}
	if n < 130 {
		t.Fatalf("only %d errnos in the headers", n)
	}
	if ENOENT.String() != "ENOENT (No such file or directory)" {
		t.Errorf("ENOENT: %q", ENOENT.String())
	}
	out, err := exec.Command("python3", "-c", "import os\nfor n in range(1, 134): print(os.strerror(n))").Output()
	if err != nil {
		skipOutsideCI(t, "python3 for glibc's strerror: %v", err)
	}
	for i, msg := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		if got := Errno(i + 1).Message(); got != msg {
			t.Errorf("errno %d: message %q, strerror %q", i+1, got, msg)
		}
	}
}

func TestFlags(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{string(AppendOpenFlags(nil, O_WRONLY|O_CREAT|O_TRUNC)), "O_WRONLY|O_CREAT|O_TRUNC"},
		{string(AppendOpenFlags(nil, 0o4000|O_CLOEXEC|O_DIRECTORY)), "O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_DIRECTORY"},
		{string(AppendOpenFlags(nil, 3)), "O_ACCMODE"},
		{string(AppendOpenFlags(nil, 0x3c)), "O_RDONLY|0x3c"},
		{string(AppendMmapFlags(nil, MAP_PRIVATE|MAP_ANONYMOUS)), "MAP_PRIVATE|MAP_ANONYMOUS"},
		{string(AppendMmapFlags(nil, 0)), "MAP_FILE"},
		{string(AppendMmapFlags(nil, 0xf|MAP_FIXED|63<<26)), "0xf /* MAP_??? */|MAP_FIXED|63<<MAP_HUGE_SHIFT"},
		{ProtFlags.Format(0), "0"},
		{ProtFlags.Format(3), "PROT_READ|PROT_WRITE"},
		{string(AppendMode(nil, S_IFREG|0o644)), "S_IFREG|0644"},
		{string(AppendMode(nil, S_IFDIR|0o1777)), "S_IFDIR|S_ISVTX|0777"},
		{string(AppendOctal(nil, 0)), "000"},
		{string(ArchPrctl.Append(nil, 0x3001, "ARCH_")), "0x3001 /* ARCH_??? */"},
		{string(AppendFutexOp(nil, 128)), "FUTEX_WAIT_PRIVATE"},
		{SignalName(11) + SignalName(32) + SignalName(35), "SIGSEGVSIGRTMINSIGRT_3"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// skipOutsideCI skips a test that needs a host tool, loudly, except in
// CI where the tool must be there.
func skipOutsideCI(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("needs "+format, args...)
	}
	t.Skipf("SKIPPED (not in CI): needs "+format, args...)
}
