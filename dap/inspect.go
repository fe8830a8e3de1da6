package dap

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"ttd/ttd"

	"github.com/google/go-dap"
)

// onThreadsRequest lists the threads alive at the current position.
func (s *Server) onThreadsRequest(r *dap.ThreadsRequest) {
	s.mu.Lock()
	t, running := s.target, s.running
	s.mu.Unlock()
	var out []dap.Thread
	if t != nil && !running {
		ths, err := t.Threads()
		if err != nil {
			s.sendError(&r.Request, ErrCodeStack, "threads: %v", err)
			return
		}
		for _, th := range ths {
			name := th.Name
			if name == "" {
				name = fmt.Sprintf("Thread %d", th.ID)
			}
			out = append(out, dap.Thread{Id: th.ID, Name: name})
		}
	}
	if len(out) == 0 {
		// A client must always see a thread (VS Code asks while a
		// command runs, and before launch).
		out = []dap.Thread{{Id: 1, Name: "Dummy"}}
		if t != nil {
			out[0] = dap.Thread{Id: t.CurrentThread(), Name: fmt.Sprintf("Thread %d", t.CurrentThread())}
		}
	}
	s.send(&dap.ThreadsResponse{Response: *newResponse(&r.Request), Body: dap.ThreadsResponseBody{Threads: out}})
}

// onStackTraceRequest unwinds a thread (CFI, frame pointers as a last
// resort); frames without debug information show the symbol's name.
func (s *Server) onStackTraceRequest(r *dap.StackTraceRequest) {
	t := s.stoppedTarget(&r.Request)
	if t == nil {
		return
	}
	const maxFrames = 1000
	s.mu.Lock()
	s.viewTid = r.Arguments.ThreadId
	s.mu.Unlock()
	frames, err := t.Stack(r.Arguments.ThreadId, maxFrames)
	if err != nil {
		s.sendError(&r.Request, ErrCodeStack, "stack of thread %d: %v", r.Arguments.ThreadId, err)
		return
	}
	start := min(max(r.Arguments.StartFrame, 0), len(frames))
	end := len(frames)
	if r.Arguments.Levels > 0 {
		end = min(end, start+r.Arguments.Levels)
	}
	out := []dap.StackFrame{}
	for i := start; i < end; i++ {
		f := frames[i]
		id := s.handles.add(frameRef{tid: r.Arguments.ThreadId, index: i, frame: f})
		name := f.Func
		if name == "" {
			name = fmt.Sprintf("?? (%#x)", f.PC)
		}
		sf := dap.StackFrame{Id: id, Name: name, Line: f.Line, InstructionPointerReference: fmt.Sprintf("%#x", f.PC)}
		if f.File != "" && f.Line > 0 {
			sf.Source = &dap.Source{Name: baseName(f.File), Path: f.File}
			sf.Column = 1
		} else {
			sf.PresentationHint = "subtle"
			if f.Module != "" {
				sf.Name = fmt.Sprintf("%s (%s)", name, baseName(f.Module))
			}
		}
		out = append(out, sf)
	}
	s.send(&dap.StackTraceResponse{Response: *newResponse(&r.Request), Body: dap.StackTraceResponseBody{StackFrames: out, TotalFrames: len(frames)}})
}

// frameOf resolves a frame id (0 or unknown: the current thread's top
// frame).
func (s *Server) frameOf(t Target, id int) (tid, index int) {
	if f, ok := s.handles.get(id).(frameRef); ok {
		return f.tid, f.index
	}
	return t.CurrentThread(), 0
}

// onScopesRequest gives a frame's scopes: its arguments and locals, and
// its registers.
func (s *Server) onScopesRequest(r *dap.ScopesRequest) {
	t := s.stoppedTarget(&r.Request)
	if t == nil {
		return
	}
	f, ok := s.handles.get(r.Arguments.FrameId).(frameRef)
	if !ok {
		s.sendError(&r.Request, ErrCodeVariables, "unknown frame %d (the target moved since)", r.Arguments.FrameId)
		return
	}
	locals := s.handles.add(varsRef{list: func() ([]ttd.Var, error) { return t.Variables(f.tid, f.index) }})
	regs := s.handles.add(varsRef{list: func() ([]ttd.Var, error) { return frameRegisters(t, f), nil }})
	s.send(&dap.ScopesResponse{Response: *newResponse(&r.Request), Body: dap.ScopesResponseBody{Scopes: []dap.Scope{
		{Name: "Locals", PresentationHint: "locals", VariablesReference: locals},
		{Name: "Registers", PresentationHint: "registers", VariablesReference: regs},
	}}})
}

// frameRegisters lists a frame's registers: all of them for the top
// frame, the recovered ones above it.
func frameRegisters(t Target, f frameRef) []ttd.Var {
	var out []ttd.Var
	if f.index == 0 {
		regs, err := t.Registers(f.tid)
		if err != nil {
			return []ttd.Var{{Name: "error", Value: err.Error()}}
		}
		for i, v := range regs.GPR {
			out = append(out, ttd.Var{Name: registerNames[i], Type: "uint64", Value: fmt.Sprintf("%#016x", v)})
		}
		out = append(out,
			ttd.Var{Name: "rip", Type: "uint64", Value: fmt.Sprintf("%#016x", regs.RIP)},
			ttd.Var{Name: "rflags", Type: "uint64", Value: fmt.Sprintf("%#x %s", regs.RFLAGS, flagString(regs.RFLAGS))},
			ttd.Var{Name: "fs_base", Type: "uint64", Value: fmt.Sprintf("%#x", regs.FSBase)},
			ttd.Var{Name: "gs_base", Type: "uint64", Value: fmt.Sprintf("%#x", regs.GSBase)})
		return out
	}
	for i, name := range registerNames {
		v := "<unknown>"
		if f.frame.RegsKnown&(1<<i) != 0 {
			v = fmt.Sprintf("%#016x", f.frame.Regs[i])
		}
		out = append(out, ttd.Var{Name: name, Type: "uint64", Value: v})
	}
	return out
}

func flagString(f uint64) string {
	var b []string
	for _, x := range []struct {
		bit  uint
		name string
	}{{0, "CF"}, {2, "PF"}, {4, "AF"}, {6, "ZF"}, {7, "SF"}, {8, "TF"}, {9, "IF"}, {10, "DF"}, {11, "OF"}} {
		if f&(1<<x.bit) != 0 {
			b = append(b, x.name)
		}
	}
	return "[" + strings.Join(b, " ") + "]"
}

// children lists the variables behind a reference.
func (s *Server) children(ref int) ([]ttd.Var, error) {
	v, ok := s.handles.get(ref).(varsRef)
	if !ok {
		return nil, fmt.Errorf("unknown variables reference %d (the target moved since)", ref)
	}
	return v.list()
}

// onVariablesRequest expands a scope, struct, array, pointer or map.
func (s *Server) onVariablesRequest(r *dap.VariablesRequest) {
	if s.stoppedTarget(&r.Request) == nil {
		return
	}
	vars, err := s.children(r.Arguments.VariablesReference)
	if err != nil {
		s.sendError(&r.Request, ErrCodeVariables, "%v", err)
		return
	}
	if r.Arguments.Filter == "indexed" || r.Arguments.Count > 0 {
		start := min(max(r.Arguments.Start, 0), len(vars))
		end := len(vars)
		if r.Arguments.Count > 0 {
			end = min(end, start+r.Arguments.Count)
		}
		vars = vars[start:end]
	}
	out := []dap.Variable{}
	for _, v := range vars {
		out = append(out, s.dapVariable(v))
	}
	s.send(&dap.VariablesResponse{Response: *newResponse(&r.Request), Body: dap.VariablesResponseBody{Variables: out}})
}

func (s *Server) dapVariable(v ttd.Var) dap.Variable {
	dv := dap.Variable{Name: v.Name, Value: v.Value, Type: v.Type, EvaluateName: v.Name}
	if v.Children != nil {
		dv.VariablesReference = s.handles.add(varsRef{list: v.Children})
	}
	if v.Addr != 0 {
		dv.MemoryReference = fmt.Sprintf("%#x", v.Addr)
	}
	return dv
}

// evalHelp lists the ttd commands of the debug console.
const evalHelp = `ttd commands (debug console):
  pos                       the current position and the recording's bounds
  goto POS                  travel to position POS
  find-prev-write ADDR [N]  travel back to the last write to N bytes (8) at ADDR (or &var)
  find-next-write ADDR [N]  travel forward to the next write
  origin VAR | ADDR [N]     where the value of a variable (or N bytes at ADDR) came from
  help                      this text
Anything else is an expression: a variable, a register ($rax), *(int*)0x601040.`

// onEvaluateRequest evaluates an expression in a frame; in the debug
// console it also runs the ttd commands.
func (s *Server) onEvaluateRequest(r *dap.EvaluateRequest) {
	t := s.stoppedTarget(&r.Request)
	if t == nil {
		return
	}
	expr := strings.TrimSpace(r.Arguments.Expression)
	if r.Arguments.Context == "repl" || r.Arguments.Context == "" {
		if done := s.evalCommand(r, t, expr); done {
			return
		}
	}
	tid, frame := s.frameOf(t, r.Arguments.FrameId)
	v, err := t.Eval(tid, frame, expr)
	if err != nil {
		s.sendError(&r.Request, ErrCodeEvaluate, "%v", err)
		return
	}
	dv := s.dapVariable(v)
	s.send(&dap.EvaluateResponse{Response: *newResponse(&r.Request), Body: dap.EvaluateResponseBody{
		Result: v.Value, Type: v.Type, VariablesReference: dv.VariablesReference, MemoryReference: dv.MemoryReference, IndexedVariables: dv.IndexedVariables,
	}})
}

// evalCommand runs a ttd command typed in the debug console; it reports
// false if expr is not one.
func (s *Server) evalCommand(r *dap.EvaluateRequest, t Target, expr string) bool {
	f := strings.Fields(expr)
	if len(f) == 0 {
		return false
	}
	reply := func(text string) {
		s.send(&dap.EvaluateResponse{Response: *newResponse(&r.Request), Body: dap.EvaluateResponseBody{Result: text}})
	}
	switch f[0] {
	case "help":
		reply(evalHelp)
	case "pos", "position", "when":
		start, end := t.Bounds()
		reply(fmt.Sprintf("position %d (recording: %d to %d), thread %d", t.Position(), start, end, t.CurrentThread()))
	case "goto":
		if len(f) != 2 {
			s.sendError(&r.Request, ErrCodeEvaluate, "usage: goto POS")
			return true
		}
		pos, err := strconv.ParseUint(strings.ReplaceAll(f[1], "_", ""), 0, 64)
		if err != nil {
			s.sendError(&r.Request, ErrCodeEvaluate, "goto: bad position %q", f[1])
			return true
		}
		start, end := t.Bounds()
		pos = min(max(pos, start), end)
		resp := &dap.EvaluateResponse{Response: *newResponse(&r.Request), Body: dap.EvaluateResponseBody{Result: fmt.Sprintf("position %d", pos)}}
		s.goRun(resp, func(ctx context.Context) (ttd.SearchStop, string, error) {
			err := t.Seek(pos)
			return ttd.SearchStop{Reason: ttd.SearchStep, Pos: t.Position(), Tid: t.CurrentThread()}, "goto", err
		})
	case "origin":
		if len(f) < 2 || len(f) > 3 {
			s.sendError(&r.Request, ErrCodeEvaluate, "usage: origin VAR | ADDR [SIZE]")
			return true
		}
		addr, size, _, err := s.dataTarget(t, 0, strings.Join(f[1:], " "), r.Arguments.FrameId)
		if err == nil {
			var lines []string
			if lines, err = t.OriginLines(addr, uint64(size)); err == nil {
				reply(strings.Join(lines, "\n"))
			}
		}
		if err != nil {
			s.sendError(&r.Request, ErrCodeEvaluate, "origin: %v", err)
		}
	case "find-prev-write", "find-next-write":
		if len(f) < 2 || len(f) > 3 {
			s.sendError(&r.Request, ErrCodeEvaluate, "usage: %s ADDR [SIZE]", f[0])
			return true
		}
		addr, size, _, err := s.dataTarget(t, 0, strings.Join(f[1:], " "), r.Arguments.FrameId)
		if err != nil {
			s.sendError(&r.Request, ErrCodeEvaluate, "%s: %v", f[0], err)
			return true
		}
		dir := ttd.Backward
		if f[0] == "find-next-write" {
			dir = ttd.Forward
		}
		q := ttd.Query{Watch: []ttd.Watch{{Addr: addr, Size: size, Write: true}}}
		resp := &dap.EvaluateResponse{Response: *newResponse(&r.Request), Body: dap.EvaluateResponseBody{Result: fmt.Sprintf("searching %s for a write to %d bytes at %#x", dir, size, addr)}}
		s.goRun(resp, func(ctx context.Context) (ttd.SearchStop, string, error) {
			st, err := t.Search(ctx, dir, q)
			if err == nil && st.Reason == ttd.SearchWatch {
				st.Watch = -1
				s.output("console", fmt.Sprintf("ttd: write of %d bytes at %#x (value %#x) at position %d, thread %d\n", st.Access.Size, st.Access.Addr, st.Access.Value, st.Pos, st.Tid))
			} else if err == nil {
				s.output("console", fmt.Sprintf("ttd: no write to %#x %s\n", addr, map[ttd.Direction]string{ttd.Backward: "before this position", ttd.Forward: "after this position"}[dir]))
			}
			return st, "", err
		})
	default:
		return false
	}
	return true
}

var errUnknown = errors.New("unknown")
