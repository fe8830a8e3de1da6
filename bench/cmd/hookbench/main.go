// Command hookbench measures what probes and call tracing cost against a
// plain replay, on one core, measured in one run (issues 18 and 21):
//
//   - `ttd probe --jobs 1 -n 'fn::malloc:entry { @[probefunc] = count(); }' TRACE`
//     against `ttd replay --quiet TRACE` (target: at most 1.3x);
//   - `ttd calls --jobs 1 TRACE` against the replay (target: 1.5x);
//   - the live probe `ttd probe --jobs 1 -n 'fn:::entry { @[probefunc] = count(); }' -- PROG`
//     against `ttd run PROG` (target: 2x).
//
// Costs are CPU times (user+system) of the ttd process, best of -reps
// interleaved runs, so that machine noise hits every command alike. The
// workloads: gzip -9 of deterministic text and sqlite3 running a
// recursive query with an index and a group-by (the tuning programs),
// xz -6 of the same text and python3 filling a dict (the check
// programs). -before names a second ttd binary whose ratios are
// printed beside the first's, measured in the same run.
//
//	go build -o bin/ttd ./cmd/ttd
//	go run ./bench/cmd/hookbench [-ttd bin/ttd] [-before OLD_TTD [-before-env NAME=VALUE]] [-live=false] [-only NAME] [-mib 1] [-rows 20000] [-reps 2]
//
// -issue21 measures issue 21's statement exactly: `ttd calls --jobs 1`
// against `ttd replay --quiet` over traces of about 1e9 instructions
// (gzip -9 of 2 MiB and sqlite3 with 80000 rows to tune; xz -6 of 512
// KiB and python3 filling a dict of 300000 keys to check). -keep DIR
// keeps the traces there (for profiling with `ttd calls -cpuprofile`).
//
//	go run ./bench/cmd/hookbench -ttd bin/ttd -before OLD_TTD -issue21 -reps 2
package main

import (
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
	name string
	argv []string
}

// command is one measured ttd invocation; trace names the recording it
// reads (or, with live, that it probes the program).
type command struct {
	name string
	args func(trace string, w workload) []string
}

var commands = []command{
	{"replay", func(tr string, w workload) []string { return []string{"replay", "--quiet", tr} }},
	{"probe malloc", func(tr string, w workload) []string {
		return []string{"probe", "-q", "--jobs", "1", "-n", "fn::malloc:entry { @[probefunc] = count(); }", tr}
	}},
	{"calls", func(tr string, w workload) []string { return []string{"calls", "--jobs", "1", tr} }},
	{"run", func(tr string, w workload) []string { return append([]string{"run"}, w.argv...) }},
	{"live probe fn:::entry", func(tr string, w workload) []string {
		return append([]string{"probe", "-q", "--jobs", "1", "-n", "fn:::entry { @[probefunc] = count(); }", "--"}, w.argv...)
	}},
}

func main() {
	bin := bench.TTDFlag()
	before := flag.String("before", "", "a second ttd binary (before a change), measured in the same run")
	mib := flag.Int("mib", 1, "MiB of text for gzip -9")
	rows := flag.Int("rows", 20000, "rows sqlite3 inserts, indexes and groups")
	reps := flag.Int("reps", 2, "runs of each command (the best CPU time is reported)")
	only := flag.String("only", "", "run only the workloads whose name contains this")
	live := flag.Bool("live", true, "measure ttd run and the live probe too")
	beforeEnv := flag.String("before-env", "", "NAME=VALUE in the environment of -before's runs only (-before bin/ttd -before-env TTD_HOOKLOG=off: the same binary without logged hooks)")
	issue21 := flag.Bool("issue21", false, "only replay and calls, over traces of about 1e9 instructions each (issue 21's target)")
	keep := flag.String("keep", "", "keep the traces in this directory")
	flag.Parse()
	xzKiB, pyKeys := *mib<<10, 60000
	if *issue21 {
		*live = false
		*mib, *rows, xzKiB, pyKeys = 2, 80000, 512, 300000
	}
	bins := []string{bench.Abs(*bin)}
	if *before != "" {
		bins = append(bins, bench.Abs(*before))
	}
	dir, err := os.MkdirTemp("", "ttd-hookbench-")
	bench.Check(err)
	defer os.RemoveAll(dir)
	data := filepath.Join(dir, "data.txt")
	bench.Check(os.WriteFile(data, bench.TextData(*mib<<20), 0o644))
	xzData := filepath.Join(dir, "xzdata.txt")
	bench.Check(os.WriteFile(xzData, bench.TextData(xzKiB<<10), 0o644))
	sql := fmt.Sprintf(`create table t(k integer, v text);
with recursive n(i) as (select 1 union all select i+1 from n where i < %d)
insert into t select i, hex(randomblob(8)) || i from n;
create index tk on t(v);
select k %% 17, count(*), max(v) from t group by k %% 17 order by 2 desc limit 3;`, *rows)
	wls := []workload{
		{fmt.Sprintf("gzip -9 (%d MiB)", *mib), []string{"/usr/bin/gzip", "-9", "-c", data}},
		{fmt.Sprintf("sqlite3 (%d rows)", *rows), []string{"/usr/bin/sqlite3", ":memory:", sql}},
		// Check programs nobody tuned for.
		{fmt.Sprintf("xz -6 (%d KiB)", xzKiB), []string{"/usr/bin/xz", "-6", "-c", "-T1", xzData}},
		{fmt.Sprintf("python3 (dict of %d keys)", pyKeys), []string{"/usr/bin/python3", "-S", "-c",
			fmt.Sprintf("d = {}\nfor i in range(%d): d[str(i)] = i * i\nprint(sum(len(k) for k in d), sum(d.values()) %% 1000003)", pyKeys)}},
	}
	for _, w := range wls {
		if *only != "" && !strings.Contains(w.name, *only) {
			continue
		}
		if _, err := os.Stat(w.argv[0]); err != nil {
			fmt.Printf("%s: skipped (%v)\n", w.name, err)
			continue
		}
		trace := filepath.Join(dir, "w.ttd")
		if *keep != "" {
			trace = filepath.Join(*keep, strings.Fields(w.name)[0]+".ttd")
		}
		os.Remove(trace)
		rec := exec.Command(bins[0], append([]string{"record", "-o", trace}, w.argv...)...)
		rec.Stdout, rec.Stderr = nil, os.Stderr
		bench.Check(rec.Run())
		info, _ := exec.Command(bins[0], "info", trace).Output()
		fmt.Printf("workload: %s\n%s\n", w.name, indent(firstLines(string(info), 6)))
		// best[b][k]: the best CPU time of command k with binary b.
		best := make([][]time.Duration, len(bins))
		for b := range best {
			best[b] = make([]time.Duration, len(commands))
		}
		for rep := 0; rep < *reps; rep++ {
			for k, c := range commands {
				if k >= 3 && !*live || k == 1 && *issue21 {
					continue
				}
				for b, bn := range bins {
					name, val, set := strings.Cut(*beforeEnv, "=")
					set = set && b == 1
					if set {
						os.Setenv(name, val)
					}
					d := bench.CPUTime(append([]string{bn}, c.args(trace, w)...))
					if set {
						os.Unsetenv(name)
					}
					if rep == 0 || d < best[b][k] {
						best[b][k] = d
					}
				}
			}
		}
		fmt.Printf("  %-24s", "")
		for b := range bins {
			fmt.Printf(" %12s %8s", label(b), "ratio")
		}
		fmt.Println()
		for k, c := range commands {
			if k >= 3 && !*live || k == 1 && *issue21 {
				continue
			}
			fmt.Printf("  %-24s", c.name)
			for b := range bins {
				ref := best[b][0] // replay
				if k >= 3 {
					ref = best[b][3] // run
				}
				fmt.Printf(" %12s %7.2fx", best[b][k].Round(time.Millisecond), float64(best[b][k])/float64(ref))
			}
			fmt.Println()
		}
		fmt.Println()
	}
}

func label(b int) string {
	if b == 0 {
		return "CPU"
	}
	return "before CPU"
}

func firstLines(s string, n int) string {
	ls := strings.SplitN(s, "\n", n+1)
	if len(ls) > n {
		ls = ls[:n]
	}
	return strings.Join(ls, "\n")
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}
