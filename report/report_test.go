package report

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"ttd/calls"
	"ttd/emu"
	"ttd/reader"
	"ttd/recorder"
)

// buildPage records threads_signals.c (threads, signals, syscalls) and builds
// its report.
func buildPage(t *testing.T) (*Data, []byte) {
	return buildPageOf(t, "../testdata/corpus/threads_signals.c")
}

// buildPageOf records a C program and builds its report.
func buildPageOf(t *testing.T, src string) (*Data, []byte) {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("gcc not installed")
		}
		t.Skip("gcc not installed: SKIPPING (make deps installs it)")
	}
	dir := t.TempDir()
	exe := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), ".c"))
	if b, err := exec.Command("gcc", "-O1", "-g", "-pthread", "-o", exe, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	path := filepath.Join(dir, "ts.ttd")
	null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer null.Close()
	if _, _, err := recorder.Record(emu.Config{Path: exe, Args: []string{exe}, Env: []string{"PATH=/usr/bin:/bin"}, Stdout: null, Stderr: null},
		recorder.Options{Path: path, CheckpointEvery: 100_000}); err != nil {
		t.Fatal(err)
	}
	tr, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	sym, _ := calls.Load(tr)
	p, err := calls.Analyze(tr, sym, calls.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := Build(tr, p, Options{Trace: path})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, d); err != nil {
		t.Fatal(err)
	}
	return d, buf.Bytes()
}

func TestReportData(t *testing.T) {
	d, html := buildPage(t)
	if len(d.Lanes) < 3 {
		t.Errorf("%d lanes", len(d.Lanes))
	}
	kinds := map[string]int{}
	for _, m := range d.Marks {
		kinds[m.Kind]++
	}
	if kinds["syscall"] == 0 || kinds["signal"] == 0 || kinds["start"] != len(d.Lanes) {
		t.Errorf("marks by kind %v, %d lanes", kinds, len(d.Lanes))
	}
	var ran uint64
	for _, l := range d.Lanes {
		for _, r := range l.Runs {
			ran += r[1] - r[0]
		}
	}
	if ran != d.End {
		t.Errorf("the lanes run %d instructions, the recording has %d", ran, d.End)
	}
	if d.Flame.Total != d.Instructions || len(d.Hot) == 0 || len(d.Checkpoints) < 2 {
		t.Errorf("flame %d of %d instructions, %d hot functions, %d checkpoints", d.Flame.Total, d.Instructions, len(d.Hot), len(d.Checkpoints))
	}
	for _, bad := range []string{"http://", "https://", "<script src", "<link "} {
		if bytes.Contains(html, []byte(bad)) {
			t.Errorf("the page refers to the network: %q", bad)
		}
	}
}

// TestReportInChromium renders the page in headless Chromium: no script
// error, one lane per thread drawn, and a screenshot kept for a person
// to look at.
func TestReportInChromium(t *testing.T) {
	d, html := buildPage(t)
	renderInChromium(t, "report", d, html)
}

// TestProcessTreeReportInChromium: a server forking a worker per request
// (flows/testdata/forkserver.c) draws one group per process, each with
// its thread's lane, fork/exit marks on them, and a flame graph with one
// box per process.
func TestProcessTreeReportInChromium(t *testing.T) {
	d, html := buildPageOf(t, "../flows/testdata/forkserver.c")
	if len(d.Processes) != 10 || len(d.Lanes) != 10 {
		t.Fatalf("%d processes and %d lanes, want 10 (server, client, 8 workers)", len(d.Processes), len(d.Lanes))
	}
	forks, ends := 0, 0
	for _, m := range d.Marks {
		if m.Kind == "process" && strings.Contains(m.Label, "forks") {
			forks++
		}
		if m.Kind == "process" && strings.Contains(m.Label, "ends") {
			ends++
		}
	}
	if forks != 9 || ends != 10 {
		t.Errorf("%d fork marks and %d ends, want 9 and 10", forks, ends)
	}
	var boxes []string
	for _, f := range d.Flame.Children {
		boxes = append(boxes, f.Name)
	}
	if len(boxes) != 10 || boxes[0] != "[process forkserver]" || boxes[9] != "[process forkserver/forkserver#9]" {
		t.Errorf("flame graph's first boxes %q, want one per process", boxes)
	}
	procs := renderInChromium(t, "report-tree", d, html)
	if procs != 10 {
		t.Errorf("drew %d process groups, want 10", procs)
	}
}

// renderInChromium loads a page in headless Chromium: it must render
// with no script error and draw every lane; the page and a screenshot
// stay in $TMPDIR/ttd-report-test/NAME.{html,png}. It returns the
// process groups drawn.
func renderInChromium(t *testing.T, name string, d *Data, html []byte) int {
	t.Helper()
	chromium := ""
	for _, c := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(c); err == nil {
			chromium = p
			break
		}
	}
	if chromium == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium not installed (make deps installs it)")
		}
		t.Skip("chromium not installed: SKIPPING the rendering test (make deps installs it)")
	}
	out := filepath.Join(os.TempDir(), "ttd-report-test")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(out, name+".html")
	if err := os.WriteFile(file, html, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
			"--enable-logging=stderr", "--v=0", "--window-size=1400,1000"}
		// Headless Chromium now and then dies of a signal on its own
		// (a segmentation fault in CI, with the page never loaded): that
		// is tried again, twice; an error of the page is not.
		for try := 1; ; try++ {
			profile := "--user-data-dir=" + t.TempDir() // a fresh one each try
			cmd := exec.CommandContext(ctx, chromium, append(append(base, profile), args...)...)
			var so, se bytes.Buffer
			cmd.Stdout, cmd.Stderr = &so, &se
			err := cmd.Run()
			if err == nil {
				return so.String(), se.String()
			}
			var ee *exec.ExitError
			if try < 3 && ctx.Err() == nil && errors.As(err, &ee) && !ee.Exited() {
				t.Logf("chromium %v died (%v), try %d; again", args, err, try)
				continue
			}
			t.Fatalf("chromium %v: %v\n%s", args, err, se.String())
		}
	}
	dom, logs := run("--dump-dom", "file://"+file)
	if m := regexp.MustCompile(`data-errors="([^"]*)"`).FindStringSubmatch(dom); m != nil {
		t.Errorf("script errors: %s", m[1])
	}
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "Uncaught") || strings.Contains(line, "CONSOLE") && strings.Contains(line, "rror") {
			t.Errorf("console: %s", line)
		}
	}
	m := regexp.MustCompile(`data-rendered="procs:(\d+) lanes:(\d+) frames:(\d+)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the page's script did not finish:\n%.2000s", dom)
	}
	if m[2] != strconv.Itoa(len(d.Lanes)) || m[3] == "0" {
		t.Errorf("drew %s lanes and %s flame boxes, want %d lanes", m[2], m[3], len(d.Lanes))
	}
	// Clicking a syscall mark shows its position and the command that
	// opens it there.
	clicked, _ := run("--dump-dom", "file://"+file+"#click")
	var first *Mark
	for i := range d.Marks {
		if d.Marks[i].Kind == "syscall" && first == nil {
			first = &d.Marks[i]
		}
	}
	if first != nil && !strings.Contains(clicked, "ttd query "+d.Trace+" --at "+strconv.FormatUint(first.Pos, 10)+" --where") {
		t.Errorf("clicking the first syscall mark (at %d) does not show its ttd query command:\n%.3000s", first.Pos, clicked[strings.Index(clicked, "<div id=\"info\""):])
	}
	shot := filepath.Join(out, name+".png")
	run("--screenshot="+shot, "file://"+file)
	if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
		t.Errorf("screenshot %s: %v", shot, err)
	}
	t.Logf("page and screenshot: %s, %s", file, shot)
	procs, _ := strconv.Atoi(m[1])
	return procs
}
