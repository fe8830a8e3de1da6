package syscalls

import "testing"

// TestQuote: strings as strace 6.1 -x prints them (taken from its output).
func TestQuote(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"hello\n", 32, `"hello\n"`},
		{"hello\t\r\v\f", 32, `"hello\t\r\v\f"`},
		{"hello\x1b", 32, `"\x68\x65\x6c\x6c\x6f\x1b"`},
		{"hello\x1b", 4, `"hell"...`},
		{"ab", 32, `"ab"`},
		{"ab\x00", 32, `"\x61\x62\x00"`},
		{"abc\x7f", 32, `"\x61\x62\x63\x7f"`},
		{"caf\xc3\xa9", 32, `"\x63\x61\x66\xc3\xa9"`},
		{`say "hi" \ bye`, 32, `"say \"hi\" \\ bye"`},
		{"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ", 32, `"abcdefghijklmnopqrstuvwxyz012345"...`},
		{"", 32, `""`},
		{"whole", -1, `"whole"`},
	} {
		if got := string(appendQuoted(nil, []byte(c.in), c.max)); got != c.want {
			t.Errorf("%q -s %d: got %s, want %s", c.in, c.max, got, c.want)
		}
	}
}
