package symbols

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
)

// compressedFixture builds the c-O0 fixture's program with its DWARF
// compressed (zlib) in the file itself and, stripped, with a separate
// compressed debug file; it caches every compressed section (the
// fixture's are smaller than minCachedSection) in a fresh directory.
func compressedFixture(t *testing.T) (inFile, stripped, debug string) {
	t.Helper()
	needTools(t, "objcopy")
	f := getFixture(t, "c-O0")
	dir := t.TempDir()
	inFile = filepath.Join(dir, "z")
	stripped, debug = filepath.Join(dir, "s"), filepath.Join(dir, "s.debug")
	for _, args := range [][]string{
		{"--compress-debug-sections=zlib", f.exe, inFile},
		{"--only-keep-debug", "--compress-debug-sections=zlib", f.exe, debug},
		{"--strip-debug", f.exe, stripped},
	} {
		if out, err := exec.Command("objcopy", args...).CombinedOutput(); err != nil {
			t.Fatalf("objcopy %v: %v\n%s", args, err, out)
		}
	}
	oldDir, oldMin := sectionCacheDir, minCachedSection
	sectionCacheDir, minCachedSection = filepath.Join(dir, "cache"), 0
	t.Cleanup(func() { sectionCacheDir, minCachedSection = oldDir, oldMin })
	return inFile, stripped, debug
}

// names is what a SymbolsOnly table names of every function symbol of
// exe: its DWARF function and line at a few addresses.
func names(t *testing.T, m Module) []string {
	t.Helper()
	m.SymbolsOnly = true
	tab, err := Load([]Module{m})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range tab.FuncSymbols() {
		for _, pc := range []uint64{s.Addr, s.Addr + s.Size/2} {
			f, ok := tab.UnitFuncForPC(pc)
			file, line, lok := tab.UnitPCToLine(pc)
			if ok && f.DWARF && lok {
				out = append(out, f.Name+" "+file+":"+strconv.Itoa(line))
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no DWARF function named: the test tests nothing", m.Path)
	}
	return out
}

// TestSectionCacheNamesAsInflated names a program's functions and lines
// from its compressed DWARF (in the file, and in a separate debug file)
// with the cache off, on its first use (written) and on its second
// (read back): all three the same.
func TestSectionCacheNamesAsInflated(t *testing.T) {
	inFile, stripped, debug := compressedFixture(t)
	for _, m := range []Module{{Path: inFile}, {Path: stripped, DebugFile: debug}} {
		dir := sectionCacheDir
		sectionCacheDir = ""
		want := strings.Join(names(t, m), "\n")
		sectionCacheDir = dir
		w0, h0 := sectionCacheWrites.Load(), sectionCacheHits.Load()
		first := strings.Join(names(t, m), "\n")
		w1, h1 := sectionCacheWrites.Load(), sectionCacheHits.Load()
		second := strings.Join(names(t, m), "\n")
		w2, h2 := sectionCacheWrites.Load(), sectionCacheHits.Load()
		if first != want || second != want {
			t.Errorf("%s: names differ: no cache\n%s\nfirst\n%s\nsecond\n%s", m.Path, want, first, second)
		}
		if w1-w0 < 3 || h1 != h0 {
			t.Errorf("%s: first use wrote %d sections, read %d (want info, abbrev, line written)", m.Path, w1-w0, h1-h0)
		}
		if w2 != w1 || h2-h1 != w1-w0 {
			t.Errorf("%s: second use wrote %d sections, read %d of the %d written", m.Path, w2-w1, h2-h1, w1-w0)
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		forgetMapped() // the next module's sections are these
	}
}

// TestSectionCacheRejectsBadFiles damages a cached section: a flipped
// byte (its CRC no longer matches), a truncated file, an empty one; each
// is ignored, the section inflated again and the file rewritten.
func TestSectionCacheRejectsBadFiles(t *testing.T) {
	inFile, _, _ := compressedFixture(t)
	f, err := elf.Open(inFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	raw, err := os.Open(inFile)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	want, err := godwarf.GetDebugSectionElf(f, "info")
	if err != nil || len(want) == 0 {
		t.Fatalf("no .debug_info: %v", err)
	}
	if got := debugSection(f, raw, "id", "info"); string(got) != string(want) {
		t.Fatalf("first read differs from the inflated section")
	}
	files, _ := filepath.Glob(filepath.Join(sectionCacheDir, "id-info-*"))
	if len(files) != 1 {
		t.Fatalf("cache files %v, want one", files)
	}
	path := files[0]
	for _, damage := range []struct {
		name string
		fn   func(b []byte) []byte
	}{
		{"flipped byte", func(b []byte) []byte { b[len(b)/2] ^= 1; return b }},
		{"flipped CRC", func(b []byte) []byte { b[len(b)-1] ^= 0x80; return b }},
		{"truncated", func(b []byte) []byte { return b[:len(b)-1] }},
		{"a byte appended", func(b []byte) []byte { return append(b, 0) }},
		{"no CRC", func(b []byte) []byte { return b[:len(b)-4] }},
		{"empty", func(b []byte) []byte { return nil }},
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// Replaced as a run replaces it (a rename), and forgotten by
		// this process, which mapped the good one.
		if err := os.WriteFile(path+".new", damage.fn(b), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".new", path); err != nil {
			t.Fatal(err)
		}
		forgetMapped()
		h0, w0 := sectionCacheHits.Load(), sectionCacheWrites.Load()
		got := debugSection(f, raw, "id", "info")
		if string(got) != string(want) {
			t.Errorf("%s: read %d bytes that are not the section", damage.name, len(got))
		}
		if sectionCacheHits.Load() != h0 || sectionCacheWrites.Load() != w0+1 {
			t.Errorf("%s: taken from the cache (hits %d, writes %d)", damage.name, sectionCacheHits.Load()-h0, sectionCacheWrites.Load()-w0)
		}
		if got := debugSection(f, raw, "id", "info"); string(got) != string(want) || sectionCacheHits.Load() != h0+1 {
			t.Errorf("%s: the rewritten file was not read back", damage.name)
		}
	}
}

// forgetMapped makes this process map the cache files again (it keeps
// the old mappings: a test may still hold their bytes).
func forgetMapped() {
	mapped.Lock()
	mapped.files = nil
	mapped.Unlock()
}

// TestSectionCacheKeyedByContent changes the compressed bytes of a
// section (its last, the zlib stream's sum, and its first) in a copy of
// the file, keeping build id and sizes: the cached section of the
// original is not taken for it.
func TestSectionCacheKeyedByContent(t *testing.T) {
	inFile, _, _ := compressedFixture(t)
	read := func(path string) []byte {
		f, err := elf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		raw, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		return debugSection(f, raw, buildID(f), "info")
	}
	if len(read(inFile)) == 0 {
		t.Fatal("no .debug_info")
	}
	f, err := elf.Open(inFile)
	if err != nil {
		t.Fatal(err)
	}
	s := f.Section(".debug_info")
	f.Close()
	b, err := os.ReadFile(inFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []uint64{s.Offset + s.FileSize - 1, s.Offset + 30} {
		c := append([]byte(nil), b...)
		c[at] ^= 0x55
		other := filepath.Join(t.TempDir(), "other")
		if err := os.WriteFile(other, c, 0o600); err != nil {
			t.Fatal(err)
		}
		h := sectionCacheHits.Load()
		read(other)
		if sectionCacheHits.Load() != h {
			t.Errorf("byte %#x of the section changed: read from the cache", at-s.Offset)
		}
	}
}
