package ttd

import (
	"strings"
	"testing"
)

// TestOrigin follows values of origin.c back to where they came from.
func TestOrigin(t *testing.T) {
	prog := buildC(t, "origin")
	path := recordProg(t, prog, 50_000)
	s := openSession(t, path, 0)
	syms, _ := s.Symbols()
	fnOf := func(pc uint64) string {
		// "0x… main+0x31 (file:line)"
		f := strings.Fields(Describe(syms, pc))
		if len(f) < 2 {
			return ""
		}
		name, _, _ := strings.Cut(f[1], "+")
		return name
	}
	show := func(chain []OriginLink) string {
		var b strings.Builder
		for _, l := range chain {
			b.WriteString("\n  " + l.Kind.String() + " " + l.Into + " ← " + l.From + "  " + l.Disasm + " in " + fnOf(l.PC))
		}
		return b.String()
	}

	// source: the constant 41, through a, b, pass's argument v, its
	// local and its return value.
	chain, err := s.Origin(symbol(t, s, "source"), 4, s.End())
	if err != nil {
		t.Fatal(err)
	}
	last := chain[len(chain)-1]
	if last.Kind != OriginConstant || last.From != "$0x29" || fnOf(last.PC) != "main" {
		t.Fatalf("source's origin does not end at the constant 41 in main:%s", show(chain))
	}
	kinds := map[OriginKind]int{}
	inPass := 0
	for _, l := range chain {
		kinds[l.Kind]++
		if fnOf(l.PC) == "pass" {
			inPass++
		}
	}
	if chain[0].Kind != OriginStore || kinds[OriginLoad] < 3 || kinds[OriginStore] < 4 || inPass < 2 {
		t.Fatalf("source's origin should go from the store through loads and spills in main and pass:%s", show(chain))
	}
	if p := s.Position(); p != 0 {
		t.Fatalf("Origin moved the session to %d", p)
	}

	// copied: memcpy of the bytes read(2) put in buf.
	chain, err = s.Origin(symbol(t, s, "copied"), 8, s.End())
	if err != nil {
		t.Fatal(err)
	}
	last = chain[len(chain)-1]
	if last.Kind != OriginSyscall || last.Into != (loc{mem: true, addr: symbol(t, s, "buf"), size: 8}).String() || string(last.Value) != "ABCDEFGH" {
		t.Fatalf("copied's origin should end at read(2)'s write of buf:%s", show(chain))
	}

	// moved+4: memmove of moved (overlapping), which memcpy filled
	// from copied, which memcpy filled from buf: back to read(2).
	chain, err = s.Origin(symbol(t, s, "moved")+4, 8, s.End())
	if err != nil {
		t.Fatal(err)
	}
	last = chain[len(chain)-1]
	if last.Kind != OriginSyscall || last.Into != (loc{mem: true, addr: symbol(t, s, "buf"), size: 8}).String() || string(last.Value) != "ABCDEFGH" {
		t.Fatalf("moved's origin should end at read(2)'s write of buf, through memmove, memcpy and memcpy:%s", show(chain))
	}
	var through []string
	for _, l := range chain {
		if l.Kind == OriginStore || l.Kind == OriginCopy {
			through = append(through, l.Into)
		}
	}
	moved, copied := symbol(t, s, "moved"), symbol(t, s, "copied")
	want := []string{loc{mem: true, addr: moved + 4, size: 8}.String(), loc{mem: true, addr: moved, size: 8}.String(),
		loc{mem: true, addr: copied, size: 8}.String()}
	if strings.Join(through, " ") != strings.Join(want, " ") {
		t.Fatalf("moved's origin should store into %v, got %v:%s", want, through, show(chain))
	}

	// computed: made by arithmetic in main.
	chain, err = s.Origin(symbol(t, s, "computed"), 4, s.End())
	if err != nil {
		t.Fatal(err)
	}
	if last = chain[len(chain)-1]; last.Kind != OriginComputed || fnOf(last.PC) != "main" {
		t.Fatalf("computed's origin should end at arithmetic in main:%s", show(chain))
	}

	// Bytes nobody wrote.
	chain, err = s.Origin(symbol(t, s, "untouched")+4096, 1, s.End())
	if err != nil || len(chain) != 1 || chain[0].Kind != OriginUnseen {
		t.Fatalf("origin of bytes never written: %v%s", err, show(chain))
	}
}
