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

// typesScript prints what types.c prints, reading the members through a
// cast to the typedef sample_t: bit-fields and floating-point members.
const typesScript = `#pragma D option quiet
fn::visit:entry {
	printf("%d %u %d %u %c %f %.3f %g %e\n", ((sample_t *)arg0)->id, ((sample_t *)arg0)->kind,
		((sample_t *)arg0)->delta, ((sample_t *)arg0)->wide, ((sample_t *)arg0)->tag,
		((sample_t *)arg0)->ratio, ((sample_t *)arg0)->weight, ((sample_t *)arg0)->weight,
		((sample_t *)arg0)->ratio);
}`

// TestTypedefBitfieldFloatMatchNative: casts through typedef names,
// bit-fields (signed and unsigned) and float/double members, -O0 and
// -O2, against the program's own printf.
func TestTypedefBitfieldFloatMatchNative(t *testing.T) {
	for _, opt := range []string{"-O0", "-O2"} {
		f := recordFixture(t, "types.c", "gcc", []string{opt}, "40")
		out, errs, _ := runScript(t, f.trace, typesScript, 2)
		if errs != "" {
			t.Fatalf("%s: stderr: %s", opt, errs)
		}
		if out != f.native {
			t.Errorf("%s: script printed\n%s\nthe program\n%s", opt, out, f.native)
		}
	}
	// A float truncates as an integer; compares as a number; a typedef
	// of a pointer to the struct is not a pointer cast; unknown typedefs
	// fail at bind with line:column.
	f := recordFixture(t, "types.c", "gcc", []string{"-O2"}, "40")
	out, errs, _ := runScript(t, f.trace, `#pragma D option quiet
fn::visit:entry /((sample_t *)arg0)->ratio > 2/ { @n = count(); @s = sum(((sample_t *)arg0)->weight); }
END { printa("%@d\n", @n); printa("%@d\n", @s); }`, 1)
	// ratio = i/4 - 1.5 > 2 for i >= 15: 25 samples; weight truncated
	// sums to sum(int(i*1250/7)) for i = 15..39.
	var sum int64
	for i := 15; i < 40; i++ {
		sum += int64(float64(i) * 1.25e3 / 7.0)
	}
	if want := "25\n" + itoa(uint64(sum)) + "\n"; out != want || errs != "" {
		t.Errorf("float predicate and sum: got %q (%s), want %q", out, errs, want)
	}
	tg := openCached(t, f.trace, false)
	for _, c := range []struct{ src, want string }{
		{"fn::visit:entry { trace(((nosuch_t *)arg0)->id); }", `1:26: unknown type "nosuch_t"`},
		{"fn::visit:entry { trace(((counter_t *)arg0)->id); }", `->id: counter_t * is not a pointer to a struct`},
	} {
		p, err := Compile(c.src, nil)
		if err != nil {
			t.Errorf("%q: compile: %v", c.src, err)
			continue
		}
		if _, err = p.Bind(tg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.src, err, c.want)
		}
	}
	// (a * b) stays a product, (x) a parenthesised expression.
	if _, err := Compile("BEGIN { a = 2; b = 3; trace((a * b)); trace((a)); exit(0); }", nil); err != nil {
		t.Errorf("product in parentheses: %v", err)
	}
}
