package live

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"ttd/emu"
)

// TestProgramsOfATree: sh -c 'progA; progB' runs two PIEs built from
// testdata/twoprogs.c whose functions lie at the same addresses (cnt_a1
// of A where B has cnt_b1...). Each program's probes bind to its own
// functions, fire only in the processes running it and name them, its
// stacks and `globals resolve in its symbols and memory: the counts are
// the calls the programs make (A: cnt_a1 7, cnt_a2 3; B: cnt_b1 5,
// cnt_b2 11), live without and with a trace, and over the recording with
// one and two workers, split at checkpoints inside the processes. One
// symbol table for the whole tree fired B's probes in A, under A's
// names.
func TestProgramsOfATree(t *testing.T) {
	dir := buildTwoProgs(t)
	// The test means something only if the programs overlap.
	if a, b := symAddr(t, dir, "progA", "cnt_a2"), symAddr(t, dir, "progB", "cnt_b2"); a != b {
		t.Fatalf("cnt_a2 at %s, cnt_b2 at %s: the programs do not overlap", a, b)
	}
	cfg := emu.Config{Path: "/bin/sh", Args: []string{"sh", "-c", "./progA; ./progB"}, Env: []string{"PATH=/usr/bin:/bin"}, Dir: dir}
	src2 := `#pragma D option quiet
fn:prog*:cnt_*:entry { @calls[execname, probefunc] = count(); }
fn:prog*:cnt_?1:return { @ctr[execname] = max(` + "`counter" + `); }
fn::cnt_b2:entry { @only[probemod, probefunc] = count(); }
fn:a.out::entry /probefunc == "main"/ { @mains[execname, probemod] = count(); }
fn:prog*:cnt_?2:entry /arg0 == 0/ { trace(execname); ustack(2); printf("\n"); }
`
	_, bare, res, out := liveRun(t, cfg, src2, noTrace)
	if res.Status.Code != 0 || out != "A 34 110\nB 125 116\n" {
		t.Fatalf("program: %v %q", res.Status, out)
	}
	got := strings.Join(strings.Fields(bare), " ")
	for _, want := range []string{
		"progA progA`cnt_a2 progA`main+",
		"progB progB`cnt_b2 progB`main+",
		"progA cnt_a2 3 progB cnt_b1 5 progA cnt_a1 7 progB cnt_b2 11",
		"progB 105 progA 107",
		"progB cnt_b2 11",
		"progA progA 1 progB progB 1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("live output lacks %q:\n%s", want, bare)
		}
	}
	for _, bad := range []string{"cnt_a1 5", "cnt_b1 7", "cnt_a2 11", "progA`cnt_b", "progB`cnt_a"} {
		if strings.Contains(got, bad) {
			t.Errorf("live output has %q: a program's probes fired in the other:\n%s", bad, bare)
		}
	}
	sameWithTraces(t, cfg, src2, bare, 3_000, 50_000_000)
}

// TestProgramTypesWatchAndAddrKeys: sh -c './progA; exec ./progB' (the
// first process runs B after its exec). struct pt has x first in A
// (7), third in B (5); watch:counter follows each program's counter
// in every process running it (A's 10 writes in the forked child, B's
// 16 in the first process after its exec); use_pt's arg1 is cnt_a1 in A and cnt_b1 in B, at the same
// address, so printa's %a must name it by the program it was
// aggregated in. The first program's table read B's x at A's offset
// (9), watched A's counter in B (nothing) and printed cnt_a1 twice.
// Live without and with a trace, and over the recording with one and
// two jobs. By address, the exec's read and write of hits count once
// each, with a probe for reads and another for writes on its bytes.
func TestProgramTypesWatchAndAddrKeys(t *testing.T) {
	dir := buildTwoProgs(t)
	if a, b := symAddr(t, dir, "progA", "cnt_a1"), symAddr(t, dir, "progB", "cnt_b1"); a != b {
		t.Fatalf("cnt_a1 at %s, cnt_b1 at %s: the programs do not overlap", a, b)
	}
	cfg := emu.Config{Path: "/bin/sh", Args: []string{"sh", "-c", "./progA; exec ./progB"}, Env: []string{"PATH=/usr/bin:/bin"}, Dir: dir}
	script := `#pragma D option quiet
fn:prog*:use_pt:entry { self->p = arg0; @f[arg1] = count(); }
fn:prog*:use_pt:return { @px[execname] = sum(((struct pt *)self->p)->x); }
watch:counter:4:write { @w[execname] = count(); }
END { printa("%s %@d\n", @px); printa("%a %@d\n", @f); printa("%A %@d\n", @f); printa("%s %@d\n", @w); }
`
	_, bare, res, out := liveRun(t, cfg, script, noTrace)
	if res.Status.Code != 0 || out != "A 34 110\nB 125 116\n" {
		t.Fatalf("program: %v %q", res.Status, out)
	}
	want := "progB 5\nprogA 7\ncnt_a1 1\ncnt_b1 1\ncnt_a1 1\ncnt_b1 1\nprogA 10\nprogB 16\n"
	if bare != want {
		t.Fatalf("live: got\n%s\nwant\n%s", bare, want)
	}
	sameWithTraces(t, cfg, script, bare, 3_000, 50_000_000)
}

// buildTwoProgs builds progA and progB from testdata/twoprogs.c in a
// new directory, which it returns.
func buildTwoProgs(t *testing.T) string {
	needGCC(t)
	dir := t.TempDir()
	src, _ := filepath.Abs("../testdata/twoprogs.c")
	for _, p := range []string{"A", "B"} {
		if b, err := exec.Command("gcc", "-O0", "-g", "-DPROG_"+p, "-o", filepath.Join(dir, "prog"+p), src).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %s", b)
		}
	}
	return dir
}

// symAddr is the address nm gives sym in dir/prog.
func symAddr(t *testing.T, dir, prog, sym string) string {
	out, err := exec.Command("nm", filepath.Join(dir, prog)).Output()
	if err != nil {
		t.Skipf("nm: %v", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[2] == sym {
			return f[0]
		}
	}
	t.Fatalf("%s has no %s", prog, sym)
	return ""
}

// TestWatchEveryProcess: forkwatch.c's parent and its forked child both
// write the global hits, each in its own address space: the parent 1,
// 2, 3, then 21..24 after the child ended (7 writes, sum 96), the child
// 11..15 and 16 by a read(2), then its exec of /bin/true replaces hits
// (a write of 0 at the position before it): 7 writes, sum 81. A watch probe over the tree sees every
// process's writes with the writer's pid, and the values each wrote;
// the child's writes do not reach the parent's memory (it prints 3).
// Live without and with a trace, and over the recording with one and
// two jobs. By address, the exec's read and write of hits count once
// each, with a probe for reads and another for writes on its bytes. Before, the reader and the live driver reported the first
// process's accesses only (the child's 6 were missing).
func TestWatchEveryProcess(t *testing.T) {
	needGCC(t)
	dir := t.TempDir()
	src, _ := filepath.Abs("../testdata/forkwatch.c")
	prog := filepath.Join(dir, "forkwatch")
	if b, err := exec.Command("gcc", "-O0", "-g", "-o", prog, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %s", b)
	}
	cfg := emu.Config{Path: prog, Args: []string{prog}, Env: []string{"PATH=/usr/bin:/bin"}, Dir: dir}
	script := `#pragma D option quiet
proc:::fork { kid = arg0; }
watch:hits:4:write /pid == kid/ { @n["child"] = count(); @s["child"] = sum(arg1); }
watch:hits:4:write /pid != kid/ { @n["parent"] = count(); @s["parent"] = sum(arg1); }
watch:hits:4:write /arg1 == 13/ { printf("13 by %s %d\n", execname, ppid == progenitor); }
BEGIN { progenitor = -1; }
fn:forkwatch:main:entry { progenitor = pid; }
END { printa("%s %@d\n", @n); printa("%s %@d\n", @s); }
`
	_, bare, res, out := liveRun(t, cfg, script, noTrace)
	if res.Status.Code != 0 || out != "parent sees 3, child exited 0\n" {
		t.Fatalf("program: %v %q", res.Status, out)
	}
	want := "13 by forkwatch 1\nchild 7\nparent 7\nchild 81\nparent 96\n"
	if bare != want {
		t.Fatalf("live: got\n%s\nwant\n%s", bare, want)
	}
	sameWithTraces(t, cfg, script, bare, 3_000, 50_000_000)

	// By address (a program without PIE, so that nm's is the
	// run's): every access of each process, the child's exec's one
	// read and one write of the old image's hits (value 0) included.
	if b, err := exec.Command("gcc", "-O0", "-g", "-no-pie", "-o", prog, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %s", b)
	}
	addr := strings.TrimLeft(symAddr(t, dir, "forkwatch", "hits"), "0")
	byAddr := `#pragma D option quiet
proc:::fork { kid = arg0; }
watch:0x` + addr + `:4:read { @[pid == kid ? "child" : "parent", "read", arg1] = count(); }
watch:0x` + addr + `:4:write { @[pid == kid ? "child" : "parent", "write", arg1] = count(); }
END { printa("%s %s %d %@d\n", @); }
`
	_, bare, _, _ = liveRun(t, cfg, byAddr, noTrace)
	// Exactly one read and one write of the exec's (value 0): two
	// probes on the same bytes saw them twice before (reader.ExecPieces).
	wantAddr := []string{"child read 0 1", "child write 0 1", "child read 16 1", "child write 11 1", "child write 12 1", "child write 13 1",
		"child write 14 1", "child write 15 1", "child write 16 1", "parent read 3 1", "parent write 1 1", "parent write 2 1",
		"parent write 3 1", "parent write 21 1", "parent write 22 1", "parent write 23 1", "parent write 24 1"}
	got := strings.Split(strings.TrimSuffix(bare, "\n"), "\n")
	slices.Sort(got)
	slices.Sort(wantAddr)
	if !slices.Equal(got, wantAddr) {
		t.Errorf("live, by address: got\n%s\nwant (in any order)\n%s", bare, strings.Join(wantAddr, "\n"))
	}
	sameWithTraces(t, cfg, byAddr, bare, 3_000)
}
