package probe

import (
	"math"
	"math/bits"
	"slices"
)

// The aggregating functions and their merge law. Every aggregation's
// state is a commutative monoid: merging partial states of any split of
// the events, in any grouping and any order, gives the state of all the
// events (agg_test.go checks it for every function, keyed ones too).

var aggFuncs = map[string]bool{"count": true, "sum": true, "min": true, "max": true, "avg": true,
	"stddev": true, "quantize": true, "lquantize": true}

// AggState is the state of one aggregation for one key.
type AggState struct {
	N   int64 `json:"n,omitempty"`   // values seen
	Sum int64 `json:"sum,omitempty"` // their sum (sum, avg, stddev)
	// SumSq is the 128-bit sum of squares (stddev): Hi, Lo.
	SqHi uint64 `json:"sqhi,omitempty"`
	SqLo uint64 `json:"sqlo,omitempty"`
	Min  int64  `json:"min,omitempty"`
	Max  int64  `json:"max,omitempty"`
	// Buckets counts values by bucket (quantize: see quantizeBucket;
	// lquantize: see lquantizeBucket).
	Buckets map[int]int64 `json:"b,omitempty"`
}

// aggDecl is what the script says of an aggregation: its function, the
// number of keys and, for lquantize, the constant parameters.
type aggDecl struct {
	Name            string
	Fn              string
	NKeys           int
	Low, High, Step int64 // lquantize
	pos             Pos
	// addrKeys marks the keys a printa prints as code addresses (%a,
	// %A): over several programs (a process tree) they are symbolised
	// when aggregated, in the program the event ran in (symKeys).
	addrKeys []bool
}

// add folds one value into s.
func (d *aggDecl) add(s *AggState, v int64, incr int64) {
	switch d.Fn {
	case "count":
		s.N++
		return
	case "quantize":
		if s.Buckets == nil {
			s.Buckets = map[int]int64{}
		}
		s.Buckets[quantizeBucket(v)] += incr
		s.N++
		return
	case "lquantize":
		if s.Buckets == nil {
			s.Buckets = map[int]int64{}
		}
		s.Buckets[d.lquantizeBucket(v)] += incr
		s.N++
		return
	}
	if s.N == 0 || v < s.Min {
		s.Min = v
	}
	if s.N == 0 || v > s.Max {
		s.Max = v
	}
	s.N++
	s.Sum += v
	if d.Fn == "stddev" {
		a := uint64(v)
		if v < 0 {
			a = uint64(-v)
		}
		hi, lo := bits.Mul64(a, a)
		var c uint64
		s.SqLo, c = bits.Add64(s.SqLo, lo, 0)
		s.SqHi += hi + c
	}
}

// mergeState folds b into a: the merge law.
func mergeState(a, b *AggState) {
	if b.N == 0 && len(b.Buckets) == 0 {
		return
	}
	if a.N == 0 || b.Min < a.Min {
		a.Min = b.Min
	}
	if a.N == 0 || b.Max > a.Max {
		a.Max = b.Max
	}
	a.N += b.N
	a.Sum += b.Sum
	var c uint64
	a.SqLo, c = bits.Add64(a.SqLo, b.SqLo, 0)
	a.SqHi += b.SqHi + c
	for k, n := range b.Buckets {
		if a.Buckets == nil {
			a.Buckets = map[int]int64{}
		}
		a.Buckets[k] += n
	}
}

// quantizeBucket is DTrace's power-of-two bucket: 0 for 0, i+1 for
// values in [2^i, 2^(i+1)), -(i+1) for their negatives.
func quantizeBucket(v int64) int {
	switch {
	case v == 0:
		return 0
	case v > 0:
		return bits.Len64(uint64(v))
	}
	if v == math.MinInt64 {
		return -64
	}
	return -bits.Len64(uint64(-v))
}

// quantizeLow is the smallest value of a bucket.
func quantizeLow(b int) int64 {
	switch {
	case b == 0:
		return 0
	case b > 0:
		return int64(1) << (b - 1)
	}
	if b == -64 {
		return math.MinInt64
	}
	return -(int64(1) << (-b - 1))
}

// lquantizeBucket: 0 below Low, 1+i for [Low+i*Step, Low+(i+1)*Step),
// levels+1 at or above High.
func (d *aggDecl) lquantizeBucket(v int64) int {
	levels := int((d.High - d.Low) / d.Step)
	if v < d.Low {
		return 0
	}
	if v >= d.High {
		return levels + 1
	}
	return 1 + int((v-d.Low)/d.Step)
}

// value is what the aggregation reports for sorting and printing (not
// the quantizations, which print their buckets).
func (d *aggDecl) value(s *AggState) int64 {
	switch d.Fn {
	case "count":
		return s.N
	case "sum":
		return s.Sum
	case "min":
		return s.Min
	case "max":
		return s.Max
	case "avg":
		if s.N == 0 {
			return 0
		}
		return s.Sum / s.N
	case "stddev":
		return stddev(s)
	}
	// quantize, lquantize sort by the sum of their counts.
	var n int64
	for _, c := range s.Buckets {
		n += c
	}
	return n
}

// stddev is sqrt(E[x^2] - E[x]^2), as DTrace computes it, in integers.
func stddev(s *AggState) int64 {
	if s.N == 0 {
		return 0
	}
	sq := float64(s.SqHi)*math.Exp2(64) + float64(s.SqLo)
	n := float64(s.N)
	mean := float64(s.Sum) / n
	v := sq/n - mean*mean
	if v < 0 {
		v = 0
	}
	return int64(math.Sqrt(v))
}

// AggEntry is one key of an aggregation and its state.
type AggEntry struct {
	Keys  []Value  `json:"keys,omitempty"`
	State AggState `json:"state"`
}

// AggTable is an aggregation's entries by encoded key.
type AggTable map[string]*AggEntry

func (t AggTable) entry(keys []Value) *AggEntry {
	k := keyString(keys)
	e := t[k]
	if e == nil {
		e = &AggEntry{Keys: slices.Clone(keys)}
		t[k] = e
	}
	return e
}

// entryBuf is entry without allocating for a key already present; buf
// is scratch space.
func (t AggTable) entryBuf(keys []Value, buf *[]byte) *AggEntry {
	*buf = appendKey((*buf)[:0], keys)
	if e := t[string(*buf)]; e != nil {
		return e
	}
	e := &AggEntry{Keys: slices.Clone(keys)}
	t[string(*buf)] = e
	return e
}

// merge folds b into t.
func (t AggTable) merge(b AggTable) {
	for k, e := range b {
		mine := t[k]
		if mine == nil {
			mine = &AggEntry{Keys: e.Keys}
			t[k] = mine
		}
		mergeState(&mine.State, &e.State)
	}
}

func (t AggTable) clone() AggTable {
	out := AggTable{}
	for k, e := range t {
		c := &AggEntry{Keys: e.Keys, State: e.State}
		if e.State.Buckets != nil {
			c.State.Buckets = map[int]int64{}
			for b, n := range e.State.Buckets {
				c.State.Buckets[b] = n
			}
		}
		out[k] = c
	}
	return out
}

// Aggregation operations that cut the merge law: they need everything
// before them (clear, trunc) or show it (printa).
const (
	opNone  = ""
	opClear = "clear"
	opTrunc = "trunc"
	opSnap  = "printa"
)

// AggPart is the events of an aggregation up to an operation at
// (Pos, Seq) of segment Seg: Table accumulates the values since the
// previous part's operation; then Op applies to everything so far. The
// last part of a segment (Last) has no operation: its values come after
// the segment's last operation. SegFrom and StartsSeg say where the
// part's values begin (Merge joins a segment's last part to the next
// segment's first).
type AggPart struct {
	Table     AggTable `json:"table"`
	Op        string   `json:"op,omitempty"`
	N         int64    `json:"n,omitempty"` // trunc's count
	Pos       uint64   `json:"pos,omitempty"`
	Seq       uint64   `json:"seq,omitempty"`
	Trace     string   `json:"trace,omitempty"`
	Seg       int      `json:"seg"`
	SegFrom   int      `json:"seg_from"`
	StartsSeg bool     `json:"starts_seg,omitempty"`
	Last      bool     `json:"last,omitempty"`
}

// order is the part's place among all parts of a trace: where its
// values end.
func (p *AggPart) order() (string, int, uint64) {
	if p.Op == opNone {
		return p.Trace, p.Seg, ^uint64(0)
	}
	return p.Trace, p.Seg, p.Seq
}

func partLess(a, b *AggPart) bool {
	at, as, aq := a.order()
	bt, bs, bq := b.order()
	if at != bt {
		return at < bt
	}
	if as != bs {
		return as < bs
	}
	return aq < bq
}

// AggSeries is one aggregation's partial result: parts in order. A
// segment's series is usually one part without operation.
type AggSeries []AggPart

func (s *AggSeries) open() AggTable {
	if len(*s) == 0 || (*s)[len(*s)-1].Op != opNone {
		*s = append(*s, AggPart{Table: AggTable{}})
	}
	return (*s)[len(*s)-1].Table
}

// cut ends the open part with an operation at (pos, seq).
func (s *AggSeries) cut(op string, n int64, pos, seq uint64) {
	s.open()
	p := &(*s)[len(*s)-1]
	p.Op, p.N, p.Pos, p.Seq = op, n, pos, seq
}

// seal marks a segment's series with its place, ending it with an open
// part.
func (s *AggSeries) seal(trace string, seg int) {
	if len(*s) == 0 || (*s)[len(*s)-1].Op != opNone {
		*s = append(*s, AggPart{Table: AggTable{}})
	}
	for i := range *s {
		p := &(*s)[i]
		p.Trace, p.Seg, p.SegFrom, p.StartsSeg, p.Last = trace, seg, seg, i == 0, i == len(*s)-1
	}
}

// mergeSeries combines the parts of two partial results, in trace and
// position order whatever the order of a and b; a segment's last part
// and the next segment's first merge by the merge law.
func mergeSeries(a, b AggSeries) AggSeries {
	all := make(AggSeries, 0, len(a)+len(b))
	all = append(append(all, a...), b...)
	slices.SortStableFunc(all, func(x, y AggPart) int {
		if partLess(&x, &y) {
			return -1
		}
		if partLess(&y, &x) {
			return 1
		}
		return 0
	})
	out := all[:0:0]
	for _, p := range all {
		if n := len(out); n > 0 {
			q := &out[n-1]
			if q.Op == opNone && q.Last && p.StartsSeg && p.Trace == q.Trace && p.SegFrom == q.Seg+1 {
				t := q.Table.clone()
				t.merge(p.Table)
				p.Table, p.SegFrom, p.StartsSeg = t, q.SegFrom, q.StartsSeg
				out[n-1] = p
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// apply performs an operation on the folded table.
func (d *aggDecl) apply(t AggTable, op string, n int64) AggTable {
	switch op {
	case opClear:
		for _, e := range t {
			e.State = AggState{}
		}
	case opTrunc:
		if n <= 0 {
			return AggTable{}
		}
		es := d.sorted(t)
		if int64(len(es)) > n {
			// trunc keeps the n largest (the last n in print order).
			keep := es[len(es)-int(n):]
			t = AggTable{}
			for _, e := range keep {
				t[keyString(e.Keys)] = e
			}
		}
	}
	return t
}

// sorted lists the entries as DTrace prints them: by value ascending,
// ties by key.
func (d *aggDecl) sorted(t AggTable) []*AggEntry {
	es := make([]*AggEntry, 0, len(t))
	for _, e := range t {
		es = append(es, e)
	}
	slices.SortFunc(es, func(a, b *AggEntry) int {
		va, vb := d.value(&a.State), d.value(&b.State)
		switch {
		case va < vb:
			return -1
		case va > vb:
			return 1
		}
		return compareKeys(a.Keys, b.Keys)
	})
	return es
}
