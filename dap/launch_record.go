package dap

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"

	"ttd/emu"
	"ttd/recorder"
)

// RecordProgram records req.Program into req.TracePath with the recorder,
// sending the program's stdout and stderr to req.Output as it runs; its
// stdin is empty. This is the only part of package dap that runs a
// program (and depends on emu).
func RecordProgram(ctx context.Context, req RecordRequest) (string, error) {
	path := req.Program
	if !strings.Contains(path, "/") {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("%s: command not found", path)
		}
		path = p
	}
	env := os.Environ()
	if len(req.Env) > 0 {
		keys := make([]string, 0, len(req.Env))
		for k := range req.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			env = append(env, k+"="+req.Env[k])
		}
	}
	stdin, err := os.Open(os.DevNull)
	if err != nil {
		return "", err
	}
	defer stdin.Close()
	var wg sync.WaitGroup
	pipe := func(category string) (*os.File, error) {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer r.Close()
			buf := make([]byte, 32<<10)
			for {
				n, err := r.Read(buf)
				if n > 0 && req.Output != nil {
					req.Output(category, string(buf[:n]))
				}
				if err == io.EOF || err != nil {
					return
				}
			}
		}()
		return w, nil
	}
	stdout, err := pipe("stdout")
	if err != nil {
		return "", err
	}
	stderr, err := pipe("stderr")
	if err != nil {
		stdout.Close()
		return "", err
	}
	args := append([]string{req.Program}, req.Args...)
	cfg := emu.Config{Path: path, Args: args, Env: env, Dir: req.Cwd, Stdin: stdin, Stdout: stdout, Stderr: stderr, Log: stderr}
	// ttd record's default mode: no read logged, about `ttd run`'s speed.
	st, stats, err := recorder.Record(cfg, recorder.Options{Path: req.TracePath, Replayable: true})
	stdout.Close()
	stderr.Close()
	wg.Wait()
	if err != nil {
		return stats.Path, err
	}
	if req.Output != nil {
		req.Output("console", fmt.Sprintf("ttd: recorded %d instructions; the program %s\n", stats.Instructions, st))
	}
	return stats.Path, nil
}
