package ttd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTargetCxx: libstdc++ values as gdb's printers show them, their
// children, and v[i] and v.size() in expressions (g++ -O0 -g).
func TestTargetCxx(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("g++ not installed")
		}
		t.Skip("SKIPPED LOUDLY: g++ not installed (make deps installs it)")
	}
	src, _ := filepath.Abs("testdata/cxxstl.cpp")
	prog := filepath.Join(t.TempDir(), "cxxstl")
	if b, err := exec.Command("g++", "-O0", "-g", "-std=c++17", "-o", prog, src).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, b)
	}
	tg := NewTarget(openSession(t, recordProg(t, prog, 0), 0))
	line := 0
	b, _ := os.ReadFile(src)
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "MARK print") {
			line = i + 1
		}
	}
	addrs, _, err := tg.LineAddrs(src, line)
	if err != nil {
		t.Fatal(err)
	}
	q := Query{Exec: map[uint64]bool{}}
	for _, a := range addrs {
		q.Exec[a] = true
	}
	st, err := tg.Search(t.Context(), Forward, q)
	if err != nil || st.Reason != SearchExec {
		t.Fatalf("to the print: %v %v", st, err)
	}
	for expr, want := range map[string]string{
		"s":          `"hello, recording"`,
		"v":          "std::vector of length 3, capacity 3 = {1, 2, 3}",
		"w.size()":   "100000",
		"w[50000]":   "100000",
		"a":          "std::array of length 4 = {10, 20, 30, 40}",
		"a[2]":       "30",
		"d.size()":   "301",
		"d[0]":       "-1",
		"d[100]":     "99",
		"d[300]":     "299",
		"l":          `std::list with 3 elements = {"one", "two", "three"}`,
		"m":          `std::map with 3 elements = {["apple"] = 1, ["banana"] = 2, ["cherry"] = 3}`,
		"m.size()":   "3",
		"st":         "std::set with 3 elements = {3, 5, 9}",
		"um":         "std::unordered_map with 1 elements = {[7] = 70}",
		"us":         "std::unordered_set with 1 elements = {42}",
		"up->x":      "",
		"*sp":        "",
		"o":          "std::optional<int> = {[contained value] = 5}",
		"none":       "std::optional<int> [no contained value]",
		"s.length()": "16",
		"v.empty()":  "0",
	} {
		if want == "" {
			continue
		}
		v, err := tg.Eval(st.Tid, 0, expr)
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		if v.Value != want {
			t.Errorf("%s = %q, want %q", expr, v.Value, want)
		}
	}
	for expr, want := range map[string]string{"up": "std::unique_ptr<Point> = {get() = 0x", "sp": "std::shared_ptr<int> (use count 2, weak count 0) = {get() = 0x"} {
		v, err := tg.Eval(st.Tid, 0, expr)
		if err != nil || !strings.HasPrefix(v.Value, want) {
			t.Errorf("%s = %q (%v), want %q...", expr, v.Value, err, want)
			continue
		}
		kids, _ := v.Children()
		if len(kids) != 1 || !strings.HasPrefix(kids[0].Name, "*") {
			t.Errorf("%s: children %+v, want the pointee", expr, kids)
		}
	}
	v, _ := tg.Eval(st.Tid, 0, "w")
	if v.Children == nil {
		t.Fatal("w has no children")
	}
	kids, _ := v.Children()
	if len(kids) != 1000 || kids[999].Name != "[999]" || kids[999].Value != "1998" {
		t.Errorf("w's children: %d, last %+v", len(kids), kids[len(kids)-1])
	}
	v, _ = tg.Eval(st.Tid, 0, "m")
	kids, _ = v.Children()
	if len(kids) != 3 || kids[1].Name != `["banana"]` || kids[1].Value != "2" {
		t.Errorf("m's children: %+v", kids)
	}
}
