package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"ttd/internal/corpus"
)

// processTreePrograms are everyday commands that start processes: shell
// pipelines and substitutions, Python's subprocess, make running gcc
// (which runs cc1, as and collect2/ld). Each runs natively and under
// ttd run, and must agree (compareRuns).
func processTreePrograms(t testing.TB) []corpus.Program {
	makeProject := func(dir string) error {
		files := map[string]string{
			"main.c": "#include <stdio.h>\nint f1(int), f2(int);\nint main(void) { printf(\"%d\\n\", f1(2) + f2(3)); return 0; }\n",
			"f1.c":   "int f1(int x) { return x * 10; }\n",
			"f2.c":   "int f2(int x) { return x * 100; }\n",
			"Makefile": "prog: main.o f1.o f2.o\n\tgcc -o $@ $^\n%.o: %.c\n\tgcc -O2 -c $<\n" +
				"run: prog\n\t./prog\n",
		}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	someFiles := func(dir string) error {
		for _, n := range []string{"a", "b", "c", "d"} {
			if err := os.WriteFile(filepath.Join(dir, n), []byte(n+"\n"), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	progs := []corpus.Program{
		{Name: "tree-bash-pipe", Path: "/bin/bash", Args: []string{"-c", "ls | wc -l"}, Setup: someFiles},
		{Name: "tree-sh-subst-subshell", Path: "/bin/sh", Args: []string{"-c", "echo $(echo hi); (exit 3); echo $?"}},
		{Name: "tree-bash-pipestatus", Path: "/bin/bash", Args: []string{"-c",
			"true | false | (exit 4); echo ${PIPESTATUS[@]}; seq 1 50 | sort -rn | head -3 | tr '\\n' ' '; echo; exit 7"}},
		{Name: "tree-bash-bg-wait-kill", Path: "/bin/bash", Args: []string{"-c",
			"sleep 30 & p=$!; kill -TERM $p; wait $p; echo killed=$?; (exit 5) & wait $!; echo bg=$?; cat a b | sort -r"},
			Setup: someFiles},
		{Name: "tree-bash-self-kill", Path: "/bin/bash", Args: []string{"-c", "echo before; kill -USR1 $$; echo after"}},
		{Name: "tree-python-subprocess", Path: "/usr/bin/python3", Args: []string{"-c", `import subprocess, sys
print(subprocess.run(["echo", "x"], capture_output=True))
r = subprocess.run(["sh", "-c", "echo out; echo err >&2; exit 3"], capture_output=True, text=True)
print(r.returncode, repr(r.stdout), repr(r.stderr))
try:
    subprocess.run(["false"], check=True)
except subprocess.CalledProcessError as e:
    print("CalledProcessError", e.returncode)
print(subprocess.check_output("echo a | tr a b", shell=True))
p = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
print(p.communicate(b"through cat\n"))
sys.exit(subprocess.call(["sh", "-c", "exit 9"]))
`}},
		{Name: "tree-make-j2-gcc", Path: "/usr/bin/make", Args: []string{"-j2", "-s", "run"}, Setup: makeProject},
		// Everyday commands a newcomer tries (issue 17's last list).
		{Name: "tree-find-xargs-ls", Path: "/bin/sh", Args: []string{"-c",
			`find /usr/share/doc -maxdepth 2 -name "*.gz" | sort | head -5 | xargs ls -l`}},
		{Name: "tree-tar-pipe", Path: "/bin/sh", Args: []string{"-c",
			"mkdir -p d/sub && cp a b d && cp c d/sub && tar czf - d | tar tzf - | sort"}, Setup: someFiles},
		{Name: "tree-env-sort-uniq", Path: "/bin/sh", Args: []string{"-c", "env | cut -d= -f1 | sort | uniq -c"}},
		{Name: "tree-xargs-P2", Path: "/bin/sh", Args: []string{"-c",
			`seq 1 6 | xargs -P2 -n1 sh -c 'echo $(($0*2))' | sort -n`}},
		// nice values are the guest's own (ttd used to set a host
		// thread's and print 20 for `nice`).
		{Name: "tree-nice", Path: "/bin/sh", Args: []string{"-c",
			`nice; nice -n 5 nice; nice -n 3 sh -c 'nice; cut -d" " -f18,19 /proc/self/stat'; renice -n 4 -p $$ >/dev/null; nice`}},
		{Name: "tree-find-exec-flock-timeout", Path: "/bin/sh", Args: []string{"-c",
			`find . -name "[ab]" -exec wc -c {} \; | sort; flock lk -c 'echo locked'; timeout 5 sh -c 'echo in time'; echo $?; ` +
				`env -u HOME sh -c 'echo ${HOME:-unset}'; sh -c 'echo bg & wait'`}, Setup: someFiles},
		// A child's /proc/PID and task directories (ttd used to stat the
		// host's, which do not exist for a child: "d?????????" in ls -l).
		{Name: "tree-proc-child-dirs", Path: "/bin/sh", Args: []string{"-c",
			`ls -l /proc/self/task | cut -c1-10; stat -c %F /proc/self/task /proc/self /proc/thread-self /proc/self/; ` +
				`sh -c 'test -d /proc/$$ && echo dir'; true`}},
		{Name: "tree-git-commit", Path: "/bin/sh", Args: []string{"-c",
			"git init -q r && cd r && echo x > f && git add f && " +
				"GIT_AUTHOR_DATE=2020-01-01T00:00:00Z GIT_COMMITTER_DATE=2020-01-01T00:00:00Z " +
				"git -c user.name=n -c user.email=a@b commit -q -m m && git log --format='%H %s'"}},
	}
	var out []corpus.Program
	for _, p := range progs {
		if slowTree(p.Name) && os.Getenv("TTD_SLOW_TREES") == "" {
			continue
		}
		if _, err := exec.LookPath(p.Path); err != nil && t != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s: %s is not installed", p.Name, p.Path)
			}
			t.Logf("WARNING: SKIPPING %s: %s is not installed", p.Name, p.Path)
			continue
		}
		p.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/nonexistent", "LC_ALL=C", "TZ=UTC"}
		out = append(out, p)
	}
	return out
}

// slowTree names the programs of processTreePrograms that run only with
// TTD_SLOW_TREES=1: git's commit starts a dozen processes (git add,
// commit, its hooks and maintenance, log) and takes 4-16 s under ttd
// run on a loaded machine, and as long again to record.
func slowTree(name string) bool { return name == "tree-git-commit" }

// makeJ2Program is the make -j2 build of processTreePrograms (the
// benchmarks' program); it skips b when make is not installed.
func makeJ2Program(b *testing.B) corpus.Program {
	if _, err := exec.LookPath("make"); err != nil {
		b.Skip("make is not installed")
	}
	for _, p := range processTreePrograms(nil) {
		if p.Name == "tree-make-j2-gcc" {
			return p
		}
	}
	b.Fatal("no make program in processTreePrograms")
	return corpus.Program{}
}

// TestRunProcessTrees runs shell pipelines, Python's subprocess and
// make -j2 with gcc natively and under ttd run.
func TestRunProcessTrees(t *testing.T) {
	for _, p := range processTreePrograms(t) {
		p := p
		t.Run(p.Name, func(t *testing.T) { compareRuns(t, p) })
	}
}

// BenchmarkRunMakeJ2 builds a three-file C project with make -j2
// natively and under ttd run (make starts gcc, which starts cc1, as and
// collect2/ld: a tree of about 20 processes) and reports ttd's time as a
// multiple of the native one ("x-native"). rr's paper names make as its
// worst case, at 8x for recording.
func BenchmarkRunMakeJ2(b *testing.B) {
	benchMakeJ2(b, "ttd", func(string) []string { return []string{"run", "--"} })
}

// benchMakeJ2 runs make -j2 natively and with ttd's args (given a
// fresh directory) b.N times each and reports ttd's time as a multiple
// of the native one ("x-native") and both per run ("<what>-ms/op").
func benchMakeJ2(b *testing.B, what string, args func(dir string) []string) {
	prog := makeJ2Program(b)
	var native, ttd time.Duration
	for i := 0; i < b.N; i++ {
		ctx := context.Background()
		n, err := prog.Run(ctx)
		if err != nil || n.Status != 0 {
			b.Fatalf("native make: %v %+v", err, n)
		}
		r, err := prog.Run(ctx, append([]string{ttdBinary}, args(b.TempDir())...)...)
		if err != nil || r.Status != 0 {
			b.Fatalf("ttd %v make: %v %s", args(""), err, corpus.Tail(r.Stderr, 10))
		}
		native += n.Duration
		ttd += r.Duration
	}
	b.ReportMetric(float64(ttd)/float64(native), "x-native")
	b.ReportMetric(float64(ttd.Milliseconds())/float64(b.N), what+"-ms/op")
	b.ReportMetric(float64(native.Milliseconds())/float64(b.N), "native-ms/op")
}

// TestRecordProcessTrees records the same commands: the recording run
// must behave like the native one, the re-simulation of every process
// must verify (from the start and from every checkpoint), and the
// replay shows the whole tree's output.
func TestRecordProcessTrees(t *testing.T) {
	for _, p := range processTreePrograms(t) {
		p := p
		if (p.Name == "tree-python-subprocess" || p.Name == "tree-find-xargs-ls") && os.Getenv("TTD_SLOW_TREES") == "" {
			// Python and its children (with pyenv's shims, 45
			// processes): 205M instructions, recorded, summarised
			// and replayed twice with checkpoints every 200K, several
			// minutes on a loaded machine. TestRecordReplaySystem
			// records Python already, and proc_exec covers vfork and
			// posix_spawn; TTD_SLOW_TREES=1 runs it. find walking
			// /usr/share/doc records for a minute on a loaded
			// machine (3 s under ttd run, which TestRunProcessTrees
			// checks).
			continue
		}
		t.Run(p.Name, func(t *testing.T) { recordReplay(t, p) })
	}
}
