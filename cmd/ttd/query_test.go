package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// ttdCmd runs the ttd binary and returns its stdout, stderr and status.
func ttdCmd(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(ttdBinary, args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	status := 0
	if ee, ok := err.(*exec.ExitError); ok {
		status = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), status
}

// recordGlobals records ttd/testdata/globals.c (built with -O0 -g) and
// deletes the binary (its source is p.c): everything after must work from
// the trace alone.
func recordGlobals(t *testing.T, embed bool) string {
	src, err := os.ReadFile("../../ttd/testdata/globals.c")
	if err != nil {
		t.Fatal(err)
	}
	exe := buildC(t, string(src), "-O0", "-g")
	trace := filepath.Join(t.TempDir(), "g.ttd")
	args := []string{"record", "-o", trace}
	if embed {
		args = append(args, "--embed-binaries")
	}
	if out, errs, st := ttdCmd(t, append(args, "--", exe)...); st != 0 || out != "hi\n190 7 10\n" {
		t.Fatalf("record: status %d, stdout %q, stderr %s", st, out, errs)
	}
	if err := os.Remove(exe); err != nil {
		t.Fatal(err)
	}
	return trace
}

type queryJSON struct {
	Position uint64 `json:"position"`
	At       uint64 `json:"at"`
	NotFound bool   `json:"not_found"`
	Found    *struct {
		Position    uint64  `json:"position"`
		Kind        string  `json:"kind"`
		Source      string  `json:"source"`
		Function    string  `json:"function"`
		File        string  `json:"file"`
		Line        int     `json:"line"`
		Instruction string  `json:"instruction"`
		Before      string  `json:"before"`
		After       string  `json:"after"`
		AfterValue  *uint64 `json:"after_value"`
	} `json:"found"`
	Memory *struct {
		Bytes string `json:"bytes"`
		Known int    `json:"known"`
	} `json:"memory"`
	Registers *struct {
		Regs map[string]string `json:"regs"`
	} `json:"registers"`
	Backtrace *struct {
		Frames []struct {
			Function string `json:"function"`
		} `json:"frames"`
	} `json:"backtrace"`
}

func queryJSONOut(t *testing.T, args ...string) (queryJSON, int) {
	t.Helper()
	out, errs, st := ttdCmd(t, append([]string{"query", "--json"}, args...)...)
	var q queryJSON
	if err := json.Unmarshal([]byte(out), &q); err != nil {
		t.Fatalf("query %v: %v (stdout %q, stderr %q)", args, err, out, errs)
	}
	return q, st
}

// TestQueryFindPrevWrite chains --find-prev-write of a global through
// the binary, in text and JSON, after the program was deleted.
func TestQueryFindPrevWrite(t *testing.T) {
	t.Parallel()
	trace := recordGlobals(t, true)
	// Replay needs nothing but the trace.
	if _, errs, st := ttdCmd(t, "replay", "--verify", "--quiet", trace); st != 0 {
		t.Fatalf("replay --verify after deleting the binary: %s", errs)
	}
	// The replay summary as JSON.
	out, errs, st := ttdCmd(t, "replay", "--json", "--verify", "--segments", trace)
	var rep struct {
		Instructions uint64
		Exit         *struct {
			Kind string
			Code int
		}
		VerifiedCheckpoints *int
		VerifiedSegments    *int
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || st != 0 {
		t.Fatalf("replay --json: %v, status %d (stdout %q, stderr %q)", err, st, out, errs)
	}
	if rep.Instructions == 0 || rep.Exit == nil || rep.Exit.Kind != "exited" || rep.VerifiedCheckpoints == nil || *rep.VerifiedCheckpoints == 0 || rep.VerifiedSegments == nil {
		t.Fatalf("replay --json: %s", out)
	}
	if !strings.Contains(errs, "hi") {
		t.Fatalf("replay --json: the program's output goes to stderr; stderr %q", errs)
	}
	out, errs, st = ttdCmd(t, "query", trace, "--find-prev-write", "counter")
	if st != 0 {
		t.Fatalf("status %d: %s", st, errs)
	}
	for _, want := range []string{"write to ", "(counter) (4 bytes) at position ", "main+0x", "p.c:35)", "insn    movl $0x7", "07 00 00 00  (6 → 7)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// JSON, chained with --at: 7, then helper's 6, 5, then 2, 1.
	wantValues := []uint64{7, 6, 5, 2, 1}
	at := "end"
	for i, v := range wantValues {
		q, st := queryJSONOut(t, "--at", at, "--find-prev-write", "counter", trace)
		if st != 0 || q.Found == nil || q.Found.Kind != "write" || q.Found.AfterValue == nil || *q.Found.AfterValue != v {
			t.Fatalf("write %d from %s: status %d %+v", i, at, st, q.Found)
		}
		if q.Position != q.Found.Position || q.Found.Line == 0 || !strings.HasSuffix(q.Found.File, "p.c") {
			t.Fatalf("write %d: %+v", i, q)
		}
		if (v == 5 || v == 6) != strings.HasPrefix(q.Found.Function, "helper") {
			t.Fatalf("the write of %d is in %s", v, q.Found.Function)
		}
		if v == 1 && q.Found.Before != "?? ?? ?? ??" {
			t.Fatalf("before the first write: %q (never read: unknown)", q.Found.Before)
		}
		at = strconv.FormatUint(q.Position, 10)
	}
	q, st := queryJSONOut(t, "--at", at, "--find-prev-write", "counter", trace)
	if st != 1 || !q.NotFound {
		t.Fatalf("before the first write: status %d %+v", st, q)
	}
	out, _, st = ttdCmd(t, "query", "--at", at, "--find-prev-write", "counter", trace)
	if st != 1 || !strings.Contains(out, "no write to") {
		t.Fatalf("not found: status %d %q", st, out)
	}
}

// TestQueryState checks --mem, --regs, --where and the other finds.
func TestQueryState(t *testing.T) {
	t.Parallel()
	trace := recordGlobals(t, true)
	q, st := queryJSONOut(t, "--at", "end", "--mem", "never_touched:16", "--regs", trace)
	if st != 0 || q.Memory == nil || q.Memory.Known != 0 || !strings.HasPrefix(q.Memory.Bytes, "?? ??") {
		t.Fatalf("--mem never_touched: %d %+v", st, q.Memory)
	}
	// The next read of table[3] from the start, then the state there.
	q, st = queryJSONOut(t, "--at", "start", "--find-next-read", "table+24:8", "--mem", "table+24:8", "--regs", "--where", trace)
	if st != 0 || q.Found == nil || q.Found.Kind != "read" || *q.Found.AfterValue != 9 {
		t.Fatalf("--find-next-read: %d %+v", st, q.Found)
	}
	if q.Memory.Bytes != "09 00 00 00 00 00 00 00" {
		t.Fatalf("table[3] at its first read: %q", q.Memory.Bytes)
	}
	if q.Registers == nil || q.Registers.Regs["rip"] == "" || q.Backtrace == nil || len(q.Backtrace.Frames) < 2 ||
		q.Backtrace.Frames[0].Function == "" || !strings.HasPrefix(q.Backtrace.Frames[0].Function, "main") {
		t.Fatalf("--regs --where: %+v %+v", q.Registers, q.Backtrace)
	}
	out, _, st := ttdCmd(t, "query", "--at", "50%", "--regs", "--where", trace)
	if st != 0 || !strings.Contains(out, "rip ") || !strings.Contains(out, "backtrace (CFI") {
		t.Fatalf("--regs --where at 50%%: %d\n%s", st, out)
	}
	out, _, st = ttdCmd(t, "query", "--at", "start", "--find-next-write", "counter", trace)
	if st != 0 || !strings.Contains(out, "?? ?? ?? ?? → 01 00 00 00") {
		t.Fatalf("--find-next-write: %d\n%s", st, out)
	}
	// Bad input: one clear line, no stack trace.
	_, errs, st := ttdCmd(t, "query", "--at", "200%", "--regs", trace)
	if st != 2 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "percentage") {
		t.Fatalf("--at 200%%: %d %q", st, errs)
	}
	_, errs, st = ttdCmd(t, "query", "--find-prev-write", "no_such_symbol", trace)
	if st != 1 || !strings.Contains(errs, "no_such_symbol") || strings.Contains(errs, "goroutine") {
		t.Fatalf("unknown symbol: %d %q", st, errs)
	}
	_, errs, st = ttdCmd(t, "query", "--regs", filepath.Join(t.TempDir(), "missing.ttd"))
	if st != 1 || strings.Count(errs, "\n") != 1 {
		t.Fatalf("missing trace: %d %q", st, errs)
	}
	out, _, st = ttdCmd(t, "info", trace)
	for _, want := range []string{"instructions:", "threads:        1", "checkpoints:", "syscalls:", "size:", "bits/instruction", "exited with code 0"} {
		if st != 0 || !strings.Contains(out, want) {
			t.Fatalf("info lacks %q:\n%s", want, out)
		}
	}
}

// TestQueryWithoutBinary queries a trace whose binary is gone and was not
// embedded: addresses still work, names are reported missing.
func TestQueryWithoutBinary(t *testing.T) {
	t.Parallel()
	trace := recordGlobals(t, false)
	q, st := queryJSONOut(t, "--at", "end", "--regs", trace)
	if st != 0 || q.Registers == nil {
		t.Fatalf("--regs: %d", st)
	}
	_, errs, st := ttdCmd(t, "query", "--find-prev-write", "counter", trace)
	if st != 1 || !strings.Contains(errs, "counter") {
		t.Fatalf("a symbol without the binary: %d %q", st, errs)
	}
}

// TestQueryOrigin asks where counter's last value came from: globals.c
// stores the constant 7 in it.
func TestQueryOrigin(t *testing.T) {
	t.Parallel()
	trace := recordGlobals(t, true) // the binary is deleted: its copy in the trace has the symbols
	out, errs, st := ttdCmd(t, "query", "--json", "--origin", "counter", trace)
	var q struct {
		Origin []struct {
			Kind, Into, From, Function string
			Line                       int
		}
	}
	if err := json.Unmarshal([]byte(out), &q); err != nil || st != 0 {
		t.Fatalf("query --origin: %v, status %d (stdout %q, stderr %q)", err, st, out, errs)
	}
	if len(q.Origin) != 1 || q.Origin[0].Kind != "constant" || q.Origin[0].From != "$0x7" || !strings.HasPrefix(q.Origin[0].Function, "main+") {
		t.Fatalf("origin of counter: %+v, want the constant 7 stored in main", q.Origin)
	}
	out, _, st = ttdCmd(t, "query", "--origin", "counter", trace)
	if st != 0 || !strings.Contains(out, "constant [0x") || !strings.Contains(out, "← $0x7") {
		t.Fatalf("query --origin text:\n%s", out)
	}
}
