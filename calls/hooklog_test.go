package calls

import (
	"strings"
	"testing"

	"ttd/reader"
	"ttd/x86"
)

// TestLoggedHooksMatchExits: the call trees of programs that run
// threads, take signals and longjmp out of recursion and handlers are
// the same, row for row, whether the calls, rets and entries translated
// code meets are logged (reader.Replay.HookLog) or each leave for a Hook
// call (TTD_HOOKLOG=off), over short intervals and one pass.
func TestLoggedHooksMatchExits(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	// Every block translated at its first run, so that the logged
	// hooks run wherever there are hooks: signals.c, a short program,
	// ran one logged record by the default threshold, and none once
	// ld.so took the vDSO's path.
	on, threshold := x86.SetJIT(true, 0)
	defer x86.SetJIT(on, threshold)
	for _, c := range hardPrograms {
		exe := buildC(t, c.src, "-pthread")
		tr, sym := open(t, record(t, exe, c.every))
		analyze := func(logged bool) ([]string, uint64) {
			defer reader.SetHookLog(reader.SetHookLog(logged))
			n := loggedRecords.Load()
			p, err := Analyze(tr, sym, Options{Workers: 1, everyCheckpoint: true})
			if err != nil {
				t.Fatal(err)
			}
			var rows []string
			for _, th := range p.Threads {
				rows = append(rows, flat(th.Root)...)
			}
			return rows, loggedRecords.Load() - n
		}
		want, n0 := analyze(false)
		got, n := analyze(true)
		if n0 != 0 {
			t.Errorf("%s: %d records with logging off", c.src, n0)
		}
		if n == 0 {
			t.Errorf("%s: nothing logged", c.src)
		}
		t.Logf("%s: %d records, %d rows", c.src, n, len(got))
		sameRows(t, c.src+" (got: logged hooks, want: exits)", got, want)
	}
}

// sameRows reports the first row where got and want differ, if any.
func sameRows(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") == strings.Join(want, "\n") {
		return
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for k := 0; k < len(got) && k < len(want); k++ {
		if got[k] != want[k] {
			t.Errorf("%s, row %d:\n got %s\nwant %s", what, k, got[k], want[k])
			return
		}
	}
}
