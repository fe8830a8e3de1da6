package corpus

// Go programs. Each directory testdata/corpus/go/NAME holds one main
// package (standard library only), built with the installed Go toolchain
// in two variants: "go" (CGO_ENABLED=0: a static binary whose runtime
// makes its threads with clone) and "go-cgo" (CGO_ENABLED=1 with
// runtime/cgo linked in: a dynamic binary whose threads come from glibc's
// pthread_create). A program that imports "C" is built only as go-cgo.
// GoSystem adds Go binaries nobody here wrote: gofmt from the toolchain
// and standard-library test binaries. Builds are cached under
// os.TempDir() like the C corpus, keyed by the sources and `go version`.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// goVariant is one way of building a Go program.
type goVariant struct {
	name string
	cgo  bool
}

var goVariants = []goVariant{{"go", false}, {"go-cgo", true}}

// goProgramOptions are the arguments and such of Go programs, by name.
var goProgramOptions = map[string]options{}

// GoTestBinaries are the standard-library packages whose test binaries
// GoSystem runs, with their arguments. strconv's two exhaustive
// Unicode-table tests are skipped: they run every code point through
// the tables and take most of the package's time under emulation.
var GoTestBinaries = map[string][]string{
	"strconv": {"-test.short", "-test.skip", "^(TestIsPrint|TestIsGraphic)$"},
	"sort":    {"-test.short"},
}

var goBuilt struct {
	once    sync.Once
	progs   []Program
	sys     []Program
	missing string
	err     error
}

// goCommand returns the go command, or "" when Go is not installed.
func goCommand() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if p := filepath.Join(os.Getenv("GOROOT"), "bin", "go"); os.Getenv("GOROOT") != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// GoPrograms builds (once per process, cached across processes) the Go
// programs of the corpus in each variant.
func GoPrograms(t testing.TB) []Program {
	t.Helper()
	goBuilt.once.Do(buildGo)
	if goBuilt.err != nil {
		t.Fatalf("building the Go corpus: %v", goBuilt.err)
	}
	if goBuilt.missing != "" {
		if os.Getenv("CI") != "" {
			t.Errorf("corpus: %s (required when CI is set)", goBuilt.missing)
		} else {
			t.Logf("WARNING: corpus: %s; SKIPPING the Go programs", goBuilt.missing)
		}
	}
	return append([]Program(nil), goBuilt.progs...)
}

// GoSystem returns gofmt and the standard-library test binaries.
func GoSystem(t testing.TB) []Program {
	t.Helper()
	goBuilt.once.Do(buildGo)
	if goBuilt.err != nil {
		t.Fatalf("building the Go corpus: %v", goBuilt.err)
	}
	return append([]Program(nil), goBuilt.sys...)
}

// goSource is one Go program directory.
type goSource struct {
	name, dir string
	cgoOnly   bool
}

func buildGo() {
	goBuilt.progs, goBuilt.sys, goBuilt.missing, goBuilt.err = buildGoAll()
}

func buildGoAll() (progs, sys []Program, missing string, err error) {
	gocmd := goCommand()
	if gocmd == "" {
		return nil, nil, "the Go programs need the go command, which is not installed", nil
	}
	dir, err := SourceDir()
	if err != nil {
		return nil, nil, "", err
	}
	entries, err := os.ReadDir(filepath.Join(dir, "go"))
	if err != nil {
		return nil, nil, "", err
	}
	version, err := exec.Command(gocmd, "version").Output()
	if err != nil {
		return nil, nil, "", fmt.Errorf("go version: %v", err)
	}
	goroot, err := exec.Command(gocmd, "env", "GOROOT").Output()
	if err != nil {
		return nil, nil, "", fmt.Errorf("go env GOROOT: %v", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s-go\n%s\n", cacheVersion, version)
	var srcs []goSource
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		src := goSource{name: e.Name(), dir: filepath.Join(dir, "go", e.Name())}
		files, err := filepath.Glob(filepath.Join(src.dir, "*.go"))
		if err != nil || len(files) == 0 {
			continue
		}
		sort.Strings(files)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, nil, "", err
			}
			if bytes.Contains(data, []byte("\nimport \"C\"\n")) {
				src.cgoOnly = true
			}
			fmt.Fprintf(h, "file %s/%s %d\n", src.name, filepath.Base(f), len(data))
			h.Write(data)
		}
		srcs = append(srcs, src)
	}
	for pkg, args := range GoTestBinaries {
		fmt.Fprintf(h, "test %s %q\n", pkg, args)
	}
	cache := filepath.Join(os.TempDir(), "ttd-corpus-go-"+hex.EncodeToString(h.Sum(nil))[:20])
	if _, err := os.Stat(filepath.Join(cache, "complete")); err != nil {
		if err := buildGoInto(gocmd, cache, srcs); err != nil {
			return nil, nil, "", err
		}
	}
	for _, s := range srcs {
		for _, v := range goVariants {
			if s.cgoOnly && !v.cgo {
				continue
			}
			o := goProgramOptions[s.name]
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
	gofmt := filepath.Join(strings.TrimSpace(string(goroot)), "bin", "gofmt")
	if _, err := os.Stat(gofmt); err == nil {
		sys = append(sys, Program{Name: "system/gofmt", Path: gofmt, Args: []string{"-d", "-s", "unformatted.go"},
			Env: baseEnv(), Setup: filesSetup(map[string]func() []byte{
				"unformatted.go": func() []byte { return []byte(unformattedGo) }})})
	}
	var pkgs []string
	for pkg := range GoTestBinaries {
		pkgs = append(pkgs, pkg)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		sys = append(sys, Program{Name: "system/" + pkg + ".test", Path: filepath.Join(cache, "test", pkg+".test"),
			Args: GoTestBinaries[pkg], Env: baseEnv()})
	}
	return progs, sys, "", nil
}

// buildGoInto builds every Go program and test binary into a temporary
// directory next to cache and renames it into place.
func buildGoInto(gocmd, cache string, srcs []goSource) error {
	tmp, err := os.MkdirTemp(filepath.Dir(cache), filepath.Base(cache)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	run := func(dir string, env []string, args ...string) error {
		cmd := exec.Command(gocmd, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
		cmd.Env = append(cmd.Env, env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out)
		}
		return nil
	}
	for _, v := range append([]string{"test"}, "go", "go-cgo") {
		if err := os.MkdirAll(filepath.Join(tmp, v), 0o755); err != nil {
			return err
		}
	}
	// The go commands to run (in parallel: each is mostly one link).
	type build struct {
		dir  string
		env  []string
		args []string
	}
	var builds []build
	for _, s := range srcs {
		for _, v := range goVariants {
			if s.cgoOnly && !v.cgo {
				continue
			}
			// Build from a copy outside the module, as a list of
			// files (standard library only, no go.mod needed).
			work := filepath.Join(tmp, "src-"+v.name+"-"+s.name)
			if err := os.MkdirAll(work, 0o755); err != nil {
				return err
			}
			files, _ := filepath.Glob(filepath.Join(s.dir, "*.go"))
			var names []string
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(work, filepath.Base(f)), data, 0o644); err != nil {
					return err
				}
				names = append(names, filepath.Base(f))
			}
			env := []string{"CGO_ENABLED=0"}
			if v.cgo {
				env = []string{"CGO_ENABLED=1"}
				if !s.cgoOnly {
					// Link runtime/cgo: threads come from pthread_create.
					const f = "zz_ttd_cgo.go"
					if err := os.WriteFile(filepath.Join(work, f), []byte("package main\n\nimport _ \"runtime/cgo\"\n"), 0o644); err != nil {
						return err
					}
					names = append(names, f)
				}
			}
			out := filepath.Join(tmp, v.name, s.name)
			builds = append(builds, build{work, env, append([]string{"build", "-trimpath", "-o", out}, names...)})
		}
	}
	for pkg := range GoTestBinaries {
		builds = append(builds, build{tmp, []string{"CGO_ENABLED=0"},
			[]string{"test", "-c", "-trimpath", "-o", filepath.Join(tmp, "test", pkg+".test"), pkg}})
	}
	var (
		mu   sync.Mutex
		errs []string
		wg   sync.WaitGroup
		next = make(chan build)
	)
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range next {
				if err := run(b.dir, b.env, b.args...); err != nil {
					mu.Lock()
					errs = append(errs, err.Error())
					mu.Unlock()
				}
			}
		}()
	}
	for _, b := range builds {
		next <- b
	}
	close(next)
	wg.Wait()
	if len(errs) > 0 {
		sort.Strings(errs)
		return fmt.Errorf("%d Go builds failed:\n%s", len(errs), strings.Join(errs, "\n"))
	}
	for _, e := range mustGlob(filepath.Join(tmp, "src-*")) {
		os.RemoveAll(e)
	}
	if err := os.WriteFile(filepath.Join(tmp, "complete"), []byte(time.Now().UTC().String()+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.Rename(tmp, cache); err != nil {
		if _, statErr := os.Stat(filepath.Join(cache, "complete")); statErr == nil {
			return nil
		}
		return err
	}
	return nil
}

func mustGlob(pattern string) []string {
	m, _ := filepath.Glob(pattern)
	return m
}

// unformattedGo is gofmt's input: badly formatted code that -s simplifies.
const unformattedGo = `package demo
import ("fmt";"strings")
type point struct{x,y int}
func   main(){
pts:=[]point{point{1,2},point{3,4}}
for i:=0;i<len(pts);i++{
  if pts[i].x>1{fmt.Println(strings.Repeat("*",pts[i].y))}else{
fmt.Println("small")}
}
m:=map[string]point{"a":point{x:1,y:2}}
for k,_:=range m{fmt.Println(k)}
s:=pts[0:len(pts)]
_=s
}
`
