package tracefile_test

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"ttd/tracefile"
)

// writeFlagged writes four chunks: 0 with a Module and a Process record,
// 1 with a ProcessState only, 2 with neither, 3 with a Module and a
// Process record copied through Append.
func writeFlagged(t *testing.T) string { return writeFlaggedWith(t, nil) }

// writeFlaggedWith is writeFlagged with the header's params.
func writeFlaggedWith(t *testing.T, params map[string]string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "flags.ttd")
	w, err := tracefile.Create(path, tracefile.Header{ProgramPath: "/bin/sh", Params: params}, tracefile.Options{ChunkSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	cp := func(pos uint64) {
		w.CodeBytes(0x1000, make([]byte, 5000))
		w.Checkpoint(&tracefile.Checkpoint{Position: pos, Seq: pos, CurrentTid: 1,
			Threads: []tracefile.ThreadState{{Tid: 1, Regs: []byte("r")}}})
	}
	w.Module(&tracefile.Module{Path: []byte("/bin/sh"), LoadAddr: 0x400000})
	w.Process(&tracefile.Process{Event: tracefile.ProcessStarted, Pid: 1, Path: "/bin/sh"})
	cp(100)
	w.ProcessState(&tracefile.ProcessState{Pid: 1, Tids: []int{1}})
	cp(200)
	cp(300)
	w.Append(&tracefile.Record{Kind: tracefile.KindModule, Module: tracefile.Module{Path: []byte("/lib/libc.so.6"), LoadAddr: 0x7f0000}})
	body := make([]byte, 0, 16)
	body = append(body, byte(tracefile.ProcessExited), 1, 0, 1, 0, 0, 0, 0)
	body = append(body, byte(tracefile.ExitExited), 0, 0, 0, 0)
	w.Append(&tracefile.Record{Kind: tracefile.KindUnknown, Opaque: tracefile.Opaque{Tag: 0x20, Bytes: body}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRecordFlags checks that a writer flags the chunks holding Module
// and Process records (minor version 5), written directly or copied
// with Append, and that a reader of an older trace looks everywhere.
func TestRecordFlags(t *testing.T) {
	path := writeFlagged(t)
	r, err := tracefile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if n := len(r.Chunks()); n != 4 {
		t.Fatalf("%d chunks, want 4", n)
	}
	if !r.RecordFlags() {
		t.Fatal("a trace of this version does not flag its records")
	}
	if got, want := r.ModuleChunks(), []int{0, 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("ModuleChunks %v, want %v", got, want)
	}
	if got, want := r.ProcessChunks(), []int{0, 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("ProcessChunks %v, want %v", got, want)
	}
	if c := r.Chunks()[1]; !c.HoldsProcesses() || c.HoldsProcessRecords() || c.HoldsModules() {
		t.Errorf("chunk 1 (a ProcessState): processes %v, process records %v, modules %v",
			c.HoldsProcesses(), c.HoldsProcessRecords(), c.HoldsModules())
	}
	procs, err := r.Processes()
	if err != nil || len(procs) != 2 || procs[1].Event != tracefile.ProcessExited {
		t.Errorf("Processes: %+v, %v; want the start and the exit", procs, err)
	}
	r.Close()

	// The same file as minor version 4: no chunk says, so every chunk
	// may hold modules and every one with process records of either
	// kind may hold Process records.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint16(b[10:], 4)
	binary.LittleEndian.PutUint32(b[20:], crc32.Checksum(b[:20], crc32.MakeTable(crc32.Castagnoli)))
	old := filepath.Join(t.TempDir(), "v4.ttd")
	if err := os.WriteFile(old, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r4, err := tracefile.Open(old)
	if err != nil {
		t.Fatal(err)
	}
	defer r4.Close()
	if r4.RecordFlags() {
		t.Error("a trace of minor version 4 said it flags its records")
	}
	if got, want := r4.ModuleChunks(), []int{0, 1, 2, 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("minor 4: ModuleChunks %v, want %v", got, want)
	}
	if got, want := r4.ProcessChunks(), []int{0, 1, 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("minor 4: ProcessChunks %v, want %v", got, want)
	}
	if procs4, err := r4.Processes(); err != nil || !reflect.DeepEqual(procs4, procs) {
		t.Errorf("minor 4: Processes %+v, %v; want %+v", procs4, err, procs)
	}
}

// TestNoReadsTraceFlagsRecords checks that a trace of major version 2
// (reads=none, minor versions counted anew from 0) has what minor 5 and
// 6 of major 1 added: its chunks say which hold Module and Process
// records, and its index lists the checkpoints.
func TestNoReadsTraceFlagsRecords(t *testing.T) {
	r, err := tracefile.Open(writeFlaggedWith(t, map[string]string{"reads": "none"}))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if major, minor := r.Version(); major != tracefile.VersionMajorNoReads || minor >= 5 {
		t.Fatalf("version %d.%d: not the case this tests", major, minor)
	}
	if !r.RecordFlags() {
		t.Error("a trace of major version 2 does not flag its records")
	}
	if got, want := r.ModuleChunks(), []int{0, 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("ModuleChunks %v, want %v", got, want)
	}
	if got, ok := r.IndexedCheckpoints(); !ok || len(got) != 3 {
		t.Errorf("index lists checkpoints %v (%v), want the 3", got, ok)
	}
}
