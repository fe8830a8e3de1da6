package probe

import "testing"

// TestNeedsDWARF: only scripts that read memory, name source lines or
// the program's types, or symbolise addresses load DWARF.
func TestNeedsDWARF(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want bool
	}{
		{`fn::malloc:entry { @[probefunc] = count(); }`, false},
		{`fn:::entry { @[probefunc] = count(); } fn::free:return /retval == 0/ { @r = sum(arg1); }`, false},
		{`syscall::write:entry { @ = quantize(arg2); }`, false},
		{`fn::malloc:entry { printf("%a\n", arg0); }`, true},
		{`fn::malloc:entry { @[usym(arg0)] = count(); }`, true},
		{`fn::malloc:entry { ustack(); }`, true},
		{`fn::malloc:entry { @[copyinstr(arg0)] = count(); }`, true},
		{`line:prog.c:12 { @ = count(); }`, true},
		{"fn::malloc:entry { trace(`counter); }", true},
	} {
		p, err := Compile(tc.src, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		if got := p.NeedsDWARF(); got != tc.want {
			t.Errorf("%s: NeedsDWARF %v, want %v", tc.src, got, tc.want)
		}
	}
}
