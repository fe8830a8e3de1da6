package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"

	"ttd/reader"
)

// Replay re-simulates one segment: arm installs the probes on the replay
// (Hook, HookBlocks, Watch and Access, OnEvent) before it runs from the
// segment's checkpoint to its end. The events at the checkpoint's own
// position are applied before arm runs: they belong to the segment
// before. Errors name the recording and the segment.
func Replay(ctx context.Context, sg Segment, arm func(ot *Opened, r *reader.Replay) error) error {
	ot, err := traces.get(ctx, sg.Trace)
	if err != nil {
		return err
	}
	defer traces.put(ot)
	if err := replay(ot, sg, arm); err != nil {
		return traceErr(sg.Trace, fmt.Errorf("segment %d of %d (positions %d-%d): %w", sg.Index, sg.Count, sg.Start, sg.End, err))
	}
	return nil
}

// Opened is a recording a worker opened: the trace and its symbols.
type Opened = openTrace

// Trace is the opened trace.
func (ot *openTrace) Trace() *reader.Trace { return ot.t }

// Pid is the recording's process id.
func (ot *openTrace) Pid() int { return ot.pid }

func replay(ot *openTrace, sg Segment, arm func(ot *Opened, r *reader.Replay) error) error {
	r, err := ot.t.NewReplayAt(reader.Checkpoint{Position: sg.Start, Chunk: sg.Chunk, Ctrl: sg.Ctrl})
	if err != nil {
		return err
	}
	defer r.Close()
	if err := arm(ot, r); err != nil {
		return err
	}
	err = r.RunTo(sg.End)
	last := sg.End >= ot.t.End()
	switch {
	case err == reader.ErrEnd || last && errors.Is(err, io.ErrUnexpectedEOF):
		// The end of the recording (a cut one ends unexpectedly).
	case err != nil:
		return err
	case r.Position() != sg.End:
		return fmt.Errorf("re-simulation stopped at position %d, before %d", r.Position(), sg.End)
	}
	return nil
}
