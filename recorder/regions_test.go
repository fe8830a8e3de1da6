package recorder

import (
	"fmt"
	"strings"
	"testing"

	"ttd/emu"
)

type opLog struct{ ops []string }

func (l *opLog) munmap(lo, hi uint64) { l.ops = append(l.ops, fmt.Sprintf("munmap %x-%x", lo, hi)) }
func (l *opLog) mmap(g emu.Region) {
	s := fmt.Sprintf("mmap %x-%x %d %s", g.Start, g.End, g.Prot, g.Name)
	if g.Obj != 0 {
		s += fmt.Sprintf(" obj %d+%x", g.Obj, g.Off)
	}
	l.ops = append(l.ops, s)
}
func (l *opLog) mprotect(lo, hi uint64, prot int) {
	l.ops = append(l.ops, fmt.Sprintf("mprotect %x-%x %d", lo, hi, prot))
}

// TestDiffRegions pins what each change of the address space is logged
// as: a grown heap is an Mmap of the new pages only (it was an unmap of
// the whole heap, which made the re-simulation forget its bytes), a
// protection change an Mprotect, a discard an Munmap.
func TestDiffRegions(t *testing.T) {
	heap := func(lo, hi uint64) emu.Region { return emu.Region{Start: lo, End: hi, Prot: 3, Name: "[heap]"} }
	anon := func(lo, hi uint64, prot int) emu.Region { return emu.Region{Start: lo, End: hi, Prot: prot} }
	shm := func(lo, hi uint64, prot int, obj, off uint64) emu.Region {
		return emu.Region{Start: lo, End: hi, Prot: prot, Obj: obj, Off: off}
	}
	for _, c := range []struct {
		name     string
		old, cur []emu.Region
		dropped  []emu.Range
		want     string
	}{
		{"brk grows", []emu.Region{heap(0x1000, 0x3000)}, []emu.Region{heap(0x1000, 0x5000)}, nil,
			"mmap 3000-5000 3 [heap]"},
		{"brk shrinks", []emu.Region{heap(0x1000, 0x5000)}, []emu.Region{heap(0x1000, 0x3000)}, []emu.Range{{Start: 0x3000, End: 0x5000}},
			"munmap 3000-5000"},
		{"mprotect middle", []emu.Region{anon(0x1000, 0x5000, 3)}, []emu.Region{anon(0x1000, 0x2000, 3), anon(0x2000, 0x3000, 1), anon(0x3000, 0x5000, 3)}, nil,
			"mprotect 2000-3000 1"},
		{"fixed mapping over", []emu.Region{anon(0x1000, 0x5000, 3)}, []emu.Region{anon(0x1000, 0x5000, 3)}, []emu.Range{{Start: 0x2000, End: 0x3000}},
			"munmap 2000-3000; mmap 2000-3000 3 "},
		{"dropped outside any region", []emu.Region{anon(0x1000, 0x2000, 3)}, []emu.Region{anon(0x1000, 0x2000, 3)}, []emu.Range{{Start: 0x5000, End: 0x9000}},
			""},
		{"renamed", []emu.Region{anon(0x1000, 0x3000, 1)}, []emu.Region{{Start: 0x1000, End: 0x3000, Prot: 1, Name: "/lib/x.so"}}, nil,
			"munmap 1000-3000; mmap 1000-3000 1 /lib/x.so"},
		{"moved", []emu.Region{anon(0x1000, 0x3000, 3)}, []emu.Region{anon(0x8000, 0xa000, 3)}, nil,
			"munmap 1000-3000; mmap 8000-a000 3 "},
		{"adjacent new", []emu.Region{anon(0x1000, 0x2000, 3)}, []emu.Region{anon(0x1000, 0x2000, 3), anon(0x2000, 0x3000, 5)}, nil,
			"mmap 2000-3000 5 "},
		// Shared memory: another object, or the same at another
		// offset, under the same name is another mapping; an
		// mprotect of a piece keeps it (the offsets follow the start).
		{"another shared object", []emu.Region{shm(0x1000, 0x3000, 3, 1, 0)}, []emu.Region{shm(0x1000, 0x3000, 3, 2, 0)}, nil,
			"munmap 1000-3000; mmap 1000-3000 3  obj 2+0"},
		{"shared at another offset", []emu.Region{shm(0x1000, 0x3000, 3, 1, 0)}, []emu.Region{shm(0x1000, 0x3000, 3, 1, 0x1000)}, nil,
			"munmap 1000-3000; mmap 1000-3000 3  obj 1+1000"},
		{"shared mprotect", []emu.Region{shm(0x1000, 0x4000, 3, 1, 0)}, []emu.Region{shm(0x1000, 0x2000, 3, 1, 0), shm(0x2000, 0x3000, 1, 1, 0x1000), shm(0x3000, 0x4000, 3, 1, 0x2000)}, nil,
			"mprotect 2000-3000 1"},
		{"shared piece dropped", []emu.Region{shm(0x1000, 0x4000, 3, 1, 0)}, []emu.Region{shm(0x1000, 0x4000, 3, 1, 0)}, []emu.Range{{Start: 0x2000, End: 0x3000}},
			"munmap 2000-3000; mmap 2000-3000 3  obj 1+1000"},
	} {
		var l opLog
		diffRegions(c.old, c.cur, c.dropped, &l)
		if got := strings.Join(l.ops, "; "); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
