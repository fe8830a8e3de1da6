package syscalls

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"ttd/emu"
	"ttd/internal/testtmp"
	"ttd/reader"
	"ttd/recorder"
)

// The host is the oracle: the strace format must print the lines
// `strace -f -x -s N` prints for the same program, apart from pointers,
// pids and alignment (normalise).

var built sync.Map // source path -> binary (or error)

// buildRoot holds every program the tests build; TestMain removes it.
var buildRoot string

func TestMain(m *testing.M) { testtmp.Main(m, "ttd-syscalls-", &buildRoot) }

// buildC compiles a C file with gcc -O2 once per test process.
func buildC(t testing.TB, src string) string {
	t.Helper()
	return buildCFlags(t, src)
}

func buildCFlags(t testing.TB, src string, flags ...string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		skipOutsideCI(t, "gcc: %v", err)
	}
	src, _ = filepath.Abs(src)
	if v, ok := built.Load(src); ok {
		if err, bad := v.(error); bad {
			t.Fatal(err)
		}
		return v.(string)
	}
	dir, err := os.MkdirTemp(buildRoot, "build-")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), ".c"))
	if b, err := exec.Command("gcc", append(append([]string{"-O2"}, flags...), "-o", out, src)...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", src, err, b)
	}
	built.Store(src, out)
	return out
}

func skipOutsideCI(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("needs "+format, args...)
	}
	t.Skipf("SKIPPED (not in CI): needs "+format, args...)
}

// record records prog run in dir (stdout and stderr to files there) and
// returns the trace's path.
func record(t testing.TB, prog, dir string, args ...string) string {
	t.Helper()
	out, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	path := filepath.Join(t.TempDir(), filepath.Base(prog)+".ttd")
	st, _, err := recorder.Record(emu.Config{Path: prog, Args: append([]string{prog}, args...), Dir: dir,
		Env: []string{"PATH=/usr/bin:/bin"}, Stdout: out, Stderr: out},
		recorder.Options{Path: path, CheckpointEvery: 100000})
	if err != nil {
		t.Fatalf("recording %s: %v", prog, err)
	}
	if st.Signal != 0 || st.Code != 0 {
		b, _ := os.ReadFile(out.Name())
		t.Fatalf("%s ended with %v:\n%s", prog, st, b)
	}
	return path
}

// straceNative runs prog under strace -f -x -s size in dir.
func straceNative(t testing.TB, prog, dir string, size string, args ...string) []byte {
	t.Helper()
	if _, err := exec.LookPath("strace"); err != nil {
		skipOutsideCI(t, "strace (apt package strace): %v", err)
	}
	log := filepath.Join(t.TempDir(), "strace.log")
	cmd := exec.Command("strace", append([]string{"-f", "-x", "-s", size, "-o", log, prog}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	out, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		b, _ := os.ReadFile(log)
		t.Fatalf("strace %s: %v\n%s", prog, err, b)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func exportText(t testing.TB, trace string, size int) []byte {
	t.Helper()
	tr, err := reader.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var out bytes.Buffer
	sink, err := NewSink("strace", &out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Export(tr, Options{StrSize: size, Cut: size >= 0}, sink); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

var (
	pidPrefix = regexp.MustCompile(`^(\d+ +|\[pid +\d+\] )`)
	pointer   = regexp.MustCompile(`0x[0-9a-f]{5,}`)
	align     = regexp.MustCompile(`\) +=( |$)`)
)

// normalise keeps strace's lines apart from pids, pointers, timing and
// the alignment of " = ", and drops the lines of the calls skip names
// (those whose results depend on the address-space layout or the
// emulator: the loader's mappings, rseq...). Between from and to
// (marker substrings, "" for the whole output) only. Timing: strace -f
// splits a call another thread's call interrupted into "<unfinished
// ...>" and "<... resumed>" lines; they are joined where the call ended.
// Pids: every thread id seen (line prefixes, getpid, gettid, clone
// results) becomes PID; dir, the directory the program ran in, DIR.
func normalise(out []byte, from, to, dir string, skip map[string]bool) []string {
	raw := strings.Split(string(out), "\n")
	ids := map[string]bool{}
	for _, l := range raw {
		if m := pidPrefix.FindStringSubmatch(l); m != nil {
			ids[strings.Trim(m[0], "[pid] ")] = true
		}
		if m := idResult.FindStringSubmatch(l); m != nil {
			ids[m[1]] = true
		}
	}
	unfinished := map[string]string{}
	var lines []string
	on := from == ""
	for _, l := range raw {
		who := ""
		if m := pidPrefix.FindString(l); m != "" {
			who = strings.Trim(m, "[pid] ")
		}
		l = pidPrefix.ReplaceAllString(l, "")
		if head, ok := strings.CutSuffix(l, " <unfinished ...>"); ok {
			unfinished[who] = head
			continue
		}
		if m := resumed.FindStringSubmatch(l); m != nil {
			l = unfinished[who] + m[2]
			delete(unfinished, who)
		}
		if !on {
			on = strings.Contains(l, from)
		}
		if !on || l == "" {
			continue
		}
		name, _, _ := strings.Cut(l, "(")
		if skip[name] {
			continue
		}
		if dir != "" {
			l = strings.ReplaceAll(l, dir, "DIR")
		}
		l = pointer.ReplaceAllString(l, "PTR")
		l = pidArg.ReplaceAllStringFunc(l, func(s string) string {
			m := pidArg.FindStringSubmatch(s)
			if ids[m[2]] {
				return m[1] + "PID"
			}
			return s
		})
		l = pidArg2.ReplaceAllStringFunc(l, func(s string) string {
			m := pidArg2.FindStringSubmatch(s)
			if ids[m[2]] {
				return m[1] + "PID"
			}
			return s
		})
		if m := pidRet.FindStringSubmatchIndex(l); m != nil && ids[l[m[2]:m[3]]] {
			l = l[:m[2]] + "PID" + l[m[3]:]
		}
		l = align.ReplaceAllString(l, ") =$1")
		l = timeLeft.ReplaceAllString(l, "left TIME")
		l = statfsFree.ReplaceAllString(l, "${1}=FREE")
		l = strings.ReplaceAll(l, ",  ", ", ")
		lines = append(lines, l)
		if to != "" && strings.Contains(l, to) {
			break
		}
	}
	return lines
}

var (
	idResult = regexp.MustCompile(`^(?:\d+ +|\[pid +\d+\] )?(?:getpid|gettid|getppid|set_tid_address|clone3?|fork|vfork)\(.*\) += (\d+)$`)
	resumed  = regexp.MustCompile(`^<\.\.\. (\w+) resumed>(.*)$`)
	// pidArg is a number where a call names a process or thread, and
	// pidRet the result of a call that returns one: only there does a
	// pid become PID (a pid that happens to equal a read's size stays a
	// size).
	pidArg = regexp.MustCompile(`(si_pid=|\bpid=|thread_id=|P_PID, |P_PGID, |IOPRIO_WHO_PROCESS, |` +
		`\b(?:kill|tgkill|tkill|wait4|getsid|setpgid|getpgid|prlimit64|rt_sigqueueinfo|rt_tgsigqueueinfo|sched_\w+|` +
		`pidfd_open)\()(\d+)\b`)
	pidArg2 = regexp.MustCompile(`(\b(?:tgkill|rt_tgsigqueueinfo|setpgid)\((?:PID|\d+), )(\d+)\b`)
	pidRet  = regexp.MustCompile(`^(?:getpid|gettid|getppid|set_tid_address|clone3?|fork|vfork|wait4|waitid|getpgid|getsid|getpgrp|setsid)\(.*\) += (\d+)`)
	// timeLeft is what a timeout's time left says (timing).
	timeLeft = regexp.MustCompile(`left \{tv_sec=\d+, tv_[nu]sec=\d+\}`)
	// statfsFree is a file system's free space (other engineers write
	// files between the two runs).
	statfsFree = regexp.MustCompile(`\b(f_bfree|f_bavail|f_ffree)=\d+`)
)

func compareLines(t *testing.T, want, got []string) {
	t.Helper()
	compareLinesN(t, want, got, 10)
}

// compareLinesN compares lines, of which there must be at least min.
func compareLinesN(t *testing.T, want, got []string, minLines int) {
	t.Helper()
	n := 0
	for i := 0; i < max(len(want), len(got)); i++ {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			t.Errorf("line %d:\nstrace: %s\nttd:    %s", i+1, w, g)
			if n++; n > 5 {
				t.Fatalf("giving up")
			}
		}
	}
	if len(want) < minLines {
		t.Fatalf("only %d lines compared: the test saw nothing", len(want))
	}
}

// TestStraceFsops compares the calls of testdata/fsops.c between its
// markers, with strace's default -s 32 and with -s 8.
func TestStraceFsops(t *testing.T) {
	prog := buildC(t, "testdata/fsops.c")
	for _, size := range []string{"32", "8"} {
		native := straceNative(t, prog, t.TempDir(), size)
		trace := record(t, prog, t.TempDir())
		n := 32
		if size == "8" {
			n = 8
		}
		got := exportText(t, trace, n)
		from, to := `write(-1, "START", 5)`, `write(-1, "END", 3)`
		compareLines(t, normalise(native, from, to, "", nil), normalise(got, from, to, "", nil))
	}
}

// TestStracePolls compares ppoll, pselect6, select (glibc makes it
// pselect6) and ioctl: the fd sets and timeouts the calls overwrite are
// printed as they were at entry (entry.go), the ready sets and the time
// left in the result.
func TestStracePolls(t *testing.T) {
	prog := buildC(t, "testdata/polls.c")
	native := straceNative(t, prog, t.TempDir(), "32")
	got := exportText(t, record(t, prog, t.TempDir()), 32)
	from, to := `write(-1, "START", 5)`, `write(-1, "END", 3)`
	compareLines(t, normalise(native, from, to, "", nil), normalise(got, from, to, "", nil))
}

// TestStraceBlocked: a thread blocks in read on a pipe while the main
// thread sleeps and writes to it. Both outputs must split the read into
// "<unfinished ...>" and "<... read resumed>" lines, the same ones, and
// agree once joined (futex included; madvise and the exit lines of the ending
// thread come in timing's order natively).
func TestStraceBlocked(t *testing.T) {
	prog := buildCFlags(t, "testdata/block.c", "-pthread")
	native := straceNative(t, prog, t.TempDir(), "32")
	got := exportText(t, record(t, prog, t.TempDir()), 32)
	split := regexp.MustCompile(`(?m)^(?:\[pid +\d+\] |\d+ +)(read\(3,  <unfinished \.\.\.>|<\.\.\. read resumed>"x", 8\))`)
	for _, out := range [][]byte{native, got} {
		if m := split.FindAll(out, -1); len(m) != 2 {
			t.Errorf("want the read split in two lines, found %q in:\n%s", m, out)
		}
	}
	// futex: whether pthread_join waits depends on whether the thread
	// has ended by then, natively as under ttd's scheduler.
	skip := map[string]bool{"madvise": true, "+++ exited with 0 +++": true, "exit": true, "futex": true}
	from, to := `write(-1, "main", 4)`, `write(-1, "END", 3)`
	compareLinesN(t, normalise(native, from, to, "", skip), normalise(got, from, to, "", skip), 4)
}

// TestStraceForkTree: corpus proc_fork forks children and
// grandchildren. The trace re-simulates every process of the tree: the
// first process's clone lines must be strace's, every process's clones
// must be there (as many as strace -f saw), and every process's end must
// be printed as strace -f prints it, with the same exit statuses.
func TestStraceForkTree(t *testing.T) {
	prog := buildC(t, "../testdata/corpus/proc_fork.c")
	native := straceNative(t, prog, t.TempDir(), "32")
	trace := record(t, prog, t.TempDir())
	got := exportText(t, trace, 32)
	tr, err := reader.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	procs := tr.Processes()
	tr.Close()
	if len(procs) < 4 {
		t.Fatalf("the trace holds %d processes, want the tree (4 or more)", len(procs))
	}
	// firstOf keeps the lines of the first process (its pid is the one
	// of the first line strace prints, and procs[0] for ttd) and every
	// process's end; allClones counts every process's clone calls.
	firstOf := func(out []byte, first string) (mine []byte, allClones int) {
		for _, l := range strings.SplitAfter(string(out), "\n") {
			m := pidPrefix.FindString(l)
			who := strings.Trim(m, "[pid] ")
			if first == "" {
				first = who
			}
			if strings.HasPrefix(l[len(m):], "clone(") {
				allClones++
			}
			if who == "" || who == first || strings.Contains(l, " +++ ") {
				mine = append(mine, l...)
			}
		}
		return mine, allClones
	}
	pick := func(out []byte) (clones, ends []string) {
		for _, l := range normalise(out, "", "", "", nil) {
			switch {
			case strings.HasPrefix(l, "clone("):
				clones = append(clones, l)
			case strings.HasPrefix(l, "+++ "):
				ends = append(ends, l)
			}
		}
		slices.Sort(ends)
		return clones, ends
	}
	nativeFirst, nativeClones := firstOf(native, "")
	gotFirst, gotClones := firstOf(got, strconv.Itoa(procs[0].Pid))
	wc, we := pick(nativeFirst)
	gc, ge := pick(gotFirst)
	if len(wc) < 3 || len(we) < 4 {
		t.Fatalf("strace saw %d clones and %d ends: the test sees nothing", len(wc), len(we))
	}
	compareLinesN(t, wc, gc, 3)
	compareLinesN(t, we, ge, 4)
	if gotClones != nativeClones || nativeClones <= len(wc) {
		t.Errorf("clones of every process: ttd printed %d, strace -f %d (the first process's: %d)", gotClones, nativeClones, len(wc))
	}
	if !bytes.Contains(got, []byte("[pid ")) {
		t.Errorf("no [pid N] prefixes after the first fork")
	}
}

// startup are the calls whose arguments or results differ between a
// native run and ttd's for reasons that are not the export's: the
// address-space layout and the emulator's own loader (ttd's loader maps
// the TLS block differently; rseq is not implemented) and random bytes.
// The first program's execve is compared (firstexec.go). The calls the
// vDSO answers natively are syscalls under ttd, which the strace format
// leaves out as strace does (Call.VDSO).
var startup = map[string]bool{"brk": true, "mmap": true, "munmap": true, "mprotect": true,
	"arch_prctl": true, "set_tid_address": true, "set_robust_list": true, "rseq": true, "prlimit64": true,
	"getrandom": true}

// TestStraceCorpus compares the whole output for corpus programs,
// startup calls aside, each run natively under strace and recorded in a
// directory of the same name length.
func TestStraceCorpus(t *testing.T) {
	input := func(dir string) {
		os.WriteFile(filepath.Join(dir, "input.txt"), []byte("first line\nsecond\nthird\n"), 0o644)
	}
	// Left out: threads_pipe (how much a pipe read returns depends on
	// timing, natively) and signals (rt_sigtimedwait is not decoded; emu
	// keeps sigaction flag bits Linux clears).
	for _, name := range []string{"files_dirs", "stdin_read", "cwd", "sigfpe", "pipes_poll"} {
		t.Run(name, func(t *testing.T) {
			prog := buildCFlags(t, "../testdata/corpus/"+name+".c", "-pthread")
			a, b := filepath.Join(t.TempDir(), "run"), filepath.Join(t.TempDir(), "run")
			os.Mkdir(a, 0o755)
			os.Mkdir(b, 0o755)
			input(a)
			input(b)
			native := straceNative(t, prog, a, "32")
			got := exportText(t, record(t, prog, b), 32)
			compareLines(t, normalise(native, "", "", a, startup), normalise(got, "", "", b, startup))
		})
	}
}

// TestStraceLocks compares fcntl's struct flock (set and get, OFD locks,
// a NULL one) and a struct sockaddr_un passed with bytes after its path
// that the program never wrote: strace prints the path, and so must the
// export, though the recording does not hold the whole struct.
func TestStraceLocks(t *testing.T) {
	prog := buildC(t, "testdata/locks.c")
	native := straceNative(t, prog, t.TempDir(), "32")
	got := exportText(t, record(t, prog, t.TempDir()), 32)
	from, to := `write(-1, "START", 5)`, `write(-1, "END", 3)`
	for _, want := range []string{"l_start=1073741824", "l_pid=-1", `sun_path="/nonexistent/ttd-socket"`} {
		if !strings.Contains(string(got), want) {
			t.Errorf("the export lacks %s:\n%s", want, got)
		}
	}
	compareLines(t, normalise(native, from, to, "", nil), normalise(got, from, to, "", nil))
	tv := regexp.MustCompile(`gettimeofday\(\{tv_sec=\d+, tv_usec=\d+\}, NULL\) += 0`)
	for _, out := range [][]byte{native, got} {
		if !tv.Match(out) {
			t.Errorf("no decoded gettimeofday in:\n%s", out)
		}
	}
}

// TestStraceIds compares calls that take plain numbers, enumerations and
// I/O vectors (the set*id family, process groups, priorities, setrlimit,
// epoll_create, eventfd, preadv/pwritev): each once printed its six
// argument registers raw. readv's buffers past the data read are "", and
// a failed readv shows its vector with the buffers' addresses.
func TestStraceIds(t *testing.T) {
	prog := buildC(t, "testdata/ids.c")
	native := straceNative(t, prog, t.TempDir(), "32")
	got := exportText(t, record(t, prog, t.TempDir()), 32)
	from, to := `write(-1, "START", 5)`, `write(-1, "END", 3)`
	compareLines(t, normalise(native, from, to, "", nil), normalise(got, from, to, "", nil))
	for _, want := range []string{"setreuid(-1, ", "getpriority(0x7 /* PRIO_??? */, 0)",
		`preadv(3, [{iov_base="bcde", iov_len=4}, {iov_base="", iov_len=8}], 2, 1) = 4`, "readv(-1, [{iov_base=0x",
		"sigaltstack(NULL, {ss_sp=NULL, ss_flags=SS_DISABLE, ss_size=0}) = 0", "ss_flags=SS_AUTODISARM, ss_size=100}",
		"getresgid([", "getgroups(-1, 0x", "getcpu(NULL, [0], NULL)"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("the export lacks %s:\n%s", want, got)
		}
	}
}

// TestStraceEpoll compares epoll_ctl and the waits (epoll_wait,
// epoll_pwait, epoll_pwait2), which Go's runtime, node and python's
// asyncio make all the time: struct epoll_event in and out, operations
// and events strace has no names for, empty and failed waits.
func TestStraceEpoll(t *testing.T) {
	prog := buildC(t, "testdata/epoll.c")
	native := straceNative(t, prog, t.TempDir(), "32")
	got := exportText(t, record(t, prog, t.TempDir()), 32)
	from, to := `write(-1, "START", 5)`, `write(-1, "END", 3)`
	compareLines(t, normalise(native, from, to, "", nil), normalise(got, from, to, "", nil))
	for _, want := range []string{"{events=EPOLLIN|EPOLLET, data={u32=3, u64=4294967299}}", "EPOLLOUT|0x800", "0x7 /* EPOLL_CTL_??? */",
		"{events=0x4000 /* EPOLL??? */", "epoll_wait(5, [], 4, 0)", "epoll_create1(EPOLL_CLOEXEC)"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("the export lacks %s:\n%s", want, got)
		}
	}
}

// TestStraceControl compares the calls that control a process: prctl's
// options (strings in and out, signals, capabilities, unknown options),
// getrusage, the interval and POSIX timers and timerfd (struct
// itimerval, itimerspec and sigevent), rt_sigtimedwait and
// rt_sigsuspend, waitid, and the scheduler's calls. Times that run on
// (CPU used, a timer's time left) are compared by their fields alone.
func TestStraceControl(t *testing.T) {
	times := func(ls []string) []string {
		// strace makes the children's SIGCHLD visible: ignored, it is
		// never queued when no tracer asks for it. The child's few lines
		// may come before or after the parent's clone natively: they are
		// left out.
		ls = slices.DeleteFunc(ls, func(l string) bool {
			return strings.HasPrefix(l, "--- SIGCHLD ") || strings.HasPrefix(l, "set_robust_list(") ||
				strings.HasPrefix(l, "exit_group(3)") || strings.HasPrefix(l, "+++ exited with 3")
		})
		for i, l := range ls {
			if strings.HasPrefix(l, "getrusage(") || strings.HasPrefix(l, "getitimer(") ||
				strings.HasPrefix(l, "timer_gettime(") || strings.HasPrefix(l, "timerfd_gettime(") || strings.HasPrefix(l, "waitid(") {
				ls[i] = runningTime.ReplaceAllString(l, "${1}=T")
			}
		}
		return ls
	}
	_, text := straceMarked(t, "testdata/control.c", nil, times)
	wantAll(t, text, `prctl(PR_SET_NAME, "a-name-longer-t"...) = 0`, "prctl(PR_GET_PDEATHSIG, [SIGKILL]) = 0",
		"prctl(PR_GET_DUMPABLE) = 1 (SUID_DUMP_USER)", "prctl(0x3e7 /* PR_??? */, 0x11, 0, 0, 0)",
		"{sigev_value={sival_int=42, sival_ptr=0x2a}, sigev_signo=SIGUSR1, sigev_notify=SIGEV_SIGNAL}",
		"rt_sigsuspend([], 8) = ? ERESTARTNOHAND", "sched_getscheduler(0) = 0 (SCHED_OTHER)", "si_code=CLD_EXITED",
		"sched_setaffinity(0, 16, NULL) = -1 EFAULT", "timer_create(CLOCK_REALTIME, NULL, [3]) = 0",
		"ioprio_get(IOPRIO_WHO_PROCESS, 0) = 24576 (IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0))",
		"personality(PTR) = 0 (PER_LINUX)", "personality(PER_LINUX|UNAME26|ADDR_NO_RANDOMIZE) = 0 (PER_LINUX)",
		"personality(PER_LINUX32|ADDR_COMPAT_LAYOUT) = PTR (PER_LINUX|UNAME26|ADDR_NO_RANDOMIZE)",
		"personality(0x42 /* PER_??? */) = PTR (PER_LINUX32|ADDR_COMPAT_LAYOUT)", "personality(PER_LINUX) = 0x42 (0x42 /* PER_??? */)",
		"capget({version=_LINUX_CAPABILITY_VERSION_3, pid=0}, NULL) = 0", "capset({version=_LINUX_CAPABILITY_VERSION_3, pid=0}, {effective=",
		"capget({version=_LINUX_CAPABILITY_VERSION_1, pid=0}, {effective=")
}

// straceMarked records src's program and runs it under strace, and
// compares the lines between its START and END markers (less the calls
// skip names, after edit when not nil); it returns ttd's export whole
// and its compared lines joined.
func straceMarked(t *testing.T, src string, skip map[string]bool, edit func([]string) []string) (got []byte, text string) {
	t.Helper()
	prog := buildC(t, src)
	native := straceNative(t, prog, t.TempDir(), "32")
	got = exportText(t, record(t, prog, t.TempDir()), 32)
	from, to := `write(-1, "START", 5)`, `write(-1, "END", 3)`
	want, lines := normalise(native, from, to, "", skip), normalise(got, from, to, "", skip)
	text = strings.Join(lines, "\n")
	if edit != nil {
		want, lines = edit(want), edit(slices.Clone(lines))
	}
	compareLinesN(t, want, lines, 8)
	return got, text
}

// wantAll checks that text holds each of wants.
func wantAll(t *testing.T, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("the export lacks %s:\n%s", want, text)
		}
	}
}

// runningTime matches the seconds and fractions of a time that runs on.
var runningTime = regexp.MustCompile(`(tv_sec|tv_usec|tv_nsec|si_utime|si_stime)=\d+`)

// TestStraceSockopt compares setsockopt and getsockopt (ints at the
// socket, TCP, IP and IPv6 levels, struct linger whole and cut, a
// timeout as bytes, unknown levels and options, lengths the kernel
// refuses, SO_PEERCRED's struct ucred) and socket's protocol names.
func TestStraceSockopt(t *testing.T) {
	got, text := straceMarked(t, "testdata/sockopt.c", nil, nil)
	wantAll(t, text, "setsockopt(3, SOL_SOCKET, SO_LINGER, {l_onoff=1, l_linger=3}, 8) = 0",
		"getsockopt(3, SOL_SOCKET, SO_LINGER, {l_onoff=1}, [4]) = 0", "0x63 /* SOL_?? */, 5, [1], 4)",
		"{pid=PID, uid=", "socket(AF_INET6, SOCK_DGRAM, IPPROTO_UDP)", "SOL_IPV6, IPV6_V6ONLY, [1], 4",
		`inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}, 28)`, "NETLINK_EXT_ACK")
	wantAll(t, string(got), "nl_pid=0, nl_groups=0x000011}") // normalise takes it for a pointer
}

// TestStraceXattr compares the extended-attribute calls cp -a and tar
// --xattrs make: set (flags, refusals), get, list (a NUL-separated
// list, NULL for the size, too small) and remove, on paths, links and
// descriptors.
func TestStraceXattr(t *testing.T) {
	_, text := straceMarked(t, "testdata/xattr.c", nil, nil)
	wantAll(t, text, `setxattr("f", "user.color", "red", 3, XATTR_CREATE) = -1 EEXIST`,
		`listxattr("f", NULL, 0) = 21`, `\x72\x00\x75`, `fremovexattr(3, "user.size") = 0`)
}

// TestNormaliseKeepsSizes checks that a pid becomes PID only where a call
// names a process: a native pid of 832 left every ELF header read
// (832 bytes) different from ttd's.
func TestNormaliseKeepsSizes(t *testing.T) {
	out := []byte("832 read(3, \"x\", 832) = 832\n832 getpid() = 832\n832 tgkill(832, 900, SIGUSR1) = 0\n" +
		"900 gettid() = 900\n832 wait4(-1, NULL, 0, NULL) = 900\n")
	got := strings.Join(normalise(out, "", "", "", nil), "\n")
	want := "read(3, \"x\", 832) = 832\ngetpid() = PID\ntgkill(PID, PID, SIGUSR1) = 0\ngettid() = PID\nwait4(-1, NULL, 0, NULL) = PID"
	if got != want {
		t.Errorf("normalise:\n%s\nwant:\n%s", got, want)
	}
}

// TestStraceNodes compares mknod and mknodat (FIFOs, a character
// device, a regular file), tee and splice, mincore's vector,
// get_robust_list and setns; unshare is left out (ttd refuses
// namespaces, as for an unprivileged user) apart from its flags.
func TestStraceNodes(t *testing.T) {
	shmids := regexp.MustCompile(`^(shmget\(.*\) = |shmat\(|shmctl\()\d+`)
	ids := func(ls []string) []string { // the segments' ids are ttd's own
		for i, l := range ls {
			ls[i] = shmids.ReplaceAllString(l, "${1}ID")
		}
		return ls
	}
	got, text := straceMarked(t, "testdata/nodes.c", map[string]bool{"unshare": true}, ids)
	wantAll(t, string(got), "unshare(CLONE_NEWNS|CLONE_NEWUTS)")
	wantAll(t, text, `mknodat(AT_FDCWD, "dev", S_IFCHR|0600, makedev(0x1, 0x3)) = 0`,
		"SPLICE_F_MOVE|SPLICE_F_NONBLOCK) = 5", "16384, [1, 0, 1, 0]) = 0", "setns(3, CLONE_NEWNET)", "[24]) = 0",
		"shmget(IPC_PRIVATE, 4096, IPC_CREAT|0600)", "shmget(0x1234, 0, 000)", "NULL, SHM_RDONLY) = PTR", "0x63 /* SHM_??? */")
}

// TestStraceInotify compares inotify's calls: init and init1 (flags),
// watches (the mask's names, IN_MASK_ADD, a missing path), reads of
// events and removing a watch (and again: EINVAL).
func TestStraceInotify(t *testing.T) {
	_, text := straceMarked(t, "testdata/inotify.c", startup, nil)
	wantAll(t, text, "inotify_init1(IN_NONBLOCK|IN_CLOEXEC) = 3",
		`inotify_add_watch(3, "inotify-test-dir", IN_MODIFY|IN_CLOSE_WRITE|IN_MOVED_FROM|IN_MOVED_TO|IN_CREATE|IN_DELETE) = 1`,
		`inotify_add_watch(3, "inotify-test-dir", IN_ATTRIB|IN_MASK_ADD) = 1`, "IN_MOVE_SELF) = -1 ENOENT",
		"inotify_init() = 4", "inotify_rm_watch(3, 1) = -1 EINVAL")
}
