package fleet

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"
	"ttd/third_party/prism"

	"ttd/emu"
	"ttd/recorder"
)

func TestMain(m *testing.M) {
	beam.Init()
	if os.Getenv("FLEET_VERBOSE") == "" {
		Quiet()
	}
	// Beam's loopback mode leaves a "beamloopbackworker-*" file in the
	// temporary directory for every pipeline (runnerlib/execute.go):
	// the tests' temporary files go into a directory removed at the end.
	tmp, err := os.MkdirTemp("", "ttd-fleet-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("TMPDIR", tmp)
	code := m.Run()
	os.RemoveAll(tmp)
	os.Exit(code)
}

// Fixtures: testdata/work.c built once per test process (gcc -O0 -g)
// and recorded with small checkpoint intervals; the program's own output
// is the oracle.

var fixtures struct {
	once sync.Once
	dir  string
	err  error

	mu     sync.Mutex
	traces map[string]recording
}

// recording is a recorded run of a test program and what it printed.
type recording struct {
	path   string
	stdout []byte
}

// checkpointEvery is small enough that work(i) spans several intervals
// for i >= 2 (about 9000*i instructions).
const checkpointEvery = 7000

func fixtureDir(t testing.TB) string {
	t.Helper()
	fixtures.once.Do(func() { fixtures.dir, fixtures.err = os.MkdirTemp("", "ttd-fleet-") })
	if fixtures.err != nil {
		t.Fatal(fixtures.err)
	}
	return fixtures.dir
}

// buildC compiles testdata/name.c (once per process).
func buildC(t testing.TB, name string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("gcc not installed (required when CI is set)")
		}
		t.Skip("WARNING: gcc not installed; SKIPPING")
	}
	out := filepath.Join(fixtureDir(t), name)
	if _, err := os.Stat(out); err == nil {
		return out
	}
	src, _ := filepath.Abs(filepath.Join("testdata", name+".c"))
	tmp := out + ".tmp"
	if b, err := exec.Command("gcc", "-O0", "-g", "-o", tmp, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", name, err, b)
	}
	if err := os.Rename(tmp, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// record records prog with args (cached per process by name and args).
func record(t testing.TB, prog string, args ...string) recording {
	t.Helper()
	key := fmt.Sprint(prog, args)
	fixtures.mu.Lock()
	defer fixtures.mu.Unlock()
	if rec, ok := fixtures.traces[key]; ok {
		return rec
	}
	if fixtures.traces == nil {
		fixtures.traces = map[string]recording{}
	}
	path := filepath.Join(fixtureDir(t), fmt.Sprintf("%s-%d.ttd", filepath.Base(prog), len(fixtures.traces)))
	out, err := os.CreateTemp(fixtureDir(t), "stdout-")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	devnull, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer devnull.Close()
	st, _, err := recorder.Record(emu.Config{Path: prog, Args: append([]string{prog}, args...), Env: []string{"PATH=/usr/bin:/bin"},
		Stdout: out, Stderr: devnull}, recorder.Options{Path: path, CheckpointEvery: checkpointEvery})
	if err != nil {
		t.Fatalf("recording %s: %v", prog, err)
	}
	if st.Signal != 0 || st.Code != 0 {
		t.Fatalf("%s ended with %v", prog, st)
	}
	b, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	// The host is the oracle: the recorded output is the native one.
	native, err := exec.Command(prog, args...).Output()
	if err != nil {
		t.Fatalf("%s natively: %v", prog, err)
	}
	if !bytes.Equal(native, b) {
		t.Fatalf("%s: recorded output %q, native %q", prog, b, native)
	}
	rec := recording{path: path, stdout: b}
	fixtures.traces[key] = rec
	return rec
}

// run runs a pipeline on prism.
func run(t testing.TB, p *beam.Pipeline) error {
	t.Helper()
	_, err := prism.Execute(context.Background(), p)
	return err
}

// collect runs a pipeline whose result build writes with WriteJSON to
// the path it is given, and reads the rows back.
func collect[T any](t testing.TB, build func(s beam.Scope, out string)) []T {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.jsonl")
	p, s := beam.NewPipelineWithRoot()
	build(s, out)
	if err := run(t, p); err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	rows, err := ReadJSON[T](context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
