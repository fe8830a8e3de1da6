package tracefile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
)

// fuzzSeeds are small traces of every record kind, compressed and not.
func fuzzSeeds(t testing.TB) [][]byte {
	rng := rand.New(rand.NewPCG(8, 8))
	var recs []Record
	for _, k := range allKinds {
		r := randRecord(rng, k)
		if k == KindModule {
			r.Module.Embedded = nil
		}
		recs = append(recs, r)
	}
	small := randomTrace(rng, 60)
	return [][]byte{
		writeTraceBytes(t, Options{NoCompression: true}, recs),
		writeTraceBytes(t, Options{}, recs),
		writeTraceBytes(t, Options{ChunkSize: 200}, small),
		writeTraceBytes(t, Options{ChunkSize: 200, NoCompression: true}, small),
		writeTraceBytes(t, Options{}, nil),
	}
}

// FuzzOpen opens arbitrary files and reads every record: no panic, no
// hang, and every error is a *FormatError within the file. With fix set,
// the checksums are first made to match, so that mutations reach the
// structure checks, the zstd decoder and the record decoder.
func FuzzOpen(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, data []byte, fix bool) {
		if fix {
			fixChecksums(data)
		}
		r, err := NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			checkFuzzError(t, err, len(data))
			return
		}
		_ = r.Summary()
		r.ChunkAt(0)
		r.ChunkAt(^uint64(0))
		for i := range r.Chunks() {
			it := r.Records(i)
			for {
				_, err := it.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					checkFuzzError(t, err, len(data))
					break
				}
			}
		}
	})
}

// fixChecksums recomputes, in place, every checksum of data that it can
// find: the file header's, each chunk's (walking the chunks from the data
// offset), the index entries', the index's and the footer's.
func fixChecksums(data []byte) {
	le := binary.LittleEndian
	if len(data) < fileHeaderFixedLen || string(data[:8]) != FileMagic {
		return
	}
	blen := int(le.Uint32(data[12:]))
	if blen > len(data)-fileHeaderFixedLen {
		return
	}
	le.PutUint32(data[16:], crc(data[fileHeaderFixedLen:fileHeaderFixedLen+blen]))
	le.PutUint32(data[20:], crc(data[:20]))
	fixHeader := func(h []byte) int {
		hl := chunkHeaderSize(h)
		if hl == 0 || hl > len(h) {
			return 0
		}
		le.PutUint32(h[hl-4:], crc(h[:hl-4]))
		return hl
	}
	for off := fileHeaderFixedLen + blen; off < len(data); {
		hl := chunkHeaderSize(data[off:])
		if hl == 0 || hl > len(data)-off {
			break
		}
		clen := int(le.Uint32(data[off+12:]))
		if clen > len(data)-off-hl {
			break
		}
		le.PutUint32(data[off+20:], crc(data[off+hl:off+hl+clen]))
		fixHeader(data[off:])
		off += hl + clen
	}
	if len(data) < footerLen {
		return
	}
	foot := data[len(data)-footerLen:]
	ioff, ilen := le.Uint64(foot), le.Uint64(foot[8:])
	if ioff <= uint64(len(data)) && ilen <= uint64(len(data))-ioff {
		idx := data[ioff : ioff+ilen]
		if len(idx) >= 8 {
			for p := 8; p+8 < len(idx); {
				hl := fixHeader(idx[p+8:])
				if hl == 0 {
					break
				}
				p += 8 + hl
			}
		}
		le.PutUint32(foot[16:], crc(idx))
	}
	le.PutUint32(foot[20:], crc(foot[:20]))
}

func checkFuzzError(t *testing.T, err error, size int) {
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not a *FormatError", err, err)
	}
	if fe.Off < 0 || fe.Off > int64(size) {
		t.Fatalf("error offset %d outside the file of %d bytes: %v", fe.Off, size, err)
	}
	_ = fe.Error()
}

// FuzzRecords decodes arbitrary chunk payloads: no panic, every error a
// recordError inside the payload, and whatever decodes encodes back to a
// payload that decodes to the same records.
func FuzzRecords(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		r, err := NewReader(bytes.NewReader(s), int64(len(s)))
		if err != nil {
			f.Fatal(err)
		}
		for _, c := range r.Chunks() {
			if c.hdr.flags&flagCompressMask == compressNone {
				f.Add(s[c.Offset+int64(c.hdr.size):c.Offset+c.Size], c.FirstPosition, c.FirstSeq)
			}
		}
	}
	f.Add([]byte{0x8f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, uint64(0), uint64(0))
	f.Fuzz(func(t *testing.T, payload []byte, pos, seq uint64) {
		var d decoder
		d.reset(payload, pos, seq)
		var rec Record
		var got []Record
		for {
			err := d.next(&rec)
			if err == io.EOF {
				break
			}
			if err != nil {
				re, ok := err.(*recordError)
				if !ok || re.off < 0 || re.off >= len(payload) || (re.err != ErrTruncated && re.err != ErrCorrupt) {
					t.Fatalf("bad error %#v", err)
				}
				break
			}
			if rec.Off < 0 || rec.Off >= int64(len(payload)) {
				t.Fatalf("record offset %d", rec.Off)
			}
			got = append(got, canon(&rec))
		}
		if len(got) == 0 {
			return
		}
		// Re-encode what decoded, from the same delta base, and decode again.
		again := encodePayload(got, pos, seq)
		d.reset(again, pos, seq)
		for i := range got {
			if err := d.next(&rec); err != nil {
				t.Fatalf("re-encoded record %d: %v", i, err)
			}
			if c := canon(&rec); !reflect.DeepEqual(c, got[i]) {
				t.Fatalf("re-encoded record %d:\n got %+v\nwant %+v", i, c, got[i])
			}
		}
		if err := d.next(&rec); err != io.EOF {
			t.Fatalf("after the re-encoded records: %v", err)
		}
	})
}

// encodePayload encodes recs as a chunk payload with the given delta base,
// with a bare Writer that never cuts a chunk.
func encodePayload(recs []Record, pos, seq uint64) []byte {
	w := Writer{target: MaxChunkLen, limit: MaxChunkLen, bufCap: MaxChunkLen, pos: pos, seq: seq}
	for i := range recs {
		w.Append(&recs[i])
	}
	return w.buf
}

// TestWriteFuzzCorpus regenerates testdata/fuzz from fuzzSeeds when
// TTD_WRITE_FUZZ_CORPUS is set (after a format change).
func TestWriteFuzzCorpus(t *testing.T) {
	if os.Getenv("TTD_WRITE_FUZZ_CORPUS") == "" {
		t.Skip("set TTD_WRITE_FUZZ_CORPUS=1 to regenerate testdata/fuzz")
	}
	for _, dir := range []string{"testdata/fuzz/FuzzOpen", "testdata/fuzz/FuzzRecords"} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path string, values ...string) {
		s := "go test fuzz v1\n" + strings.Join(values, "\n") + "\n"
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range fuzzSeeds(t) {
		write(fmt.Sprintf("testdata/fuzz/FuzzOpen/seed%d", i), fmt.Sprintf("[]byte(%q)", s), "bool(false)")
		write(fmt.Sprintf("testdata/fuzz/FuzzOpen/seed%d-fix", i), fmt.Sprintf("[]byte(%q)", s), "bool(true)")
		r, err := NewReader(bytes.NewReader(s), int64(len(s)))
		if err != nil {
			t.Fatal(err)
		}
		for j, c := range r.Chunks() {
			if c.hdr.flags&flagCompressMask != compressNone {
				continue
			}
			payload := s[c.Offset+int64(c.hdr.size) : c.Offset+c.Size]
			write(fmt.Sprintf("testdata/fuzz/FuzzRecords/seed%d-%d", i, j),
				fmt.Sprintf("[]byte(%q)", payload), fmt.Sprintf("uint64(%d)", c.FirstPosition), fmt.Sprintf("uint64(%d)", c.FirstSeq))
		}
	}
}
