// Command compare measures the wall time of workloads run natively, under
// `ttd run` and under qemu-x86_64 (the peer emulator), interleaving the
// runs so that machine noise hits all three alike, and prints the ratios.
//
// Usage: go run ./bench/cmd/compare [-ttd bin/ttd] [-reps 3] [-only NAME]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"ttd/bench"
)

type workload struct {
	name  string
	argv  []string // argv[0] is a path
	stdin string   // file fed as stdin, if any
}

func main() {
	ttd := bench.TTDFlag()
	reps := flag.Int("reps", 3, "runs of each configuration (the best is reported)")
	only := flag.String("only", "", "run only workloads whose name contains this")
	modes := flag.String("modes", "native,ttd,qemu,record,replay", "configurations to compare")
	dump := flag.String("write-data", "", "write the gzip workload's 8 MiB input to this file and exit")
	flag.Parse()
	if *dump != "" {
		bench.Check(os.WriteFile(*dump, bench.TextData(8<<20), 0o644))
		return
	}
	*ttd = bench.Abs(*ttd)
	dir, err := os.MkdirTemp("", "ttd-bench-")
	bench.Check(err)
	defer os.RemoveAll(dir)

	src := "bench/workloads"
	build := func(name string, extra ...string) string {
		out := filepath.Join(dir, name)
		args := append([]string{"-O2", "-o", out, filepath.Join(src, name+".c")}, extra...)
		args = append(args, "-lm")
		if b, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
			bench.Fail("gcc %s: %v\n%s", name, err, b)
		}
		return out
	}
	data := filepath.Join(dir, "data.txt")
	bench.Check(os.WriteFile(data, bench.TextData(8<<20), 0o644))

	ws := []workload{
		{name: "inthash (C, integer/hash)", argv: []string{build("inthash"), "30"}},
		{name: "fp (C, floating point)", argv: []string{build("fp"), "4000"}},
		{name: "gzip -9 (8 MiB)", argv: []string{"/usr/bin/gzip", "-9", "-c"}, stdin: data},
	}
	ws = append(ws, extraWorkloads(dir)...)
	qemu, _ := exec.LookPath("qemu-x86_64")
	trace := filepath.Join(dir, "bench.ttd")
	density := map[string]string{}
	var recRows []string
	fmt.Printf("%-34s %10s %10s %10s %9s %9s\n", "workload", "native", "ttd run", "qemu", "ttd/nat", "ttd/qemu")
	for _, w := range ws {
		if *only != "" && !strings.Contains(w.name, *only) {
			continue
		}
		best := map[string]time.Duration{}
		var ref []byte
		for r := 0; r < *reps; r++ {
			for _, mode := range strings.Split(*modes, ",") {
				var argv []string
				switch mode {
				case "native":
					argv = w.argv
				case "ttd":
					argv = append([]string{*ttd, "run", "--"}, w.argv...)
				case "qemu":
					if qemu == "" {
						continue
					}
					argv = append([]string{qemu}, w.argv...)
				case "record":
					os.Remove(trace)
					argv = append([]string{*ttd, "record", "-o", trace, "--"}, w.argv...)
				case "replay":
					if _, err := os.Stat(trace); err != nil {
						continue
					}
					argv = []string{*ttd, "replay", "--quiet", trace}
				}
				res, err := bench.Run(argv, w.stdin)
				bench.Check(err)
				d, out, errOut := res.Wall, res.Stdout, res.Stderr
				if mode == "record" {
					density[w.name] = parseDensity(errOut)
				}
				if mode == "replay" {
					// The replay prints nothing with --quiet.
				} else if ref == nil {
					ref = out
				} else if !bytes.Equal(ref, out) {
					bench.Fail("%s: output of %s differs from native", w.name, mode)
				}
				if b, ok := best[mode]; !ok || d < b {
					best[mode] = d
				}
			}
		}
		ratio := func(a, b string) string {
			if best[a] == 0 || best[b] == 0 {
				return "-"
			}
			return fmt.Sprintf("%.1fx", float64(best[a])/float64(best[b]))
		}
		fmt.Printf("%-34s %10s %10s %10s %9s %9s\n", w.name, bench.Secs(best["native"]), bench.Secs(best["ttd"]),
			bench.Secs(best["qemu"]), ratio("ttd", "native"), ratio("ttd", "qemu"))
		recRows = append(recRows, fmt.Sprintf("%-34s %10s %10s %10s %11s %12s %14s", w.name, bench.Secs(best["record"]), bench.Secs(best["replay"]),
			density[w.name], ratio("record", "ttd"), ratio("record", "native"), ratio("replay", "record")))
	}
	fmt.Printf("\n%-34s %10s %10s %10s %11s %12s %14s\n", "recording", "record", "replay", "bits/inst", "record/run", "record/nat", "replay/record")
	for _, row := range recRows {
		fmt.Println(row)
	}
}

// parseDensity finds "N bits/instruction" in ttd record's report.
func parseDensity(stderr []byte) string {
	f := strings.Fields(string(stderr))
	for i := 1; i < len(f); i++ {
		if strings.HasPrefix(f[i], "bits/instruction") {
			return f[i-1]
		}
	}
	return "-"
}
