package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHelpAndVersion: every command's --help (and 'ttd help COMMAND')
// describes its flags and ends with an example; --version names the
// commit and the Go version; a usage error is one line on stderr that
// says what to do next.
func TestHelpAndVersion(t *testing.T) {
	out, _, st := ttdCmd(t, "--version")
	if st != 0 || !strings.HasPrefix(out, "ttd ") || !strings.Contains(out, "\ncommit ") || !strings.Contains(out, "go1.") {
		t.Errorf("--version: status %d:\n%s", st, out)
	}
	list, _, _ := ttdCmd(t, "help")
	var names []string
	for _, l := range strings.Split(list, "\n") {
		if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "   ") {
			names = append(names, f[0])
		}
	}
	if len(names) < 10 {
		t.Fatalf("ttd help lists %v", names)
	}
	for _, name := range names {
		h1, _, st1 := ttdCmd(t, "help", name)
		h2, _, st2 := ttdCmd(t, name, "--help")
		if st1 != 0 || st2 != 0 || h1 != h2 {
			t.Errorf("%s: 'ttd help %s' (status %d) and '--help' (status %d) differ", name, name, st1, st2)
		}
		if !strings.HasPrefix(h1, "usage: ttd "+name) || !strings.Contains(h1, "\nexample:\n  ttd ") {
			t.Errorf("ttd help %s:\n%s", name, h1)
		}
	}
	h, _, _ := ttdCmd(t, "help", "calls")
	for _, f := range []string{"-tid", "-pid", "-depth", "-min-count", "-json", "-jobs"} {
		if !strings.Contains(h, "  "+f) {
			t.Errorf("ttd help calls does not describe %s:\n%s", f, h)
		}
	}
	_, errs, st := ttdCmd(t, "calls")
	if st != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "ttd help calls") {
		t.Errorf("ttd calls without a trace: status %d, stderr %q", st, errs)
	}
	_, errs, st = ttdCmd(t, "calls", filepath.Join(t.TempDir(), "none.ttd"))
	if st != 1 || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("ttd calls of a missing trace: status %d, stderr %q", st, errs)
	}
	_, errs, st = ttdCmd(t, "nosuch")
	if st != 2 || !strings.Contains(errs, "ttd help") {
		t.Errorf("unknown command: status %d, stderr %q", st, errs)
	}
}

func recordWith(t *testing.T, exe string, args ...string) string {
	t.Helper()
	trace := filepath.Join(t.TempDir(), filepath.Base(exe)+strings.Join(args, "")+".ttd")
	if _, errs, st := ttdCmd(t, append([]string{"record", "--checkpoint-every", "30000", "-o", trace, "--", exe}, args...)...); st != 0 {
		t.Fatalf("record %s: %s", exe, errs)
	}
	return trace
}

// TestCallsDiffCommands runs ttd calls and ttd diff on deep.c's good and
// bad runs.
func TestCallsDiffCommands(t *testing.T) {
	src, err := os.ReadFile("../../calls/testdata/deep.c")
	if err != nil {
		t.Fatal(err)
	}
	exe := buildC(t, string(src), "-g")
	bad, good := recordWith(t, exe, "bad"), recordWith(t, exe, "good")
	out, errs, st := ttdCmd(t, "calls", bad, "--json", "--min-count", "1000")
	if st != 0 {
		t.Fatalf("calls: %s", errs)
	}
	var cj struct {
		Instructions uint64
		Views        []struct {
			Paths []struct {
				Path  []string
				Count uint64
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &cj); err != nil {
		t.Fatal(err)
	}
	if len(cj.Views) != 1 || len(cj.Views[0].Paths) != 1 || strings.Join(cj.Views[0].Paths[0].Path[len(cj.Views[0].Paths[0].Path)-3:], " ") != "main work leaf" {
		t.Errorf("calls --min-count 1000: %s", out)
	}
	text, _, _ := ttdCmd(t, "calls", "--depth", "5", bad)
	if !strings.Contains(text, "count") || !strings.Contains(text, "    main  (") {
		t.Errorf("calls --depth 5:\n%s", text)
	}
	out, errs, st = ttdCmd(t, "diff", bad, good)
	if st != 0 {
		t.Fatalf("diff: %s", errs)
	}
	lines := strings.Split(out, "\n")
	var first string
	for i, l := range lines {
		if strings.HasPrefix(l, "rank") && i+1 < len(lines) {
			first = lines[i+1]
		}
	}
	if !strings.Contains(first, "check → fixup") || !strings.Contains(out, "ttd query "+bad+" --at ") {
		t.Errorf("diff:\n%s", out)
	}
	_, errs, st = ttdCmd(t, "diff", "--rank", "longest", bad, good)
	if st != 2 || !strings.Contains(errs, "want first or short") {
		t.Errorf("diff --rank longest: status %d %q", st, errs)
	}
	html := filepath.Join(t.TempDir(), "r.html")
	if _, errs, st := ttdCmd(t, "report", "-o", html, "--diff", good, bad); st != 0 {
		t.Fatalf("report: %s", errs)
	}
	page, err := os.ReadFile(html)
	if err != nil || !strings.HasPrefix(string(page), "<!doctype html>") || !strings.Contains(string(page), `fixup`) {
		t.Errorf("report: %v, %d bytes", err, len(page))
	}
}

// TestFlowsAnomaliesCommands: the server's bad request ranks first.
func TestFlowsAnomaliesCommands(t *testing.T) {
	src, err := os.ReadFile("../../flows/testdata/server.c")
	if err != nil {
		t.Fatal(err)
	}
	exe := buildC(t, string(src), "-g", "-pthread", "-I"+flowsTestdata(t))
	bad, good := recordWith(t, exe, "5"), recordWith(t, exe)
	dot := filepath.Join(t.TempDir(), "g.dot")
	out, errs, st := ttdCmd(t, "flows", "--dot", dot, bad)
	if st != 0 || !strings.Contains(out, "9 flows") || !strings.Contains(out, "flow 5: recvfrom(") {
		t.Fatalf("flows: %s\n%s", errs, out)
	}
	if b, err := os.ReadFile(dot); err != nil || !strings.Contains(string(b), "digraph") {
		t.Errorf("dot: %v", err)
	}
	out, errs, st = ttdCmd(t, "anomalies", "--json", "--normal", good, bad)
	if st != 0 {
		t.Fatalf("anomalies: %s", errs)
	}
	var ranked []struct {
		Trace string
		Flow  struct{ ID int }
		Score float64
	}
	if err := json.Unmarshal([]byte(out), &ranked); err != nil {
		t.Fatal(err)
	}
	if len(ranked) != 8 || ranked[0].Flow.ID != 5 || ranked[0].Trace != bad {
		t.Errorf("anomalies: %s", out)
	}
	out, _, st = ttdCmd(t, "diff", "--flow", "5", bad, good)
	if st != 0 || !strings.Contains(out, "slow_recover") {
		t.Errorf("diff --flow 5:\n%s", out)
	}
}
