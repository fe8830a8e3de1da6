package tracefile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// smallTrace returns a trace of a few chunks and its records.
func smallTrace(t testing.TB, noComp bool) ([]byte, []Record) {
	rng := rand.New(rand.NewPCG(11, 12))
	recs := randomTrace(rng, 150)
	data := writeTraceBytes(t, Options{ChunkSize: 400, NoCompression: noComp}, recs)
	return data, recs
}

// checkPrefix checks that got is a prefix of want.
func checkPrefix(t *testing.T, what string, got, want []Record) {
	t.Helper()
	if len(got) > len(want) {
		t.Fatalf("%s: %d records, more than the %d written", what, len(got), len(want))
	}
	for i := range got {
		if w := canon(&want[i]); !reflect.DeepEqual(got[i], w) {
			t.Fatalf("%s: record %d:\n got %+v\nwant %+v", what, i, got[i], w)
		}
	}
}

// checkFormatError checks that err is a *FormatError inside the file.
func checkFormatError(t *testing.T, what string, err error, size int) *FormatError {
	t.Helper()
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("%s: error %v (%T) is not a *FormatError", what, err, err)
	}
	if fe.Off < 0 || fe.Off > int64(size) {
		t.Fatalf("%s: error offset %d outside the file of %d bytes: %v", what, fe.Off, size, err)
	}
	return fe
}

// TestTruncateEverywhere cuts a trace at every byte: opening never
// panics, and whatever opens yields a prefix of the records, all of the
// chunks that are whole.
func TestTruncateEverywhere(t *testing.T) {
	for _, noComp := range []bool{false, true} {
		data, recs := smallTrace(t, noComp)
		full, err := NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		chunks := full.Chunks()
		if len(chunks) < 4 {
			t.Fatalf("only %d chunks", len(chunks))
		}
		dataOff := chunks[0].Offset
		for n := 0; n <= len(data); n++ {
			what := fmt.Sprintf("cut at %d of %d", n, len(data))
			r, err := NewReader(bytes.NewReader(data[:n]), int64(n))
			if n < int(dataOff) {
				if !errors.Is(err, ErrTruncated) {
					t.Fatalf("%s: error %v, want ErrTruncated", what, err)
				}
				checkFormatError(t, what, err, n)
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if r.Truncated() != (n < len(data)) {
				t.Fatalf("%s: Truncated() = %v", what, r.Truncated())
			}
			if r.Truncated() && !errors.Is(r.TailError(), ErrTruncated) {
				t.Fatalf("%s: tail error %v", what, r.TailError())
			}
			whole := 0
			for _, c := range chunks {
				if c.Offset+c.Size <= int64(n) {
					whole++
				}
			}
			if len(r.Chunks()) != whole {
				t.Fatalf("%s: %d chunks recovered, %d are whole", what, len(r.Chunks()), whole)
			}
			got, err := readAll(r)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			checkPrefix(t, what, got, recs)
			if want := r.Summary().Records; len(got) != want {
				t.Fatalf("%s: %d records, summary says %d", what, len(got), want)
			}
		}
	}
}

// TestBitFlips flips one bit of every byte of a trace: a flip in the
// header fails Open, one in a chunk fails that chunk's records with the
// chunk's offset, one in the index or footer makes a truncated trace with
// every record; no flip ever yields a wrong record.
func TestBitFlips(t *testing.T) {
	for _, noComp := range []bool{false, true} {
		data, recs := smallTrace(t, noComp)
		full, err := NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		chunks := full.Chunks()
		dataOff := chunks[0].Offset
		last := chunks[len(chunks)-1]
		indexOff := last.Offset + last.Size
		for off := range data {
			bad := bytes.Clone(data)
			bad[off] ^= 1 << (off % 8)
			what := fmt.Sprintf("bit %d of byte %d", off%8, off)
			r, err := NewReader(bytes.NewReader(bad), int64(len(bad)))
			if off < int(dataOff) {
				if err == nil {
					t.Fatalf("%s: header damage not detected", what)
				}
				checkFormatError(t, what, err, len(bad))
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			got, err := readAll(r)
			checkPrefix(t, what, got, recs)
			if int64(off) >= indexOff {
				if !r.Truncated() || err != nil || len(got) != len(recs) {
					t.Fatalf("%s: index damage: truncated %v, %d records, %v", what, r.Truncated(), len(got), err)
				}
				continue
			}
			if r.Truncated() || err == nil {
				t.Fatalf("%s: chunk damage not detected (truncated %v, err %v)", what, r.Truncated(), err)
			}
			fe := checkFormatError(t, what, err, len(bad))
			c := chunks[fe.Chunk]
			if fe.Off != c.Offset || int64(off) < c.Offset || int64(off) >= c.Offset+c.Size {
				t.Fatalf("%s: error in chunk %d at %d (size %d): %v", what, fe.Chunk, c.Offset, c.Size, err)
			}
		}
	}
}

// TestRecoveryStopsAtDamage: without an index, a damaged chunk ends the
// recovered trace.
func TestRecoveryStopsAtDamage(t *testing.T) {
	data, recs := smallTrace(t, false)
	full, _ := NewReader(bytes.NewReader(data), int64(len(data)))
	chunks := full.Chunks()
	last := chunks[len(chunks)-1]
	noIndex := data[:last.Offset+last.Size]
	for i, c := range chunks {
		bad := bytes.Clone(noIndex)
		bad[c.Offset+c.Size-1] ^= 0x40
		r, err := NewReader(bytes.NewReader(bad), int64(len(bad)))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Chunks()) != i || !r.Truncated() || !errors.Is(r.TailError(), ErrCorrupt) {
			t.Fatalf("damage in chunk %d: %d chunks, tail %v", i, len(r.Chunks()), r.TailError())
		}
		got, err := readAll(r)
		if err != nil {
			t.Fatal(err)
		}
		checkPrefix(t, "recovered", got, recs)
	}
}

// TestDecodeCorruptPayload changes every byte of a chunk payload to a
// few values and decodes it with the checksums bypassed: the decoder
// stops with a recordError or decodes something, never panics.
func TestDecodeCorruptPayload(t *testing.T) {
	var f memFile
	w, _ := NewWriter(&f, Header{}, Options{NoCompression: true, ChunkSize: 1 << 20})
	rng := rand.New(rand.NewPCG(3, 3))
	for _, k := range allKinds {
		for range 3 {
			rec := randRecord(rng, k)
			w.Append(&rec)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(bytes.NewReader(f.Bytes()), int64(f.Len()))
	if err != nil {
		t.Fatal(err)
	}
	c := r.Chunks()[0]
	payload := f.Bytes()[c.Offset+chunkHeaderLen : c.Offset+c.Size]
	var rec Record
	for off := range payload {
		for _, v := range []byte{0, 1, 0x7f, 0x80, 0xff, payload[off] ^ 0x10} {
			bad := bytes.Clone(payload)
			bad[off] = v
			for cut := range []int{len(bad), off + 1} {
				var d decoder
				d.reset(bad[:max(cut, off+1)], 0, 0)
				for {
					err := d.next(&rec)
					if err == io.EOF {
						break
					}
					if err != nil {
						if _, ok := err.(*recordError); !ok {
							t.Fatalf("error %T", err)
						}
						break
					}
				}
			}
		}
	}
}

const crashEnv = "TTD_TRACEFILE_CRASH_CHILD"

// TestCrashChild is the recording process of TestCrash: it records a
// traceGen stream, flushing every 500 records and saying so on stdout,
// until it is killed.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("only run by TestCrash")
	}
	w, err := Create(path, testHeader(), Options{ChunkSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	g := newTraceGen(42)
	deadline := time.Now().Add(20 * time.Second)
	for n := 1; time.Now().Before(deadline); n++ {
		rec := g.next()
		w.Append(&rec)
		if n%500 == 0 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			fmt.Printf("FLUSHED %d\n", n)
		}
	}
	t.Fatal("not killed")
}

// TestCrash kills a recording process after some flushes: the trace opens,
// says it is truncated and holds at least every flushed record.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	for round := range 3 {
		path := t.TempDir() + "/crash.ttd"
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
		cmd.Env = append(os.Environ(), crashEnv+"="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		flushed, flushes := 0, 0
		for sc.Scan() && flushes < 10+7*round {
			if n, ok := strings.CutPrefix(sc.Text(), "FLUSHED "); ok {
				flushed, _ = strconv.Atoi(n)
				flushes++
			}
		}
		time.Sleep(time.Duration(round*5) * time.Millisecond) // let it run on past the flush
		cmd.Process.Signal(syscall.SIGKILL)
		go io.Copy(io.Discard, out)
		cmd.Wait()
		if flushes == 0 {
			t.Fatal("child never flushed")
		}

		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Truncated() {
			t.Fatal("killed recording not reported truncated")
		}
		got, err := readAll(r)
		if err != nil {
			t.Fatal(err)
		}
		g := newTraceGen(42)
		want := make([]Record, len(got))
		for i := range want {
			want[i] = g.next()
		}
		checkPrefix(t, "crash", got, want)
		if len(got) < flushed {
			t.Fatalf("%d records readable, %d were flushed", len(got), flushed)
		}
		fi, _ := os.Stat(path)
		t.Logf("killed after %d flushes (%d records): %d records in %d chunks readable, file %d bytes; %v",
			flushes, flushed, len(got), len(r.Chunks()), fi.Size(), r.TailError())
		r.Close()
	}
}
