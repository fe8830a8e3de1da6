package gdbremote

import (
	"regexp"
	"sort"
	"strconv"
	"testing"

	"ttd/reader"
	"ttd/ttd"
	"ttd/x86"
)

// straightRun re-simulates a trace from its start with a hook on every
// instruction: the slow reference path. It returns the pc before every
// position and every write access.
func straightRun(t *testing.T, trace string) (pcs []uint64, writes []reader.Access) {
	t.Helper()
	tr, err := reader.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	r, err := tr.NewReplay(0)
	if err != nil {
		t.Fatal(err)
	}
	r.Hook = func(r *reader.Replay, c *x86.CPU, in *x86.Inst) { pcs = append(pcs, in.PC) }
	r.Access = func(a *reader.Access) {
		if a.Write {
			writes = append(writes, *a)
		}
	}
	if err := r.RunTo(^uint64(0)); err != reader.ErrEnd {
		t.Fatalf("straight re-simulation: %v", err)
	}
	return pcs, writes
}

// TestGDBPositionsMatchReplay drives real gdb through breakpoints,
// reverse and forward single steps, reverse-continue and continue to a
// watchpoint, printing the position after each (monitor when), on a
// session whose snapshot windows are small and odd-sized; every position
// must be the one a straight re-simulation from the start gives.
func TestGDBPositionsMatchReplay(t *testing.T) {
	prog, trace := recorded(t, "rev")
	out := gdbWith(t, prog, trace, ttd.Options{FineEvery: 3001, MicroEvery: 257},
		"break add", "continue", "monitor when", // 1: first call
		"continue", "monitor when", // 2: second call
		"reverse-stepi", "reverse-stepi", "reverse-stepi", "monitor when", // 3: in add's prologue
		"stepi", "monitor when", // 4
		"continue", "monitor when", // 5: the second call again
		"continue", "continue", "monitor when", // 6: fourth call
		"reverse-continue", "monitor when", // 7: third call
		"continue", "monitor when", // 8: fourth call
		// cell[3] is 0, 2, 6, 12 and 20: every write changes it, so
		// gdb stops at each.
		"delete", "watch -l cell[3]",
		"reverse-continue", "monitor when", // 9: before the write of 6
		"continue", "monitor when", // 10: after it
		"continue", "monitor when", // 11: after the write of 12
		"reverse-stepi", "monitor when", // 12: before it
		"delete", "reverse-continue", "monitor when") // 13: the start
	bpm := regexp.MustCompile(`Breakpoint 1 at 0x([0-9a-f]+)`).FindStringSubmatch(out)
	if bpm == nil {
		t.Fatalf("no breakpoint address in gdb's output:\n%s", out)
	}
	bp, _ := strconv.ParseUint(bpm[1], 16, 64)
	var got []uint64
	for _, m := range regexp.MustCompile(`position (\d+) of`).FindAllStringSubmatch(out, -1) {
		p, _ := strconv.ParseUint(m[1], 10, 64)
		got = append(got, p)
	}
	if len(got) != 13 {
		t.Fatalf("%d positions printed, want 13:\n%s", len(got), out)
	}

	pcs, writes := straightRun(t, trace)
	var calls []uint64
	for p, pc := range pcs {
		if pc == bp {
			calls = append(calls, uint64(p))
		}
	}
	if len(calls) != 5 {
		t.Fatalf("add's breakpoint address runs %d times in the straight re-simulation", len(calls))
	}
	// cell[3]: the address of the heap cell written with 6 (the third
	// iteration's counter*2).
	var cellWrites []uint64
	var cell uint64
	for _, w := range writes {
		if w.PC != 0 && w.Size == 4 && w.Value == 6 && w.Position > calls[2] && w.Position < calls[3] && cell == 0 {
			cell = w.Addr
		}
	}
	if cell == 0 {
		t.Fatal("no write of 6 to cell[3] between the third and fourth calls")
	}
	for _, w := range writes {
		if w.Addr < cell+4 && w.Addr+uint64(w.Size) > cell {
			if len(cellWrites) == 0 || cellWrites[len(cellWrites)-1] != w.Position {
				cellWrites = append(cellWrites, w.Position)
			}
		}
	}
	// prevWrite is the last write of cell[3] before p.
	prevWrite := func(p uint64) uint64 {
		i := sort.Search(len(cellWrites), func(i int) bool { return cellWrites[i] >= p })
		return cellWrites[i-1]
	}
	nextWrite := func(p uint64) uint64 {
		i := sort.Search(len(cellWrites), func(i int) bool { return cellWrites[i] >= p })
		return cellWrites[i]
	}
	want := []uint64{calls[0], calls[1], calls[1] - 3, calls[1] - 2, calls[1], calls[3], calls[2], calls[3]}
	w6 := prevWrite(calls[3])
	w12 := nextWrite(w6 + 1)
	want = append(want, w6, w6+1, w12+1, w12, 0)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("position %d: gdb's session is at %d, the straight re-simulation says %d (all: %v, want %v)\n%s",
				i+1, got[i], want[i], got, want, out)
		}
	}
}
