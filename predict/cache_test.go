package predict

import (
	"math/rand"
	"testing"
	"unsafe"
)

func TestReadPredictsWrittenValues(t *testing.T) {
	c := New(4)
	if !c.Read(0x1000, 8, 0) {
		t.Fatal("a zeroed cache must predict 0")
	}
	c.Update(0x1000, 8, 0x1122334455667788)
	if !c.Read(0x1000, 8, 0x1122334455667788) || !c.Read(0x1002, 2, 0x5566) || !c.Read(0x1007, 1, 0x11) {
		t.Fatal("written bytes must be predicted")
	}
	// Tag-less: another address mapping to the same slot is predicted
	// from the same bytes.
	if c.Predict(0x1000+16*8, 8) != 0x1122334455667788 {
		t.Fatal("slot should alias")
	}
	if c.Read(0x1004, 4, 0xdeadbeef) {
		t.Fatal("a different value must miss")
	}
	if c.Predict(0x1000, 8) != 0xdeadbeef55667788 {
		t.Fatalf("partial update merged wrongly: %#x", c.Predict(0x1000, 8))
	}
	c.Flush()
	if c.Predict(0x1000, 8) != 0 {
		t.Fatal("flush must zero")
	}
}

// TestReplayAgreement drives two caches with the same accesses: the
// "reader" sees only logged values yet always reconstructs the true value.
func TestReplayAgreement(t *testing.T) {
	rec, rep := New(6), New(6)
	mem := map[uint64]byte{}
	r := rand.New(rand.NewSource(1))
	var log []uint64
	for i := 0; i < 100000; i++ {
		addr := uint64(r.Intn(4096))
		size := []int{1, 2, 4, 8}[r.Intn(4)]
		if n1 := Split(addr, size); n1 != size {
			size = n1
		}
		if r.Intn(3) == 0 {
			v := r.Uint64() & sizeMask[size]
			for k := 0; k < size; k++ {
				mem[addr+uint64(k)] = byte(v >> (8 * k))
			}
			rec.Update(addr, size, v)
			rep.Update(addr, size, v)
			continue
		}
		var v uint64
		for k := 0; k < size; k++ {
			v |= uint64(mem[addr+uint64(k)]) << (8 * k)
		}
		if !rec.Read(addr, size, v) {
			log = append(log, v)
		}
		// Replay side: the logged value, if the recorder logged one.
		got := rep.Predict(addr, size)
		if got != v {
			if len(log) == 0 || log[len(log)-1] != v {
				t.Fatalf("access %d: replay predicted %#x, true %#x, nothing logged", i, got, v)
			}
			rep.Update(addr, size, v)
		}
	}
}

func BenchmarkReadHit(b *testing.B) {
	c := New(DefaultBits)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c.Read(uint64(i&1023)*8, 8, 0)
	}
}

// TestFillMatchesBytewise checks Fill's whole-word path against entering
// the same bytes one at a time.
func TestFillMatchesBytewise(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 2000; i++ {
		a, b := New(5), New(5)
		for k := range a.slots {
			a.slots[k] = r.Uint64()
			b.slots[k] = a.slots[k]
		}
		addr := uint64(r.Intn(512))
		buf := make([]byte, r.Intn(300))
		r.Read(buf)
		a.Fill(addr, buf)
		for k, x := range buf {
			b.Update(addr+uint64(k), 1, uint64(x))
		}
		for k := range a.slots {
			if a.slots[k] != b.slots[k] {
				t.Fatalf("addr %#x len %d: slot %d = %#x, want %#x", addr, len(buf), k, a.slots[k], b.slots[k])
			}
		}
	}
}

// TestPutPatternMatchesStores: PutPattern leaves the cache as the aligned
// element stores of a rep stos would, in order, also when the range is
// longer than the cache (its slots alias).
func TestPutPatternMatchesStores(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		size := 1 << rng.Intn(4)
		addr := uint64(rng.Intn(1<<12)) &^ uint64(size-1)
		n := rng.Intn(600) / size * size
		v := rng.Uint64() & (1<<(8*uint(size)) - 1)
		if size == 8 {
			v = rng.Uint64()
		}
		want, got := New(4), New(4)
		for k := range want.slots {
			want.slots[k] = rng.Uint64()
			got.slots[k] = want.slots[k]
		}
		for a := addr; a < addr+uint64(n); a += uint64(size) {
			want.Update(a, size, v)
		}
		var pat uint64
		for k := 0; k < 8; k += size {
			pat |= v << (8 * uint(k))
		}
		got.PutPattern(addr, n, pat)
		for k := range want.slots {
			if got.slots[k] != want.slots[k] {
				t.Fatalf("rep stos of %d bytes of %#x (size %d) at %#x: slot %d is %#x, want %#x", n, v, size, addr, k, got.slots[k], want.slots[k])
			}
		}
	}
}

// TestPutPatternBytes: any pattern, byte by byte.
func TestPutPatternBytes(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 1000; i++ {
		addr, n, pat := uint64(rng.Intn(1<<10)), rng.Intn(100), rng.Uint64()
		want, got := New(4), New(4)
		for a := addr; a < addr+uint64(n); a++ {
			want.Update(a, 1, pat>>((a&7)*8))
		}
		got.PutPattern(addr, n, pat)
		for k := range want.slots {
			if got.slots[k] != want.slots[k] {
				t.Fatalf("%d bytes of %#x at %#x: slot %d is %#x, want %#x", n, pat, addr, k, got.slots[k], want.slots[k])
			}
		}
	}
}

// TestPeekInvertsFill: the bytes Fill enters, Peek gives back.
func TestPeekInvertsFill(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	c := New(6)
	for i := 0; i < 1000; i++ {
		addr := uint64(rng.Intn(1 << 12))
		b := make([]byte, rng.Intn(200))
		rng.Read(b)
		c.Fill(addr, b)
		got := make([]byte, len(b))
		c.Peek(addr, got)
		if string(got) != string(b) {
			t.Fatalf("%d bytes at %#x: % x, filled % x", len(b), addr, got, b)
		}
	}
}

// TestFreezeThaw takes copies of a cache as it changes, each against the
// last, and thaws every one into a cache that held something else: each
// must give back its moment's contents and counters exactly, and a copy
// must own only the pages that changed and are not zero.
func TestFreezeThaw(t *testing.T) {
	for _, bits := range []uint{6, 12, 18} {
		c := New(bits)
		r := rand.New(rand.NewSource(int64(bits)))
		var copies []*Frozen
		var want [][]uint64
		var base *Frozen
		for step := 0; step < 6; step++ {
			// Change a few pages; zero one page, at step 3, that held data.
			changed := map[int]bool{}
			for range 3 {
				a := r.Uint64() & (uint64(len(c.slots))*8 - 1) &^ 7
				c.Update(a, 8, r.Uint64()|1)
				changed[int(a/8)/pageSlots] = true
			}
			if step == 3 && len(c.slots) >= pageSlots {
				for p := range changed {
					clear(c.slots[p*pageSlots : (p+1)*pageSlots])
				}
			}
			c.Reads, c.Stop = uint64(step*100), uint64(step)
			f := c.Freeze(base)
			if len(c.slots) >= pageSlots {
				wantOwned := len(changed)
				if step == 3 {
					wantOwned = 0
				}
				if f.owned != wantOwned {
					t.Fatalf("bits %d step %d: copy owns %d pages, want %d", bits, step, f.owned, wantOwned)
				}
			}
			copies = append(copies, f)
			want = append(want, append([]uint64(nil), c.slots...))
			base = f
		}
		d := New(bits)
		for i := len(copies) - 1; i >= 0; i-- {
			for j := range d.slots {
				d.slots[j] = ^uint64(j)
			}
			d.Thaw(copies[i])
			for j, w := range want[i] {
				if d.slots[j] != w {
					t.Fatalf("bits %d copy %d: slot %d is %#x, want %#x", bits, i, j, d.slots[j], w)
				}
			}
			if d.Reads != uint64(i*100) || d.Stop != uint64(i) {
				t.Fatalf("bits %d copy %d: counters %d/%d", bits, i, d.Reads, d.Stop)
			}
		}
	}
}

// TestReleaseReuses checks that New reuses a released cache's memory,
// zeroed.
func TestReleaseReuses(t *testing.T) {
	c := New(18)
	c.Update(0x1000, 8, 5)
	p := &c.slots[0]
	c.Release()
	d := New(18)
	if &d.slots[0] != p {
		t.Error("New did not reuse the released memory")
	}
	if d.Predict(0x1000, 8) != 0 {
		t.Error("reused memory was not zeroed")
	}
	if uintptr(unsafe.Pointer(p))%hugePage != 0 {
		t.Error("a 2 MiB cache is not aligned to a huge page")
	}
}
