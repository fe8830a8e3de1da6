package predict

import (
	"encoding/binary"
	"unsafe"
)

// Cache is a tag-less, direct-mapped cache of 8-byte memory words. A slot
// holds whatever word was last stored in it, for whichever address mapped
// there: a read predicts the bytes at its address from the slot's bytes.
type Cache struct {
	slots []uint64
	mask  uint64
	// Reads counts the reads the cache has seen since its owner last
	// reset it (a log entry names a read by this count's delta). The
	// CPU's inline check increments it for the reads it predicts.
	Reads uint64
	// Stop, when not 0, is the count of a read Hit must leave to the
	// caller whatever it predicts: re-simulation sets it to the next
	// logged read, whose value comes from the trace.
	Stop uint64
}

// DefaultBits is the default size of a cache in slots (log2): 2^18 words,
// 2 MiB per thread, one transparent huge page (allocSlots). Measured in
// one run each:
//   - inthash (bench/workloads), whose 1.5 MiB of hash table misses a
//     512 KiB cache: 2^16 words record it at 1.6x its run, 17% of its
//     reads logged, 0.86 bits/instruction, and both cores busy
//     compressing; 2^18 at 1.19x, 0.65% logged, 0.058 bits/instruction.
//     2^19 is no faster.
//   - gzip -9 of 2 MiB (bench/cmd/travel): 0.046 bits/instruction at
//     2^16, 0.036 at 2^18. The reader's snapshots share a cache's
//     unchanged pages (Frozen), so a 2 MiB cache costs little more than
//     a 512 KiB one to travel in: seek to a random position p50 4.6 ms
//     (4.8 ms), backward step p50 278 µs (237 µs), the extra being the
//     copy of 2 MiB back into the cache.
//   - Starting a recording: 0.1 ms more than 2^16 (segv_handler, musl).
const DefaultBits = 18

// MinBits and MaxBits bound a cache's size (log2 of its words): 16
// words to 2 GiB.
const (
	MinBits = 4
	MaxBits = 28
)

// New returns a zeroed cache of 2^bits slots.
func New(bits uint) *Cache {
	c := &Cache{mask: 1<<bits - 1}
	c.allocSlots(1 << bits)
	return c
}

// Flush zeroes the cache (at checkpoints).
func (c *Cache) Flush() { clear(c.slots) }

var sizeMask = [9]uint64{1: 0xff, 2: 0xffff, 3: 0xffffff, 4: 0xffffffff, 5: 0xffffffffff, 6: 0xffffffffffff, 7: 0xffffffffffffff, 8: ^uint64(0)}

// slot returns the slot of addr's word. The index is masked to the
// slots' length (a power of two), so it needs no bounds check: this is
// on the path of every load and store the interpreter makes while
// recording or replaying.
func (c *Cache) slot(addr uint64) *uint64 {
	return (*uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(c.slots)), (addr>>3&c.mask)*8))
}

// Predict returns the cache's prediction for a read of size bytes at addr.
// The access must not cross an 8-byte boundary (see Split).
func (c *Cache) Predict(addr uint64, size int) uint64 {
	s := c.slots[(addr>>3)&c.mask]
	return (s >> ((addr & 7) * 8)) & sizeMask[size]
}

// Hit reports whether the cache predicts v for a read of size bytes at
// addr that stays within one 8-byte word (and is not the Stop read), and
// counts the read if so; the others are left to the caller (the
// recorder's or the reader's MemRead).
// It is small enough to inline into the interpreter's handlers.
func (c *Cache) Hit(addr uint64, size int, v uint64) bool {
	if addr&7+uint64(size) > 8 || c.Reads+1 == c.Stop || (*c.slot(addr)>>(addr&7*8))&sizeMask[size] != v {
		return false
	}
	c.Reads++
	return true
}

// Put enters a write of size bytes at addr into the cache if it stays
// within one 8-byte word, and reports whether it did (the caller handles
// the others). Small enough to inline, like Hit.
func (c *Cache) Put(addr uint64, size int, v uint64) bool {
	if addr&7+uint64(size) > 8 {
		return false
	}
	p := c.slot(addr)
	if size == 8 { // aligned: folds away where size is a constant
		*p = v
		return true
	}
	sh := addr & 7 * 8
	m := sizeMask[size] << sh
	*p = *p&^m | v<<sh&m
	return true
}

// Update stores the value of an access of size bytes at addr (a write, or
// a read that was logged). The access must not cross an 8-byte boundary.
func (c *Cache) Update(addr uint64, size int, v uint64) {
	p := &c.slots[(addr>>3)&c.mask]
	if size == 8 {
		*p = v
		return
	}
	sh := (addr & 7) * 8
	m := sizeMask[size] << sh
	*p = *p&^m | (v<<sh)&m
}

// Read predicts a read and updates the cache: it reports whether the
// prediction was right; when it was not the cache now holds v and the
// caller logs it.
func (c *Cache) Read(addr uint64, size int, v uint64) bool {
	p := &c.slots[(addr>>3)&c.mask]
	if size == 8 {
		if *p == v {
			return true
		}
		*p = v
		return false
	}
	sh := (addr & 7) * 8
	m := sizeMask[size] << sh
	if (*p&m)>>sh == v {
		return true
	}
	*p = *p&^m | (v<<sh)&m
	return false
}

// ReadWord is Read for a read whose logged value carries the whole word
// (ttd logs byte reads so, trace parameter bytereads=word): when the
// prediction is wrong, the slot takes the whole aligned word around the
// read, mem with the read's bytes replaced by v, and ReadWord returns it
// (the value to log) with false. Reading bytes one at a time, a program
// then misses once a word instead of once a byte. (Wider reads log their
// own bytes: filling the word for them made traces of strided int arrays
// 1.7x larger.)
func (c *Cache) ReadWord(addr uint64, size int, v, mem uint64) (word uint64, hit bool) {
	p := &c.slots[(addr>>3)&c.mask]
	sh := (addr & 7) * 8
	m := sizeMask[size] << sh
	if (*p&m)>>sh == v {
		return 0, true
	}
	*p = mem&^m | (v<<sh)&m
	return *p, false
}

// LoggedWord enters a logged word (ReadWord) for a read of size bytes at
// addr into the cache and returns the read's value.
func (c *Cache) LoggedWord(addr uint64, size int, word uint64) uint64 {
	c.slots[(addr>>3)&c.mask] = word
	return word >> ((addr & 7) * 8) & sizeMask[size]
}

// PutPattern enters n bytes stored from addr into the cache: the byte at
// address a is the byte a&7 of pat (rep stos of an aligned element
// repeats its value so). It is what the stores, in order, would do.
func (c *Cache) PutPattern(addr uint64, n int, pat uint64) {
	if n <= 0 {
		return
	}
	if k := Split(addr, min(n, 8)); addr&7 != 0 || k < 8 {
		c.Update(addr, k, pat>>((addr&7)*8))
		addr += uint64(k)
		n -= k
	}
	// Whole words, a run of slots at a time (up to the end of the
	// slots, where the addresses wrap to the first).
	for n >= 8 {
		i := addr >> 3 & c.mask
		run := c.slots[i:min(uint64(len(c.slots)), i+uint64(n/8))]
		run[0] = pat
		for k := 1; k < len(run); k *= 2 {
			copy(run[k:], run[:k]) // memmove: a page's 512 words in a few wide copies
		}
		addr += uint64(len(run)) * 8
		n -= len(run) * 8
	}
	if n > 0 {
		c.Update(addr, n, pat)
	}
}

// Peek fills b with the bytes the cache predicts at addr (the inverse of
// Fill).
func (c *Cache) Peek(addr uint64, b []byte) {
	for i := 0; i < len(b); {
		s := c.slots[((addr+uint64(i))>>3)&c.mask] >> ((addr + uint64(i)) & 7 * 8)
		for n := Split(addr+uint64(i), min(8, len(b)-i)); n > 0; n-- {
			b[i] = byte(s)
			s >>= 8
			i++
		}
	}
}

// Holds reports whether the cache predicts the bytes b at addr, which lie
// in one 8-byte word.
func (c *Cache) Holds(addr uint64, b []byte) bool {
	s := c.slots[(addr>>3)&c.mask]
	if len(b) == 8 {
		return s == binary.LittleEndian.Uint64(b)
	}
	s >>= (addr & 7) * 8
	for _, x := range b {
		if byte(s) != x {
			return false
		}
		s >>= 8
	}
	return true
}

// Split divides an access of size bytes at addr into the part in addr's
// 8-byte word and the rest: n1 bytes at addr, then size-n1 at addr+n1.
// n1 == size when the access does not cross a word boundary.
func Split(addr uint64, size int) (n1 int) {
	if off := int(addr & 7); off+size > 8 {
		return 8 - off
	}
	return size
}

// Words returns the cache's words and the mask that takes an address to
// the offset of its byte in them (slot*8 + addr&7), for code that checks
// and updates the cache itself: ttd's translated blocks.
func (c *Cache) Words() (base unsafe.Pointer, byteMask uint64) {
	return unsafe.Pointer(unsafe.SliceData(c.slots)), c.mask<<3 | 7
}

// Slots is the number of words the cache holds.
func (c *Cache) Slots() int { return len(c.slots) }

// Fill enters bytes written outside the CPU (by the kernel side of a
// syscall, by signal delivery) into the cache, word by word, exactly as
// both the recorder and the reader must.
func (c *Cache) Fill(addr uint64, b []byte) {
	for len(b) > 0 {
		if addr&7 == 0 && len(b) >= 8 {
			// Whole words (most of a signal frame or a read buffer).
			c.slots[(addr>>3)&c.mask] = binary.LittleEndian.Uint64(b)
			addr += 8
			b = b[8:]
			continue
		}
		n := Split(addr, min(len(b), 8))
		var v uint64
		for i := 0; i < n; i++ {
			v |= uint64(b[i]) << (8 * i)
		}
		c.Update(addr, n, v)
		addr += uint64(n)
		b = b[n:]
	}
}
