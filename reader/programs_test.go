package reader

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"ttd/emu"
	"ttd/recorder"
	"ttd/tracefile"
)

// modulesByEvents is how Modules found the Module records before
// programs.go: every chunk decoded, and the positions ScanEvents gives.
func modulesByEvents(tr *Trace) ([]ModuleRef, error) {
	var out []ModuleRef
	err := tr.ScanEvents(Checkpoint{}, func(ev *Event) bool {
		if ev.Kind == EventModule {
			ref := ModuleRef{Module: *ev.Module, Position: ev.Position, Chunk: ev.chunk, embeds: ev.Module.Embedded != nil}
			ref.Embedded = nil
			ref.Path = append([]byte(nil), ref.Path...)
			ref.BuildID = append([]byte(nil), ref.BuildID...)
			out = append(out, ref)
		}
		return true
	})
	return out, err
}

// checkpointsByChunks is how Checkpoints found them before programs.go:
// every chunk with some decoded (loadChunk), the Checkpoint records
// among its control records.
func checkpointsByChunks(tr *Trace) ([]Checkpoint, error) {
	cps := []Checkpoint{{Position: tr.chunks[0].FirstPosition}}
	for i := range tr.chunks {
		ch, err := tr.loadChunk(i)
		if err != nil {
			if i == 0 {
				return nil, err
			}
			break
		}
		for k := range ch.ctrls {
			if c := &ch.ctrls[k]; c.kind == tracefile.KindCheckpoint && c.rec.Checkpoint.Position > cps[len(cps)-1].Position {
				cps = append(cps, Checkpoint{Position: c.rec.Checkpoint.Position, Chunk: i, Ctrl: k})
			}
		}
	}
	return cps, nil
}

// asKilled copies the trace at path without its index and footer, as a
// recording killed before Close leaves it: its checkpoints are found by
// the survey, not the index.
func asKilled(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "killed-"+filepath.Base(path))
	if err := os.WriteFile(cut, b[:binary.LittleEndian.Uint64(b[len(b)-32:])], 0o644); err != nil {
		t.Fatal(err)
	}
	return cut
}

// resolveCtrls returns cps with the Ctrl of each checkpoint the index
// listed (CtrlUnknown) found in its chunk, as a re-simulation finds it.
func resolveCtrls(t *testing.T, tr *Trace, cps []Checkpoint) []Checkpoint {
	t.Helper()
	out := append([]Checkpoint(nil), cps...)
	for i := range out {
		ch, err := tr.loadChunk(out[i].Chunk)
		if err != nil {
			t.Fatal(err)
		}
		if out[i].Ctrl, err = ctrlOf(out[i], ch); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// asMinor4 copies the trace at path with its header saying minor
// version 4: its chunks then say nothing of the records they hold.
func asMinor4(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint16(b[10:], 4)
	binary.LittleEndian.PutUint32(b[20:], crc32.Checksum(b[:20], crc32.MakeTable(crc32.Castagnoli)))
	old := filepath.Join(t.TempDir(), "v4-"+filepath.Base(path))
	if err := os.WriteFile(old, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return old
}

// checkPrograms compares Modules with modulesByEvents, Checkpoints with
// checkpointsByChunks and the Process records with tracefile's, on a fresh Trace of path; it returns the
// modules.
func checkPrograms(t *testing.T, path string) []ModuleRef {
	t.Helper()
	tr, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	// From the index, listing the checkpoints decodes no chunk.
	surveyed := len(tr.progs.chunks)
	tr.Checkpoints()
	if _, indexed := tr.File().IndexedCheckpoints(); indexed && len(tr.progs.chunks) != surveyed {
		t.Errorf("%s: checkpoints from the index, %d chunks surveyed for them", path, len(tr.progs.chunks)-surveyed)
	}
	got, err := tr.Modules()
	if err != nil {
		t.Fatalf("%s: Modules: %v", path, err)
	}
	if again, _ := tr.Modules(); !reflect.DeepEqual(again, got) {
		t.Errorf("%s: a second Modules differs", path)
	}
	want, err := modulesByEvents(tr)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: Modules\n%+v\nwant (ScanEvents)\n%+v", path, got, want)
	}
	cps, err := tr.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	_, indexed := tr.File().IndexedCheckpoints()
	if _, minor := tr.File().Version(); indexed != (minor >= 6 && !tr.File().Truncated()) {
		t.Errorf("%s: minor %d, truncated %v: checkpoints from the index %v", path, minor, tr.File().Truncated(), indexed)
	}
	cps = resolveCtrls(t, tr, cps)
	wantCps, err := checkpointsByChunks(tr)
	if err != nil || !reflect.DeepEqual(cps, wantCps) {
		t.Errorf("%s: Checkpoints (index %v)\n%+v\nwant (loadChunk)\n%+v (%v)", path, indexed, cps, wantCps, err)
	}
	if survey, err := tr.surveyCheckpoints(); err != nil || !reflect.DeepEqual(survey, wantCps) {
		t.Errorf("%s: the survey's checkpoints\n%+v\nwant (loadChunk)\n%+v (%v)", path, survey, wantCps, err)
	}
	recs, err := tr.File().Processes()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tr.ProcessRecords(), recs) {
		t.Errorf("%s: Process records\n%+v\nwant\n%+v", path, tr.ProcessRecords(), recs)
	}
	return got
}

// writeModuleTrace writes Module records before, between and after
// control records with and without positions, across chunks ended by
// Flush (no checkpoint): a chunk of one Module record takes the position
// the chunks before it end at.
func writeModuleTrace(t *testing.T, tree bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mods.ttd")
	hdr := tracefile.Header{ProgramPath: "/bin/x"}
	if tree {
		hdr.Params = map[string]string{"processes": "tree"}
	}
	w, err := tracefile.Create(path, hdr, tracefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mod := func(name string) { w.Module(&tracefile.Module{Path: []byte(name), LoadAddr: 0x1000}) }
	w.Process(&tracefile.Process{Event: tracefile.ProcessStarted, Pid: 100, Ppid: 1, Path: "/bin/x", Argv: []string{"x"}})
	w.ThreadStart(100, 0)
	w.KeyFrame(tracefile.KeyFrameSyscall, 100, 1, 10)
	mod("a") // with the Syscall: at 10
	w.Syscall(&tracefile.Syscall{Tid: 100, Nr: 9})
	mod("b") // with the next key frame: at 20
	w.KeyFrame(tracefile.KeyFrameSyscall, 100, 2, 20)
	w.Flush()
	mod("c") // alone in its chunk: where chunk 1 ended, 20
	w.Flush()
	w.CodeBytes(0x1000, []byte{0x90})
	mod("d") // before the Process record: at 25 in a tree, else 20
	w.Process(&tracefile.Process{Event: tracefile.ProcessExeced, Pid: 100, Tid: 100, Position: 25, Path: "/bin/y", Argv: []string{"y"}})
	w.Flush()
	mod("e") // in a tree, after the chunk that ends with the Process record: 25
	w.Flush()
	mod("f") // with the Exit: 30
	w.Exit(&tracefile.Exit{Kind: tracefile.ExitExited, Position: 30})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestModulesAsScanEvents checks that Modules, which decodes only the
// chunks that may hold Module records and copies only those, finds the
// records ScanEvents finds, at the same positions: over traces written
// with the chunk flags and the same traces as minor version 4 (every
// chunk decoded), over recordings of a tree with small chunks, and over
// the old traces of testdata.
func TestModulesAsScanEvents(t *testing.T) {
	for _, tree := range []bool{false, true} {
		path := writeModuleTrace(t, tree)
		for _, p := range []string{path, asMinor4(t, path)} {
			mods := checkPrograms(t, p)
			var names []string
			var pos []uint64
			for _, m := range mods {
				names = append(names, string(m.Path))
				pos = append(pos, m.Position)
			}
			want := []uint64{10, 20, 20, 20, 20, 30}
			if tree {
				want = []uint64{10, 20, 20, 25, 25, 30}
			}
			if !reflect.DeepEqual(pos, want) || len(names) != 6 || names[2] != "c" {
				t.Errorf("tree %v, %s: modules %v at %v, want a..f at %v", tree, filepath.Base(p), names, pos, want)
			}
		}
	}
	for _, p := range []string{"testdata/fork-first-only.ttd", "testdata/string_mem-bytereads.ttd"} {
		if len(checkPrograms(t, p)) == 0 {
			t.Errorf("%s: no modules", p)
		}
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	_, exe := recordTreeExe(t, 0)
	null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer null.Close()
	// Small chunks: modules in several; big ones: several checkpoints
	// in a chunk, after other control records.
	small := filepath.Join(t.TempDir(), "small.ttd")
	big := filepath.Join(t.TempDir(), "big.ttd")
	for _, o := range []recorder.Options{{Path: small, CheckpointEvery: 20_000, ChunkSize: 2048}, {Path: big, CheckpointEvery: 5_000}} {
		st, _, err := recorder.Record(emu.Config{Path: exe, Args: []string{exe}, Stdout: null}, o)
		if err != nil || st.ExitCode() != 0 {
			t.Fatalf("record: %v, %v", st, err)
		}
	}
	for _, p := range []string{big, asMinor4(t, big), asKilled(t, big)} {
		checkPrograms(t, p)
		tr, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		cps, _ := tr.Checkpoints()
		cps = resolveCtrls(t, tr, cps)
		inside := 0
		for _, c := range cps {
			if c.Ctrl > 0 {
				inside++
			}
		}
		if inside < 2 {
			t.Errorf("%s: %d checkpoints, %d inside a chunk; want several", p, len(cps), inside)
		}
		tr.Close()
	}
	for _, p := range []string{small, asMinor4(t, small)} {
		mods := checkPrograms(t, p)
		chunks := map[int]bool{}
		for _, m := range mods {
			chunks[m.Chunk] = true
		}
		// The program, its libraries, /bin/true's after the exec.
		if len(mods) < 4 || len(chunks) < 2 {
			t.Errorf("%s: %d modules in %d chunks; want the tree's, in several", p, len(mods), len(chunks))
		}
		tr, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		tr.Modules()
		scanned, all := len(tr.progs.chunks), len(tr.Chunks())
		if tr.File().RecordFlags() && scanned*2 > all || !tr.File().RecordFlags() && scanned != all {
			t.Errorf("%s: %d of %d chunks decoded for the modules and processes", p, scanned, all)
		}
		t.Logf("%s: %d modules in %d chunks; %d of %d chunks decoded", filepath.Base(p), len(mods), len(chunks), scanned, all)
		tr.Close()
	}
}

// TestChunksKeepTheirBytes decodes every chunk of a trace one after the
// other with the Trace's pooled iterator, then checks each chunk's code
// bytes and syscall buffers against a fresh decoding: a chunk's records
// hold copies of their bytes (byteSlab), not the iterator's payload
// buffer, which decoding the next chunk overwrites.
func TestChunksKeepTheirBytes(t *testing.T) {
	path := recordLoopChunks(t, 20_000, "3000", 4096)
	tr, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if len(tr.Chunks()) < 3 {
		t.Fatalf("%d chunks; want several", len(tr.Chunks()))
	}
	var chunks []*chunk
	for i := range tr.Chunks() {
		ch, err := tr.loadChunk(i)
		if err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, ch)
	}
	checked := 0
	for i, ch := range chunks {
		var code [][]byte
		var writes [][]byte
		it := tr.File().Records(i)
		for {
			r, err := it.Next()
			if err != nil {
				break
			}
			switch r.Kind {
			case tracefile.KindCodeBytes:
				code = append(code, append([]byte(nil), r.CodeBytes.Bytes...))
			case tracefile.KindSyscall:
				for _, w := range r.Syscall.Writes {
					writes = append(writes, append([]byte(nil), w.Bytes...))
				}
			}
		}
		var gotCode, gotWrites [][]byte
		for k := range ch.ctrls {
			for _, c := range ch.ctrls[k].code {
				gotCode = append(gotCode, c.Bytes)
			}
			if ch.ctrls[k].rec == nil {
				continue // a key frame
			}
			for _, w := range ch.ctrls[k].rec.Syscall.Writes {
				gotWrites = append(gotWrites, w.Bytes)
			}
		}
		if !reflect.DeepEqual(gotCode, code) || !reflect.DeepEqual(gotWrites, writes) {
			t.Errorf("chunk %d: its bytes changed after later chunks were decoded", i)
		}
		checked += len(code) + len(writes)
	}
	if checked == 0 {
		t.Fatal("no code bytes or syscall buffers checked")
	}
}
