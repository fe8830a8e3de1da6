package ttd

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"ttd/emu"
	"ttd/reader"
	"ttd/recorder"
	"ttd/tracefile"
	"ttd/x86"
)

// Fixtures: small C programs from testdata, built once per test process
// and recorded per test. The reference for every check is a straight
// re-simulation of the whole trace with a per-instruction hook.

var buildDir struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir.dir != "" {
		os.RemoveAll(buildDir.dir)
	}
	os.Exit(code)
}

// buildC compiles testdata/name.c with gcc -O0 -g (once per process).
func buildC(t testing.TB, name string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	buildDir.once.Do(func() { buildDir.dir, buildDir.err = os.MkdirTemp("", "ttd-session-") })
	if buildDir.err != nil {
		t.Fatal(buildDir.err)
	}
	out := filepath.Join(buildDir.dir, name)
	if _, err := os.Stat(out); err == nil {
		return out
	}
	src, _ := filepath.Abs(filepath.Join("testdata", name+".c"))
	tmp := out + ".tmp"
	if b, err := exec.Command("gcc", "-O0", "-g", "-fno-omit-frame-pointer", "-o", tmp, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", name, err, b)
	}
	if err := os.Rename(tmp, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// recordProg records prog with args into a trace in a new directory.
func recordProg(t testing.TB, prog string, every uint64, args ...string) string {
	t.Helper()
	return recordWith(t, prog, recorder.Options{CheckpointEvery: every}, args...)
}

// recordSummarized records prog as ttd record does: with the access
// summaries in the trace.
func recordSummarized(t testing.TB, prog string, every uint64, args ...string) string {
	t.Helper()
	return recordWith(t, prog, recorder.Options{CheckpointEvery: every, Summaries: func(path string) ([]tracefile.AccessSummary, error) {
		return SummarizeTrace(path, 0, nil)
	}}, args...)
}

func recordWith(t testing.TB, prog string, opts recorder.Options, args ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), filepath.Base(prog)+".ttd")
	opts.Path = path
	st, stats, err := recorder.Record(emu.Config{Path: prog, Args: append([]string{prog}, args...), Env: []string{"PATH=/usr/bin:/bin"},
		Stdout: devNull(t), Stderr: devNull(t)}, opts)
	if stats.SummaryError != "" {
		t.Fatalf("recording %s: %s", prog, stats.SummaryError)
	}
	if err != nil {
		t.Fatalf("recording %s: %v", prog, err)
	}
	if st.Signal != 0 || st.Code != 0 {
		t.Fatalf("%s ended with %v", prog, st)
	}
	return path
}

func devNull(t testing.TB) *os.File {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// refState is a thread's state at a position, as a straight
// re-simulation saw it before the instruction there.
type refState struct {
	tid    int
	rip    uint64
	r      [16]uint64
	rflags uint64
}

// reference is the straight re-simulation of a trace.
type reference struct {
	states   []refState      // by position
	accesses []reader.Access // every access, in order
	end      uint64
}

func straight(t testing.TB, path string) *reference {
	t.Helper()
	tr, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	r, err := tr.NewReplay(0)
	if err != nil {
		t.Fatal(err)
	}
	ref := &reference{}
	r.Hook = func(r *reader.Replay, c *x86.CPU, in *x86.Inst) {
		pos := r.InstPosition(c)
		if pos != uint64(len(ref.states)) {
			t.Fatalf("hook at position %d after %d states", pos, len(ref.states))
		}
		tid, _ := r.Current()
		ref.states = append(ref.states, refState{tid: tid, rip: in.PC, r: c.R, rflags: c.Rflags()})
	}
	r.Access = func(a *reader.Access) { ref.accesses = append(ref.accesses, *a) }
	if err := r.RunTo(^uint64(0)); err != reader.ErrEnd {
		t.Fatalf("straight re-simulation: %v", err)
	}
	ref.end = r.Position()
	return ref
}

// memAt is what the reference says memory [addr, addr+n) held at pos:
// the value of the last access to each byte before pos.
func (ref *reference) memAt(addr uint64, n int, pos uint64) ([]byte, []bool) {
	data, known := make([]byte, n), make([]bool, n)
	for _, a := range ref.accesses {
		if a.Position >= pos {
			break
		}
		for i := 0; i < a.Size; i++ {
			b := a.Addr + uint64(i)
			if b >= addr && b < addr+uint64(n) {
				data[b-addr] = byte(a.Value >> (8 * i))
				known[b-addr] = true
			}
		}
	}
	return data, known
}

// writes lists the positions of the instructions that wrote [addr,
// addr+n), in order, one per instruction.
func (ref *reference) writes(addr, n uint64, write bool) []uint64 {
	var out []uint64
	for _, a := range ref.accesses {
		if a.Write != write || a.Addr >= addr+n || a.Addr+uint64(a.Size) <= addr {
			continue
		}
		if len(out) == 0 || out[len(out)-1] != a.Position {
			out = append(out, a.Position)
		}
	}
	return out
}

func openSession(t testing.TB, path string, fine uint64) *Session {
	t.Helper()
	return openSessionWith(t, path, Options{FineEvery: fine})
}

func openSessionWith(t testing.TB, path string, opts Options) *Session {
	t.Helper()
	s, err := OpenWith(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func symbol(t testing.TB, s *Session, name string) uint64 {
	t.Helper()
	sy, _ := s.Symbols()
	addr, _, ok := sy.LookupSymbol(name)
	if !ok {
		t.Fatalf("no symbol %s", name)
	}
	return addr
}
