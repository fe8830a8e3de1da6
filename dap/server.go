package dap

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"
	"ttd/ttd"

	"github.com/google/go-dap"
)

// Config configures a Server.
type Config struct {
	// Open opens a recording; nil means OpenTrace (target_ttd.go).
	Open func(path string, opts OpenOptions) (Target, error)
	// Record records a program for a launch with "program"; nil means
	// RecordProgram (launch_record.go).
	Record func(ctx context.Context, req RecordRequest) (tracePath string, err error)
	// Log receives the server's own diagnostics (nil: discarded).
	Log io.Writer
}

// OpenOptions are passed to Config.Open.
type OpenOptions struct {
	// Binaries maps module paths recorded in the trace to files to read
	// symbols from (when the program was moved or rebuilt elsewhere).
	Binaries map[string]string
	// Output receives the recorded program's output while the trace is
	// indexed (nil: dropped).
	Output func(category, text string)
}

// RecordRequest is a program to record for a "program" launch.
type RecordRequest struct {
	Program string
	Args    []string
	Cwd     string
	Env     map[string]string
	// TracePath is the trace to write.
	TracePath string
	// Output receives the program's stdout and stderr as it runs.
	Output func(category, text string)
}

// Server serves one DAP client. Requests are handled one at a time in
// order, except that the commands that move through the recording run on
// their own goroutine so that pause (and threads) stay responsive.
type Server struct {
	cfg Config
	r   *bufio.Reader
	w   io.Writer

	sendMu sync.Mutex
	seq    int

	// mu guards everything below; a running command holds no lock but
	// sets running, and handlers that need the target refuse meanwhile.
	mu       sync.Mutex
	target   Target
	launch   launchArgs
	started  bool // the first stopped event was sent
	running  bool
	cancel   context.CancelFunc
	runDone  chan struct{}
	paused   bool
	handles  handles
	bps      breakpoints
	locCache map[uint64]ttd.CodeLocation
	locLabel string // the process (ThreadLabel) locCache describes
	// viewTid is the thread the client looks at (shownThread).
	viewTid int
	cleanup []func()
	closed  bool
}

// NewServer returns a server that reads requests from r and writes
// responses and events to w.
func NewServer(r io.Reader, w io.Writer, cfg Config) *Server {
	if cfg.Open == nil {
		cfg.Open = OpenTrace
	}
	if cfg.Record == nil {
		cfg.Record = RecordProgram
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	s := &Server{cfg: cfg, r: bufio.NewReader(r), w: w}
	s.handles.reset()
	s.bps.init()
	s.locCache = make(map[uint64]ttd.CodeLocation)
	return s
}

// Serve handles requests until the client disconnects or the input ends.
func (s *Server) Serve() error {
	defer s.shutdown()
	for {
		msg, err := dap.ReadProtocolMessage(s.r)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			var fe *dap.DecodeProtocolMessageFieldError
			if errors.As(err, &fe) {
				// An unknown command or malformed arguments: answer it,
				// keep serving.
				s.send(&dap.ErrorResponse{
					Response: dap.Response{ProtocolMessage: dap.ProtocolMessage{Type: "response"}, RequestSeq: fe.Seq, Command: fe.SubType, Message: fe.Error()},
					Body:     dap.ErrorResponseBody{Error: &dap.ErrorMessage{Id: ErrCodeUnsupported, Format: fe.Error(), ShowUser: true}},
				})
				continue
			}
			return err
		}
		if s.handle(msg) {
			return nil
		}
	}
}

// shutdown stops a running command and closes the target.
func (s *Server) shutdown() {
	s.stopRunning()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	if s.target != nil {
		s.target.Close()
		s.target = nil
	}
	for _, f := range s.cleanup {
		f()
	}
	s.cleanup = nil
}

// handle dispatches one request; it reports whether the session ended.
func (s *Server) handle(msg dap.Message) (done bool) {
	req, ok := msg.(dap.RequestMessage)
	if !ok {
		return false // responses to reverse requests, events: ignored
	}
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(s.cfg.Log, "ttd dap: panic in %s: %v\n%s", req.GetRequest().Command, r, debug.Stack())
			s.sendError(req.GetRequest(), ErrCodeInternal, "internal error in %s: %v", req.GetRequest().Command, r)
		}
	}()
	switch r := msg.(type) {
	case *dap.InitializeRequest:
		s.onInitializeRequest(r)
	case *dap.LaunchRequest:
		s.onLaunchRequest(r)
	case *dap.AttachRequest:
		s.sendError(&r.Request, ErrCodeUnsupported, "ttd debugs recordings: use a launch configuration with \"trace\" or \"program\"")
	case *dap.ConfigurationDoneRequest:
		s.onConfigurationDoneRequest(r)
	case *dap.DisconnectRequest:
		s.onDisconnectRequest(r)
		return true
	case *dap.TerminateRequest:
		s.onTerminateRequest(r)
	case *dap.SetBreakpointsRequest:
		s.onSetBreakpointsRequest(r)
	case *dap.SetFunctionBreakpointsRequest:
		s.onSetFunctionBreakpointsRequest(r)
	case *dap.SetInstructionBreakpointsRequest:
		s.onSetInstructionBreakpointsRequest(r)
	case *dap.SetExceptionBreakpointsRequest:
		s.send(&dap.SetExceptionBreakpointsResponse{Response: *newResponse(&r.Request)})
	case *dap.DataBreakpointInfoRequest:
		s.onDataBreakpointInfoRequest(r)
	case *dap.SetDataBreakpointsRequest:
		s.onSetDataBreakpointsRequest(r)
	case *dap.ContinueRequest:
		s.onContinueRequest(r)
	case *dap.NextRequest:
		s.onNextRequest(r)
	case *dap.StepInRequest:
		s.onStepInRequest(r)
	case *dap.StepOutRequest:
		s.onStepOutRequest(r)
	case *dap.StepBackRequest:
		s.onStepBackRequest(r)
	case *dap.ReverseContinueRequest:
		s.onReverseContinueRequest(r)
	case *dap.PauseRequest:
		s.onPauseRequest(r)
	case *dap.GotoTargetsRequest:
		s.onGotoTargetsRequest(r)
	case *dap.GotoRequest:
		s.onGotoRequest(r)
	case *dap.ThreadsRequest:
		s.onThreadsRequest(r)
	case *dap.StackTraceRequest:
		s.onStackTraceRequest(r)
	case *dap.ScopesRequest:
		s.onScopesRequest(r)
	case *dap.VariablesRequest:
		s.onVariablesRequest(r)
	case *dap.EvaluateRequest:
		s.onEvaluateRequest(r)
	case *dap.ExceptionInfoRequest:
		s.onExceptionInfoRequest(r)
	case *dap.ReadMemoryRequest:
		s.onReadMemoryRequest(r)
	case *dap.DisassembleRequest:
		s.onDisassembleRequest(r)
	default:
		s.sendError(req.GetRequest(), ErrCodeUnsupported, "ttd does not support the %q request", req.GetRequest().Command)
	}
	return false
}

// Messages.

func (s *Server) send(m dap.Message) {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.seq++
	switch v := m.(type) {
	case dap.ResponseMessage:
		r := v.GetResponse()
		r.Seq, r.Type = s.seq, "response"
	case dap.EventMessage:
		e := v.GetEvent()
		e.Seq, e.Type = s.seq, "event"
	}
	if err := dap.WriteProtocolMessage(s.w, m); err != nil {
		fmt.Fprintf(s.cfg.Log, "ttd dap: writing a message: %v\n", err)
	}
}

func newResponse(req *dap.Request) *dap.Response {
	return &dap.Response{ProtocolMessage: dap.ProtocolMessage{Type: "response"}, RequestSeq: req.Seq, Command: req.Command, Success: true}
}

func newEvent(name string) *dap.Event {
	return &dap.Event{ProtocolMessage: dap.ProtocolMessage{Type: "event"}, Event: name}
}

// sendError answers req with an ErrorResponse; the message is shown to
// the user.
func (s *Server) sendError(req *dap.Request, code int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r := &dap.ErrorResponse{Response: *newResponse(req)}
	r.Success = false
	r.Message = msg
	r.Body.Error = &dap.ErrorMessage{Id: code, Format: msg, ShowUser: true}
	s.send(r)
}

// output sends text to the debug console.
func (s *Server) output(category, text string) {
	s.send(&dap.OutputEvent{Event: *newEvent("output"), Body: dap.OutputEventBody{Category: category, Output: text}})
}

// Session state helpers.

// stoppedTarget returns the target if a recording is open and no command
// is running; otherwise it answers req with an error and returns nil.
func (s *Server) stoppedTarget(req *dap.Request) Target {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.target == nil:
		s.sendError(req, ErrCodeNotLaunched, "no recording is open (launch first)")
		return nil
	case s.running:
		s.sendError(req, ErrCodeRunning, "the target is running; pause it first")
		return nil
	}
	return s.target
}

// onInitializeRequest announces what ttd can do.
func (s *Server) onInitializeRequest(r *dap.InitializeRequest) {
	caps := dap.Capabilities{
		SupportsConfigurationDoneRequest:  true,
		SupportsFunctionBreakpoints:       true,
		SupportsConditionalBreakpoints:    true,
		SupportsHitConditionalBreakpoints: true,
		SupportsEvaluateForHovers:         true,
		SupportsStepBack:                  true,
		SupportsGotoTargetsRequest:        true,
		SupportsDataBreakpoints:           true,
		SupportsReadMemoryRequest:         true,
		SupportsDisassembleRequest:        true,
		SupportsSteppingGranularity:       true,
		SupportsInstructionBreakpoints:    true,
		SupportsExceptionInfoRequest:      true,
		SupportsTerminateRequest:          true,
		SupportsDelayedStackTraceLoading:  true,
	}
	s.send(&dap.InitializeResponse{Response: *newResponse(&r.Request), Body: caps})
}

// onDisconnectRequest ends the session; a trace recorded for it is
// removed unless the launch configuration asked to keep it.
func (s *Server) onDisconnectRequest(r *dap.DisconnectRequest) {
	s.shutdown()
	s.send(&dap.DisconnectResponse{Response: *newResponse(&r.Request)})
}

// onTerminateRequest ends the session as the client asked: there is no
// process to kill, so the session just says it is over.
func (s *Server) onTerminateRequest(r *dap.TerminateRequest) {
	s.stopRunning()
	s.send(&dap.TerminateResponse{Response: *newResponse(&r.Request)})
	s.send(&dap.TerminatedEvent{Event: *newEvent("terminated")})
}

// logf writes a diagnostic.
func (s *Server) logf(format string, args ...any) {
	fmt.Fprintf(s.cfg.Log, "ttd dap: "+format+"\n", args...)
}

var _ = os.Stderr
