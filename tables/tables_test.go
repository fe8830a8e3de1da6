package tables

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"ttd/emu"
	"ttd/internal/linux"
	"ttd/probe"
	"ttd/reader"
	"ttd/recorder"
)

// record builds probe/testdata/calls.c and records it with n=300: mid(i)
// is called 300 times and returns 4i+2; the global counter is written
// 600 times, with 1..600.
func record(t *testing.T) string {
	if _, err := exec.LookPath("gcc"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("gcc not installed")
		}
		t.Skip("gcc not installed: SKIPPING the table tests")
	}
	return recordC(t, "../probe/testdata/calls.c", "-O1", []string{"300"}, recorder.Options{CheckpointEvery: 3000})
}

// recordC builds src with gcc (-g and opt) and records it with args.
func recordC(t *testing.T, src, opt string, args []string, opts recorder.Options) string {
	dir := t.TempDir()
	prog := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), ".c"))
	if b, err := exec.Command("gcc", opt, "-g", "-o", prog, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	opts.Path = prog + ".ttd"
	null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer null.Close()
	if st, _, err := recorder.Record(emu.Config{Path: prog, Args: append([]string{prog}, args...), Stdout: null, Stderr: null}, opts); err != nil || st.Code != 0 {
		t.Fatalf("record: %v %v", st, err)
	}
	return opts.Path
}

func TestCallsAndMemory(t *testing.T) {
	path := record(t)
	tr, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	sy, _ := probe.LoadSymbols(tr)
	calls, err := Calls(tr, sy, "mid")
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 300 {
		t.Fatalf("%d calls of mid, want 300", len(calls))
	}
	for i, c := range calls {
		if !c.Returned || c.Args[0] != uint64(i) || c.RetVal != uint64(4*i+2) || !strings.HasPrefix(c.Caller, "main+") || c.ReturnPos <= c.EntryPos {
			t.Fatalf("call %d: %+v", i, c)
		}
	}
	leaf, err := Calls(tr, sy, "leaf")
	if err != nil || len(leaf) != 600 || !strings.HasPrefix(leaf[0].Caller, "mid+") {
		t.Fatalf("leaf: %d calls, %v", len(leaf), err)
	}
	if _, err := Calls(tr, sy, "no_such_fn"); err == nil {
		t.Error("a missing function gives no error")
	}
	addr, size, ok := sy.LookupSymbol("counter")
	if !ok || size != 4 {
		t.Fatal("no counter symbol")
	}
	for _, jobs := range []int{1, 2} {
		mem, err := Memory(tr, addr, 4, false, true, jobs)
		if err != nil {
			t.Fatal(err)
		}
		if len(mem) != 600 {
			t.Fatalf("%d writes of counter, want 600", len(mem))
		}
		for i, m := range mem {
			if m.Value != uint64(i+1) || m.Access != "w" || m.Size != 4 || i > 0 && m.Position <= mem[i-1].Position {
				t.Fatalf("write %d: %+v", i, m)
			}
		}
		// Every write lies inside a call of leaf.
		j := 0
		for _, m := range mem {
			for j < len(leaf) && leaf[j].ReturnPos < m.Position {
				j++
			}
			if j == len(leaf) || m.Position < leaf[j].EntryPos {
				t.Fatalf("write at %d is in no call of leaf", m.Position)
			}
		}
		// Parquet round trip.
		var buf bytes.Buffer
		if err := WriteParquet(&buf, mem); err != nil {
			t.Fatal(err)
		}
		back, err := ReadParquet[MemoryRow](bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil || len(back) != len(mem) || back[599] != mem[599] {
			t.Fatalf("parquet: %d rows, %v", len(back), err)
		}
	}
	var buf bytes.Buffer
	if err := WriteParquet(&buf, calls); err != nil {
		t.Fatal(err)
	}
	back, err := ReadParquet[CallRow](bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil || len(back) != 300 || back[299].RetVal != 1198 || len(back[7].Args) != 6 || back[7].Args[0] != 7 {
		t.Fatalf("parquet calls: %d rows, %v", len(back), err)
	}
	var text bytes.Buffer
	WriteText(&text, calls[:2])
	if lines := strings.Split(text.String(), "\n"); len(lines) != 4 || !strings.HasPrefix(lines[0], "function  thread  entry_pos") || !strings.Contains(lines[2], "0x6") {
		t.Errorf("text table:\n%s", text.String())
	}
}

// TestMemorySharedWrites: the memory table of a range of shared memory
// lists every process's writes to it, each at the first process's
// address: ttd/testdata/sharedwrites.c's child attaches the parent's
// System V segment elsewhere and writes "child" over "parent".
func TestMemorySharedWrites(t *testing.T) {
	record(t) // gcc, or skip
	path := recordC(t, "../ttd/testdata/sharedwrites.c", "-O0", nil, recorder.Options{CheckpointEvery: 20000, Replayable: true})
	tr, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	// The segment: where the parent's shmat put it.
	var seg uint64
	tr.ScanEvents(reader.Checkpoint{}, func(ev *reader.Event) bool {
		if ev.Kind == reader.EventSyscall && linux.SyscallName(ev.Record.Syscall.Nr) == "shmat" {
			seg = uint64(ev.Record.Syscall.Result)
			return false
		}
		return true
	})
	rows, err := Memory(tr, seg, 6, false, true, 2)
	if err != nil {
		t.Fatal(err)
	}
	threads := map[int64]bool{}
	for _, r := range rows {
		threads[r.Thread] = true
		if r.Address < seg || r.Address >= seg+6 {
			t.Errorf("row at %#x, outside [%#x, %#x)", r.Address, seg, seg+6)
		}
	}
	if len(threads) != 2 {
		t.Fatalf("writes by %d threads, want the parent's and the child's: %+v", len(threads), rows)
	}
}
