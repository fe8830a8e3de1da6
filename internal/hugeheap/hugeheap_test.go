//go:build linux

package hugeheap

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// TestReserveGivesHugePages checks that memory the heap hands out after
// Reserve is backed by huge pages: a 32 MiB allocation, touched, must
// show AnonHugePages in its mapping's /proc/self/smaps entry.
func TestReserveGivesHugePages(t *testing.T) {
	mode, err := os.ReadFile(thpMode)
	if err != nil || !strings.Contains(string(mode), "[madvise]") {
		t.Skipf("transparent huge pages are not in madvise mode on this machine: %q", mode)
	}
	if n := Reserve(128 << 20); n < 64<<20 {
		t.Fatalf("Reserve advised %d bytes", n)
	}
	b := make([]byte, 32<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	addr := uint64(uintptr(unsafe.Pointer(&b[0])))
	if huge := anonHugeKB(t, addr); huge < 16<<10 {
		t.Errorf("32 MiB of heap touched after Reserve: %d KiB in huge pages, want at least 16 MiB", huge)
	}
}

// anonHugeKB returns AnonHugePages of the mapping that holds addr.
func anonHugeKB(t *testing.T, addr uint64) int {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := strings.Cut(strings.Fields(line)[0], "-"); ok && !strings.HasSuffix(line, ":") && strings.Count(line, " ") > 0 {
			l, err1 := strconv.ParseUint(lo, 16, 64)
			h, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 == nil && err2 == nil {
				in = l <= addr && addr < h
				continue
			}
		}
		if in && strings.HasPrefix(line, "AnonHugePages:") {
			kb, _ := strconv.Atoi(strings.Fields(line)[1])
			return kb
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
	return 0
}

// TestReserveCollectsOnce checks that Reserve costs one collection: its
// allocation passes the heap's goal, and would start one of its own
// before the one that frees it.
func TestReserveCollectsOnce(t *testing.T) {
	if !needsAdvice() {
		t.Skip("transparent huge pages are not in madvise mode on this machine")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if Reserve(64<<20) == 0 {
		t.Fatal("Reserve advised nothing")
	}
	runtime.ReadMemStats(&after)
	if n := after.NumGC - before.NumGC; n != 1 {
		t.Errorf("Reserve made %d collections, want 1", n)
	}
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("GOGC after Reserve: %d, want 100 as before", p)
	}
}

// TestReserveKeepsGOMAXPROCS checks that Reserve, which collects with
// one P (collectAlone), puts GOMAXPROCS back: the runtime's default, or
// the environment's setting.
func TestReserveKeepsGOMAXPROCS(t *testing.T) {
	if !needsAdvice() {
		t.Skip("transparent huge pages are not in madvise mode on this machine")
	}
	before := runtime.GOMAXPROCS(0)
	if Reserve(16<<20) == 0 {
		t.Fatal("Reserve advised nothing")
	}
	if after := runtime.GOMAXPROCS(0); after != before {
		t.Errorf("GOMAXPROCS after Reserve: %d, want %d as before", after, before)
	}
	// Set by the environment: Reserve must not go back to the default.
	old := runtime.GOMAXPROCS(before + 1)
	defer runtime.GOMAXPROCS(old)
	t.Setenv("GOMAXPROCS", strconv.Itoa(before+1))
	Reserve(16 << 20)
	if after := runtime.GOMAXPROCS(0); after != before+1 {
		t.Errorf("GOMAXPROCS after Reserve: %d, want the environment's %d", after, before+1)
	}
}

// TestReserveAlignsTheHeapTop checks that a large object allocated after
// Reserve takes huge pages even when the heap's last 2 MiB had begun in
// small pages with room for it: touching 1 MiB must take a few page
// faults, not 256. It runs in a new process, whose heap has no holes
// (as ttd's when it reserves): the other tests leave freed ranges below
// the top, and the object would go there.
func TestReserveAlignsTheHeapTop(t *testing.T) {
	if !needsAdvice() {
		t.Skip("transparent huge pages are not in madvise mode on this machine")
	}
	if os.Getenv("HUGEHEAP_TEST_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestReserveAlignsTheHeapTop$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "HUGEHEAP_TEST_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS") {
			t.Fatalf("in a new process: %v\n%s", err, out)
		}
		return
	}
	// Put the heap's top a quarter into a 2 MiB range, touched.
	var probe, fill []byte
	for try := 0; ; try++ {
		probe = make([]byte, padProbe)
		end := uintptr(unsafe.Pointer(unsafe.SliceData(probe))) + padProbe
		fill = make([]byte, int(-end&(hugePage-1)+hugePage/4))
		if uintptr(unsafe.Pointer(unsafe.SliceData(fill))) == end {
			break
		}
		if try == 8 {
			t.Skip("could not place the heap's top (holes)")
		}
	}
	for i := 0; i < len(fill); i += 4096 {
		fill[i] = 1
	}
	if Reserve(64<<20) == 0 {
		t.Fatal("Reserve advised nothing")
	}
	before := minorFaults(t)
	b := make([]byte, 1<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	if n := minorFaults(t) - before; n > 64 {
		t.Errorf("touching 1 MiB allocated after Reserve took %d page faults, want a few (huge pages)", n)
	}
	runtime.KeepAlive(probe)
	runtime.KeepAlive(fill)
}

// minorFaults returns the process's minor page faults so far.
func minorFaults(t *testing.T) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Skip(err)
	}
	return ru.Minflt
}
