package reader

import (
	"cmp"
	"slices"

	"ttd/tracefile"
)

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
//
// Session 23 fitted them again (`go run ./bench/cmd/segfit`, least
// squares of each segment's CPU under --jobs 1) and found that no one
// value fits: 2.1 per byte on bzip2 -9, 10.2 on sort -n, 0.017 s (2e7)
// per thread start on the bash x40 + python3 tree, while xz -6's late
// segments cost in proportion to 90 per byte. With 6 and 2e7, sort -n's
// first job got 0.41 s of CPU rather than 0.47 (its second 0.44 rather
// than 0.38) but its wall did not change (0.659 s against 0.656 s), and
// xz's --jobs 2 got 6% slower (0.948 s against 0.893 s, least of 5
// under -prio): its split moved, and two steals at the end each
// restarted a re-simulation. The constants stay.
//
// A trace that logs no reads (`--mode replayable`) is another matter:
// its records are syscall results and memory images, which a replay
// copies, and its segments cost their instructions (segfit, session 31,
// sort -n, gzip -9, xz -6, perl: every segment of 50 M instructions
// within 25% of the others but the first, whose 0.5-3 MB of exec'd
// file pages cost about one 50 M-instruction segment more, the thread
// start's). At 90 a byte perl's first segment weighed 5x what it cost,
// and the two jobs' runs split 3:13 where 6:10 balanced them.
//
// Session 33 measured both starts of `--jobs 2` on such traces (thread
// CPU of each segment, TTD_SCHEDLOG, -prio): the trace's first segment
// cost 10-43 ms more than the next ones (gzip -9 10, sort -n 19, xz -6
// 25, perl 43: its program's start, translated cold), and a run that
// starts at a later checkpoint 3-42 ms more than the segments after it
// (gzip 3, sort -n 20, perl 28, xz 42: its memory restored from
// TRACE.pages, translated cold) -- about as much, where 130 M
// instructions a thread start weighed the first segment 1.3-5.4
// segments of 50 M instructions more than the second run's start
// (sort -n: 14 segments for the first job, 21 for the second; a steal
// of 8 at the end, a third start). Such a thread start weighs
// costPerThreadStartNoReads, and a run starting at a checkpoint past
// the trace's first costRunStartNoReads (RunStartCost), which the
// split counts (probe's chainStarts).
const (
	costPerByte               = 90
	costPerByteNoReads        = 2
	costPerThreadStart        = 130_000_000
	costPerThreadStartNoReads = 30_000_000
	costRunStartNoReads       = 40_000_000
)

// RunStartCost is what a re-simulation that starts at a checkpoint other
// than the trace's first costs more than the segments it goes on to, in
// SegmentCosts' instruction equivalents: a trace that logs no reads
// restores the checkpoint's memory (TRACE.pages); one that does rebuilds
// it from the reads as it goes, which its segments' bytes weigh (0).
func (t *Trace) RunStartCost() uint64 {
	if t.noReads {
		return costRunStartNoReads
	}
	return 0
}

// The start of a run at a checkpoint of a trace that logs no reads
// (RunStartCosts): costRunStartBase for its cold start (code decoded
// and translated anew, its chunk), and costPerRestoredFrame for each
// frame of TRACE.pages its restore decompresses (256 KiB of zstd and
// the pages' copies: 0.25-0.35 ms each, 500-700 k instructions at the
// 0.47 ns an instruction of gzip -9's segments). Restores measured
// (thread CPU, least of 3, every checkpoint): gzip -9 2.6-5.2 ms for
// 4-8 frames, jq 4.2-11.5 ms for 8-30. A run's first segment cost 3
// (gzip: 6-8 frames), 20 (sort -n: 54-94), 28 (perl: 12-17, the rest
// its cold code) and 42 ms (xz: 64-104) more than the next (session
// 33); with the constant 40 M instructions (RunStartCost) gzip's
// second job took 30 M too few.
const (
	costRunStartBase     = 10_000_000
	costPerRestoredFrame = 600_000
)

// RunStartCosts gives, for each checkpoint of cps, what a re-simulation
// that starts there costs more than the segments it goes on to (as
// RunStartCost, which it refines): for a trace that logs no reads and
// has its checkpoint memory file, the cold start and the frames its
// restore decompresses, which grow with the program's memory (gzip -9:
// 6-8 frames, xz -6: 124); else RunStartCost at each. The trace's
// first checkpoint restores nothing (0).
func (t *Trace) RunStartCosts(cps []Checkpoint) []uint64 {
	costs := make([]uint64, len(cps))
	pages := t.cpm.opened
	if !t.noReads || pages == nil {
		for k := range costs {
			costs[k] = t.RunStartCost()
		}
		if len(costs) > 0 {
			costs[0] = 0
		}
		return costs
	}
	pcs := pages.Checkpoints()
	frames := t.cpm.restoredFrames()
	j := 0
	for k, cp := range cps {
		for j < len(pcs) && pcs[j].Position <= cp.Position {
			j++
		}
		if k > 0 && j > 0 {
			costs[k] = costRunStartBase + uint64(frames[j-1])*costPerRestoredFrame
		}
	}
	return costs
}

// restoredFrames gives, for each checkpoint of the opened checkpoint
// memory file, how many frames a restore there decompresses: the frames
// holding the latest version of each page at or before it. Computed
// once per Trace (xz -6: 100,000 entries over 22 checkpoints in 1-2 ms,
// a merge of each checkpoint's entries, sorted, into the pages so far;
// with a map of the pages it took 20 ms, three times, before its jobs
// could start).
func (m *cpMemory) restoredFrames() []int {
	m.framesOnce.Do(func() {
		pcs := m.opened.Checkpoints()
		m.frames = make([]int, len(pcs))
		var cur, next, ents []pageAt
		var uses []int32 // by frame
		live := 0
		use := func(ref uint32, d int32) {
			fi := tracefile.FrameOf(ref)
			for fi >= len(uses) {
				uses = append(uses, 0)
			}
			switch uses[fi] += d; {
			case d > 0 && uses[fi] == 1:
				live++
			case d < 0 && uses[fi] == 0:
				live--
			}
		}
		for k, pc := range pcs {
			ents = ents[:0]
			for _, e := range pc.Entries {
				ents = append(ents, pageAt{e.Space, e.PN, e.Ref})
			}
			slices.SortStableFunc(ents, pageAt.cmp) // (nearly sorted already)
			next = next[:0]
			i := 0
			for _, e := range ents {
				for i < len(cur) && cur[i].cmp(e) < 0 {
					next = append(next, cur[i])
					i++
				}
				if i < len(cur) && cur[i].cmp(e) == 0 {
					use(cur[i].ref, -1)
					i++
				}
				if n := len(next); n > 0 && next[n-1].cmp(e) == 0 {
					// A page restated in the same checkpoint: the
					// later entry holds.
					use(next[n-1].ref, -1)
					next = next[:n-1]
				}
				if e.ref != 0 {
					use(e.ref, 1)
					next = append(next, e)
				}
			}
			next = append(next, cur[i:]...)
			cur, next = next, cur
			m.frames[k] = live
		}
	})
	return m.frames
}

// pageAt is a page of an address space and its version (ref).
type pageAt struct {
	sp  uint32
	pn  uint64
	ref uint32
}

func (a pageAt) cmp(b pageAt) int {
	if c := cmp.Compare(a.sp, b.sp); c != 0 {
		return c
	}
	return cmp.Compare(a.pn, b.pn)
}

// SegmentCost is what SegmentCosts weighs for one segment: its
// instructions, and its shares of the record bytes and thread starts of
// the chunks its positions overlap.
type SegmentCost struct {
	Insts        uint64
	Bytes        float64
	ThreadStarts float64
	// NoReads: the trace logs no reads (costPerByteNoReads).
	NoReads bool
}

// Cost is the estimate SegmentCosts gives for c, in instruction
// equivalents.
func (c SegmentCost) Cost() uint64 {
	perByte, perStart := float64(costPerByte), float64(costPerThreadStart)
	if c.NoReads {
		perByte, perStart = costPerByteNoReads, costPerThreadStartNoReads
	}
	return c.Insts + uint64(c.Bytes*perByte) + uint64(c.ThreadStarts*perStart)
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
		costs[k].NoReads = t.noReads
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
