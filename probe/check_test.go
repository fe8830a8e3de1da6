package probe

import (
	"errors"
	"strings"
	"testing"
)

// A bad script fails before anything runs, with line:column naming the
// bad part.
func TestCheckErrors(t *testing.T) {
	for _, c := range []struct {
		src, at, msg string
	}{
		{"syscall::write:entry { @[execnam] = count(); }", "1:26", `undefined variable "execnam"`},
		{"BEGIN {\n  x = 1;\n  printf(\"%d\\n\", y);\n}", "3:18", `undefined variable "y"`},
		{"fn::f:entry { self->ts = timestamp; }\nfn::f:return { @t = avg(timestamp - self->tss); }", "2:37", "self->tss"},
		{"BEGIN { printf(\"%d %s\\n\", 1); }", "1:9", "takes 2 arguments, given 1"},
		{"BEGIN { @a = count(); @a = sum(1); }", "1:23", "@a is count() at 1:9"},
		{"BEGIN { @a[1] = count(); @a[1, 2] = count(); }", "1:26", "has 1 keys"},
		{"BEGIN { foo(1); }", "1:9", `unknown function "foo"`},
		{"BEGIN { x = count(); }", "1:13", "aggregating function"},
		{"BEGIN { printa(@nope); }", "1:16", "undefined aggregation @nope"},
		{"nosuch:::entry { }", "1:1", `unknown provider "nosuch"`},
		{"syscall::read:start { }", "1:1", `no probe named "start"`},
		{"BEGIN { trace(this->x); }", "1:15", "this->x is used before"},
		{"BEGIN { pid = 3; }", "1:9", "built-in"},
		{"BEGIN { x = $2; }", "1:13", "macro argument $2"},
		{"BEGIN { x = (struct foo)arg0; }", "1:14", "cannot cast to struct foo itself"},
		{"BEGIN { x = arg0->; }", "1:19", "expected a member name after ->"},
		{"BEGIN { x = 1 }\nEND { trace(x) ", "2:16", "found end of script"},
		{"BEGIN { x = \"abc; }", "1:13", "unterminated string"},
		{"BEGIN { @q = lquantize(arg0, 0, x, 1); }", "1:33", "constant"},
		{"#pragma D option destructive\nBEGIN {}", "1:1", "never change"},
		{"BEGIN / x == 1 { }", "1:16", `expected "/"`},
	} {
		_, err := Compile(c.src, []string{"1"})
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%q: error %v, want a script error at %s", c.src, err, c.at)
			continue
		}
		if e.Pos.String() != c.at || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%q: %v, want %s: ...%s...", c.src, err, c.at, c.msg)
		}
	}
}

func TestCompileGood(t *testing.T) {
	for _, src := range []string{
		"syscall::openat:entry { @files[copyinstr(arg1)] = count(); }",
		"syscall::write:entry { @[execname] = quantize(arg2); }",
		"#pragma D option flowindent\nfn::main:entry { self->f = 1; }\nfn:::entry, fn:::return /self->f/ {}\nfn::main:return /self->f/ { self->f = 0; exit(0); }",
		"BEGIN { a[\"x\", 1] = 2; } END { printf(\"%d %s %5.2s|%-4d|%x\\n\", a[\"x\", 1], \"s\", \"abc\", 3, 255); }",
		"fn::f:return /arg1 > 0 && (arg1 / 2) > 1/ { @m = max(arg1); @l = lquantize(arg1, 0, 100, 10); printa(\"%d %@d\\n\", @l); trunc(@m, 2); clear(@l); }",
		"BEGIN { s = speculation(); speculate(s); printf(\"x\"); } END { commit(s); }",
		"/* c */ BEGIN // c\n{ x = 1 ? 2 : 3; x += 4; x++; --x; this->y = (int)x; trace(this->y); }",
	} {
		if _, err := Compile(src, nil); err != nil {
			t.Errorf("%q: %v", src, err)
		}
	}
}

// evalBegin runs a script's BEGIN and END clauses without a trace.
func evalBegin(p *Program) *Outcome {
	b := &Bound{P: p, T: &Target{Name: "none"}}
	for _, cl := range p.Script.Clauses {
		for _, pr := range cl.Probes {
			switch pr.Name {
			case "BEGIN":
				b.begin = append(b.begin, cl)
			case "END":
				b.end = append(b.end, cl)
			}
		}
	}
	o := &Outcome{Aggs: map[string]AggTable{}, Printed: map[string]bool{}, p: p}
	begin := specialEval(b, b.begin, nil, 0)
	o.fold(begin)
	o.fold(specialEval(b, b.end, composeState(nil, begin.Writes, nil), 1))
	return o
}

func TestBeginEnd(t *testing.T) {
	p, err := Compile(`#pragma D option quiet
BEGIN { x = 6; y = 0; a["k"] = 3; @c["a"] = count(); @c["a"] = count(); @c["b"] = count(); @s = sum(x * 7); }
BEGIN { printf("%d %d %s|%5d|%-3s|%x\n", x / 2, x % 4, "str", 42, "ab", 255); }
BEGIN { printf("dropped: a faulting firing records nothing\n"); z = x / y; printf("not reached\n"); }
END { printf("end %d %d\n", x, a["k"]); @q = quantize(1); @q = quantize(3); @q = quantize(3); }`, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := evalBegin(p)
	var out, errs strings.Builder
	o.Print(&out, &errs)
	want := "3 2 str|   42|ab |ff\nend 6 3\n\n  b                                                                 1\n  a                                                                 2\n\n               42\n\n" +
		"           value  ------------- Distribution ------------- count    \n" +
		"               0 |                                         0        \n" +
		"               1 |@@@@@@@@@@@@@                            1        \n" +
		"               2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@              2        \n" +
		"               4 |                                         0        \n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	if o.Faults != 1 || !strings.Contains(errs.String(), "divide-by-zero") || !strings.Contains(errs.String(), "at 4:71") {
		t.Errorf("faults %d, stderr %q: want one divide-by-zero at 4:71", o.Faults, errs.String())
	}
}

func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		"syscall::openat:entry { @files[copyinstr(arg1)] = count(); }",
		"BEGIN { x = 1 + 2 * 3; printf(\"%d\\n\", x); exit(0); }",
		"fn::f:entry /self->x == 0 && arg0 > 3/ { self->x = arg0; @q = quantize(arg0); }",
		"#pragma D option quiet\nBEGIN { a[1,\"s\"] = 2; trace(a[1,\"s\"]); }",
		"BEGIN { @l = lquantize(7, 0, 10, 2); printa(\"%d %@d\\n\", @l); trunc(@l, 1); clear(@l); }",
		"fn::\"mix<int, long>\":entry, fn:\"a:b\"::return { trace(((item_t *)arg0)->x); trace((a * b)); }",
		"BEGIN { this->s = strjoin(\"a\", lltostr(12)); printf(\"%s %d %s\", substr(this->s, 1, 2), strlen(this->s), basename(\"/a/b\")); }",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		p, err := Compile(src, []string{"1", "x"})
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%q: error without a position: %v", src, err)
			}
			return
		}
		// The evaluator must not panic either: BEGIN and END run
		// without a trace (memory reads fault).
		o := evalBegin(p)
		var out, errs strings.Builder
		o.Print(&out, &errs)
	})
}

// Unless quiet, printf's text follows the probe's name after a space
// (trace's data brings its own), and the column header comes before the
// first such line, after a printa that came earlier.
func TestPrintLines(t *testing.T) {
	p, err := Compile(`BEGIN { @c = count(); printa(@c); printf("x %d\n", 1); trace(5); }`, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out, errs strings.Builder
	evalBegin(p).Print(&out, &errs)
	want := "\n                1\nPOS           TID  PROBE\n0               0  BEGIN x 1\n 5\n"
	if out.String() != want {
		t.Errorf("got\n%q\nwant\n%q", out.String(), want)
	}
}
