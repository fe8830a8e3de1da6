package ttd

import "fmt"

// Ring-buffer traces (ttd record --ring) keep only a window of the
// execution: it starts at a checkpoint, at position Start, and positions
// stay those of the whole run. Travel stops at the window's start as at
// the start of a trace; a search that reaches it says that earlier
// accesses were not kept.

// Start is the first position of the trace: 0, or the first position of
// a ring-buffer window.
func (s *Session) Start() uint64 { return s.cps[0].Position }

// BeforeWindowError is a Find that found nothing in a ring-buffer
// window: what it looks for may be before the window. It matches
// ErrNotFound (errors.Is).
type BeforeWindowError struct{ Start uint64 }

func (e *BeforeWindowError) Error() string {
	return fmt.Sprintf("no such access in the recorded window, which starts at position %d (a ring-buffer trace): earlier ones were not kept", e.Start)
}

// Is makes errors.Is(err, ErrNotFound) hold.
func (e *BeforeWindowError) Is(target error) bool { return target == ErrNotFound }

// CheckInWindow returns an error for a position before the window.
func (s *Session) CheckInWindow(pos uint64) error {
	if pos < s.Start() {
		return fmt.Errorf("position %d is before the recorded window, which starts at position %d (a ring-buffer trace)", pos, s.Start())
	}
	return nil
}
