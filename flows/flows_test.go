package flows

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"ttd/calls"
	"ttd/emu"
	"ttd/internal/testtmp"
	"ttd/reader"
	"ttd/recorder"
)

type built struct {
	once sync.Once
	exe  string
	err  error
}

var server, forkServer built

// buildRoot holds every program the tests build; TestMain removes it.
var buildRoot string

func TestMain(m *testing.M) { testtmp.Main(m, "ttd-flows-", &buildRoot) }

// buildServer compiles testdata/server.c once per test process.
func buildServer(t *testing.T) string {
	return buildProgram(t, &server, "server")
}

// buildProgram compiles testdata/NAME.c once per test process.
func buildProgram(t *testing.T, server *built, name string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("gcc not installed")
		}
		t.Skip("gcc not installed: SKIPPING (make deps installs it)")
	}
	server.once.Do(func() {
		dir, err := os.MkdirTemp(buildRoot, "build-")
		if err != nil {
			server.err = err
			return
		}
		server.exe = filepath.Join(dir, name)
		if b, err := exec.Command("gcc", "-O1", "-g", "-pthread", "-o", server.exe, "testdata/"+name+".c").CombinedOutput(); err != nil {
			server.err = err
			t.Logf("%s", b)
		}
	})
	if server.err != nil {
		t.Fatal(server.err)
	}
	return server.exe
}

// analyze records the server (request bad goes wrong; "" for none) and
// splits the recording into flows.
func analyze(t *testing.T, bad string) (string, *Result) {
	t.Helper()
	return analyzeProgram(t, buildServer(t), bad)
}

// analyzeProgram records exe (with argument bad unless "") and splits
// the recording into flows.
func analyzeProgram(t *testing.T, exe, bad string) (string, *Result) {
	t.Helper()
	if bad == "" {
		return analyzeProgramArgs(t, exe)
	}
	return analyzeProgramArgs(t, exe, bad)
}

// analyzeProgramArgs records exe with args and splits the recording into
// flows.
func analyzeProgramArgs(t *testing.T, exe string, args ...string) (string, *Result) {
	t.Helper()
	path := filepath.Join(t.TempDir(), filepath.Base(exe)+strings.Join(args, "-")+".ttd")
	args = append([]string{exe}, args...)
	null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer null.Close()
	st, _, err := recorder.Record(emu.Config{Path: exe, Args: args, Env: []string{"PATH=/usr/bin:/bin"}, Stdout: null, Stderr: null},
		recorder.Options{Path: path, CheckpointEvery: 20_000})
	if err != nil || st.Code != 0 || st.Signal != 0 {
		t.Fatalf("recording the server: %v %v", st, err)
	}
	tr, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	sym, err := calls.Load(tr)
	if sym == nil {
		t.Fatal(err)
	}
	res, err := Analyze(tr, sym, calls.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return path, res
}

// TestFlowsOfServer: eight requests, eight flows, each with both threads
// (the server handling it, the client sending it and reading the reply),
// every instruction in exactly one flow.
func TestFlowsOfServer(t *testing.T) {
	_, res := analyze(t, "")
	wantFlows(t, res, 9, "the background and 8 requests")
	checkAllCharged(t, res)
	for _, f := range res.Flows[1:] {
		if !strings.HasPrefix(f.Trigger, "recvfrom(") || len(f.Threads) != 2 {
			t.Errorf("flow %d: trigger %q, threads %v", f.ID, f.Trigger, f.Threads)
		}
		// Each flow sends the request (128 bytes) and its reply (16).
		if f.BytesSent != 144 {
			t.Errorf("flow %d sent %d bytes, want 144", f.ID, f.BytesSent)
		}
		if !hasPath(f, "server handle checksum", 2) {
			t.Errorf("flow %d does not hold one handling of a request", f.ID)
		}
	}
	var dot strings.Builder
	res.WriteDOT(&dot)
	for _, want := range []string{"digraph flows", "8 messages, 1024 bytes", "8 messages, 128 bytes", `label="clone 1"`} {
		if !strings.Contains(dot.String(), want) {
			t.Errorf("DOT lacks %q:\n%s", want, dot.String())
		}
	}
}

// TestAnomalousRequestRanksFirst: request 5 goes wrong; against a
// recording of the same requests all going right, its flow ranks first,
// and it also does against common behaviour.
func TestAnomalousRequestRanksFirst(t *testing.T) {
	badPath, bad := analyze(t, "5")
	goodPath, good := analyze(t, "")
	cands := candidates
	for _, normals := range [][]Candidate{cands(goodPath, good), nil} {
		ranked := Rank(cands(badPath, bad), normals)
		for i, s := range ranked {
			t.Logf("normals %d: %d. flow %d score %.3f (%s)", len(normals), i+1, s.Flow.ID, s.Score, s.Top)
		}
		if ranked[0].Flow.ID != 5 {
			t.Errorf("with %d normal flows: flow %d ranks first, want 5", len(normals), ranked[0].Flow.ID)
		}
		if ranked[0].Score <= ranked[1].Score*1.5 {
			t.Errorf("flow 5 scores %.3f, barely above %.3f", ranked[0].Score, ranked[1].Score)
		}
		if !strings.Contains(ranked[0].Top, "slow_recover") {
			t.Errorf("flow 5 differs most in %q, want slow_recover", ranked[0].Top)
		}
	}
}

func TestDistance(t *testing.T) {
	a := Profile{"time x": 0.5, "time y": 0.5}
	b := Profile{"time x": 0.25, "time z": 0.75}
	if d := Distance(a, b); d != 0.25+0.5+0.75 {
		t.Errorf("distance %v", d)
	}
	if Distance(a, a) != 0 || Distance(a, b) != Distance(b, a) {
		t.Error("distance is not a metric")
	}
}

// candidates are the flows of r but the background, for ranking.
func candidates(path string, r *Result) []Candidate {
	var out []Candidate
	for _, f := range r.Flows[1:] {
		out = append(out, Candidate{Trace: path, Flow: f})
	}
	return out
}

// wantFlows fails the test unless res has n flows (want says which).
func wantFlows(t *testing.T, res *Result, n int, want string) {
	t.Helper()
	if len(res.Flows) != n {
		for _, f := range res.Flows {
			t.Logf("flow %d: %s at %d, threads %v, processes %v", f.ID, f.Trigger, f.At, f.Threads, f.Processes)
		}
		t.Fatalf("%d flows, want %s", len(res.Flows), want)
	}
}

// checkAllCharged checks that every instruction of the recording is in
// exactly one flow.
func checkAllCharged(t *testing.T, res *Result) {
	t.Helper()
	var sum uint64
	for _, f := range res.Flows {
		sum += f.Instructions
	}
	if sum != res.Calls.Instructions {
		t.Errorf("the flows hold %d instructions, the recording %d", sum, res.Calls.Instructions)
	}
}

// hasPath reports whether flow f called the call path ending in suffix
// (function names separated by spaces) count times.
func hasPath(f *Flow, suffix string, count uint64) bool {
	for _, p := range f.Paths {
		if strings.HasSuffix(strings.Join(p.Path, " "), suffix) && p.Count == count {
			return true
		}
	}
	return false
}
