package dap

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"ttd/ttd"

	"github.com/google/go-dap"
)

// stepKind is what a command moving through the recording does.
type stepKind int

const (
	runContinue     stepKind = iota // to a breakpoint or a bound of the recording
	stepOver                        // next / stepBack: the next line in this frame
	stepIn                          // stepIn: the next line anywhere
	stepOut                         // stepOut: the return to the caller
	stepInstruction                 // granularity "instruction"
)

func (k stepKind) String() string {
	return [...]string{"continue", "next", "step in", "step out", "step instruction"}[k]
}

// onContinueRequest runs forward to the next breakpoint or the end of
// the recording.
func (s *Server) onContinueRequest(r *dap.ContinueRequest) {
	resp := &dap.ContinueResponse{Response: *newResponse(&r.Request), Body: dap.ContinueResponseBody{AllThreadsContinued: true}}
	s.startRun(&r.Request, resp, ttd.Forward, runContinue, r.Arguments.ThreadId)
}

// onReverseContinueRequest runs backward to the previous breakpoint, data
// breakpoint (the last write: find-prev-write) or the start of the
// recording.
func (s *Server) onReverseContinueRequest(r *dap.ReverseContinueRequest) {
	resp := &dap.ReverseContinueResponse{Response: *newResponse(&r.Request)}
	s.startRun(&r.Request, resp, ttd.Backward, runContinue, r.Arguments.ThreadId)
}

// onNextRequest steps over a line (or an instruction) forward.
func (s *Server) onNextRequest(r *dap.NextRequest) {
	resp := &dap.NextResponse{Response: *newResponse(&r.Request)}
	s.startRun(&r.Request, resp, ttd.Forward, granular(stepOver, r.Arguments.Granularity), r.Arguments.ThreadId)
}

// onStepInRequest steps into calls.
func (s *Server) onStepInRequest(r *dap.StepInRequest) {
	resp := &dap.StepInResponse{Response: *newResponse(&r.Request)}
	s.startRun(&r.Request, resp, ttd.Forward, granular(stepIn, r.Arguments.Granularity), r.Arguments.ThreadId)
}

// onStepOutRequest runs until the current function returns.
func (s *Server) onStepOutRequest(r *dap.StepOutRequest) {
	resp := &dap.StepOutResponse{Response: *newResponse(&r.Request)}
	s.startRun(&r.Request, resp, ttd.Forward, stepOut, r.Arguments.ThreadId)
}

// onStepBackRequest steps over a line (or an instruction) backward: to
// the start of the line that ran before this one in the same frame, or
// to the call in the caller.
func (s *Server) onStepBackRequest(r *dap.StepBackRequest) {
	resp := &dap.StepBackResponse{Response: *newResponse(&r.Request)}
	s.startRun(&r.Request, resp, ttd.Backward, granular(stepOver, r.Arguments.Granularity), r.Arguments.ThreadId)
}

func granular(k stepKind, g dap.SteppingGranularity) stepKind {
	if g == "instruction" {
		return stepInstruction
	}
	return k
}

// onPauseRequest interrupts a running command; it stops where the search
// had come to.
func (s *Server) onPauseRequest(r *dap.PauseRequest) {
	s.mu.Lock()
	if s.running && s.cancel != nil {
		s.paused = true
		s.cancel()
	}
	s.mu.Unlock()
	s.send(&dap.PauseResponse{Response: *newResponse(&r.Request)})
}

// stopRunning cancels a running command and waits for it.
func (s *Server) stopRunning() {
	s.mu.Lock()
	done := s.runDone
	if s.running && s.cancel != nil {
		s.cancel()
	}
	s.mu.Unlock()
	if done != nil {
		<-done
	}
}

// startRun answers req with resp and moves through the recording on
// another goroutine; the stopped event says where it ended.
func (s *Server) startRun(req *dap.Request, resp dap.Message, dir ttd.Direction, kind stepKind, tid int) {
	t := s.stoppedTarget(req)
	if t == nil {
		return
	}
	if tid == 0 {
		tid = t.CurrentThread()
	}
	q, err := s.stepQuery(t, dir, kind, t.OSThread(tid))
	if err != nil {
		s.sendError(req, ErrCodeStep, "%s: %v", kind, err)
		return
	}
	q.Exec, q.Watch = s.bps.query()
	s.goRun(resp, func(ctx context.Context) (ttd.SearchStop, string, error) {
		st, err := s.search(ctx, t, dir, q)
		return st, "", err
	})
}

// goRun sends resp and runs fn on a goroutine, then reports the stop.
// reason overrides the reason derived from the Stop.
func (s *Server) goRun(resp dap.Message, fn func(ctx context.Context) (ttd.SearchStop, string, error)) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.mu.Lock()
	t := s.target
	s.running, s.cancel, s.runDone, s.paused = true, cancel, done, false
	s.handles.reset()
	s.mu.Unlock()
	if resp != nil {
		s.send(resp)
	}
	go func() {
		defer close(done)
		var st ttd.SearchStop
		var reason string
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("internal error: %v", r)
				}
			}()
			st, reason, err = fn(ctx)
		}()
		s.mu.Lock()
		s.running, s.cancel = false, nil
		paused := s.paused
		s.mu.Unlock()
		cancel()
		switch {
		case paused || errors.Is(err, context.Canceled):
			st = ttd.SearchStop{Reason: ttd.SearchStep, Pos: t.Position(), Tid: t.CurrentThread()}
			reason = "pause"
		case err != nil:
			s.output("stderr", fmt.Sprintf("ttd: %v\n", err))
			st = ttd.SearchStop{Reason: ttd.SearchStep, Pos: t.Position(), Tid: t.CurrentThread()}
			reason = "pause"
		}
		s.reportStop(t, st, ttd.Forward, reason)
	}()
}

// search runs a query, going on past breakpoints whose condition or hit
// count says not to stop.
func (s *Server) search(ctx context.Context, t Target, dir ttd.Direction, q ttd.Query) (ttd.SearchStop, error) {
	for {
		st, err := t.Search(ctx, dir, q)
		if err != nil {
			return st, err
		}
		if st.Reason != ttd.SearchExec || s.bps.shouldStop(s, t, st) {
			return st, nil
		}
		if q.Step != nil {
			// The step's own condition may hold here too.
			tid := t.OSThread(st.Tid)
			if q.Step(&ttd.InstState{Pos: st.Pos, Tid: tid, PC: st.PC, SP: s.sp(t, tid)}) {
				st.Reason = ttd.SearchStep
				return st, nil
			}
		}
	}
}

func (s *Server) sp(t Target, tid int) uint64 {
	regs, err := t.Registers(tid)
	if err != nil {
		return 0
	}
	return regs.GPR[4]
}

// reportStop sends the stopped event for st. reason, when set, overrides
// the DAP reason derived from st.
func (s *Server) reportStop(t Target, st ttd.SearchStop, dir ttd.Direction, reason string) {
	s.mu.Lock()
	s.handles.reset()
	s.mu.Unlock()
	body := dap.StoppedEventBody{ThreadId: st.Tid, AllThreadsStopped: true}
	if body.ThreadId == 0 {
		body.ThreadId = t.CurrentThread()
	}
	s.mu.Lock()
	s.viewTid = body.ThreadId
	s.mu.Unlock()
	switch st.Reason {
	case ttd.SearchExec:
		kind, ids := s.bps.at(st.PC)
		body.Reason, body.HitBreakpointIds = kind, ids
		if body.Reason == "" {
			body.Reason = "breakpoint"
		}
	case ttd.SearchWatch:
		body.Reason = "data breakpoint"
		body.HitBreakpointIds = s.bps.watchIDs(st.Watch)
		a := st.Access
		verb := "read"
		if a.Write {
			verb = "write"
		}
		body.Description = fmt.Sprintf("Data breakpoint: %s of %d bytes at %#x (value %#x), position %d", verb, a.Size, a.Addr, a.Value, st.Pos)
		if a.Old != nil && a.New != nil {
			body.Description += fmt.Sprintf("\nOld value = %s\nNew value = %s", littleEndianValue(a.Old), littleEndianValue(a.New))
		}
		body.Text = body.Description
	case ttd.SearchStep:
		body.Reason = "step"
	case ttd.SearchSignal:
		body.Reason = "exception"
		body.Description = fmt.Sprintf("Signal %s delivered at position %d", signalName(st.Signal), st.Pos)
	case ttd.SearchStart:
		body.Reason = "start of recording"
		body.Description = fmt.Sprintf("Reached the start of the recording (position %d): nothing ran before this", st.Pos)
	case ttd.SearchEnd:
		ex := t.Exit()
		switch ex.Kind {
		case "killed":
			body.Reason = "exception"
			body.Description = fmt.Sprintf("The program died of %s", signalName(ex.Signal))
			if ex.FaultAddr != 0 || ex.Signal == 11 || ex.Signal == 7 {
				body.Description += fmt.Sprintf(" (fault address %#x)", ex.FaultAddr)
			}
			body.Text = body.Description
		case "exited":
			body.Reason = "end of recording"
			body.Description = fmt.Sprintf("End of the recording (position %d): the program exited with status %d", st.Pos, ex.Code)
		default:
			body.Reason = "end of recording"
			body.Description = fmt.Sprintf("End of the recording (position %d): the recording was cut short here", st.Pos)
		}
	}
	if reason != "" {
		body.Reason = reason
		if reason == "pause" || reason == "goto" || reason == "entry" {
			body.Description = fmt.Sprintf("Position %d", t.Position())
		}
	}
	if label := t.ThreadLabel(body.ThreadId); label != "" {
		// A process tree: say which process stopped.
		if body.Description == "" {
			body.Description = fmt.Sprintf("Paused on %s", body.Reason)
		}
		body.Description += " in " + label
	}
	if body.Description != "" {
		body.Description = strings.TrimSpace(body.Description)
	}
	s.send(&dap.StoppedEvent{Event: *newEvent("stopped"), Body: body})
}

// signalName names a Linux signal.
func signalName(sig int) string {
	names := map[int]string{1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT",
		7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE",
		14: "SIGALRM", 15: "SIGTERM", 31: "SIGSYS"}
	if n, ok := names[sig]; ok {
		return fmt.Sprintf("%s (%d)", n, sig)
	}
	return fmt.Sprintf("signal %d", sig)
}

// onExceptionInfoRequest describes the crash the recording ends with.
func (s *Server) onExceptionInfoRequest(r *dap.ExceptionInfoRequest) {
	t := s.stoppedTarget(&r.Request)
	if t == nil {
		return
	}
	ex := t.Exit()
	body := dap.ExceptionInfoResponseBody{ExceptionId: "none", BreakMode: "always"}
	if ex.Kind == "killed" {
		body.ExceptionId = signalName(ex.Signal)
		body.Description = fmt.Sprintf("The program died of %s at position %d", signalName(ex.Signal), ex.Pos)
		if ex.FaultAddr != 0 || ex.Signal == 11 || ex.Signal == 7 {
			body.Description += fmt.Sprintf(", fault address %#x", ex.FaultAddr)
		}
	}
	s.send(&dap.ExceptionInfoResponse{Response: *newResponse(&r.Request), Body: body})
}

// onGotoTargetsRequest offers, for a source line, the next and the
// previous time it runs.
func (s *Server) onGotoTargetsRequest(r *dap.GotoTargetsRequest) {
	t := s.stoppedTarget(&r.Request)
	if t == nil {
		return
	}
	addrs, line, err := t.LineAddrs(r.Arguments.Source.Path, r.Arguments.Line)
	if err != nil || len(addrs) == 0 {
		s.sendError(&r.Request, ErrCodeGotoTargets, "no code at %s:%d", r.Arguments.Source.Path, r.Arguments.Line)
		return
	}
	id := s.handles.add(gotoTarget{addrs: addrs})
	s.send(&dap.GotoTargetsResponse{Response: *newResponse(&r.Request), Body: dap.GotoTargetsResponseBody{Targets: []dap.GotoTarget{
		{Id: id, Label: fmt.Sprintf("Next time line %d runs", line), Line: line},
		{Id: id + gotoBackwardBit, Label: fmt.Sprintf("Previous time line %d ran", line), Line: line},
	}}})
}

// gotoBackwardBit marks a goto target id as "previous time".
const gotoBackwardBit = 1 << 24

type gotoTarget struct{ addrs []uint64 }

// onGotoRequest travels to a goto target.
func (s *Server) onGotoRequest(r *dap.GotoRequest) {
	t := s.stoppedTarget(&r.Request)
	if t == nil {
		return
	}
	id, dir := r.Arguments.TargetId, ttd.Forward
	if id&gotoBackwardBit != 0 {
		id, dir = id&^gotoBackwardBit, ttd.Backward
	}
	g, ok := s.handles.get(id).(gotoTarget)
	if !ok {
		s.sendError(&r.Request, ErrCodeStep, "unknown goto target %d", r.Arguments.TargetId)
		return
	}
	q := ttd.Query{Exec: make(map[uint64]bool)}
	for _, a := range g.addrs {
		q.Exec[a] = true
	}
	s.goRun(&dap.GotoResponse{Response: *newResponse(&r.Request)}, func(ctx context.Context) (ttd.SearchStop, string, error) {
		st, err := t.Search(ctx, dir, q)
		if err == nil && st.Reason == ttd.SearchExec {
			return st, "goto", nil
		}
		return st, "", err
	})
}

// littleEndianValue shows the bytes of a watched range as gdb shows an
// integer of their size (up to 8 bytes), else as hex bytes.
func littleEndianValue(b []byte) string {
	if len(b) > 0 && len(b) <= 8 {
		var v uint64
		for i := len(b) - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[i])
		}
		return fmt.Sprintf("%d (%#x)", v, v)
	}
	return fmt.Sprintf("% x", b)
}
