package corpus

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Program is one guest program together with everything needed to run it.
type Program struct {
	// Name identifies the program, e.g. "int_arith/gcc-O2" or "system/ls".
	Name string
	// Path is the absolute path of the executable.
	Path string
	// Args are the arguments after argv[0] (argv[0] is Path).
	Args []string
	// Stdin is fed to the program through a pipe; if empty, stdin is
	// /dev/null.
	Stdin string
	// Env is the complete environment of the program.
	Env []string
	// Setup, if not nil, prepares the scratch directory the program runs in
	// (its working directory) before each run.
	Setup func(dir string) error
}

// Result is the observable outcome of one run.
type Result struct {
	Stdout, Stderr []byte
	// Status is the exit status, or 128+N if the process was killed by
	// signal N.
	Status int
	// Signal is the signal that killed the process, or 0.
	Signal syscall.Signal
	// TimedOut is set when the context expired before the process exited;
	// the process group was then killed.
	TimedOut bool
	Duration time.Duration
}

// Describe renders the status for messages, e.g. "139 (killed by SIGSEGV)".
func (r *Result) Describe() string {
	switch {
	case r.TimedOut:
		return fmt.Sprintf("timed out after %v", r.Duration.Round(time.Millisecond))
	case r.Signal != 0:
		return fmt.Sprintf("%d (killed by %s)", r.Status, unix.SignalName(r.Signal))
	}
	return fmt.Sprintf("%d", r.Status)
}

// Run runs p in a fresh scratch directory (removed afterwards) with p's
// arguments, environment and stdin. If wrapper is not empty, the command line
// is wrapper followed by p.Path and p.Args, e.g. Run(ctx, ttd, "run", "--").
// A non-nil error means the program could not be run at all; a timeout is
// reported through Result.TimedOut.
func (p Program) Run(ctx context.Context, wrapper ...string) (*Result, error) {
	dir, err := os.MkdirTemp("", "ttd-run-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if p.Setup != nil {
		if err := p.Setup(dir); err != nil {
			return nil, fmt.Errorf("setup of %s: %w", p.Name, err)
		}
	}
	argv := append(append(append([]string{}, wrapper...), p.Path), p.Args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append([]string{}, p.Env...)
	if p.Stdin != "" {
		cmd.Stdin = strings.NewReader(p.Stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	// Own process group, so that a timeout kills helpers too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err = cmd.Run()
	res := &Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Duration: time.Since(start)}
	if cmd.ProcessState == nil {
		return nil, fmt.Errorf("running %s: %w", p.Name, err)
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case ws.Exited():
		res.Status = ws.ExitStatus()
	case ws.Signaled():
		res.Signal = ws.Signal()
		res.Status = 128 + int(ws.Signal())
	default:
		return nil, fmt.Errorf("running %s: unexpected wait status %v", p.Name, ws)
	}
	if ctx.Err() != nil && res.Signal == syscall.SIGKILL {
		res.TimedOut = true
	}
	return res, nil
}

// baseEnv is the environment every program starts from.
func baseEnv(extra ...string) []string {
	return append([]string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"HOME=/nonexistent",
		"LC_ALL=C",
		"TZ=UTC",
	}, extra...)
}

// options holds what a corpus program needs besides its executable.
type options struct {
	args  []string
	stdin string
	env   []string
	setup func(dir string) error
}

var programOptions = map[string]options{
	"exit_code": {args: []string{"alpha", "two words", "", "--flag=x"}},
	"environ":   {env: []string{"TTD_CORPUS_VAR=hello from the harness", "EMPTY_VAR="}},
	"stdin_read": {stdin: "hello world 12\nsecond line -5\n\n" +
		"third 100 x\n\ttabs\tand  spaces 7 \nno newline at end 1000"},
	"cxx_iostreams": {stdin: "5\n1.5 2.25\n-3 100\n0.125\nfirst line here\n  second   line \n\nlast"},
	"files_dirs": {setup: func(dir string) error {
		return os.WriteFile(filepath.Join(dir, "input.txt"),
			[]byte("line one\nline two\nthird line, the last\n"), 0o644)
	}},
}

// variant is one way of compiling the sources.
type variant struct {
	name  string
	lang  string // "c" or "c++"
	cc    string
	flags []string
}

var variants = []variant{
	{"gcc-O0", "c", "gcc", []string{"-O0", "-fPIE", "-pie"}},
	{"gcc-O2", "c", "gcc", []string{"-O2", "-fPIE", "-pie"}},
	{"gcc-O2-static", "c", "gcc", []string{"-O2", "-static"}},
	{"musl-O2-static", "c", "musl-gcc", []string{"-O2", "-static"}},
	{"g++-O0", "c++", "g++", []string{"-O0", "-fPIE", "-pie"}},
	{"g++-O2", "c++", "g++", []string{"-O2", "-fPIE", "-pie"}},
	{"g++-O2-static", "c++", "g++", []string{"-O2", "-static"}},
}

// command returns the compiler command line for one source.
func (v variant) command(src, out string) []string {
	args := []string{v.cc, "-g"}
	if v.lang == "c" {
		args = append(args, "-std=gnu11")
	} else {
		args = append(args, "-std=gnu++17")
	}
	args = append(args, v.flags...)
	args = append(args, "-o", out, src, "-lm")
	return args
}

// cacheVersion changes whenever the layout of the cache changes.
const cacheVersion = "ttd-corpus-v1"

var built struct {
	once    sync.Once
	progs   []Program
	missing []string // variants that could not be built (compiler missing)
	err     error
}

// Build compiles the corpus (once per process; results are cached across
// processes) and returns every program in every variant. Variants whose
// compiler is missing (musl-gcc) are left out with a loud log message; when
// the CI environment variable is set this fails the test instead.
func Build(t testing.TB) []Program {
	t.Helper()
	built.once.Do(func() {
		built.progs, built.missing, built.err = buildAll()
	})
	if built.err != nil {
		t.Fatalf("building the corpus: %v", built.err)
	}
	for _, m := range built.missing {
		if os.Getenv("CI") != "" {
			t.Errorf("corpus: %s (required when CI is set)", m)
		} else {
			t.Logf("WARNING: corpus: %s; SKIPPING those programs", m)
		}
	}
	return append(append([]Program(nil), built.progs...), GoPrograms(t)...) // Go: gocorpus.go
}

// SourceDir returns the directory holding the corpus sources.
func SourceDir() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		dir := filepath.Join(filepath.Dir(file), "..", "..", "testdata", "corpus")
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return filepath.Clean(dir), nil
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		dir := filepath.Join(d, "testdata", "corpus")
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			if st, err := os.Stat(dir); err == nil && st.IsDir() {
				return dir, nil
			}
		}
		if filepath.Dir(d) == d {
			return "", errors.New("testdata/corpus not found above " + wd)
		}
	}
}

type source struct {
	name string // without extension
	path string
	lang string
}

func listSources(dir string) ([]source, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var srcs []source
	for _, e := range entries {
		n := e.Name()
		switch {
		case strings.HasSuffix(n, ".c"):
			srcs = append(srcs, source{strings.TrimSuffix(n, ".c"), filepath.Join(dir, n), "c"})
		case strings.HasSuffix(n, ".cpp"):
			srcs = append(srcs, source{strings.TrimSuffix(n, ".cpp"), filepath.Join(dir, n), "c++"})
		}
	}
	if len(srcs) == 0 {
		return nil, errors.New("no sources in " + dir)
	}
	sort.Slice(srcs, func(i, j int) bool { return srcs[i].name < srcs[j].name })
	return srcs, nil
}

func compilerVersion(cc string) string {
	out, err := exec.Command(cc, "--version").Output()
	if err != nil {
		return "unavailable"
	}
	return string(out)
}

type job struct {
	v   variant
	src source
	out string // relative to the build directory
}

func buildAll() ([]Program, []string, error) {
	dir, err := SourceDir()
	if err != nil {
		return nil, nil, err
	}
	srcs, err := listSources(dir)
	if err != nil {
		return nil, nil, err
	}
	// Work out which variants can be built and hash everything that
	// determines the binaries.
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", cacheVersion)
	var usable []variant
	var missing []string
	versions := map[string]string{}
	for _, v := range variants {
		if _, err := exec.LookPath(v.cc); err != nil {
			missing = append(missing, fmt.Sprintf("variant %s needs %s, which is not installed (apt-get install musl-tools)", v.name, v.cc))
			continue
		}
		if _, ok := versions[v.cc]; !ok {
			versions[v.cc] = compilerVersion(v.cc)
		}
		usable = append(usable, v)
		fmt.Fprintf(h, "variant %q %q\n%s\n", v.name, v.command("SRC", "OUT"), versions[v.cc])
	}
	for _, s := range srcs {
		data, err := os.ReadFile(s.path)
		if err != nil {
			return nil, nil, err
		}
		fmt.Fprintf(h, "source %q %d\n", filepath.Base(s.path), len(data))
		h.Write(data)
	}
	var jobs []job
	for _, v := range usable {
		for _, s := range srcs {
			if s.lang == v.lang {
				jobs = append(jobs, job{v, s, filepath.Join(v.name, s.name)})
			}
		}
	}
	key := hex.EncodeToString(h.Sum(nil))[:20]
	cache := filepath.Join(os.TempDir(), "ttd-corpus-"+key)
	if err := ensureBuilt(cache, jobs); err != nil {
		return nil, nil, err
	}
	var progs []Program
	for _, s := range srcs {
		for _, v := range usable {
			if s.lang != v.lang {
				continue
			}
			o := programOptions[s.name]
			progs = append(progs, Program{
				Name:  s.name + "/" + v.name,
				Path:  filepath.Join(cache, v.name, s.name),
				Args:  o.args,
				Stdin: o.stdin,
				Env:   baseEnv(o.env...),
				Setup: o.setup,
			})
		}
	}
	return progs, missing, nil
}

// ensureBuilt makes sure cache holds a complete build. A lock file keeps
// concurrent test processes from compiling the same corpus twice; the build
// itself goes to a temporary directory renamed into place, so a killed
// build never leaves a half-filled cache behind.
func ensureBuilt(cache string, jobs []job) error {
	complete := filepath.Join(cache, "complete")
	if _, err := os.Stat(complete); err == nil {
		now := time.Now()
		os.Chtimes(cache, now, now) // in use: keep removeStale away
		return nil
	}
	lock, err := os.OpenFile(cache+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("locking %s: %w", lock.Name(), err)
	}
	defer unix.Flock(int(lock.Fd()), unix.LOCK_UN)
	if _, err := os.Stat(complete); err == nil {
		return nil // built by another process while we waited
	}
	removeStale(cache)
	return buildInto(cache, jobs)
}

// staleName matches the names removeStale may remove: C/C++ corpus caches,
// their lock files and interrupted builds (not the Go corpus's caches).
var staleName = regexp.MustCompile(`^ttd-corpus-[0-9a-f]{20}(\.lock|\.tmp-[0-9]+)?$`)

// removeStale removes leftovers of interrupted builds of this cache and
// C/C++ caches of other corpus versions unused for a day.
func removeStale(cache string) {
	old, _ := filepath.Glob(filepath.Join(filepath.Dir(cache), "ttd-corpus-*"))
	for _, p := range old {
		st, err := os.Lstat(p)
		if err != nil || p == cache || p == cache+".lock" || !staleName.MatchString(filepath.Base(p)) {
			continue
		}
		if strings.HasPrefix(p, cache+".tmp-") || time.Since(st.ModTime()) > 24*time.Hour {
			os.RemoveAll(p)
		}
	}
}

// buildInto compiles all jobs into a temporary directory next to cache and
// renames it into place. If another process won the race, its result is used.
func buildInto(cache string, jobs []job) error {
	tmp, err := os.MkdirTemp(filepath.Dir(cache), filepath.Base(cache)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // no-op after a successful rename
	for _, v := range variants {
		if err := os.MkdirAll(filepath.Join(tmp, v.name), 0o755); err != nil {
			return err
		}
	}
	workers := runtime.NumCPU()
	if workers < 2 {
		workers = 2
	}
	var (
		mu   sync.Mutex
		errs []string
		wg   sync.WaitGroup
		next = make(chan job)
	)
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				argv := j.v.command(j.src.path, filepath.Join(tmp, j.out))
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.Dir = tmp
				if out, err := cmd.CombinedOutput(); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Sprintf("%s: %v\n%s\n%s", j.out, err, strings.Join(argv, " "), out))
					mu.Unlock()
				}
			}
		}()
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	if len(errs) > 0 {
		sort.Strings(errs)
		return fmt.Errorf("%d compilations failed:\n%s", len(errs), strings.Join(errs, "\n"))
	}
	if err := os.WriteFile(filepath.Join(tmp, "complete"), []byte(time.Now().UTC().String()+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.Rename(tmp, cache); err != nil {
		// Another process may have renamed its build into place first.
		if _, statErr := os.Stat(filepath.Join(cache, "complete")); statErr == nil {
			return nil
		}
		return err
	}
	return nil
}

// Generated data for the system programs, created once.
var gen struct {
	once sync.Once
	text []byte // ~1 MiB of lines of words and numbers
	blob []byte // 256 KiB of pseudo-random bytes
	csv  []byte // name,number lines for numeric sorting
	gz   []byte // text, gzip-compressed by compress/gzip
}

var vocabulary = strings.Fields(`alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo
lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu
the a of to and in is it that was for on are as with his they at be this from have or by one had not
but what all were when we there can an your which their said if do will each about how up out them`)

func generate() {
	x := uint64(0x9e3779b97f4a7c15)
	rnd := func() uint64 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return x
	}
	var text bytes.Buffer
	for line := 0; text.Len() < 1<<20; line++ {
		n := 3 + int(rnd()%9)
		for i := 0; i < n; i++ {
			if i > 0 {
				text.WriteByte(' ')
			}
			if rnd()%5 == 0 {
				fmt.Fprintf(&text, "%d", rnd()%100000)
			} else {
				text.WriteString(vocabulary[rnd()%uint64(len(vocabulary))])
			}
		}
		if line%97 == 0 {
			text.WriteString("\t\ttabbed  ")
		}
		text.WriteByte('\n')
	}
	gen.text = text.Bytes()
	gen.blob = make([]byte, 256<<10)
	for i := range gen.blob {
		gen.blob[i] = byte(rnd() >> 29)
	}
	var csv bytes.Buffer
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&csv, "%s%d,%d,%s\n", vocabulary[rnd()%uint64(len(vocabulary))], rnd()%10,
			int64(rnd()%20000)-10000, vocabulary[rnd()%7])
	}
	gen.csv = csv.Bytes()
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	w.Name = "text.txt"
	w.ModTime = time.Unix(1700000000, 0)
	w.Write(gen.text[:600<<10])
	w.Close()
	gen.gz = gz.Bytes()
}

// fixedTime is the modification time given to prepared files.
var fixedTime = time.Date(2023, 11, 14, 22, 13, 20, 0, time.UTC)

// writeFiles creates files (name -> contents) under dir with the given
// mode and the fixed modification time.
func writeFiles(dir string, mode os.FileMode, files map[string][]byte) error {
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, mode); err != nil {
			return err
		}
		if err := os.Chmod(p, mode); err != nil { // not subject to umask
			return err
		}
		if err := os.Chtimes(p, fixedTime, fixedTime); err != nil {
			return err
		}
	}
	return nil
}

func lsSetup(dir string) error {
	tree := filepath.Join(dir, "tree")
	for _, d := range []string{tree, filepath.Join(tree, "sub"), filepath.Join(tree, "empty dir")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	if err := writeFiles(tree, 0o644, map[string][]byte{
		"alpha.txt":     bytes.Repeat([]byte("a"), 100),
		"beta.bin":      gen.blob[:5000],
		"gamma":         nil,
		"Zeta.md":       []byte("# title\n\ntext\n"),
		"with space.tx": []byte("spaced\n"),
	}); err != nil {
		return err
	}
	if err := writeFiles(tree, 0o755, map[string][]byte{"run.sh": []byte("#!/bin/sh\necho hi\n")}); err != nil {
		return err
	}
	if err := writeFiles(tree, 0o600, map[string][]byte{"sub/deep.txt": []byte("deep\n"), "sub/big.dat": gen.blob}); err != nil {
		return err
	}
	link := filepath.Join(tree, "link")
	if err := os.Symlink("alpha.txt", link); err != nil {
		return err
	}
	ts := []unix.Timespec{unix.NsecToTimespec(fixedTime.UnixNano()), unix.NsecToTimespec(fixedTime.UnixNano())}
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, link, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	// Directories last: creating entries changes their times.
	for _, d := range []string{filepath.Join(tree, "sub"), filepath.Join(tree, "empty dir"), tree} {
		if err := os.Chmod(d, 0o755); err != nil {
			return err
		}
		if err := os.Chtimes(d, fixedTime, fixedTime); err != nil {
			return err
		}
	}
	return nil
}

func filesSetup(files map[string]func() []byte) func(dir string) error {
	return func(dir string) error {
		m := map[string][]byte{}
		for name, f := range files {
			m[name] = f()
		}
		return writeFiles(dir, 0o644, m)
	}
}

func text() []byte { return gen.text }

const sqliteScript = `CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT NOT NULL, qty INTEGER, price REAL);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000)
INSERT INTO items(name, qty, price) SELECT 'item' || (x % 37), x % 13, (x * 7919 % 1000) / 10.0 FROM c;
INSERT INTO items(name, qty, price) VALUES ('special', 99, 12.5), ('zero', 0, 0), ('nullqty', NULL, 1.25);
CREATE INDEX idx_name ON items(name);
SELECT count(*), sum(qty), printf('%.4f', avg(price)), min(price), max(price) FROM items;
SELECT name, count(*), sum(qty), printf('%.3f', avg(price)) FROM items
  GROUP BY name HAVING count(*) > 80 ORDER BY sum(qty) DESC, name LIMIT 8;
UPDATE items SET qty = qty * 2 WHERE name LIKE 'item1%';
DELETE FROM items WHERE price < 5;
SELECT count(*), total(qty), count(qty) FROM items;
SELECT group_concat(name, ',') FROM (SELECT DISTINCT name FROM items ORDER BY name DESC LIMIT 6);
SELECT upper(substr('hello world', 1, 5)), length('ttd'), abs(-3), round(2.345, 2), hex('AB'), 7 / 2, 7 % 3, 1e3, 1.0 / 3;
SELECT id, name, qty FROM items WHERE id IN (SELECT id FROM items ORDER BY price DESC, id LIMIT 3) ORDER BY id;
CREATE TABLE totals AS SELECT name, sum(price * qty) AS value FROM items GROUP BY name;
SELECT name, printf('%.2f', value) FROM totals ORDER BY value DESC LIMIT 3;
SELECT a.name, b.name FROM totals a JOIN totals b ON length(a.name) = length(b.name) AND a.name < b.name
  ORDER BY a.name, b.name LIMIT 4;
`

const sqliteFileScript = `BEGIN;
` + sqliteScript + `COMMIT;
PRAGMA integrity_check;
SELECT count(*) FROM sqlite_master;
.tables
.schema items
`

const pythonCode = `import collections, decimal, fractions, hashlib, itertools, json, math, re, struct, zlib
primes = [n for n in range(2, 5000) if all(n % d for d in range(2, int(n ** 0.5) + 1))]
print(len(primes), sum(primes), primes[-5:])
print(hashlib.sha256(b"ttd" * 10000).hexdigest(), hashlib.md5(b"abc").hexdigest())
print(sum(int(c) for c in str(2 ** 4000)), len(str(math.factorial(500))))
print(fractions.Fraction(1, 3) + fractions.Fraction(5, 7), fractions.Fraction(0.1))
decimal.getcontext().prec = 50
print(decimal.Decimal(2).sqrt(), decimal.Decimal("1.1") * 3)
words = re.findall(r"[a-z]+", "the cat and the hat and the bat sat on the mat")
print(sorted(collections.Counter(words).items()))
print(json.dumps({"b": [1, 2.5, None, "x\u00e9"], "a": {"t": True}}, sort_keys=True))
print(math.comb(40, 20), f"{math.pi:.12f}", repr(0.1 + 0.2), 1e300 * 10, -0.0, 2 ** 0.5)
print(list(itertools.permutations("abc", 2))[:4], struct.pack("<Id", 7, 1.5).hex())
d = {str(i): i * i for i in range(1000)}
print(sum(d.values()), len(d), list(d)[:3])
data = bytes(range(256)) * 200
print(zlib.crc32(data), len(zlib.compress(data, 9)))
print(sorted(["b", "A", "c", "B"]), "%5.2f|%-4s|%x" % (3.14159, "ab", 255), "caf\u00e9".encode())
`

// System returns real Debian binaries run on generated data. Entries whose
// binary is missing are left out with a loud log message.
func System(t testing.TB) []Program {
	t.Helper()
	gen.once.Do(generate)
	words := map[string]func() []byte{"words.txt": text}
	progs := []Program{
		{Name: "system/ls", Path: "/usr/bin/ls", Args: []string{"-lR", "tree"}, Setup: lsSetup},
		{Name: "system/ls-la", Path: "/usr/bin/ls", Args: []string{"-la", "--full-time", "tree/sub", "tree/link"}, Setup: lsSetup},
		{Name: "system/sort", Path: "/usr/bin/sort", Args: []string{"words.txt"}, Setup: filesSetup(words)},
		{Name: "system/sort-numeric", Path: "/usr/bin/sort", Args: []string{"-t", ",", "-k2,2n", "-k1,1r", "data.csv"},
			Setup: filesSetup(map[string]func() []byte{"data.csv": func() []byte { return gen.csv }})},
		{Name: "system/sha256sum", Path: "/usr/bin/sha256sum", Args: []string{"blob.bin", "words.txt", "-"},
			Stdin: "some text on stdin\n", Setup: filesSetup(map[string]func() []byte{
				"blob.bin": func() []byte { return gen.blob }, "words.txt": text})},
		{Name: "system/wc", Path: "/usr/bin/wc", Args: []string{"words.txt", "-"}, Stdin: "one two\nthree\n",
			Setup: filesSetup(words)},
		{Name: "system/wc-lwcL", Path: "/usr/bin/wc", Args: []string{"-l", "-w", "-c", "-L", "words.txt"}, Setup: filesSetup(words)},
		{Name: "system/cat", Path: "/usr/bin/cat", Args: []string{"a.txt", "-", "words.txt", "b.txt"}, Stdin: "from stdin\n",
			Setup: filesSetup(map[string]func() []byte{"words.txt": text,
				"a.txt": func() []byte { return []byte("first file\n") }, "b.txt": func() []byte { return []byte("no newline") }})},
		{Name: "system/gzip-stdin", Path: "/usr/bin/gzip", Args: []string{"-9", "-c"}, Stdin: string(gen.text)},
		{Name: "system/gzip-file", Path: "/usr/bin/gzip", Args: []string{"-9", "-c", "words.txt"}, Setup: filesSetup(words)},
		{Name: "system/gzip-d", Path: "/usr/bin/gzip", Args: []string{"-d", "-c", "data.gz"},
			Setup: filesSetup(map[string]func() []byte{"data.gz": func() []byte { return gen.gz }})},
		// gunzip is a shell script (#!/bin/sh ... exec gzip -d): this one
		// needs #! handling and execve.
		{Name: "system/gunzip", Path: "/usr/bin/gunzip", Args: []string{"-c", "data.gz"},
			Setup: filesSetup(map[string]func() []byte{"data.gz": func() []byte { return gen.gz }})},
		{Name: "system/sqlite3-memory", Path: "/usr/bin/sqlite3", Args: []string{":memory:"}, Stdin: sqliteScript},
		{Name: "system/sqlite3-file", Path: "/usr/bin/sqlite3",
			Args:  []string{"db.sqlite", "-init", "/dev/null", ".read script.sql"},
			Setup: filesSetup(map[string]func() []byte{"script.sql": func() []byte { return []byte(sqliteFileScript) }})},
		{Name: "system/python3", Path: "/usr/bin/python3", Args: []string{"-c", pythonCode}},
		// python's multiprocessing: anonymous shared memory (its
		// semaphores and queues) that a fork shares, written by the
		// workers and read by the parent.
		{Name: "system/python3-pool", Path: "/usr/bin/python3", Args: []string{"-c", "from multiprocessing import Pool; print(sum(Pool(2).map(abs, range(-500,500))))"}},
	}
	var out []Program
	for _, p := range progs {
		if _, err := os.Stat(p.Path); err != nil {
			t.Logf("WARNING: SKIPPING %s: %s is not installed", p.Name, p.Path)
			continue
		}
		p.Env = baseEnv()
		out = append(out, p)
	}
	return append(out, GoSystem(t)...) // Go: gocorpus.go
}

// Tail returns the last n lines of b (at most 4 KiB), for messages.
func Tail(b []byte, n int) string {
	if len(b) > 4096 {
		b = b[len(b)-4096:]
	}
	lines := strings.SplitAfter(string(b), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "")
}

// FirstDifference describes where two outputs first differ, or returns ""
// if they are equal.
func FirstDifference(want, got []byte) string {
	if bytes.Equal(want, got) {
		return ""
	}
	wl, gl := splitLines(want), splitLines(got)
	for i := 0; ; i++ {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if !bytes.Equal(w, g) {
			return fmt.Sprintf("first difference at line %d (native %d bytes, ttd %d bytes):\n  native: %s\n  ttd:    %s",
				i+1, len(want), len(got), quote(w, i < len(wl)), quote(g, i < len(gl)))
		}
	}
}

func splitLines(b []byte) [][]byte {
	l := bytes.SplitAfter(b, []byte("\n"))
	if len(l[len(l)-1]) == 0 {
		l = l[:len(l)-1]
	}
	return l
}

func quote(b []byte, present bool) string {
	if !present {
		return "(end of output)"
	}
	if len(b) > 300 {
		return fmt.Sprintf("%q... (%d bytes)", b[:300], len(b))
	}
	return fmt.Sprintf("%q", b)
}
