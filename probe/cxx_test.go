package probe

import (
	"sort"
	"strings"
	"testing"
)

// cxx.cpp counts its own calls (templates, a namespace, overloads) and
// throws, and prints the counts: fn probes named by demangled names
// (with or without parameters, wildcards, or mangled) and libstdc++'s
// usdt throw/catch probes must count the same.
func TestCxxDemangledAndThrowProbes(t *testing.T) {
	f := recordFixture(t, "cxx.cpp", "g++", []string{"-O1"}, "30")
	out, errs, _ := runScript(t, f.trace, `#pragma D option quiet
fn::Acc<int>::add:entry { @["Acc<int>::add"] = count(); }
fn::Acc<double>::add(double):entry { @["Acc<double>::add"] = count(); }
fn::twice<int>:entry { @["twice<int>"] = count(); }
fn::*twice<double>*:entry { @["twice<double>"] = count(); }
fn:a.out:geo::manhattan:entry { @["geo::manhattan"] = count(); }
fn::geo::scale(int):entry { @["geo::scale(int)"] = count(); }
fn::_ZN3geo5scaleEl:entry { @["geo::scale(long)"] = count(); }
usdt:libstdc++*:libstdcxx:throw { @["throws"] = count(); }
usdt:libstdc++*:libstdcxx:catch { @["caught"] = count(); }
fn::"mix<int, long>":entry { @["mix<int, long>"] = count(); }
fn::"int mix<int, long>(int, long)":entry, fn::"long mix<long, int>(long, int)":entry /probefunc == "long mix<long, int>(long, int)"/ { @["mix<long, int>"] = count(); }
END { printa("%s %@d\n", @); }
`, 2)
	if errs != "" {
		t.Fatalf("stderr: %s", errs)
	}
	var want []string
	for _, l := range strings.Split(strings.TrimSpace(f.native), "\n") {
		if !strings.HasPrefix(l, "sum ") {
			want = append(want, l)
		}
	}
	got := strings.Split(strings.TrimSpace(out), "\n")
	sort.Strings(want)
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("script counted\n%s\nthe program\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// probefunc is the demangled name, as c++filt prints it.
	out, _, _ = runScript(t, f.trace, `#pragma D option quiet
fn::geo::*:entry { @[probefunc] = count(); }
END { printa("%s|%@d\n", @); }`, 1)
	for _, w := range []string{"geo::manhattan(geo::Point const*)|30\n", "geo::scale(int)|30\n", "geo::scale(long)|30\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	// ustack from a usdt probe in the middle of __cxa_throw unwinds
	// through CFI to the throwing function.
	out, _, _ = runScript(t, f.trace, `usdt:libstdc++*:libstdcxx:throw { @[ustack(3)] = count(); }`, 1)
	if !strings.Contains(out, "`__cxa_throw+0x") || !strings.Contains(out, "`risky+0x") {
		t.Errorf("ustack at the throw probe:\n%s", out)
	}
	// flowindent shows demangled names too.
	out, _, _ = runScript(t, f.trace, `#pragma D option flowindent
fn::risky:entry /arg0 == 4/ { self->on = 1; }
fn:a.out::entry, fn:a.out::return /self->on/ { }
fn::risky:return /self->on/ { self->on = 0; }`, 1)
	if !strings.Contains(out, "-> risky(int)") || !strings.Contains(out, "<- risky(int)") {
		t.Errorf("flowindent lacks risky(int):\n%s", out)
	}
}

// TestQuotedProbeNames: a quoted part of a probe description is literal
// (colons, commas, wildcard characters); an unterminated one is an
// error at its line:column.
func TestQuotedProbeNames(t *testing.T) {
	p, err := Compile(`fn::"mix<int, long>":entry, fn:"lib*.so":"operator*(int)":return, usdt:"a:b":p:n { @ = count(); }`, nil)
	if err != nil {
		t.Fatal(err)
	}
	pr := p.Script.Clauses[0].Probes
	if len(pr) != 3 || pr[2].Mod != "a:b" || pr[2].Func != "p" || pr[0].Func != "mix<int, long>" || pr[0].Name != "entry" || pr[1].Mod != `lib\*.so` || pr[1].Func != `operator\*(int)` || pr[1].Name != "return" {
		t.Errorf("parsed %+v", pr)
	}
	if !glob(pr[1].Func, "operator*(int)") || glob(pr[1].Func, "operator+(int)") {
		t.Error("a quoted * is not literal")
	}
	if _, err := Compile("BEGIN {}\n  fn::\"mix<int, long:entry { }", nil); err == nil || !strings.Contains(err.Error(), "2:3: unterminated quote") {
		t.Errorf("unterminated quote: %v", err)
	}
}
