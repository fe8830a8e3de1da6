// Command treebench measures what issue 17 asks of process trees, in one
// run, in CPU time (user+system of the measured process and the children
// it waited for, from rusage) and peak RSS:
//
//   - the cost of forking a process that has touched 256 MiB: forkbig
//     (bench/workloads/forkbig.c) with 0 and N forks, natively, under
//     `ttd run` and under `ttd record`; the cost of one fork is the
//     difference over N. A fork that copied the 256 MiB would cost tens
//     of milliseconds and raise the peak RSS by 256 MiB.
//   - record/native and run/native for `make -j2` of a small C project
//     (eight files, gcc running cc1, as and ld).
//
// Usage (from the repository root, after make build):
//
//	go run ./bench/cmd/treebench [-ttd bin/ttd] [-mib 256] [-forks 20] [-reps 3]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"ttd/bench"
)

var (
	ttdBin = bench.TTDFlag()
	mib    = flag.Int("mib", 256, "MiB the forking process touches")
	forks  = flag.Int("forks", 20, "forks per measured run")
	reps   = flag.Int("reps", 3, "runs of each; the least CPU time is kept")
)

// measured is one run's CPU time and peak RSS.
type measured struct {
	cpu time.Duration
	rss int64 // KiB
}

// run runs argv in dir and returns its CPU time and peak RSS (the
// largest of the process and the children it waited for).
func run(dir string, argv ...string) measured {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		bench.Fail("%v: %v\n%s", argv, err, bench.Tail(out, 2000))
	}
	ps := cmd.ProcessState
	ru := ps.SysUsage().(*syscall.Rusage)
	return measured{cpu: ps.UserTime() + ps.SystemTime(), rss: ru.Maxrss}
}

// best runs f reps times and keeps the least CPU time (and the largest RSS).
func best(f func() measured) measured {
	var b measured
	for i := 0; i < *reps; i++ {
		m := f()
		if i == 0 || m.cpu < b.cpu {
			b.cpu = m.cpu
		}
		b.rss = max(b.rss, m.rss)
	}
	return b
}

func main() {
	flag.Parse()
	ttd := bench.Abs(*ttdBin)
	dir, err := os.MkdirTemp("", "treebench")
	bench.Check(err)
	defer os.RemoveAll(dir)
	src, err := filepath.Abs("bench/workloads/forkbig.c")
	bench.Check(err)
	prog := filepath.Join(dir, "forkbig")
	if out, err := exec.Command("gcc", "-O2", "-o", prog, src).CombinedOutput(); err != nil {
		bench.Fail("gcc: %v\n%s", err, out)
	}
	trace := filepath.Join(dir, "t.ttd")
	modes := []struct {
		name string
		argv func(n int) []string
	}{
		{"native", func(n int) []string { return []string{prog, fmt.Sprint(*mib), fmt.Sprint(n)} }},
		{"ttd run", func(n int) []string { return []string{ttd, "run", "--", prog, fmt.Sprint(*mib), fmt.Sprint(n)} }},
		{"ttd record", func(n int) []string {
			return []string{ttd, "record", "--no-summaries", "-o", trace, "--", prog, fmt.Sprint(*mib), fmt.Sprint(n)}
		}},
	}
	fmt.Printf("fork of a process that touched %d MiB (%d forks; CPU, least of %d runs)\n", *mib, *forks, *reps)
	fmt.Printf("%-11s %10s %10s %12s %12s %12s\n", "", "0 forks", "N forks", "per fork", "RSS 0 (MiB)", "RSS N (MiB)")
	for _, m := range modes {
		zero := best(func() measured { os.Remove(trace); return run(dir, m.argv(0)...) })
		many := best(func() measured { os.Remove(trace); return run(dir, m.argv(*forks)...) })
		per := (many.cpu - zero.cpu) / time.Duration(*forks)
		fmt.Printf("%-11s %10s %10s %10.2fms %12d %12d\n", m.name, bench.Secs(zero.cpu), bench.Secs(many.cpu),
			float64(per.Microseconds())/1000, zero.rss>>10, many.rss>>10)
	}

	// make -j2 of eight C files.
	proj := filepath.Join(dir, "proj")
	bench.Check(os.Mkdir(proj, 0o755))
	objs := ""
	decls, sum := "", ""
	for i := 1; i <= 7; i++ {
		f := fmt.Sprintf("#include <string.h>\nint f%d(const char *s) { return (int)strlen(s) * %d; }\n", i, i)
		bench.Check(os.WriteFile(filepath.Join(proj, fmt.Sprintf("f%d.c", i)), []byte(f), 0o644))
		objs += fmt.Sprintf(" f%d.o", i)
		decls += fmt.Sprintf("int f%d(const char *);\n", i)
		sum += fmt.Sprintf(" + f%d(\"x\")", i)
	}
	main := "#include <stdio.h>\n" + decls + "int main(void) { printf(\"%d\\n\", 0" + sum + "); return 0; }\n"
	bench.Check(os.WriteFile(filepath.Join(proj, "main.c"), []byte(main), 0o644))
	mk := "OBJ = main.o" + objs + "\nprog: $(OBJ)\n\tgcc -o $@ $(OBJ)\n%.o: %.c\n\tgcc -O2 -c $<\nclean:\n\trm -f prog *.o\n"
	bench.Check(os.WriteFile(filepath.Join(proj, "Makefile"), []byte(mk), 0o644))
	makeBin, err := exec.LookPath("make")
	bench.Check(err)
	clean := func() { run(proj, makeBin, "-s", "clean") }
	nat := best(func() measured { clean(); return run(proj, makeBin, "-s", "-j2") })
	rn := best(func() measured { clean(); return run(proj, ttd, "run", "--", makeBin, "-s", "-j2") })
	rec := best(func() measured {
		clean()
		os.Remove(trace)
		return run(proj, ttd, "record", "--no-summaries", "-o", trace, "--", makeBin, "-s", "-j2")
	})
	fmt.Printf("make -j2 of 8 C files (CPU, least of %d runs): native %s, ttd run %s (%.1fx), ttd record %s (%.1fx)\n",
		*reps, bench.Secs(nat.cpu), bench.Secs(rn.cpu), rn.cpu.Seconds()/nat.cpu.Seconds(), bench.Secs(rec.cpu),
		rec.cpu.Seconds()/nat.cpu.Seconds())
}
