package dap

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"ttd/ttd"

	"github.com/google/go-dap"
)

// launchArgs are the launch configuration's attributes (see the
// extension's package.json for their documentation).
type launchArgs struct {
	// Trace opens a recording; with Program, it is where the new
	// recording is written (replacing the file).
	Trace string `json:"trace"`
	// Program is recorded first, with Args, Cwd and Env.
	Program string            `json:"program"`
	Args    []string          `json:"args"`
	Cwd     string            `json:"cwd"`
	Env     map[string]string `json:"env"`
	// StopOnEntry starts at the beginning of the recording instead of
	// its end.
	StopOnEntry bool `json:"stopOnEntry"`
	// Binaries maps recorded module paths to local files for symbols.
	Binaries map[string]string `json:"binaries"`
}

// onLaunchRequest opens a recording, recording the program first when
// the configuration names one. The session stops (at configurationDone)
// at the end of the recording, at the crash, or at its start with
// stopOnEntry.
func (s *Server) onLaunchRequest(r *dap.LaunchRequest) {
	var args launchArgs
	if err := json.Unmarshal(r.Arguments, &args); err != nil {
		s.sendError(&r.Request, ErrCodeBadArguments, "bad launch configuration: %v", err)
		return
	}
	s.mu.Lock()
	already := s.target != nil
	s.mu.Unlock()
	if already {
		s.sendError(&r.Request, ErrCodeLaunch, "a recording is already open")
		return
	}
	if args.Trace == "" && args.Program == "" {
		s.sendError(&r.Request, ErrCodeBadArguments, "the launch configuration needs \"trace\" (a recording to open) or \"program\" (to record first)")
		return
	}
	if args.Cwd != "" && args.Trace != "" && !filepath.IsAbs(args.Trace) {
		args.Trace = filepath.Join(args.Cwd, args.Trace)
	}
	path := args.Trace
	if args.Program != "" {
		var err error
		if path, err = s.recordForLaunch(&args); err != nil {
			s.sendError(&r.Request, ErrCodeRecord, "recording %s: %v", args.Program, err)
			return
		}
	}
	t, err := s.cfg.Open(path, OpenOptions{Binaries: args.Binaries})
	if err != nil {
		s.sendError(&r.Request, ErrCodeLaunch, "opening %s: %v", path, err)
		return
	}
	if args.StopOnEntry {
		start, _ := t.Bounds()
		err = t.Seek(start)
	} else {
		_, end := t.Bounds()
		err = t.Seek(end)
	}
	if err != nil {
		t.Close()
		s.sendError(&r.Request, ErrCodeLaunch, "opening %s: %v", path, err)
		return
	}
	s.mu.Lock()
	s.target, s.launch = t, args
	s.mu.Unlock()
	start, end := t.Bounds()
	s.output("console", fmt.Sprintf("ttd: opened %s: positions %d to %d\n", path, start, end))
	s.send(&dap.LaunchResponse{Response: *newResponse(&r.Request)})
	s.send(&dap.InitializedEvent{Event: *newEvent("initialized")})
}

// recordForLaunch records args.Program and returns the trace's path.
func (s *Server) recordForLaunch(args *launchArgs) (string, error) {
	prog := args.Program
	if args.Cwd != "" && !filepath.IsAbs(prog) {
		prog = filepath.Join(args.Cwd, prog)
	}
	path := args.Trace
	if path == "" {
		dir, err := os.MkdirTemp("", "ttd-dap-")
		if err != nil {
			return "", err
		}
		s.cleanup = append(s.cleanup, func() { os.RemoveAll(dir) })
		path = filepath.Join(dir, filepath.Base(prog)+".ttd")
	} else if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return "", err
	}
	s.output("console", fmt.Sprintf("ttd: recording %s\n", prog))
	_, err := s.cfg.Record(context.Background(), RecordRequest{
		Program: prog, Args: args.Args, Cwd: args.Cwd, Env: args.Env, TracePath: path,
		Output: s.output,
	})
	if err != nil {
		if _, serr := os.Stat(path); serr != nil {
			return "", err
		}
		// A trace exists: the recording failed part way (an unsupported
		// instruction, say); debug what was recorded.
		s.output("stderr", fmt.Sprintf("ttd: %v (debugging what was recorded)\n", err))
	}
	return path, nil
}

// onConfigurationDoneRequest starts the session: it reports the first
// stop, at the end of the recording (or the crash) or at its start.
func (s *Server) onConfigurationDoneRequest(r *dap.ConfigurationDoneRequest) {
	s.send(&dap.ConfigurationDoneResponse{Response: *newResponse(&r.Request)})
	s.mu.Lock()
	t := s.target
	if t == nil || s.started {
		s.mu.Unlock()
		return
	}
	s.started = true
	entry := s.launch.StopOnEntry
	s.mu.Unlock()
	if entry {
		s.reportStop(t, ttd.SearchStop{Reason: ttd.SearchStart, Pos: t.Position(), Tid: t.CurrentThread()}, ttd.Forward, "entry")
		return
	}
	s.reportStop(t, ttd.SearchStop{Reason: ttd.SearchEnd, Pos: t.Position(), Tid: t.CurrentThread()}, ttd.Forward, "")
}
