// Command neighbours measures find-prev-write on variables whose
// neighbours (the same 64-byte line) are written all the time: the case
// line-grained summaries cannot prune (issue 23). It builds
// bench/workloads/neighbours.c, records each layout with `ttd record`
// (wall time, trace and summary sizes), then asks `ttd query
// --find-prev-write` of the watched variable from the end of the trace:
//
//   - cold: a fresh `ttd query` process on the fresh trace (everything it
//     needs beyond the trace is built or loaded by that process);
//   - again: a second fresh process (the OS has the file cached; the old
//     design had its index on disk by then);
//   - warm: in one session, the same query a second time.
//
// The layout tuned on is "global"; struct, heap, stack and busy are the
// check set. Targets: cold at most 1 s and warm at most 100 ms on 1e9+
// instructions. Usage:
//
//	go run ./bench/cmd/neighbours [-ttd bin/ttd] [-iters 35000000] [-layouts global,struct,heap,stack,busy]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"ttd/ttd"
)

func main() {
	bin := flag.String("ttd", "bin/ttd", "the ttd binary")
	iters := flag.Int("iters", 35_000_000, "loop iterations (35M: about 1.1e9 instructions)")
	layouts := flag.String("layouts", "global,struct,heap,stack,busy", "layouts to measure (global is the one tuned on)")
	src := flag.String("src", "bench/workloads/neighbours.c", "the workload's source")
	flag.Parse()
	abs, err := filepath.Abs(*bin)
	check(err)
	dir, err := os.MkdirTemp("", "ttd-neighbours-")
	check(err)
	defer os.RemoveAll(dir)
	prog := filepath.Join(dir, "neighbours")
	if out, err := exec.Command("gcc", "-O1", "-g", "-fno-toplevel-reorder", "-o", prog, *src).CombinedOutput(); err != nil {
		fail("gcc: %v\n%s", err, out)
	}
	fmt.Println("times: wall/CPU of a fresh process (record, cold, again), wall in one session (warm)")
	fmt.Printf("%-7s %12s %10s %10s %7s %17s %17s %17s %9s  %s\n", "layout", "instructions", "trace", "summaries", "ratio", "record", "cold", "again", "warm", "found")
	for _, l := range strings.Split(*layouts, ",") {
		trace := filepath.Join(dir, l+".ttd")
		var out bytes.Buffer
		cmd := exec.Command(abs, "record", "-o", trace, prog, l, strconv.Itoa(*iters))
		cmd.Stdout = &out
		var errb bytes.Buffer
		cmd.Stderr = &errb
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			fail("ttd record %s: %v\n%s", l, err, errb.String())
		}
		rec := time.Since(t0)
		recCPU := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		addr := strings.TrimSpace(strings.SplitN(out.String(), "\n", 2)[0])
		q := addr + ":8"
		cold, coldCPU := timeQuery(abs, trace, q)
		again, againCPU := timeQuery(abs, trace, q)
		s, err := ttd.Open(trace)
		check(err)
		a, err := strconv.ParseUint(strings.TrimPrefix(addr, "0x"), 16, 64)
		check(err)
		f, err := s.FindPrevWrite(a, 8, s.End())
		check(err)
		t1 := time.Now()
		f2, err := s.FindPrevWrite(a, 8, s.End())
		check(err)
		warm := time.Since(t1)
		if f2.Position != f.Position {
			fail("%s: the second query found %d, the first %d", l, f2.Position, f.Position)
		}
		st, _ := os.Stat(trace)
		sum := s.SummaryBytes()
		end := s.End()
		s.Close()
		v, _ := f.After.Uint(8)
		fmt.Printf("%-7s %12d %10s %10s %6.1f%% %17s %17s %17s %9s  write of %#x at %d\n", l, end, size(st.Size()), size(sum),
			100*float64(sum)/float64(st.Size()), round(rec)+"/"+round(recCPU), round(cold)+"/"+round(coldCPU),
			round(again)+"/"+round(againCPU), round(warm), v, f.Position)
	}
}

// timeQuery runs the query in a fresh process and returns its wall and
// CPU time (on a loaded machine the CPU time is what an idle one would
// show as wall time, the query being single-threaded).
func timeQuery(bin, trace, q string) (wall, cpu time.Duration) {
	cmd := exec.Command(bin, "query", "--find-prev-write", q, trace)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		fail("ttd query %s: %v\n%s", q, err, errb.String())
	}
	return time.Since(t0), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func round(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
}

func check(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(f string, a ...any) {
	fmt.Fprintf(os.Stderr, "neighbours: "+f+"\n", a...)
	os.Exit(1)
}
