package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ttd probe and the query tables from the command line, over
// probe/testdata/calls.c: mid(i) runs 200 times (n=200) and returns
// 4i+2; leaf writes the global counter 400 times.

func callsProgram(t *testing.T) string {
	src, err := os.ReadFile("../../probe/testdata/calls.c")
	if err != nil {
		t.Fatal(err)
	}
	return buildC(t, string(src), "-g")
}

func TestProbeCommand(t *testing.T) {
	exe := callsProgram(t)
	trace := filepath.Join(t.TempDir(), "c.ttd")
	script := `fn::mid:entry { @c = count(); @s = sum(arg0); } syscall::openat:entry /arg1 != 0/ { @f[copyinstr(arg1)] = count(); }`
	// Live: record and probe in one go (dtrace -c), keeping the trace.
	live, errs, st := ttdCmd(t, "probe", "-q", "-o", trace, "-n", script, "--", exe, "200")
	if st != 0 || !strings.Contains(live, "sum 80000 counter 400") || !strings.Contains(live, "\n              200\n") ||
		!strings.Contains(live, "\n            19900\n") || !strings.Contains(live, "  /etc/hostname ") {
		t.Fatalf("live: status %d\n%s\nstderr: %s", st, live, errs)
	}
	// Recorded: the same aggregations (the program's own output is not
	// replayed).
	rec, errs, st := ttdCmd(t, "probe", "-q", "--jobs", "2", "-n", script, trace)
	if st != 0 || !strings.HasSuffix(live, rec) || strings.Contains(rec, "counter 400") {
		t.Fatalf("recorded: status %d\n%s\nwant the tail of the live run:\n%s\nstderr: %s", st, rec, live, errs)
	}
	// A bad script: nothing runs, line:column names the identifier.
	_, errs, st = ttdCmd(t, "probe", "-n", "BEGIN { x = 1; }\nfn::mid:entry { @[probefnc] = count(); }", trace)
	if st != 2 || !strings.Contains(errs, "-n:2:19: undefined variable \"probefnc\"") {
		t.Errorf("bad script: status %d, stderr %q", st, errs)
	}
	_, errs, st = ttdCmd(t, "probe", "-n", "fn::nosuchfunc:entry { }", trace)
	if st != 2 || !strings.Contains(errs, "1:1: probe description fn::nosuchfunc:entry does not match any probes") {
		t.Errorf("unmatched probe: status %d, stderr %q", st, errs)
	}
	// --help gives every flag an example.
	help, _, _ := ttdCmd(t, "probe", "--help")
	for _, want := range []string{"(--runner prism)", "-q -n 'fn::malloc", "(--jobs 1)", "(-n 'syscall::openat", "(-s write.d)", "(-o ls.ttd -- ls)", "(--arg 10 -n", "-- ls /   # live"} {
		if !strings.Contains(help, want) {
			t.Errorf("--help lacks %q:\n%s", want, help)
		}
	}
	// exit() sets the status and stops.
	out, _, st := ttdCmd(t, "probe", "-q", "-n", `fn::mid:entry /arg0 == 5/ { printf("at %d\n", arg0); exit(3); } fn::mid:entry { @n = count(); }`, trace)
	if st != 3 || out != "at 5\n\n                6\n" {
		t.Errorf("exit: status %d, output %q", st, out)
	}
	// Not quiet: records carry their position, which ttd query --at takes.
	out, _, _ = ttdCmd(t, "probe", "-n", `fn::mid:entry /arg0 == 7/ { trace(arg0); }`, trace)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "POS") || !strings.HasSuffix(lines[1], "fn:p:mid:entry 7") {
		t.Fatalf("default output:\n%s", out)
	}
	pos := strings.Fields(lines[1])[0]
	where, _, _ := ttdCmd(t, "query", trace, "--at", pos)
	if !strings.Contains(where, "mid") {
		t.Errorf("ttd query --at %s:\n%s", pos, where)
	}

	// The tables.
	out, errs, st = ttdCmd(t, "query", trace, "--calls", "mid")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); st != 0 || len(lines) != 201 || !strings.Contains(lines[200], "0x31e") {
		t.Errorf("--calls: status %d, %d lines, stderr %s\n%s", st, len(lines), errs, out[:min(len(out), 500)])
	}
	out, _, st = ttdCmd(t, "query", trace, "--memory", "counter:4", "--access", "w", "--json")
	if st != 0 || strings.Count(out, `"access": "w"`) != 400 {
		t.Errorf("--memory --json: status %d, %d rows", st, strings.Count(out, `"access"`))
	}
	pq := filepath.Join(t.TempDir(), "m.parquet")
	if _, errs, st := ttdCmd(t, "query", trace, "--memory", "counter:4", "--format", "parquet", "-o", pq); st != 0 {
		t.Errorf("--format parquet: %d %s", st, errs)
	}
	if b, err := os.ReadFile(pq); err != nil || len(b) < 100 || string(b[:4]) != "PAR1" {
		t.Errorf("parquet file: %d bytes, %v", len(b), err)
	}
	if _, errs, st := ttdCmd(t, "query", trace, "--calls", "nosuch"); st != 2 || !strings.Contains(errs, "no such function") {
		t.Errorf("--calls nosuch: %d %s", st, errs)
	}
}

// TestProbeCxxLive: ttd probe -- PROG on a C++ program, with fn probes
// named by demangled names and libstdc++'s usdt throw probe; the program
// prints its own counts (probe/testdata/cxx.cpp).
func TestProbeCxxLive(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("g++ is missing")
		}
		t.Skip("SKIPPING: g++ is not installed (make deps installs it)")
	}
	exe := filepath.Join(t.TempDir(), "cxx")
	if out, err := exec.Command("g++", "-O1", "-g", "-o", exe, "../../probe/testdata/cxx.cpp").CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	out, errs, st := ttdCmd(t, "probe", "-q", "-n", `fn::geo::scale(long):entry { @["scale(long)"] = count(); }
usdt:libstdc++*:libstdcxx:throw { @["throws"] = count(); }
END { printa("%s=%@d\n", @); }`, "--", exe, "12")
	if st != 0 || !strings.Contains(out, "geo::scale(long) 12\n") || !strings.Contains(out, "throws 4\n") ||
		!strings.Contains(out, "scale(long)=12\n") || !strings.Contains(out, "throws=4\n") {
		t.Errorf("status %d\n%s\nstderr: %s", st, out, errs)
	}
	// Live with -o: the script runs while the program runs, and the
	// recording made at the same time replays and verifies; exit()
	// stops the program and gives the status.
	trace := filepath.Join(t.TempDir(), "cxx.ttd")
	out, errs, st = ttdCmd(t, "probe", "-q", "-o", trace, "-n", `fn::"mix<int, long>":entry { n = n + 1; } fn::"mix<int, long>":entry /n == 5/ { printf("stop %d\n", arg0); exit(3); }`, "--", exe, "12")
	if st != 3 || !strings.HasPrefix(out, "stop 4\n") || strings.Contains(out, "throws") {
		t.Errorf("exit(): status %d\n%s\nstderr: %s", st, out, errs)
	}
	if out, errs, st := ttdCmd(t, "replay", "--verify", trace); st != 0 {
		t.Errorf("replay --verify of the live recording: %d\n%s%s", st, out, errs)
	}
	// A probe that matches nothing in any module the program mapped.
	if _, errs, st := ttdCmd(t, "probe", "-n", "BEGIN {}\nfn::no_such_fn:entry {}", "--", exe, "2"); st != 2 || !strings.Contains(errs, "-n:2:1: probe description fn::no_such_fn:entry does not match any probes") {
		t.Errorf("unmatched live probe: %d %s", st, errs)
	}
}
