package reader

// What a segment costs to re-simulate, estimated from the chunk headers
// alone (no chunk decoded), in instructions: its instructions, plus
// costPerByte for each byte of records it decodes, plus
// costPerThreadStart for each thread start (a process's start-up
// decodes and translates its code anew, copies or maps its memory: the
// 40 bash start-ups of a process tree made its first segment cost two
// thirds of it). Session 21 measured 90 per byte and 1.3e8 per start
// (wall of each segment on one core, perl's segments of 16 MB of
// records costing six times those of 3 MB), before session 22 stopped
// chunks of reads alone from being decoded twice and copied per chunk.
// Fitted again at session 23 (`go run ./bench/cmd/segfit`, least
// squares of each segment's CPU under `--jobs 1`, tuning traces: sort
// -n, bzip2 -9, bash x40 + python3): 2.1 (bzip2) and 10.2 (sort -n) per
// byte, 2.1e7 per thread start (0.017 s each at 0.84 s per 1e9
// instructions); 90 per byte put sort -n's split at segment 14 of 25,
// 0.47 s of CPU against 0.38 s, where 6 puts it at 12, 0.41 s against
// 0.44 s.
const (
	costPerByte        = 6
	costPerThreadStart = 20_000_000
)

// SegmentCost is what SegmentCosts weighs for one segment: its
// instructions, and its shares of the record bytes and thread starts of
// the chunks its positions overlap.
type SegmentCost struct {
	Insts        uint64
	Bytes        float64
	ThreadStarts float64
}

// Cost is the estimate SegmentCosts gives for c, in instruction
// equivalents.
func (c SegmentCost) Cost() uint64 {
	return c.Insts + uint64(c.Bytes*costPerByte) + uint64(c.ThreadStarts*costPerThreadStart)
}

// SegmentCosts estimates what re-simulating each segment [cps[k],
// cps[k+1]) costs (the last one ends at End), in instruction
// equivalents, from the chunk headers (SegmentCostParts).
func (t *Trace) SegmentCosts(cps []Checkpoint) []uint64 {
	parts := t.SegmentCostParts(cps)
	costs := make([]uint64, len(parts))
	for k, c := range parts {
		costs[k] = c.Cost()
	}
	return costs
}

// SegmentCostParts gives, for each segment [cps[k], cps[k+1]) (the
// last one ends at End), what SegmentCosts weighs, from the chunk
// headers: a chunk's decoded bytes and thread starts are shared among
// the segments its positions overlap, a chunk spanning [its first
// position, the next chunk's) in proportion; a chunk of no span (no key
// frame moved the position) goes to the segment holding its position,
// and chunks at or past End (the embedded files after the exit) to
// none. cps must be in position order.
func (t *Trace) SegmentCostParts(cps []Checkpoint) []SegmentCost {
	end := t.End()
	costs := make([]SegmentCost, len(cps))
	segEnd := func(k int) uint64 {
		if k+1 < len(cps) {
			return cps[k+1].Position
		}
		return end
	}
	for k, cp := range cps {
		if to := segEnd(k); to > cp.Position {
			costs[k].Insts = to - cp.Position
		}
	}
	k := 0
	for i, c := range t.chunks {
		a := c.FirstPosition
		if a >= end {
			break
		}
		b := end
		if i+1 < len(t.chunks) {
			b = min(max(t.chunks[i+1].FirstPosition, a), end)
		}
		for k > 0 && cps[k].Position > a {
			k--
		}
		for k+1 < len(cps) && segEnd(k) <= a {
			k++
		}
		if b == a {
			costs[k].Bytes += float64(c.Len)
			costs[k].ThreadStarts += float64(c.ThreadStarts)
			continue
		}
		for j := k; j < len(cps) && cps[j].Position < b; j++ {
			lo, hi := max(a, cps[j].Position), min(b, segEnd(j))
			if hi > lo {
				f := float64(hi-lo) / float64(b-a)
				costs[j].Bytes += float64(c.Len) * f
				costs[j].ThreadStarts += float64(c.ThreadStarts) * f
			}
		}
	}
	return costs
}
