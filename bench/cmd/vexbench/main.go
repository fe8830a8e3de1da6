// Command vexbench measures vectorised code under ttd at each CPU level:
// a tuning workload (bench/workloads/vec.c: saxpy, a dot product, a byte
// histogram, min/max and saturating adds at -O3, and glibc's string
// functions) and a check workload that the translation was not tuned on
// (bench/workloads/fp.c: n-body, a matrix multiply, libm), each built
// for x86-64 (v1) and x86-64-v3, run natively, under qemu-x86_64 and
// under `ttd run --cpu v1|v2|v3` (v3 also with TTD_HOSTISA=0: VEX
// interpreted), interleaved so that machine noise hits all alike. It
// prints the best wall and user+system times and the ratios to native
// and to qemu-user, from one run.
//
// Usage: go run ./bench/cmd/vexbench [-ttd bin/ttd] [-reps 3]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"ttd/bench"
)

type config struct {
	name string
	exe  string // "v1" or "v3": which build
	argv func(exe string) []string
	env  []string
}

func main() {
	ttd := bench.TTDFlag()
	reps := flag.Int("reps", 3, "runs of each configuration (the best is reported)")
	flag.Parse()
	abs := bench.Abs(*ttd)
	dir, err := os.MkdirTemp("", "ttd-vexbench-")
	bench.Check(err)
	defer os.RemoveAll(dir)
	build := func(src, out, march string) string {
		p := filepath.Join(dir, out)
		cmd := exec.Command("gcc", "-O3", "-march="+march, "-o", p, filepath.Join("bench/workloads", src), "-lm")
		if b, err := cmd.CombinedOutput(); err != nil {
			bench.Fail("gcc %s: %v\n%s", src, err, b)
		}
		return p
	}
	qemu, _ := exec.LookPath("qemu-x86_64")
	ttdRun := func(level string) func(string) []string {
		return func(exe string) []string { return []string{abs, "run", "--cpu", level, "--", exe} }
	}
	configs := []config{
		{"native (v3 build)", "v3", func(e string) []string { return []string{e} }, nil},
		{"native (v1 build)", "v1", func(e string) []string { return []string{e} }, nil},
		{"qemu-user (v3 build)", "v3", func(e string) []string { return []string{qemu, e} }, nil},
		{"ttd --cpu v1 (v1 build)", "v1", ttdRun("v1"), nil},
		{"ttd --cpu v2 (v1 build)", "v1", ttdRun("v2"), nil},
		{"ttd --cpu v3 (v3 build)", "v3", ttdRun("v3"), nil},
		{"ttd --cpu v3, VEX interpreted", "v3", ttdRun("v3"), []string{"TTD_HOSTISA=0"}},
	}
	if qemu == "" {
		configs = append(configs[:2], configs[3:]...)
	}
	for _, w := range []struct{ title, src, arg string }{
		{"tuning: vec.c", "vec.c", "3000"},
		{"check: fp.c", "fp.c", "1500"},
	} {
		exes := map[string]string{"v1": build(w.src, "v1", "x86-64"), "v3": build(w.src, "v3", "x86-64-v3")}
		wall := make([]time.Duration, len(configs))
		cpu := make([]time.Duration, len(configs))
		ref := map[string][]byte{} // by build: FMA contraction changes a v3 build's floating-point results
		for r := 0; r < *reps; r++ {
			for i, c := range configs {
				argv := append(c.argv(exes[c.exe]), w.arg)
				res, err := bench.Run(argv, "", c.env...)
				if err != nil {
					bench.Fail("%s: %v", c.name, err)
				}
				d, u := res.Wall, res.CPU
				if ref[c.exe] == nil {
					ref[c.exe] = res.Stdout
				} else if !bytes.Equal(ref[c.exe], res.Stdout) {
					bench.Fail("%s %s: output differs from the same build's first run:\n%s\nvs\n%s", w.title, c.name, res.Stdout, ref[c.exe])
				}
				if wall[i] == 0 || d < wall[i] {
					wall[i] = d
				}
				if cpu[i] == 0 || u < cpu[i] {
					cpu[i] = u
				}
			}
		}
		fmt.Printf("%s (argument %s), best of %d\n", w.title, w.arg, *reps)
		fmt.Printf("  %-32s %9s %9s %9s %9s\n", "", "wall", "cpu", "/native", "/qemu")
		for i, c := range configs {
			ratio := func(j int) string {
				if j < 0 || j >= len(cpu) || cpu[j] == 0 {
					return "-"
				}
				return fmt.Sprintf("%.1fx", float64(cpu[i])/float64(cpu[j]))
			}
			q := -1
			if qemu != "" {
				q = 2
			}
			fmt.Printf("  %-32s %8.3fs %8.3fs %9s %9s\n", c.name, wall[i].Seconds(), cpu[i].Seconds(), ratio(0), ratio(q))
		}
		fmt.Println("  (ratios of cpu time: user+system, which a loaded machine disturbs less than wall time)")
	}
}
