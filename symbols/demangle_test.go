package symbols

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
)

// c++filt is the oracle for demangling: every C++ function symbol of
// libstdc++ demangles as c++filt prints it.
func TestDemangleMatchesCxxfilt(t *testing.T) {
	needTools(t, "c++filt", "nm")
	lib := "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"
	out, err := exec.Command("nm", "-D", "--defined-only", lib).Output()
	if err != nil {
		t.Skipf("SKIPPING: nm -D %s: %v", lib, err)
	}
	var names []string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && (f[1] == "T" || f[1] == "W") && strings.HasPrefix(f[2], "_Z") {
			names = append(names, strings.SplitN(f[2], "@", 2)[0])
		}
	}
	if len(names) < 1000 {
		t.Fatalf("only %d C++ functions in %s", len(names), lib)
	}
	cmd := exec.Command("c++filt")
	cmd.Stdin = strings.NewReader(strings.Join(names, "\n") + "\n")
	filt, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(filt), "\n"), "\n")
	if len(want) != len(names) {
		t.Fatalf("c++filt gave %d lines for %d names", len(want), len(names))
	}
	bad := 0
	for i, n := range names {
		d, ok := Demangle(n)
		if !ok || d.Full != want[i] {
			bad++
			if bad <= 5 {
				t.Errorf("%s: got %q (%v), c++filt %q", n, d.Full, ok, want[i])
			}
		}
	}
	t.Logf("%d names, %d differ from c++filt", len(names), bad)
	for _, c := range [][3]string{
		{"_ZN3geo9manhattanEPKNS_5PointE", "geo::manhattan(geo::Point const*)", "geo::manhattan"},
		{"_Z5twiceIiET_S0_", "int twice<int>(int)", "twice<int>"},
		{"_ZN3AccIdE3addEd", "Acc<double>::add(double)", "Acc<double>::add"},
		{"_Z5riskyi.cold", "risky(int) [clone .cold]", "risky [clone .cold]"},
	} {
		if d, _ := Demangle(c[0]); d.Full != c[1] || d.Short != c[2] {
			t.Errorf("%s: got %+v, want %q and %q", c[0], d, c[1], c[2])
		}
	}
	if _, ok := Demangle("malloc"); ok {
		t.Error("malloc demangled")
	}
}
