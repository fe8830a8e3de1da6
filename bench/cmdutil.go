package bench

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// This file holds the plumbing the bench commands (bench/cmd/*) share: the
// -ttd flag, running a child and reading its CPU time from rusage, and the
// fail/check/format helpers.

// TTDFlag registers the -ttd flag (the ttd binary under test, bin/ttd by
// default). Read it through Abs after flag.Parse.
func TTDFlag() *string { return flag.String("ttd", "bin/ttd", "the ttd binary") }

// Abs returns p as an absolute path, or exits with the error.
func Abs(p string) string {
	a, err := filepath.Abs(p)
	Check(err)
	return a
}

// Result is what Run measured of one child.
type Result struct {
	CPU    time.Duration // user+system of the child and its waited-for descendants (rusage)
	Wall   time.Duration
	Stdout []byte
	Stderr []byte
}

// Run runs argv (argv[0] a path) with stdin read from the file stdin (none
// if empty) and env added to the environment, and returns its CPU time,
// wall time and output. A failed start or a non-zero exit is an error that
// carries the tail of the child's standard error.
func Run(argv []string, stdin string, env ...string) (Result, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	if stdin != "" {
		f, err := os.Open(stdin)
		if err != nil {
			return Result{}, err
		}
		defer f.Close()
		cmd.Stdin = f
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	r := Result{Wall: time.Since(start), Stdout: out.Bytes(), Stderr: errOut.Bytes()}
	if ps := cmd.ProcessState; ps != nil {
		r.CPU = ps.UserTime() + ps.SystemTime()
	}
	if err != nil {
		return r, fmt.Errorf("%s: %w\n%s", strings.Join(argv, " "), err, Tail(errOut.Bytes(), 2000))
	}
	return r, nil
}

// CPUTime runs argv like Run, its output discarded, and returns its CPU
// time. It exits on a failure that printed to standard error; a non-zero
// exit status with nothing on standard error is the guest program's own
// (ttd run passes it on), not a failure.
func CPUTime(argv []string) time.Duration {
	r, err := Run(argv, "")
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || len(bytes.TrimSpace(r.Stderr)) != 0) {
		Fail("%v", err)
	}
	return r.CPU
}

// Tail returns the last n bytes of b (all of b if shorter).
func Tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// Secs formats d as seconds with milliseconds, "-" for zero (not measured).
func Secs(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3fs", d.Seconds())
}

// Geomean returns the geometric mean of the non-zero values in vs, and
// false if there is none.
func Geomean(vs []float64) (float64, bool) {
	sum, n := 0.0, 0
	for _, v := range vs {
		if v != 0 {
			sum += math.Log(v)
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return math.Exp(sum / float64(n)), true
}

// Check exits with err's message if err is not nil.
func Check(err error) {
	if err != nil {
		Fail("%v", err)
	}
}

// Fail prints the message, prefixed by the command's name, and exits 1.
func Fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, filepath.Base(os.Args[0])+": "+format+"\n", args...)
	os.Exit(1)
}
