package probe

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"

	"ttd/reader"
	"ttd/x86"
)

// profile:::N fires every N instructions of a thread, as DTrace's
// profile provider fires on every CPU: at the position where a thread's
// own instruction count (x86.CPU.Retired, which checkpoints keep)
// reaches N, 2N, ..., with that thread running. A segment finds those
// positions with a first, unhooked pass over it that notes the thread
// switches (reader.EventThreadSwitch): each run of one thread between
// switches adds to that thread's count, so the multiples fall at known
// positions; the evaluating pass then runs to each. The first pass
// doubles the re-simulation of scripts with profile probes (and only
// theirs). The split does not matter: a count reaching kN exactly where
// a thread's run ends fires when the thread runs again, in whichever
// segment that is.

// profileStop is a position where thread tid's count is a multiple of
// a profile period.
type profileStop struct {
	pos uint64
	tid int
}

// profileStops lists segment k's profile positions in [from, to), in
// order.
func (b *Bound) profileStops(k int, from, to uint64) ([]profileStop, error) {
	r, err := b.T.Trace.NewReplayAt(b.cps[k])
	if err != nil {
		return nil, err
	}
	defer r.Close()
	counts := map[int]uint64{}
	tids, cpus := r.Threads()
	for i, tid := range tids {
		counts[tid] = cpus[i].Retired()
	}
	var stops []profileStop
	cur, _ := r.Current()
	at := r.Position()
	// run adds thread tid's run [lo, hi) to its count and the multiples
	// it reaches to stops.
	run := func(tid int, lo, hi uint64) {
		if hi <= lo {
			return
		}
		c := counts[tid]
		n := hi - lo
		counts[tid] = c + n
		for _, bp := range b.profile {
			every := bp.Addr
			m := (c + every - 1) / every * every
			if m == 0 {
				m = every
			}
			for ; m < c+n; m += every {
				if p := lo + m - c; p >= from && p < to {
					stops = append(stops, profileStop{p, tid})
				}
			}
		}
	}
	r.OnEvent = func(e *reader.Event) {
		if e.Kind == reader.EventThreadSwitch {
			run(cur, at, e.Position)
			cur, at = e.Tid, e.Position
		}
	}
	err = r.RunTo(to)
	if err != nil && err != reader.ErrEnd && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("segment %d: %w", k, err)
	}
	run(cur, at, min(r.Position(), to))
	sort.SliceStable(stops, func(i, j int) bool { return stops[i].pos < stops[j].pos })
	return stops, nil
}

// profile fires the profile probes whose period divides the count of
// the thread running at p (the one profileStops expects, tid).
func (s *segEval) profile(p uint64, tid int) {
	cur, c := s.r.Current()
	if c == nil || cur != tid {
		return
	}
	n := c.Retired()
	for _, bp := range s.b.profile {
		if n == 0 || n%bp.Addr != 0 {
			continue
		}
		ev := &event{pos: p, tid: tid, cpu: c}
		ev.args[0] = int64(c.RIP)
		s.fire([]*boundProbe{bp}, ev)
	}
}

// Live, a driver stops each thread at the multiples of the periods
// (ProfileBudget, emu.BudgetObserver) and calls Profile there: before
// the thread's next instruction, after the events of the one that
// reached the count (a syscall, a signal delivery), or when the thread
// runs again if its run ended there, as over the recording.

// Profiling reports whether the script has profile probes.
func (l *Live) Profiling() bool { return len(l.b.profile) > 0 }

// ProfileBudget is how many instructions a thread whose count is n may
// run before its count reaches the next multiple of a period.
func (l *Live) ProfileBudget(n uint64) uint64 {
	next := uint64(math.MaxUint64)
	for _, bp := range l.b.profile {
		next = min(next, bp.Addr-n%bp.Addr)
	}
	return next
}

// Profile fires the profile probes whose period divides n, the count
// of thread tid running on c, at position pos.
func (l *Live) Profile(pos uint64, tid int, c *x86.CPU, n uint64) {
	l.settle()
	for _, bp := range l.b.profile {
		if l.s.stopped || n == 0 || n%bp.Addr != 0 {
			continue
		}
		ev := &event{pos: pos, tid: tid, cpu: c}
		ev.args[0] = int64(c.RIP)
		l.s.fire([]*boundProbe{bp}, ev)
	}
}
