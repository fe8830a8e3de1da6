package calls

import (
	"bytes"
	"fmt"
	"testing"
)

// TestCallIntoCodeWithoutSymbols: jitcall.c calls code it copied into an
// anonymous mapping, through a register, 700 times from run(). The callee
// has no symbol, so its frame is named by its entry, which the register
// gives: the path must be main → run → 0xENTRY with the mapping's address
// the program printed, each of the 700 calls counted there, 3 instructions
// each, whatever the checkpoint interval.
func TestCallIntoCodeWithoutSymbols(t *testing.T) {
	exe := buildC(t, "testdata/jitcall.c")
	for _, every := range []uint64{1 << 20, 499} {
		t.Run(fmt.Sprint(every), func(t *testing.T) {
			path, printed := recordPrinting(t, exe, every)
			var entry uint64
			var sum int
			if _, err := fmt.Sscanf(string(printed), "0x%x %d", &entry, &sum); err != nil {
				t.Fatalf("output %q: %v", printed, err)
			}
			tr, sym := open(t, path)
			p, err := Analyze(tr, sym, Options{Workers: 2, everyCheckpoint: true})
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("%#x", entry)
			ns := find(p.Threads[0].Root, "main", "run", name)
			if len(ns) != 1 {
				t.Fatalf("no single path main → run → %s:\n%s", name, flatString(p))
			}
			if n := ns[0]; n.Count != 700 || n.Entry != entry || n.Self != 700*3 {
				t.Errorf("main → run → %s: count %d entry %#x self %d, want 700, %#x, 2100", name, n.Count, n.Entry, n.Self, entry)
			}
			// A program recorded from its first instruction has no
			// frames the recording did not show: no row for them, not
			// even an empty one.
			for _, c := range p.Threads[0].Root.Children {
				if c.Site == unknownSite {
					t.Errorf("a row %q (count %d, total %d) in a recording that shows every frame", c.Func, c.Count, c.Total)
				}
			}
			if every < 1000 {
				if want := flatString(analyzeSequential(t, tr, sym)); flatString(p) != want {
					t.Errorf("intervals of %d: tree\n%s\nwant (one pass)\n%s", every, flatString(p), want)
				}
			}
		})
	}
}

func flatString(p *Profile) string {
	var b bytes.Buffer
	for _, th := range p.Threads {
		for _, l := range flat(th.Root) {
			fmt.Fprintln(&b, l)
		}
	}
	return b.String()
}
