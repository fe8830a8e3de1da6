package probe

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"ttd/emu"
	"ttd/reader"
	"ttd/recorder"
)

// hookLogScript fires on every function's entry and return (arguments,
// return values, tail calls), on malloc with a thread-local, and prints
// positions and threads: everything the records carry.
const hookLogScript = `#pragma D option quiet
fn:::entry { @e[probefunc] = count(); @a[probefunc] = sum(arg0 & 0xffff); @b = sum(arg5 & 0xff); }
fn:::return { @r[probefunc] = count(); @v[probefunc] = sum(retval & 0xffff); }
fn::malloc:entry { self->n++; printf("%d %d %d\n", pos, tid, arg0); }
fn::malloc:return /self->n/ { @self = sum(self->n); }
`

// TestLoggedHooksMatchExits: scripts whose fn probes fire from logged
// hooks (probe/hooklog.go) print the same as with every probed
// instruction leaving translated code (TTD_HOOKLOG=off), over programs
// with threads, signals and longjmp, cut into short segments.
func TestLoggedHooksMatchExits(t *testing.T) {
	buildCalls(t) // the build directory, and gcc
	for _, src := range []string{"threads_signals.c", "setjmp_longjmp.c", "signals.c"} {
		abs, _ := filepath.Abs(filepath.Join("../testdata/corpus", src))
		exe := filepath.Join(build.dir, "hooklog-"+src[:len(src)-2])
		if b, err := exec.Command("gcc", "-O1", "-g", "-pthread", "-o", exe, abs).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, b)
		}
		trace := exe + ".ttd"
		null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		st, _, err := recorder.Record(emu.Config{Path: exe, Args: []string{exe}, Env: []string{"PATH=/usr/bin:/bin"}, Stdout: null, Stderr: null},
			recorder.Options{Path: trace, CheckpointEvery: 30011})
		null.Close()
		if err != nil || st.Code != 0 {
			t.Fatalf("recording %s: %v %v", src, st, err)
		}
		run := func(script string, logged bool) (string, uint64) {
			defer reader.SetHookLog(reader.SetHookLog(logged))
			n := loggedRecords.Load()
			out, errs, _ := runScript(t, trace, script, 2)
			return out + errs, loggedRecords.Load() - n
		}
		for _, script := range []string{hookLogScript, countLogScript} {
			want, n0 := run(script, false)
			got, n := run(script, true)
			if n0 != 0 || n == 0 {
				t.Errorf("%s: %d records logging, %d with exits", src, n, n0)
			}
			if len(want) < 100 {
				t.Errorf("%s: the script printed only %q", src, want)
			}
			if got != want {
				t.Errorf("%s: logging printed\n%s\nwith exits\n%s", src, got, want)
			}
			t.Logf("%s: %d records, %d bytes of output", src, n, len(got))
		}
	}
}

// countLogScript is counts keyed by the probe only, which logged records
// add to without an event (countLogged: 352,184 of setjmp_longjmp's),
// beside a return probe (not counted so) and a clause that prints and
// clears them.
const countLogScript = `#pragma D option quiet
fn:::entry { @[probefunc] = count(); }
fn:::return { @r[probefunc, probename] = count(); }
fn::malloc:entry { printa("%s %@d\n", @); clear(@); }
`
