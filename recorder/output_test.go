package recorder

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"ttd/emu"
	"ttd/tracefile"
)

// buildFixture compiles testdata/name.c with gcc (skipped loudly outside
// CI when gcc is missing; make deps installs it).
func buildFixture(t *testing.T, name string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("gcc is missing (make deps installs it)")
		}
		t.Skip("SKIP: gcc is missing (make deps installs it)")
	}
	out := filepath.Join(t.TempDir(), name)
	if b, err := exec.Command("gcc", "-O1", "-o", out, filepath.Join("testdata", name+".c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	return out
}

// recordedOutput records argv with stdout and stderr going to the given
// files and returns what the trace says the program printed on fd 1
// and 2, and the exit status.
func recordedOutput(t *testing.T, argv []string, stdout, stderr *os.File) ([2][]byte, emu.ExitStatus) {
	t.Helper()
	trace := filepath.Join(t.TempDir(), "t.ttd")
	st, _, err := Record(emu.Config{Path: argv[0], Args: argv, Stdout: stdout, Stderr: stderr}, Options{Path: trace})
	if err != nil {
		t.Fatalf("record %v: %v", argv, err)
	}
	r, err := tracefile.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out [2][]byte
	it := r.RecordsFrom(0)
	for {
		rec, err := it.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind == tracefile.KindOpaque && rec.Opaque.Tag == TagOutput {
			fd := binary.LittleEndian.Uint32(rec.Opaque.Bytes)
			out[fd-1] = append(out[fd-1], rec.Opaque.Bytes[4:]...)
		}
	}
	return out, st
}

// runNative runs argv with stdout and stderr to files and returns what
// they hold.
func runNative(t *testing.T, argv []string) [2][]byte {
	t.Helper()
	dir := t.TempDir()
	var files [2]*os.File
	for i := range files {
		f, err := os.Create(filepath.Join(dir, []string{"out", "err"}[i]))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files[i] = f
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = files[0], files[1]
	if err := cmd.Run(); err != nil {
		t.Fatalf("native %v: %v", argv, err)
	}
	var got [2][]byte
	for i, f := range files {
		got[i], _ = os.ReadFile(f.Name())
	}
	return got
}

// TestMovedOutput: what sendfile, splice, tee and copy_file_range send to
// stdout and stderr is logged as output, as write's is, so that ttd
// replay prints it. The host is the oracle: stdout a regular file (cat
// uses copy_file_range there) and a pipe (tee works only there).
func TestMovedOutput(t *testing.T) {
	moves := buildFixture(t, "moves")
	text := filepath.Join(t.TempDir(), "cat.txt")
	if err := os.WriteFile(text, bytes.Repeat([]byte("a line for cat to copy\n"), 5000), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{
		{moves, filepath.Join(t.TempDir(), "scratch")},
		{"/bin/cat", text},
	} {
		t.Run(filepath.Base(argv[0])+"/file", func(t *testing.T) {
			want := runNative(t, argv)
			dir := t.TempDir()
			stdout, _ := os.Create(filepath.Join(dir, "out"))
			stderr, _ := os.Create(filepath.Join(dir, "err"))
			defer stdout.Close()
			defer stderr.Close()
			got, st := recordedOutput(t, argv, stdout, stderr)
			if st.ExitCode() != 0 {
				t.Fatalf("exit %d", st.ExitCode())
			}
			for i, name := range []string{"stdout", "stderr"} {
				written, _ := os.ReadFile([]*os.File{stdout, stderr}[i].Name())
				if !bytes.Equal(written, want[i]) {
					t.Errorf("%s under record:\n%q\nnative:\n%q", name, cut(written), cut(want[i]))
				}
				if !bytes.Equal(got[i], want[i]) {
					t.Errorf("%s in the trace:\n%q\nnative:\n%q", name, cut(got[i]), cut(want[i]))
				}
			}
		})
	}
	t.Run("moves/pipe", func(t *testing.T) {
		argv := []string{moves, filepath.Join(t.TempDir(), "scratch")}
		cmd := exec.Command(argv[0], argv[1:]...)
		var nout, nerr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &nout, &nerr
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		read := make(chan []byte)
		go func() {
			b, _ := io.ReadAll(pr)
			read <- b
		}()
		stderr, _ := os.Create(filepath.Join(t.TempDir(), "err"))
		defer stderr.Close()
		got, _ := recordedOutput(t, argv, pw, stderr)
		pw.Close()
		piped := <-read
		if !bytes.Contains(nout.Bytes(), []byte("four: tee")) {
			t.Fatalf("native output lacks tee's line:\n%s", nout.Bytes())
		}
		if !bytes.Equal(piped, nout.Bytes()) || !bytes.Equal(got[0], nout.Bytes()) {
			t.Errorf("stdout through the pipe:\n%q\nin the trace:\n%q\nnative:\n%q", piped, got[0], nout.Bytes())
		}
		if !bytes.Equal(got[1], nerr.Bytes()) {
			t.Errorf("stderr in the trace:\n%q\nnative:\n%q", got[1], nerr.Bytes())
		}
	})
}

// cut shortens b for a failure message.
func cut(b []byte) []byte {
	if len(b) > 400 {
		return append(b[:400:400], "..."...)
	}
	return b
}
