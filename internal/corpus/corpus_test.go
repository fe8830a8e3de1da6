package corpus

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// wantStatus lists the programs that are expected to end with a status other
// than 0 natively (the end-to-end test compares with whatever native gives).
var wantStatus = map[string]int{
	"abort":        134,
	"cxx_uncaught": 134,
	"exit_code":    42,
	"segv_crash":   139,
	"go_exit":      3,
	"go_panic":     2,
	"system/gofmt": 1, // gofmt -d exits 1 when it found differences
}

// nativeSlots limits how many programs run at the same time.
var nativeSlots = make(chan struct{}, 2)

// TestNative runs every program natively twice and checks that the runs are
// identical and end with the expected status.
func TestNative(t *testing.T) {
	progs := append(Build(t), System(t)...)
	if len(progs) == 0 {
		t.Fatal("no programs")
	}
	for _, p := range progs {
		p := p
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			nativeSlots <- struct{}{}
			defer func() { <-nativeSlots }()
			var runs [2]*Result
			for i := range runs {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				r, err := p.Run(ctx)
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				if r.TimedOut {
					t.Fatalf("run %d timed out", i+1)
				}
				runs[i] = r
			}
			a, b := runs[0], runs[1]
			base, _, _ := strings.Cut(p.Name, "/")
			if strings.HasPrefix(p.Name, "system/") {
				base = p.Name
			}
			if want := wantStatus[base]; a.Status != want {
				t.Errorf("status %s, want %d; stderr:\n%s", a.Describe(), want, Tail(a.Stderr, 10))
			}
			if a.Status != b.Status {
				t.Errorf("status differs between runs: %s vs %s", a.Describe(), b.Describe())
			}
			if d := FirstDifference(a.Stdout, b.Stdout); d != "" {
				t.Errorf("stdout differs between two native runs: %s", d)
			}
			if !bytes.Equal(a.Stderr, b.Stderr) {
				t.Errorf("stderr differs between two native runs:\n%s\n---\n%s", Tail(a.Stderr, 10), Tail(b.Stderr, 10))
			}
			if len(a.Stdout) == 0 {
				t.Errorf("no output")
			}
			if testing.Verbose() {
				t.Logf("%s: %d bytes of stdout, %d of stderr, status %s, %v", p.Name, len(a.Stdout), len(a.Stderr),
					a.Describe(), a.Duration.Round(time.Millisecond))
			}
		})
	}
}

func TestFirstDifference(t *testing.T) {
	if d := FirstDifference([]byte("a\nb\n"), []byte("a\nb\n")); d != "" {
		t.Errorf("equal outputs: %q", d)
	}
	d := FirstDifference([]byte("a\nb\nc\n"), []byte("a\nB\nc\n"))
	if !strings.Contains(d, "line 2") || !strings.Contains(d, `"b\n"`) || !strings.Contains(d, `"B\n"`) {
		t.Errorf("got %q", d)
	}
	d = FirstDifference([]byte("a\n"), []byte("a\nextra"))
	if !strings.Contains(d, "line 2") || !strings.Contains(d, "end of output") {
		t.Errorf("got %q", d)
	}
	if got := Tail([]byte("1\n2\n3\n4\n"), 2); got != "3\n4\n" {
		t.Errorf("Tail = %q", got)
	}
}
