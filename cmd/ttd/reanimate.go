package main

import (
	"errors"
	"fmt"
	"os"

	"ttd/reader"
	"ttd/reanimate"
)

const reanimateUsage = "--root DIR [--base DIR0] [--verify] [--workers N] TRACE"

func init() {
	register(command{"reanimate", reanimateUsage, "re-execute the recorded file-system calls under DIR (Re-Animator), verifying results and data", reanimateCmd, 46})
}

// reanimateCmd implements "ttd reanimate".
func reanimateCmd(name string, args []string) int {
	fs := newFlags(name, reanimateUsage)
	root := fs.String("root", "", "re-execute under `DIR` (recorded paths are re-rooted there)")
	base := fs.String("base", "", "take the files the program read but did not create from `DIR0`, a copy of the directory it ran in")
	verify := fs.Bool("verify", false, "compare results, read data, stat fields and directory entries with the recording")
	workers := fs.Int("workers", 0, "re-execute at most `N` calls at once (default: one per recorded thread)")
	if err := parseInterspersed(fs, args); err != nil {
		return flagError(name, reanimateUsage, err)
	}
	if fs.NArg() != 1 {
		return flagError(name, reanimateUsage, errors.New("want exactly one trace"))
	}
	if *root == "" {
		return flagError(name, reanimateUsage, errors.New("--root DIR is required"))
	}
	tr, err := reader.Open(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd: %s: %v\n", fs.Arg(0), err)
		return 1
	}
	defer tr.Close()
	rep, err := reanimate.Replay(tr, reanimate.Options{Root: *root, Base: *base, Verify: *verify, Log: os.Stderr, Workers: *workers})
	if err != nil {
		fmt.Fprintf(os.Stderr, "ttd: %v\n", err)
		return 1
	}
	for _, d := range rep.SkippedCalls {
		fmt.Fprintf(os.Stderr, "ttd: skipped at %s\n", d)
	}
	for _, d := range rep.Divergences {
		fmt.Fprintf(os.Stderr, "ttd: divergence at %s\n", d)
	}
	fmt.Fprintf(os.Stderr, "ttd: reanimated %d calls (%d simulated from the recording, %d skipped) in %v: %.0f calls/s; the recorded working directory is %s%s\n",
		rep.Calls, rep.Simulated, rep.Skipped, rep.Elapsed.Round(1000), rep.Rate(), *root, rep.Cwd)
	if *verify {
		if len(rep.Divergences) > 0 {
			fmt.Fprintf(os.Stderr, "ttd: %d divergences\n", len(rep.Divergences))
			return 1
		}
		fmt.Fprintf(os.Stderr, "ttd: verified: no divergence\n")
	}
	return 0
}
