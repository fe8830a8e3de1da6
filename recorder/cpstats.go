package recorder

import (
	"fmt"
	"os"

	"github.com/klauspost/compress/zstd"

	"ttd/x86"
)

// Checkpoints that carry memory, measured (TTD_CPSTATS=1, replayable
// mode only): what a checkpoint would have to hold for a replay to start
// there — the pages written since the previous one. At each checkpoint
// the recorder keeps a copy-on-write fork of every address space; at the
// next, a page whose object changed (written, so copied, or materialised
// since) and is not all zero is one such page. Printed at the end:
// intervals, pages, their bytes and zstd's (fastest) of them, and so the
// copy-on-write's cost shows in the recording's CPU time.
var cpStatsOn = os.Getenv("TTD_CPSTATS") == "1"

type cpStats struct {
	forks               map[*x86.Memory]*x86.Memory
	intervals, pages    int
	maxPages            int
	raw, packed, maxPak int64
	enc                 *zstd.Encoder
	buf, out            []byte
}

// cpStatsAt measures the interval that ends at a checkpoint and forks
// the address spaces mems for the next.
func (r *Recorder) cpStatsAt(mems []*x86.Memory) {
	if !cpStatsOn || !r.replayable() {
		return
	}
	s := r.cps
	if s == nil {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
		if err != nil {
			return
		}
		s = &cpStats{forks: map[*x86.Memory]*x86.Memory{}, enc: enc}
		r.cps = s
	}
	if len(s.forks) > 0 {
		n := 0
		s.buf = s.buf[:0]
		for _, m := range mems {
			old := s.forks[m]
			m.Pages(0, 1<<(64-x86.PageShift)-1, func(pn uint64, p *x86.Page) {
				if old != nil && old.Lookup(pn) == p || *p.Data == ([x86.PageSize]byte{}) {
					return
				}
				n++
				s.buf = append(s.buf, p.Data[:]...)
			})
		}
		s.out = s.enc.EncodeAll(s.buf, s.out[:0])
		s.intervals++
		s.pages += n
		s.maxPages = max(s.maxPages, n)
		s.raw += int64(len(s.buf))
		s.packed += int64(len(s.out))
		s.maxPak = max(s.maxPak, int64(len(s.out)))
	}
	for _, f := range s.forks {
		f.Release()
	}
	clear(s.forks)
	for _, m := range mems {
		s.forks[m] = m.Fork(nil)
	}
}

// cpStatsEnd prints the measurements.
func (r *Recorder) cpStatsEnd() {
	s := r.cps
	if s == nil || s.intervals == 0 {
		return
	}
	for _, f := range s.forks {
		f.Release()
	}
	fmt.Fprintf(os.Stderr, "ttd: checkpoint memory: %d intervals, %d pages written (%.0f a checkpoint, at most %d), %.1f MiB, %.1f MiB with zstd (at most %.1f MiB a checkpoint)\n",
		s.intervals, s.pages, float64(s.pages)/float64(s.intervals), s.maxPages, float64(s.raw)/(1<<20), float64(s.packed)/(1<<20), float64(s.maxPak)/(1<<20))
}
