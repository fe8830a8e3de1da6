// Command travel measures ttd's time travel on a real program: it records
// gzip -9 of deterministic text (2 MiB by default: about 1e9
// instructions), then reports
//
//   - record and replay costs (CPU time of `ttd record` and `ttd replay`,
//     best of -reps interleaved runs, so machine noise hits both alike);
//   - the index build (first open of a session) and its size;
//   - backward single steps from random positions, and many in a row
//     (percentiles), the target being a p99 of at most 50 ms;
//   - FindPrevWrite, asked from the end, of a line of memory written only
//     in the first checkpoint interval (target: at most 1 s), on a warm
//     session and on a fresh one that loads the index from disk.
//
// Latencies are wall times: on a loaded machine they include waiting for
// a CPU. Usage:
//
//	go run ./bench/cmd/travel [-ttd bin/ttd] [-mib 2] [-reps 3] [-steps 200] [-consecutive 100000]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"ttd/bench"
	"ttd/ttd"
	"ttd/x86"
)

func main() {
	bin := flag.String("ttd", "bin/ttd", "the ttd binary")
	mib := flag.Int("mib", 2, "MiB of text for gzip -9 (2: about 1e9 instructions)")
	reps := flag.Int("reps", 3, "runs of record and replay (the best is reported)")
	steps := flag.Int("steps", 200, "random positions to step back from")
	consecutive := flag.Int("consecutive", 100_000, "backward steps in a row (crossing snapshot boundaries)")
	keep := flag.String("keep", "", "keep the trace in this file")
	flag.Parse()
	abs, err := filepath.Abs(*bin)
	check(err)
	dir, err := os.MkdirTemp("", "ttd-travel-")
	check(err)
	defer os.RemoveAll(dir)
	data := filepath.Join(dir, "data.txt")
	check(os.WriteFile(data, bench.TextData(*mib<<20), 0o644))
	trace := filepath.Join(dir, "gzip.ttd")
	if *keep != "" {
		trace = *keep
		os.Remove(trace)
	}

	// Record and replay, interleaved.
	var rec, rep []time.Duration
	var recWall, repWall []time.Duration
	for i := 0; i < *reps; i++ {
		t := trace
		if i > 0 {
			t = filepath.Join(dir, fmt.Sprintf("again%d.ttd", i))
		}
		cpu, wall := runCPU(abs, "", "record", "-o", t, "/usr/bin/gzip", "-9", "-c", data)
		rec, recWall = append(rec, cpu), append(recWall, wall)
		cpu, wall = runCPU(abs, "", "replay", "--quiet", trace)
		rep, repWall = append(rep, cpu), append(repWall, wall)
		if i > 0 {
			os.Remove(t)
		}
	}
	info, _ := exec.Command(abs, "info", trace).Output()
	fmt.Printf("workload: gzip -9 of %d MiB of text\n%s\n", *mib, indent(string(info)))
	fmt.Printf("%-44s %10s %10s\n", "", "CPU", "wall")
	fmt.Printf("%-44s %10s %10s\n", "ttd record (best of "+fmt.Sprint(*reps)+")", best(rec), best(recWall))
	fmt.Printf("%-44s %10s %10s\n", "ttd replay (best of "+fmt.Sprint(*reps)+")", best(rep), best(repWall))
	fmt.Printf("%-44s %9.2fx\n", "replay / record (CPU)", float64(minD(rep))/float64(minD(rec)))

	// The index: built on first open.
	t0 := time.Now()
	s, err := ttd.Open(trace)
	check(err)
	build := time.Since(t0)
	fmt.Printf("\n%-44s %10s  (%d segments, summaries of %s in the trace)\n", "session open", round(build),
		len(s.Index().Segments), sizeString(s.SummaryBytes()))

	// Backward single steps from random positions.
	rng := rand.New(rand.NewSource(1))
	var lat []time.Duration
	var seekLat []time.Duration
	for i := 0; i < *steps; i++ {
		p := 1 + uint64(rng.Int63n(int64(s.End()-1)))
		t0 := time.Now()
		_, err := s.Seek(p)
		check(err)
		seekLat = append(seekLat, time.Since(t0))
		t0 = time.Now()
		stop, err := s.Step(ttd.Backward)
		check(err)
		lat = append(lat, time.Since(t0))
		if stop.Position != p-1 {
			fail("step back from %d stopped at %d", p, stop.Position)
		}
	}
	fmt.Printf("%-44s %s\n", "Seek to a random position", percentiles(seekLat))
	fmt.Printf("%-44s %s\n", "backward step from a random position", percentiles(lat))
	lat = lat[:0]
	s.Seek(s.End() / 3)
	for i := 0; i < *consecutive; i++ {
		t0 := time.Now()
		_, err := s.Step(ttd.Backward)
		check(err)
		lat = append(lat, time.Since(t0))
	}
	fmt.Printf("%-44s %s\n", "consecutive backward steps", percentiles(lat))

	// FindPrevWrite of a line written only in the first segment.
	addr, ok := onlyEarly(s.Index())
	if !ok {
		fail("no line of memory is written only in the first segment")
	}
	t0 = time.Now()
	f, err := s.FindPrevWrite(addr, 64, s.End())
	check(err)
	warm := time.Since(t0)
	s.Close()
	s, err = ttd.Open(trace)
	check(err)
	t0 = time.Now()
	f2, err := s.FindPrevWrite(addr, 64, s.End())
	check(err)
	cold := time.Since(t0)
	s.Close()
	if f2.Position != f.Position {
		fail("FindPrevWrite differs between sessions: %d, %d", f.Position, f2.Position)
	}
	fmt.Printf("%-44s %10s  (write at position %d of %d)\n", "FindPrevWrite from the end, warm session", round(warm), f.Position, s.End())
	fmt.Printf("%-44s %10s\n", "FindPrevWrite from the end, fresh session", round(cold))
}

// onlyEarly finds a 64-byte line written in segment 0 and never after.
func onlyEarly(ix *ttd.Index) (uint64, bool) {
	if len(ix.Segments) < 2 {
		return 0, false
	}
	later := map[uint64]uint64{}
	for _, sg := range ix.Segments[1:] {
		for _, p := range sg.Pages {
			later[p.PN] |= p.Written.Lines | p.Read.Lines
		}
	}
	for _, p := range ix.Segments[0].Pages {
		if m := p.Written.Lines &^ later[p.PN]; m != 0 {
			for i := 0; i < 64; i++ {
				if m&(1<<i) != 0 {
					return p.PN<<x86.PageShift + uint64(i)*64, true
				}
			}
		}
	}
	return 0, false
}

func runCPU(bin, stdin string, args ...string) (cpu, wall time.Duration) {
	cmd := exec.Command(bin, args...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if stdin != "" {
		f, err := os.Open(stdin)
		check(err)
		defer f.Close()
		cmd.Stdin = f
	}
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		fail("ttd %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	wall = time.Since(t0)
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), wall
}

func minD(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = min(m, d)
	}
	return m
}

func best(ds []time.Duration) string { return round(minD(ds)) }

func round(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.0fµs", float64(d)/1e3)
}

func percentiles(ds []time.Duration) string {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	at := func(q float64) time.Duration { return s[min(len(s)-1, int(q*float64(len(s))))] }
	return fmt.Sprintf("p50 %s  p99 %s  p99.9 %s  max %s  (n=%d)", round(at(0.5)), round(at(0.99)), round(at(0.999)), round(s[len(s)-1]), len(s))
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n  ")
}

func sizeString(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
}

func check(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "travel: "+format+"\n", args...)
	os.Exit(1)
}
