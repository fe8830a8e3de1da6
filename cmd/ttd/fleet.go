package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Queries over many recordings run on Apache Beam in a command of their
// own, ttd-fleet (package fleet): Beam's Go SDK would add 150 MiB to
// ttd and 100 ms of package initialisation to every start (measured:
// ttd-fleet's init is 104 ms, ttd's 3 ms). `ttd query --runner beam`
// hands its arguments to ttd-fleet.

// takeRunner removes --runner NAME (or --runner=NAME) from args.
// "local" (the default) runs here; anything else (beam, prism, flink,
// spark, universal) is a Beam runner.
func takeRunner(args []string) (runner string, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return runner, append(rest, args[i:]...)
		case a == "--runner" || a == "-runner":
			if i+1 < len(args) {
				runner = args[i+1]
				i++
				continue
			}
		case strings.HasPrefix(a, "--runner=") || strings.HasPrefix(a, "-runner="):
			runner = a[strings.IndexByte(a, '=')+1:]
			continue
		}
		rest = append(rest, a)
	}
	return runner, rest
}

// fleetBinary finds ttd-fleet next to this executable, else in PATH.
func fleetBinary() (string, error) {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "ttd-fleet")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath("ttd-fleet")
	if err != nil {
		return "", errors.New("--runner beam needs ttd-fleet (make build puts it next to ttd; or go build ./cmd/ttd-fleet and put it in PATH)")
	}
	return p, nil
}

// runFleet runs "ttd-fleet SUB --runner RUNNER ARGS..." and returns its
// status. --json is ttd-fleet's default output and is dropped.
func runFleet(name, sub, runner string, args []string) int {
	bin, err := fleetBinary()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd %s: %v\n", name, err)
		return 2
	}
	if runner == "beam" {
		runner = "prism"
	}
	argv := []string{sub, "--runner", runner}
	for _, a := range args {
		if a != "--json" && a != "-json" {
			argv = append(argv, a)
		}
	}
	cmd := exec.Command(bin, argv...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		fmt.Fprintf(os.Stderr, "ttd %s: %v\n", name, err)
		return 1
	}
	return 0
}
