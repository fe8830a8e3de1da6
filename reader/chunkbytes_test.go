package reader

import (
	"reflect"
	"testing"

	"ttd/tracefile"
)

// TestChunkKeepsNoPayload: a decoded chunk holds none of its iterator's
// payload buffer, which the next chunk decoded with the same iterator
// overwrites: every chunk of a process tree, decoded with one iterator
// one after the other and then compared, equals the chunk decoded alone
// (syscall buffers, code bytes, mmap paths, module paths, checkpoint
// registers).
func TestChunkKeepsNoPayload(t *testing.T) {
	path, _ := recordTreeChunks(t, 20_000, 4096)
	tr, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	it := tr.f.Records(0)
	chs := make([]*chunk, len(tr.chunks))
	for i := range tr.chunks {
		if chs[i], err = tr.decodeChunk(it, i); err != nil {
			t.Fatal(err)
		}
	}
	var writes, code, paths, mods, regs int
	for i, ch := range chs {
		alone, err := tr.decodeChunk(tr.f.Records(0), i)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ch, alone) {
			t.Errorf("chunk %d changed when the next chunks were decoded with its iterator", i)
		}
		for _, c := range ch.ctrls {
			code += len(c.code)
			mods += len(c.mods)
			if c.rec == nil {
				continue
			}
			switch c.rec.Kind {
			case tracefile.KindSyscall:
				for _, w := range c.rec.Syscall.Writes {
					writes += len(w.Bytes)
				}
			case tracefile.KindMmap:
				paths += len(c.rec.Mmap.Path)
			case tracefile.KindCheckpoint:
				for _, th := range c.rec.Checkpoint.Threads {
					regs += len(th.Regs)
				}
			}
		}
	}
	if len(chs) < 3 || writes == 0 || code == 0 || paths == 0 || mods == 0 || regs == 0 {
		t.Fatalf("%d chunks, %d bytes of syscall writes, %d code records, %d bytes of mmap paths, %d modules, %d bytes of registers: the test tests too little",
			len(chs), writes, code, paths, mods, regs)
	}
}

// TestByteSlab: copies keep their bytes, nil and empty stay apart, and
// a copy has no room to append into the next.
func TestByteSlab(t *testing.T) {
	var s byteSlab
	if s.add(nil) != nil || s.add([]byte{}) == nil {
		t.Fatal("nil and empty are not kept apart")
	}
	src := []byte("abc")
	a := s.add(src)
	b := s.add([]byte("def"))
	src[0] = 'x'
	if string(a) != "abc" || string(b) != "def" || cap(a) != 3 {
		t.Fatalf("got %q %q (cap %d)", a, b, cap(a))
	}
	_ = append(a, 'z')
	if string(b) != "def" {
		t.Fatalf("appending to one copy changed the next: %q", b)
	}
	big := make([]byte, 100<<10)
	if c := s.add(big); len(c) != len(big) || &c[0] == &big[0] {
		t.Fatal("a large piece is not copied")
	}
	if s.size < 4<<10+100<<10 {
		t.Fatalf("slab counts %d bytes", s.size)
	}
}

// TestFeedSize: feeds shrink by a quarter at a time towards twice what
// was taken of the last (never under minFeed), grow at once to twice
// what was taken (twice the last when it ran out), and stay within the
// buffer.
func TestFeedSize(t *testing.T) {
	var f feedSize
	steps := []struct{ buf, used, want int }{
		{64, 0, 64},  // first feed: the buffer
		{64, 0, 48},  // nothing taken: 3/4
		{64, 2, 36},  // 3/4 of 48
		{64, 20, 27}, // 3/4 of 36 (2*2+4 is less)
		{64, 44, 44}, // 2*20+4: took more
		{64, 0, 64},  // it ran out at 44: twice, within 64
		{16, 0, 16},  // 3/4 of 64, within a smaller buffer
		{64, 0, 12},
		{64, 0, 9},
		{64, 0, 8}, // minFeed
		{64, 0, 8},
		{4, 4, 4}, // a buffer under minFeed
	}
	for i, s := range steps {
		if got := f.limit(s.buf); got != s.want {
			t.Fatalf("step %d: limit %d, want %d", i, got, s.want)
		}
		f.fed()
		f.used += s.used
	}
}
