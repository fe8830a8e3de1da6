package emu

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestSharedMappingWriteBack runs reanimate/testdata/mmap_write.c
// natively and under the emulator, each in an empty directory: the files
// it writes through MAP_SHARED mappings (msync, munmap, exit) and the one
// it maps privately must come out the same.
func TestSharedMappingWriteBack(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("needs gcc")
		}
		t.Skip("SKIPPED (not in CI): needs gcc")
	}
	for _, c := range []struct {
		name  string
		files []string
	}{
		{"mmap_write", []string{"shared.dat", "grow.dat", "private.dat"}},
		{"mmap_fork", []string{"forked.dat"}},
	} {
		t.Run(c.name, func(t *testing.T) { sharedWriteBack(t, c.name, c.files) })
	}
}

func sharedWriteBack(t *testing.T, name string, files []string) {
	prog := filepath.Join(t.TempDir(), name)
	if b, err := exec.Command("gcc", "-O2", "-o", prog, "../reanimate/testdata/"+name+".c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	native, emulated := t.TempDir(), t.TempDir()
	cmd := exec.Command(prog)
	cmd.Dir = native
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("native: %v\n%s", err, b)
	}
	null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer null.Close()
	p, err := NewProcess(Config{Path: prog, Dir: emulated, Stdout: null, Stderr: null})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := p.Run(); err != nil || st.Code != 0 || st.Signal != 0 {
		t.Fatalf("under the emulator: %v %v", st, err)
	}
	for _, name := range files {
		want, err := os.ReadFile(filepath.Join(native, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(emulated, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want, got) {
			t.Errorf("%s: %d bytes under the emulator differ from the native %d bytes", name, len(got), len(want))
		}
	}
}
