package recorder

import (
	"fmt"
	"time"

	"ttd/tracefile"
)

// Access summaries. The recorder's fast path does not see the writes
// (the CPU enters them into the prediction cache itself, x86.CPU.Pred),
// and marking every access while recording would cost more than the 10%
// that the summaries are worth there; so they are computed right after
// the program ends, by re-simulating the checkpoint intervals of the
// flushed trace in parallel (Options.Summaries does it: the meaning of a
// summary belongs to package ttd, which the recorder does not import),
// and written after the Exit record before the trace is closed.

// Summarizer computes the access summaries of the trace at path, which
// holds every record of the recording (flushed, not yet closed).
type Summarizer func(path string) ([]tracefile.AccessSummary, error)

// writeSummaries writes the summaries, when Options.Summaries asks for
// them. A failure leaves the trace without them (a session then builds
// them on open) and is reported in Stats.SummaryError.
func (r *Recorder) writeSummaries() {
	if r.opts.Summaries == nil || r.err != nil {
		return
	}
	if err := r.w.Flush(); err != nil {
		r.fail(err)
		return
	}
	t0 := time.Now()
	sums, err := r.opts.Summaries(r.opts.Path)
	r.stats.SummaryTime = time.Since(t0)
	if err != nil {
		r.stats.SummaryError = fmt.Sprintf("access summaries: %v", err)
		return
	}
	for i := range sums {
		r.w.AccessSummary(&sums[i])
	}
	r.stats.Summaries = len(sums)
}
