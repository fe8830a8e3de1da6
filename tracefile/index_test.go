package tracefile

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// writeCheckpoints writes checkpoints at 0 (twice), 100, 200, 300 and
// 400 with CodeBytes between them, in chunks of about 4 KiB: the size
// limit cuts a chunk at the next checkpoint, so most chunks begin with
// one. It returns the path and the list the index must give.
func writeCheckpoints(t *testing.T, opts Options) (string, []IndexedCheckpoint) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cps.ttd")
	opts.ChunkSize = 4096
	w, err := Create(path, Header{ProgramPath: "/bin/x"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	cp := func(pos uint64) {
		w.Checkpoint(&Checkpoint{Position: pos, Seq: pos, CurrentTid: 1, Threads: []ThreadState{{Tid: 1, Regs: []byte("r")}}})
	}
	cp(0)
	cp(0)
	w.CodeBytes(0x1000, make([]byte, 5000))
	cp(100)
	w.KeyFrame(KeyFrameSyscall, 1, 101, 150)
	cp(200) // in chunk 1 after a key frame: the chunk is not full
	w.CodeBytes(0x1000, make([]byte, 5000))
	cp(300)
	w.Flush()
	cp(400)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path, []IndexedCheckpoint{{0, 0}, {0, 0}, {1, 100}, {1, 200}, {2, 300}, {3, 400}}
}

// TestCheckpointIndex checks the index's checkpoint list (minor version
// 6): the writer lists every Checkpoint record with its chunk; a reader
// takes the list only when it agrees with the chunk headers, and a
// trace without an index (a recording killed before Close), a ring
// buffer's or an older minor version's has none.
func TestCheckpointIndex(t *testing.T) {
	path, want := writeCheckpoints(t, Options{})
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := r.IndexedCheckpoints()
	if !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("index lists %v (%v), want %v", got, ok, want)
	}
	for _, c := range got {
		if c.Chunk >= len(r.Chunks()) || r.Chunks()[c.Chunk].Checkpoints == 0 {
			t.Errorf("checkpoint at %d in chunk %d, whose header counts none", c.Position, c.Chunk)
		}
	}
	// The list must agree with the headers: each wrong list is refused.
	enc := func(cs []IndexedCheckpoint) []byte {
		b := binary.AppendUvarint(nil, uint64(len(cs)))
		for _, c := range cs {
			b = binary.AppendUvarint(b, uint64(c.Chunk))
			b = binary.AppendUvarint(b, c.Position)
		}
		return b
	}
	for name, cs := range map[string][]IndexedCheckpoint{
		"one left out":        want[1:],
		"one too many":        append(append([]IndexedCheckpoint(nil), want...), IndexedCheckpoint{3, 400}),
		"in the wrong chunk":  {{0, 0}, {0, 0}, {1, 100}, {2, 200}, {2, 300}, {3, 400}},
		"out of order":        {{0, 0}, {0, 0}, {1, 200}, {1, 100}, {2, 300}, {3, 400}},
		"outside its chunk":   {{0, 0}, {0, 0}, {1, 100}, {1, 200}, {2, 300}, {3, 401}},
		"no such chunk":       {{0, 0}, {0, 0}, {1, 100}, {1, 200}, {2, 300}, {4, 400}},
		"chunks out of order": {{0, 0}, {1, 0}, {0, 100}, {1, 200}, {2, 300}, {3, 400}},
	} {
		r.cpIndex = nil
		r.readCheckpointIndex(enc(cs))
		if _, ok := r.IndexedCheckpoints(); ok {
			t.Errorf("%s: list taken", name)
		}
	}
	for name, b := range map[string][]byte{"cut short": enc(want)[:5], "count too large": {0xff, 0x01}} {
		r.cpIndex = nil
		r.readCheckpointIndex(b)
		if _, ok := r.IndexedCheckpoints(); ok {
			t.Errorf("%s: list taken", name)
		}
	}
	r.cpIndex = nil
	r.readCheckpointIndex(enc(want))
	if got, ok := r.IndexedCheckpoints(); !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("the right list refused: %v", got)
	}
	r.Close()

	// Killed before Close: the chunks without the index.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	foot := b[len(b)-footerLen:]
	cut := filepath.Join(t.TempDir(), "killed.ttd")
	if err := os.WriteFile(cut, b[:binary.LittleEndian.Uint64(foot)], 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := Open(cut); err != nil || !r.Truncated() {
		t.Fatalf("cut trace: %v", err)
	} else if got, ok := r.IndexedCheckpoints(); ok {
		t.Errorf("a trace without an index lists checkpoints %v", got)
	}
	// A ring buffer's renumbered chunks: no list.
	ring, _ := writeCheckpoints(t, Options{Ring: 1 << 20})
	if r, err := Open(ring); err != nil {
		t.Fatal(err)
	} else if got, ok := r.IndexedCheckpoints(); ok {
		t.Errorf("a ring buffer's trace lists checkpoints %v", got)
	}
}
