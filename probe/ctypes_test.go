package probe

import (
	"strings"
	"testing"
)

// structs.c prints every member of each struct item it visits; a
// script reading them through casts to the program's DWARF types
// prints the same lines.
func TestDWARFMembersMatchNative(t *testing.T) {
	for _, opt := range []string{"-O0", "-O2"} {
		f := recordFixture(t, "structs.c", "gcc", []string{opt}, "25")
		out, errs, _ := runScript(t, f.trace, `#pragma D option quiet
fn::visit:entry {
	this->it = arg0;
	printf("%d %s %s %d %d %u %d %d\n", ((struct item *)arg0)->id, ((struct item *)arg0)->label,
		stringof(((struct item *)arg0)->name), ((struct item *)arg0)->pos.x, ((struct item *)this->it)->pos.y,
		((struct item *)arg0)->flags, ((struct item *)arg0)->v.i,
		((struct item *)arg0)->next ? ((struct item *)arg0)->next->id : -1);
}`, 2)
		if errs != "" {
			t.Fatalf("%s: stderr: %s", opt, errs)
		}
		if out != f.native {
			t.Errorf("%s: script printed\n%s\nthe program\n%s", opt, out, f.native)
		}
	}
}

// TestDWARFTypeErrors: unknown types and members, and -> on a
// non-pointer, fail at bind with line:column.
func TestDWARFTypeErrors(t *testing.T) {
	f := recordFixture(t, "structs.c", "gcc", []string{"-O2"}, "25")
	tg := openCached(t, f.trace, false)
	for _, c := range []struct{ src, want string }{
		{"fn::visit:entry { trace(((struct nosuch *)arg0)->id); }", `1:26: unknown type "struct nosuch"`},
		{"fn::visit:entry {\n trace(((struct item *)arg0)->idx); }", `2:31: struct item has no member named "idx"`},
		{"fn::visit:entry { trace(((struct item *)arg0)->pos->x); }", `1:53: ->x: struct point is not a pointer to a struct`},
		{"fn::visit:entry { trace(((struct item *)arg0).id); }", `1:47: .id: struct item * is not a struct`},
		{"fn::visit:entry { trace(arg0->id); }", `1:31: ->id: the left side has no struct type`},
	} {
		p, err := Compile(c.src, nil)
		if err != nil {
			t.Errorf("%q: compile: %v", c.src, err)
			continue
		}
		_, err = p.Bind(tg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.src, err, c.want)
		}
	}
	if _, err := Compile("fn::visit:entry { trace(((struct item)arg0)); }", nil); err == nil || !strings.Contains(err.Error(), "cannot cast to struct item itself") {
		t.Errorf("cast to a struct: %v", err)
	}
}
