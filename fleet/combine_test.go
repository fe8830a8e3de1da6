package fleet

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"

	"ttd/probe"
)

// TestProbeCombineFnGroupings: ProbeCombineFn's result does not depend
// on how the runner groups and orders the segments (any split into
// accumulators, inputs added in any order, accumulators merged in any
// tree): printed through FinishAcross, it is the local runner's output
// byte for byte. The scripts cut aggregations (printa, trunc, clear) and
// read in END the state the probes wrote last, over recordings given
// out of name order.
func TestProbeCombineFnGroupings(t *testing.T) {
	paths, _ := workTraces(t)
	order := []string{paths[2], paths[0], paths[1]}
	for _, src := range []string{
		`fn::work:entry { @c[arg0 % 3] = count(); @s = sum(arg0); last = arg0; }
fn::work:entry /arg0 == 3/ { printa(@c); trunc(@c, 1); }
fn::work:entry /arg0 == 5/ { printa("sum %@d\n", @s); clear(@s); }
syscall::write:entry { printf("%d bytes\n", arg2); }
END { printf("last=%d\n", last); }`,
	} {
		p, err := probe.Compile(src, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p.CarriesState() {
			t.Fatal("the script carries state: it would not take the combine plan")
		}
		var bs []*probe.Bound
		var parts []ProbePart
		for i, path := range order {
			tg, closeT, _, err := probe.OpenTarget(path, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer closeT()
			b, err := p.Bind(tg)
			if err != nil {
				t.Fatal(err)
			}
			bs = append(bs, b)
			for k := 0; k < b.Segments(); k++ {
				pt, err := b.EvalSegment(k, nil)
				if err != nil {
					t.Fatal(err)
				}
				renameTrace(pt, traceKey(i))
				parts = append(parts, ProbePart{Part: pt})
			}
		}
		lo, err := p.Run(bs, probe.RunOptions{Jobs: 2})
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		lo.Print(&want, &want)
		if !bytes.Contains(want.Bytes(), []byte("last=")) || !bytes.Contains(want.Bytes(), []byte("sum ")) {
			t.Fatalf("the local output lacks what the test checks:\n%s", want.String())
		}
		rng := rand.New(rand.NewSource(1))
		var fn ProbeCombineFn
		for trial := 0; trial < 6; trial++ {
			perm := rng.Perm(len(parts))
			nacc := 1 + rng.Intn(7)
			accs := make([]ProbeAcc, nacc)
			for i := range accs {
				accs[i] = fn.CreateAccumulator()
			}
			for _, i := range perm {
				a := rng.Intn(nacc)
				// The input as the runner hands it over: decoded anew.
				b, err := encodeProbePart(parts[i])
				if err != nil {
					t.Fatal(err)
				}
				in, err := decodeProbePart(b)
				if err != nil {
					t.Fatal(err)
				}
				accs[a] = fn.AddInput(accs[a], in)
			}
			for len(accs) > 1 {
				i := rng.Intn(len(accs) - 1)
				m := fn.MergeAccumulators(accs[i], accs[i+1])
				if rng.Intn(2) == 0 {
					m = fn.MergeAccumulators(accs[i+1], accs[i])
				}
				accs = append(append(accs[:i:i], m), accs[i+2:]...)
			}
			res := fn.ExtractOutput(accs[0])
			if res.Segments != len(parts) {
				t.Fatalf("trial %d: %d segments merged, want %d", trial, res.Segments, len(parts))
			}
			o := p.FinishAcross(bs[0], bs[len(bs)-1], res.Part)
			var got bytes.Buffer
			o.Print(&got, &got)
			if got.String() != want.String() {
				t.Fatalf("trial %d (%d accumulators): combined output differs from local:\n--- combined\n%s--- local\n%s", trial, nacc, got.String(), want.String())
			}
		}
	}
}

// TestProbeBeamURL: recordings named by URLs of a Beam filesystem (the
// in-memory one, which the workers share in this process): the probe
// prints what the local runner prints over the same files.
func TestProbeBeamURL(t *testing.T) {
	paths, _ := workTraces(t)
	var urls []string
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		u := fmt.Sprintf("memfs://fleet-url-test/t%d.ttd", i)
		memfs.Write(u, b)
		urls = append(urls, u)
	}
	ctx := context.Background()
	listed, err := List(ctx, "memfs://fleet-url-test/*.ttd")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(listed) != fmt.Sprint(urls) {
		t.Fatalf("listed %v, want %v", listed, urls)
	}
	sc := Script{Src: `fn::work:entry { @n[arg0 & 1] = count(); @s = sum(arg0); }`}
	local, _, _, err := runProbe(t, sc, paths, false)
	if err != nil {
		t.Fatal(err)
	}
	p, err := sc.Compile()
	if err != nil {
		t.Fatal(err)
	}
	var bs []*probe.Bound
	for _, u := range listed {
		tg, closeT, _, err := OpenTarget(ctx, u, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer closeT()
		if tg.Name != u {
			t.Fatalf("target named %q, want the URL %q", tg.Name, u)
		}
		b, err := p.Bind(tg)
		if err != nil {
			t.Fatal(err)
		}
		bs = append(bs, b)
	}
	t.Cleanup(Cleanup)
	o, plan, err := RunProbe(ctx, ProbeRun{Script: sc, Program: p, Bound: bs, Tmp: t.TempDir(),
		Run: func(pl *beam.Pipeline) error { return run(t, pl) }})
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	o.Print(&got, &got)
	if got.String() != local || plan != PlanCombine {
		t.Fatalf("plan %v, output over URLs:\n%s\nlocal:\n%s", plan, got.String(), local)
	}
	// A URL that names nothing is named in the error.
	if _, _, _, err := OpenTarget(ctx, "memfs://fleet-url-test/none.ttd", false, nil); err == nil ||
		!bytes.Contains([]byte(err.Error()), []byte("memfs://fleet-url-test/none.ttd")) {
		t.Fatalf("missing URL: %v", err)
	}
}
