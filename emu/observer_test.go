package emu

import (
	"runtime"
	"slices"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// recordingObserver keeps the events it is told about.
type recordingObserver struct {
	syscalls []SyscallEvent
	data     [][]byte // what each syscall's writes left in guest memory
	signals  []SignalEvent
	mmaps    []MmapEvent
	starts   int
	exits    []int
	final    *ExitStatus
}

func (o *recordingObserver) Syscall(t *Thread, ev *SyscallEvent) {
	e := *ev
	e.Writes = append([]MemRange(nil), ev.Writes...)
	o.syscalls = append(o.syscalls, e)
	var data []byte
	for _, w := range ev.Writes {
		b := make([]byte, w.Len)
		if err := t.CopyIn(w.Addr, b); err != nil {
			panic(err)
		}
		data = append(data, b...)
	}
	o.data = append(o.data, data)
}

func (o *recordingObserver) Signal(t *Thread, ev *SignalEvent)    { o.signals = append(o.signals, *ev) }
func (o *recordingObserver) Mmap(t *Thread, ev MmapEvent)         { o.mmaps = append(o.mmaps, ev) }
func (o *recordingObserver) ThreadStart(t *Thread)                { o.starts++ }
func (o *recordingObserver) ThreadExit(t *Thread, code int)       { o.exits = append(o.exits, code) }
func (o *recordingObserver) ProcessStart(c *Process, t *Thread)   {}
func (o *recordingObserver) ProcessExec(p *Process)               {}
func (o *recordingObserver) ProcessEnd(p *Process, st ExitStatus) {}

func (o *recordingObserver) ProcessExit(p *Process, st ExitStatus) {
	o.final = &st
}

const observedProgram = `
static long sys(long n, long a, long b, long c) {
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return r;
}
void _start(void) {
	static char buf[256];
	long n = sys(79, (long)buf, sizeof buf, 0); /* getcwd */
	sys(1, 1, (long)buf, n - 1);
	sys(1, 1, (long)"\n", 1);
	sys(60, 3, 0, 0);
}
`

func TestObserver(t *testing.T) {
	exe := build(t, noLibc, observedProgram)
	obs := &recordingObserver{}
	dir := t.TempDir()
	r, err := runEmuErr(t, Config{Path: exe, Dir: dir, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	if r.status.Code != 3 || r.stdout != dir+"\n" {
		t.Fatalf("got %q, %v", r.stdout, r.status)
	}
	if len(obs.syscalls) < 3 {
		t.Fatalf("syscalls: %+v", obs.syscalls)
	}
	cwd := obs.syscalls[0]
	if cwd.Name != "getcwd" || len(cwd.Writes) != 1 || string(obs.data[0]) != dir+"\x00" {
		t.Errorf("getcwd event %+v, data %q", cwd, obs.data[0])
	}
	if w := obs.syscalls[1]; w.Name != "write" || len(w.Writes) != 0 || w.Ret != uint64(len(dir)) {
		t.Errorf("write event %+v", w)
	}
	last := obs.syscalls[len(obs.syscalls)-1]
	if last.Name != "exit" {
		t.Errorf("last syscall %+v", last)
	}
	if obs.starts != 1 || len(obs.exits) != 1 || obs.exits[0] != 3 || obs.final == nil || obs.final.Code != 3 {
		t.Errorf("lifetime events: starts %d exits %v final %v", obs.starts, obs.exits, obs.final)
	}
	found := false
	for _, m := range obs.mmaps {
		if m.Path == exe && m.Prot&unix.PROT_EXEC != 0 {
			found = true
		}
	}
	if !found {
		t.Errorf("no executable mapping of %s in %+v", exe, obs.mmaps)
	}
}

// TestLazyReservation checks that reserving address space materialises
// no pages, and that protection changes and unmapping stay cheap.
func TestLazyReservation(t *testing.T) {
	mm := NewMM()
	const big = 1 << 40
	a, ok := mm.findFree(big)
	if !ok {
		t.Fatal("no room for 1 TiB")
	}
	mm.insert(&vma{start: a, end: a + big, fileEnd: noFileEnd})
	mm.protect(a+big/2, a+big/2+16*pageSize, unix.PROT_READ|unix.PROT_WRITE)
	if err := mm.Mem.WriteBytes(a+big/2+pageSize, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := mm.Mem.WriteBytes(a, []byte("x")); err == nil {
		t.Error("write to PROT_NONE succeeded")
	}
	if n := mm.Mem.NumPages(); n > 2 {
		t.Errorf("%d pages materialised", n)
	}
	mm.unmap(a, a+big)
	if n := mm.Mem.NumPages(); n != 0 || len(mm.vmas) != 0 {
		t.Errorf("after unmap: %d pages, vmas %v", n, mm.Maps())
	}
}

func (o *recordingObserver) Switch(t *Thread)      {}
func (o *recordingObserver) Checkpoint(p *Process) {}

// TestGenTracksRegions: every change to the region list moves MM.Gen (the
// recorder re-reads the list only then), and reading memory does not.
func TestGenTracksRegions(t *testing.T) {
	mm := NewMM()
	a, _ := mm.findFree(64 * pageSize)
	prev := mm.Gen()
	list := mm.Regions(nil)
	step := func(what string, f func()) {
		t.Helper()
		f()
		cur := mm.Regions(nil)
		changed := !slices.Equal(cur, list)
		if moved := mm.Gen() != prev; changed && !moved {
			t.Errorf("%s changed the regions but not Gen", what)
		}
		prev, list = mm.Gen(), cur
	}
	step("insert", func() { mm.insert(&vma{start: a, end: a + 64*pageSize, fileEnd: noFileEnd, prot: unix.PROT_READ}) })
	step("protect", func() { mm.protect(a+8*pageSize, a+16*pageSize, unix.PROT_READ|unix.PROT_WRITE) })
	step("protect back", func() { mm.protect(a+8*pageSize, a+16*pageSize, unix.PROT_READ) })
	step("unmap", func() { mm.unmap(a+32*pageSize, a+40*pageSize) })
	step("move", func() { mm.move(a+40*pageSize, 8*pageSize, a+128*pageSize) })
	before := mm.Gen()
	var b [8]byte
	mm.Mem.Peek(a, b[:])
	if mm.Gen() != before {
		t.Error("a read moved Gen")
	}
}

// quietObserver counts syscalls and keeps nothing.
type quietObserver struct{ syscalls int }

func (o *quietObserver) Syscall(t *Thread, ev *SyscallEvent)   { o.syscalls++ }
func (o *quietObserver) Signal(t *Thread, ev *SignalEvent)     {}
func (o *quietObserver) Mmap(t *Thread, ev MmapEvent)          {}
func (o *quietObserver) ThreadStart(t *Thread)                 {}
func (o *quietObserver) ThreadExit(t *Thread, code int)        {}
func (o *quietObserver) ProcessExit(p *Process, st ExitStatus) {}
func (o *quietObserver) ProcessStart(c *Process, t *Thread)    {}
func (o *quietObserver) ProcessExec(p *Process)                {}
func (o *quietObserver) ProcessEnd(p *Process, st ExitStatus)  {}
func (o *quietObserver) Switch(t *Thread)                      {}
func (o *quietObserver) Checkpoint(p *Process)                 {}

// TestSyscallsDoNotAllocate: with an observer attached (as when
// recording), a syscall's arguments and event are the thread's own and a
// failing syscall's errno is no heap error, so syscalls allocate nothing
// (threads_sync makes 100 000 of them).
func TestSyscallsDoNotAllocate(t *testing.T) {
	// Without the code file (x86/codefile.go): the longer run translates
	// blocks the shorter does not, and keeping them for the file
	// allocates (a few slabs) and moves the collector's timing.
	t.Setenv("TTD_CODE_CACHE", "off")
	exe := build(t, muslStatic, `
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int argc, char **argv) {
	int n = atoi(argv[1]), word = 0;
	for (int i = 0; i < n; i++) {
		syscall(SYS_getppid);
		syscall(SYS_futex, &word, 128 /* FUTEX_WAIT_PRIVATE */, 1, 0, 0, 0); /* EAGAIN */
	}
	return 0;
}`)
	mallocs := func(n int) (uint64, int) {
		o := &quietObserver{}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := runEmuErr(t, Config{Path: exe, Args: []string{exe, strconv.Itoa(n)}, Observer: o}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs, o.syscalls
	}
	// Both runs go far past the translation threshold, so that what
	// translating the loop allocates is in both and cancels out (with 10
	// iterations against 5010 it was 0.008 per syscall, near the limit,
	// and over it once in CI).
	m0, s0 := mallocs(1000)
	m1, s1 := mallocs(11000)
	if s1-s0 != 20000 {
		t.Fatalf("%d and %d syscalls: the program does not make the syscalls the test counts", s0, s1)
	}
	t.Logf("%d more allocations for %d more syscalls", int64(m1-m0), s1-s0)
	if per := float64(int64(m1-m0)) / float64(s1-s0); per > 0.01 {
		t.Errorf("%.2f allocations per syscall, want none", per)
	}
}
