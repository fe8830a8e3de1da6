package main

import (
	"slices"
	"testing"
)

func TestParseEnv(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		bad  bool
	}{
		{in: "", want: nil},
		{in: "TTD_WINDOW=1", want: []string{"TTD_WINDOW=1"}},
		{in: "A=1,,B=", want: []string{"A=1", "B="}},
		{in: "A=x=y", want: []string{"A=x=y"}},
		{in: "A", bad: true},
		{in: "A=1,=2", bad: true},
	} {
		got, err := parseEnv(c.in)
		if (err != nil) != c.bad || !slices.Equal(got, c.want) {
			t.Errorf("parseEnv(%q) = %q, %v; want %q, error %v", c.in, got, err, c.want, c.bad)
		}
	}
}

// TestModeEnv: -env reaches the -ttd binary's configurations and no
// other, so that -before, native and qemu run as they would without it.
func TestModeEnv(t *testing.T) {
	env := []string{"TTD_WINDOW=1"}
	for _, mode := range modeNames {
		want := mode == "run" || mode == "record" || mode == "recfast" || mode == "recpass" ||
			mode == "replay" || mode == "rpl" || mode == "rplay"
		if got := modeEnv(mode, env); slices.Equal(got, env) != want {
			t.Errorf("modeEnv(%q) = %q, want the -env list: %v", mode, got, want)
		}
	}
}
