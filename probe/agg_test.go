package probe

import (
	"math/rand"
	"reflect"
	"testing"
)

// The merge law: for every aggregating function, keyed or not, folding
// the values of any split of the events, merged in any grouping and
// order, gives what folding them all in one go gives.

var lawDecls = []*aggDecl{
	{Fn: "count"}, {Fn: "sum"}, {Fn: "min"}, {Fn: "max"}, {Fn: "avg"}, {Fn: "stddev"},
	{Fn: "quantize"}, {Fn: "lquantize", Low: -100, High: 1000, Step: 50},
}

type obs struct {
	key []Value
	v   int64
}

func randObs(r *rand.Rand, n int, keyed bool) []obs {
	out := make([]obs, n)
	for i := range out {
		var k []Value
		if keyed {
			k = []Value{strVal([]string{"a", "b", "c", "d"}[r.Intn(4)]), intVal(int64(r.Intn(3)))}
		}
		v := int64(r.Intn(2000)) - 200
		if r.Intn(10) == 0 {
			v = r.Int63() - r.Int63()
		}
		out[i] = obs{k, v}
	}
	return out
}

func foldObs(d *aggDecl, os []obs) AggTable {
	t := AggTable{}
	for _, o := range os {
		d.add(&t.entry(o.key).State, o.v, 1)
	}
	return t
}

func normalize(t AggTable) AggTable {
	for _, e := range t {
		if len(e.State.Buckets) == 0 {
			e.State.Buckets = nil
		}
		for b, n := range e.State.Buckets {
			if n == 0 {
				delete(e.State.Buckets, b)
			}
		}
	}
	return t
}

func TestMergeLaw(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for _, d := range lawDecls {
		for _, keyed := range []bool{false, true} {
			for trial := 0; trial < 50; trial++ {
				os := randObs(r, r.Intn(200), keyed)
				want := normalize(foldObs(d, os))
				// Split at random points, fold each part, merge the parts
				// in a random order and grouping.
				var parts []AggTable
				for i := 0; i < len(os); {
					j := i + r.Intn(len(os)-i+1)
					parts = append(parts, foldObs(d, os[i:j])) // empty parts too
					i = j
				}
				r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
				for len(parts) > 1 {
					i := r.Intn(len(parts) - 1)
					parts[i].merge(parts[i+1])
					parts = append(parts[:i+1], parts[i+2:]...)
				}
				got := AggTable{}
				if len(parts) == 1 {
					got = parts[0]
				}
				got = normalize(got)
				if len(want) != len(got) {
					t.Fatalf("%s keyed=%v: %d keys, want %d", d.Fn, keyed, len(got), len(want))
				}
				for k, e := range want {
					g := got[k]
					if g == nil || !reflect.DeepEqual(e.State, g.State) || d.value(&e.State) != d.value(&g.State) {
						t.Fatalf("%s keyed=%v key %q: got %+v, want %+v", d.Fn, keyed, k, g, e)
					}
				}
			}
		}
	}
}

// TestSeriesLaw: with clear and trunc among the events, concatenating
// the series of any split and folding them in order gives the sequential
// result.
func TestSeriesLaw(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	d := &aggDecl{Fn: "sum"}
	type ev struct {
		o  obs
		op string
		n  int64
	}
	for trial := 0; trial < 200; trial++ {
		var evs []ev
		for i := 0; i < 60; i++ {
			switch r.Intn(12) {
			case 0:
				evs = append(evs, ev{op: opClear})
			case 1:
				evs = append(evs, ev{op: opTrunc, n: int64(r.Intn(3))})
			default:
				evs = append(evs, ev{o: randObs(r, 1, true)[0]})
			}
		}
		series := func(es []ev, seq0 int) AggSeries {
			var s AggSeries
			for i, e := range es {
				if e.op != "" {
					s.cut(e.op, e.n, uint64(seq0+i), uint64(seq0+i))
					continue
				}
				t := s.open()
				d.add(&t.entry(e.o.key).State, e.o.v, 1)
			}
			return s
		}
		fold := func(s AggSeries) AggTable {
			cur := AggTable{}
			for _, p := range s {
				cur.merge(p.Table)
				cur = d.apply(cur, p.Op, p.N)
			}
			return normalize(cur)
		}
		want := fold(series(evs, 0))
		// Split into segments, merge them in a random order and grouping.
		var segs []AggSeries
		for i := 0; i < len(evs); {
			j := i + 1 + r.Intn(len(evs)-i)
			s := series(evs[i:j], i)
			s.seal("t", len(segs))
			segs = append(segs, s)
			i = j
		}
		r.Shuffle(len(segs), func(i, j int) { segs[i], segs[j] = segs[j], segs[i] })
		for len(segs) > 1 {
			i := r.Intn(len(segs) - 1)
			segs[i] = mergeSeries(segs[i], segs[i+1])
			segs = append(segs[:i+1], segs[i+2:]...)
		}
		all := segs[0]
		for i, p := range all {
			if p.Op == opNone && i != len(all)-1 {
				t.Fatalf("trial %d: a segment's last part was not joined to the next", trial)
			}
		}
		got := fold(all)
		if len(got) != len(want) {
			t.Fatalf("trial %d: %d keys, want %d", trial, len(got), len(want))
		}
		for k, e := range want {
			if got[k] == nil || got[k].State.Sum != e.State.Sum {
				t.Fatalf("trial %d key %q: got %+v, want %+v", trial, k, got[k], e)
			}
		}
	}
}

func TestQuantizeBuckets(t *testing.T) {
	for _, c := range []struct {
		v   int64
		low int64
	}{{0, 0}, {1, 1}, {2, 2}, {3, 2}, {4, 4}, {1023, 512}, {1024, 1024}, {-1, -1}, {-5, -4}} {
		if got := quantizeLow(quantizeBucket(c.v)); got != c.low {
			t.Errorf("quantize(%d) is in the bucket of %d, want %d", c.v, got, c.low)
		}
	}
	d := &aggDecl{Fn: "lquantize", Low: 0, High: 100, Step: 10}
	for _, c := range []struct {
		v int64
		b int
	}{{-1, 0}, {0, 1}, {9, 1}, {10, 2}, {99, 10}, {100, 11}, {1000, 11}} {
		if got := d.lquantizeBucket(c.v); got != c.b {
			t.Errorf("lquantize(%d) = bucket %d, want %d", c.v, got, c.b)
		}
	}
}
