package calls

import (
	"fmt"
	"strings"
	"testing"

	"ttd/symbols"
)

// TestNamesFromDWARF: the hooks look functions up in the ELF symbols
// only (Load), yet every call path is named, and every call site placed,
// as with all the modules' DWARF loaded: the DWARF of each address's
// compile unit (dwarfNamer). It needs a module whose ELF and DWARF names
// differ (libc's debug file: __GI___libc_malloc against __libc_malloc).
func TestNamesFromDWARF(t *testing.T) {
	exe := buildC(t, "testdata/deep.c")
	tr, sym := open(t, record(t, exe, 0))
	p, err := Analyze(tr, sym, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	refs, err := tr.Modules()
	if err != nil {
		t.Fatal(err)
	}
	var ms []symbols.Module
	for _, m := range refs {
		data, _ := tr.ModuleFile(m)
		ms = append(ms, symbols.Module{Path: string(m.Path), Data: data, LoadAddr: m.LoadAddr})
	}
	full, err := symbols.Load(ms)
	if full == nil {
		t.Fatal(err)
	}
	named, renamed := 0, 0
	p.Threads[0].Root.Walk(func(n *Node) bool {
		f, ok := full.FuncForPC(n.Entry)
		if ok && f.DWARF && f.Entry == n.Entry {
			named++
			if n.Func != f.Name {
				t.Errorf("%s: named %q, DWARF says %q", n.PathString(), n.Func, f.Name)
			}
			if elf, _, _ := sym.PCToFunc(n.Entry); elf != f.Name {
				renamed++
			}
		}
		if file, line, ok := full.PCToLine(n.Site); ok && n.Site != 0 {
			want := fmt.Sprintf("%s:%d", file[strings.LastIndexByte(file, '/')+1:], line)
			if n.SiteName != want {
				t.Errorf("%s: call site %q, DWARF says %q", n.PathString(), n.SiteName, want)
			}
		}
		return true
	})
	if named == 0 {
		t.Fatal("no path named from DWARF: the test tests nothing")
	}
	if renamed == 0 {
		t.Skipf("%d paths named from DWARF, none whose ELF name differs (no libc debug file?): the test checks little", named)
	}
	t.Logf("%d paths named from DWARF, %d of them unlike their ELF names", named, renamed)
}

// countingSym is a Symbolizer that names every address "f" at itself
// and counts the questions.
type countingSym struct{ funcs, lines int }

func (c *countingSym) PCToFunc(pc uint64) (string, uint64, bool) {
	c.funcs++
	return "f", pc, true
}

func (c *countingSym) PCToLine(pc uint64) (string, int, bool) {
	c.lines++
	return "f.c", int(pc), true
}

// TestImagesShareNames: finish names the functions and call sites of
// images that share a Symbolizer (a tree's processes of one program)
// once for all of them, and those of another Symbolizer with it.
func TestImagesShareNames(t *testing.T) {
	shared, other := &countingSym{}, &countingSym{}
	p := &Profile{syms: []Symbolizer{shared, shared, other}}
	for img := range p.syms {
		root := newRoot()
		c := root.child(key{0x2000, 0x1000, 0})
		c.Depth, c.Count = 1, 1
		p.Threads = append(p.Threads, &Thread{Tid: img + 1, Root: root, img: img})
	}
	p.finish(shared)
	if shared.funcs != 1 || shared.lines != 1 || other.funcs != 1 || other.lines != 1 {
		t.Errorf("questions: shared %+v, other %+v; want one of each", *shared, *other)
	}
	for _, th := range p.Threads {
		if c := th.Root.Children[0]; c.Func != "f" || c.SiteName != "f.c:8192" {
			t.Errorf("thread %d: %q at %q", th.Tid, c.Func, c.SiteName)
		}
	}
}
