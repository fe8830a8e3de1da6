package tracefile

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestIncompressible: random bytes are stored, text, zeros, a byte
// histogram of 128 values (7 bits) and parts too small to sample are
// not.
func TestIncompressible(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rnd := make([]byte, 64<<10)
	for i := range rnd {
		rnd[i] = byte(rng.Uint32())
	}
	half := make([]byte, 64<<10)
	for i := range half {
		half[i] = byte(rng.Uint32()) & 0x7f
	}
	text := bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog 0123456789\n"), 1200)
	for _, c := range []struct {
		name string
		p    []byte
		want bool
	}{
		{"random", rnd, true},
		{"random, smallest sampled", rnd[:2*sampleLen], true},
		{"random, too small to sample", rnd[:2*sampleLen-1], false},
		{"7 bits", half, false},
		{"text", text, false},
		{"zeros", make([]byte, 64<<10), false},
	} {
		if got := incompressible(c.p); got != c.want {
			t.Errorf("%s (%d bytes): incompressible %v, want %v", c.name, len(c.p), got, c.want)
		}
	}
}

// TestStoredFrame: a stored frame is a zstd frame of p, at each side of
// the raw block size.
func TestStoredFrame(t *testing.T) {
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, maxRawBlock - 1, maxRawBlock, maxRawBlock + 1, 3*maxRawBlock + 5} {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		f := appendStoredFrame([]byte("prefix"), p)
		if !bytes.HasPrefix(f, []byte("prefix")) {
			t.Fatalf("%d bytes: the prefix was overwritten", n)
		}
		got, err := dec.DecodeAll(f[6:], nil)
		if err != nil || !bytes.Equal(got, p) {
			t.Fatalf("%d bytes: decoded %d bytes, %v", n, len(got), err)
		}
		if want := 6 + 6 + n + 3*((n+maxRawBlock-1)/maxRawBlock); len(f) != want {
			t.Errorf("%d bytes: frame of %d bytes, want %d", n, len(f)-6, want-6)
		}
	}
}

// TestStoredParts: a chunk that mixes random syscall data with
// compressible records reads back, keeps the random parts raw (its
// payload is not much larger than them) and compresses the rest.
func TestStoredParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var recs []Record
	random := 0
	for i := range 3000 {
		if i%100 < 50 {
			b := make([]byte, 4096)
			for k := range b {
				b[k] = byte(rng.Uint32())
			}
			random += len(b)
			recs = append(recs, Record{Kind: KindSyscall, Syscall: Syscall{Tid: 1, Nr: 0, Result: 4096, Writes: []MemRange{{Addr: 0x10000, Bytes: b}}}})
			continue
		}
		recs = append(recs, Record{Kind: KindMemRead, MemRead: MemRead{ReadDelta: uint64(i % 7), Value: uint64(i % 1000), Size: 4}})
		for k := 0; k < 200; k++ {
			recs = append(recs, Record{Kind: KindKeyFrame, KeyFrame: KeyFrame{Kind: 1, Tid: 1, Seq: uint64(i*200 + k), Position: uint64(i*200+k) * 100}})
		}
	}
	data, r := roundTrip(t, Options{ChunkSize: 8 << 20, MaxChunkSize: 16 << 20}, recs)
	var stored, ulen int64
	for _, c := range r.Chunks() {
		p := data[c.Offset+chunkHeaderLen : c.Offset+c.Size]
		ulen += int64(c.Len)
		for off := 0; off+4 <= len(p); off++ {
			if bytes.Equal(p[off:off+4], []byte{0x28, 0xb5, 0x2f, 0xfd}) && off+5 < len(p) && p[off+4] == 0 && p[off+5] == 0x50 {
				stored++
			}
		}
	}
	if stored == 0 {
		t.Errorf("no stored frame in %d chunks", len(r.Chunks()))
	}
	if size, rest := int64(len(data)), ulen-int64(random); size > int64(random)+int64(random)/50+rest/2 {
		t.Errorf("trace of %d bytes for %d random ones (%d uncompressed)", size, random, ulen)
	}
}
