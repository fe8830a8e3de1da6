package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"ttd/bench"
)

// extraWorkloads are the multi-threaded workloads: a C program with four
// worker threads and a producer/consumer pair (bench/workloads/threads.c),
// and a Go program whose goroutines run on several threads with the
// garbage collector (bench/workloads/gowork).
func extraWorkloads(dir string) []workload {
	src := "bench/workloads"
	cbin := filepath.Join(dir, "threads")
	if b, err := exec.Command("gcc", "-O2", "-pthread", "-o", cbin, filepath.Join(src, "threads.c")).CombinedOutput(); err != nil {
		bench.Fail("gcc threads: %v\n%s", err, b)
	}
	ws := []workload{{name: "threads (C, 6 threads)", argv: []string{cbin, "150"}}}
	gobin := filepath.Join(dir, "gowork")
	cmd := exec.Command("go", "build", "-o", gobin, "main.go")
	cmd.Dir = filepath.Join(src, "gowork")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=")
	if b, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "compare: skipping the Go workload: go build: %v\n%s", err, b)
		return ws
	}
	return append(ws, workload{name: "gowork (Go, goroutines + GC)", argv: []string{gobin, "24"}})
}
