package reader

// What a segment costs to re-simulate, estimated from the chunk headers
// alone (no chunk decoded), in instructions: its instructions, plus
// costPerByte for each byte of records it decodes (the memory reads the
// prediction cache missed dominate: perl's segment that logs 16 MB of
// records costs six times one of 3 MB with as many instructions), plus
// costPerThreadStart for each thread start (a process's start-up
// decodes and translates its code anew, copies or maps its memory: the
// 40 bash start-ups of a process tree made its first two segments cost
// two thirds of it). Measured at session 21 on one core (wall of each
// segment of `ttd probe --jobs 1`): about 0.43 s per 1e9 instructions
// of gzip, 0.04 s per MB of records, 0.06 s per thread start.
const (
	costPerByte        = 90
	costPerThreadStart = 130_000_000
)

// SegmentCosts estimates what re-simulating each segment [cps[k],
// cps[k+1]) costs (the last one ends at End), in instruction
// equivalents, from the chunk headers: a chunk's decoded bytes and
// thread starts are shared among the segments its positions overlap, a
// chunk spanning [its first position, the next chunk's) in proportion;
// a chunk of no span (no key frame moved the position) goes to the
// segment holding its position, and chunks at or past End (the embedded
// files after the exit) to none. cps must be in position order.
func (t *Trace) SegmentCosts(cps []Checkpoint) []uint64 {
	end := t.End()
	costs := make([]uint64, len(cps))
	segEnd := func(k int) uint64 {
		if k+1 < len(cps) {
			return cps[k+1].Position
		}
		return end
	}
	for k, cp := range cps {
		if to := segEnd(k); to > cp.Position {
			costs[k] = to - cp.Position
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
		w := uint64(c.Len)*costPerByte + uint64(c.ThreadStarts)*costPerThreadStart
		for k > 0 && cps[k].Position > a {
			k--
		}
		for k+1 < len(cps) && segEnd(k) <= a {
			k++
		}
		if b == a {
			costs[k] += w
			continue
		}
		for j := k; j < len(cps) && cps[j].Position < b; j++ {
			lo, hi := max(a, cps[j].Position), min(b, segEnd(j))
			if hi > lo {
				costs[j] += uint64(float64(w) * float64(hi-lo) / float64(b-a))
			}
		}
	}
	return costs
}
