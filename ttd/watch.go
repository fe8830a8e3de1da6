package ttd

// Watchpoints as gdb has them on rr (and on a live process): going
// forward, Continue stops just after the instruction that accessed the
// watched range (its write is in memory: Stop.Position is
// Access.Position+1); going backward, it stops just before it (Position
// = Access.Position), so that the access is the next instruction to
// execute. A reverse continue issued right after a forward stop finds
// that same access again, and a forward continue after a reverse stop
// executes it and stops after it. Either way Stop.Old and Stop.New hold
// the watched range just before and just after the access, as gdb's "Old
// value / New value".

// watchValues fills st.Old and st.New for a watchpoint stop. The current
// position does not change.
func (s *Session) watchValues(st *Stop) error {
	if st.Reason != StopWatchpoint || st.Access == nil {
		return nil
	}
	var bp *Breakpoint
	for i := range s.bps {
		if s.bps[i].ID == st.Breakpoint {
			bp = &s.bps[i]
		}
	}
	if bp == nil || bp.Size == 0 || bp.Size > MaxRead {
		return nil
	}
	pos := s.pos
	defer func() { s.pos = pos }()
	var vals [2]Memory
	for i, at := range []uint64{st.Access.Position, st.Access.Position + 1} {
		s.pos = at
		m, err := s.ReadMemory(bp.Addr, int(bp.Size))
		if err != nil {
			return err
		}
		vals[i] = m
	}
	st.Old, st.New = &vals[0], &vals[1]
	return nil
}
