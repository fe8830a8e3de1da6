package dap

import "ttd/ttd"

// Stepping. A step is a ttd.Query whose Step predicate the target evaluates
// for every instruction, in either direction: going forward the target
// stops at the first instruction that satisfies it, going backward at the
// last one before the current position. The predicates need only the
// thread, pc and sp of each instruction, plus the line table (cached).

// locate is a Target.Locator with a cache: it runs for every
// instruction of the stepping thread.
func (s *Server) locate(loc func(uint64) ttd.CodeLocation, pc uint64) ttd.CodeLocation {
	if l, ok := s.locCache[pc]; ok {
		return l
	}
	l := loc(pc)
	if len(s.locCache) > 1<<20 {
		clear(s.locCache)
	}
	s.locCache[pc] = l
	return l
}

// stepQuery builds the query of a step of thread tid; runContinue has no
// Step predicate.
func (s *Server) stepQuery(t Target, dir ttd.Direction, kind stepKind, tid int) (ttd.Query, error) {
	var q ttd.Query
	if kind == runContinue {
		return q, nil
	}
	regs, err := t.Registers(tid)
	if err != nil {
		return q, err
	}
	if kind == stepInstruction {
		q.Step = func(st *ttd.InstState) bool { return st.Tid == tid }
		q.Thread = tid
		return q, nil
	}
	pc, sp := regs.RIP, regs.GPR[4]
	if label := t.ThreadLabel(tid); label != s.locLabel {
		// Another process, or another program (process trees): the
		// same addresses are other code.
		clear(s.locCache)
		s.locLabel = label
	}
	loc := t.Locator(tid)
	start := s.locate(loc, pc)
	// cfa is the caller's sp after the current function returns: an
	// instruction of this thread with sp at or above it runs in a caller.
	cfa := sp + 8
	if frames, err := t.Stack(tid, 1); err == nil && len(frames) > 0 && frames[0].CFA > sp {
		cfa = frames[0].CFA
	}
	if !start.OK || start.Line == 0 {
		// No line information here (a library without DWARF): a line
		// step is a step out, or an instruction step at the outermost
		// frame.
		if kind == stepIn || kind == stepOver {
			kind = stepOut
		}
	}
	switch kind {
	case stepOut:
		q.Step = func(st *ttd.InstState) bool { return st.Tid == tid && st.SP >= cfa }
	case stepOver:
		// recursion is the sp above which a recursive call of the same
		// function is running (0: none): its lines are not this frame's.
		var recursion uint64
		q.Step = func(st *ttd.InstState) bool {
			if st.Tid != tid {
				return false
			}
			if st.SP >= cfa {
				return true // returned to (or, backward, still in) the caller
			}
			if recursion != 0 {
				if st.SP < recursion {
					return false
				}
				recursion = 0
			}
			if st.PC == start.Entry && st.SP < cfa-8 {
				recursion = st.SP + 8
				return false
			}
			l := s.locate(loc, st.PC)
			return l.Stmt && l.Entry == start.Entry && l.Line != start.Line
		}
	case stepIn:
		q.Step = func(st *ttd.InstState) bool {
			if st.Tid != tid {
				return false
			}
			if st.SP >= cfa {
				return true
			}
			l := s.locate(loc, st.PC)
			return l.Stmt && l.Line != 0 && (l.Entry != start.Entry || l.Line != start.Line || st.SP < cfa-8 && st.PC == start.Entry)
		}
	}
	return q, nil
}
